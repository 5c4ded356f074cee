"""``kubelet-winnet check``: the linter over manifests (the rules are
:mod:`kubelet_winnet._lint.rules`)."""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, TextIO

from kubelet_winnet.cli.config import (
    CONFIG_NAME,
    FAIL_ON,
    Config,
    ConfigError,
    find_config,
    load_config,
)
from kubelet_winnet.cli.input import expand_paths
from kubelet_winnet.cli.notes import InputNotes
from kubelet_winnet.cli.session import (
    EXIT_FINDINGS,
    Command,
    Session,
    add_input_arguments,
    add_profile_arguments,
    check_profile,
    input_paths,
    invalid_pod,
    pods,
)
from kubelet_winnet.errors import InvalidPodError, WinnetError

if TYPE_CHECKING:
    from kubelet_winnet._lint.rules import Finding

__all__ = ["COMMAND"]

_FAIL_ON_DEFAULT = "warning"

EXIT_TEXT = """\
exit status:
  0    every file read; no finding at or above --fail-on (always with --fail-on never)
  1    a finding at or above --fail-on that no ignore annotation silences
  2    bad input (a file, document or field that cannot be read), bad flags or usage,
       or output that cannot be written
  141  stdout was closed early (| head): stopped quietly, not a success
"""


def _configure_check(parser: argparse.ArgumentParser) -> None:
    from kubelet_winnet._lint.report import FORMATS
    from kubelet_winnet._lint.rules import RULES

    add_input_arguments(parser)
    add_profile_arguments(parser, without=(
        "default: none, and the hostNetwork finding speaks of every release, unless the "
        "settings file sets kubeletVersion"))
    parser.set_defaults(kubelet_version=None)  # unset: findings name every release
    parser.add_argument(
        "-o", "--output", choices=FORMATS, default="text",
        help="text: file:line: severity rule-id: message [field] (-v adds the detail); "
        "json: findings and a summary; sarif: SARIF 2.1.0; junit: JUnit XML",
    )
    parser.add_argument(
        "--fail-on", choices=FAIL_ON, default=None,
        help="exit 1 when a finding has this severity or higher; never: report only "
        f"(default {_FAIL_ON_DEFAULT}, or failOn in the settings file)",
    )
    parser.add_argument(
        "--assume-windows", action="store_true",
        help="check pods that no OS field, node selector or affinity pins as Windows pods "
        "(by default their findings are conditional and one severity level lower)",
    )
    parser.add_argument(
        "--config", metavar="FILE",
        help=f"settings file (default: {CONFIG_NAME} in the working directory or the "
        "nearest one above it): rules to include or exclude, per-rule severity, kubelet "
        "version, feature gates, windowsOnly, assumeWindows, paths to skip, failOn",
    )
    parser.add_argument("--list-rules", action="store_true",
                        help="list the rules (-o json: as JSON) and exit")
    parser.add_argument("--explain", metavar="RULE",
                        help="print the documentation of one rule and exit")
    parser.epilog = (
        "rules: " + ", ".join(
            f"{r.id} ({r.severity.label}"
            + (f", {r.severity_without_os.label} without spec.os.name: windows"
               if r.severity_without_os is not None else "")
            + (", one level lower for a pod pinned to no OS" if r.windows_nodes_only else "")
            + ")"
            for r in RULES
        )
        + ". Ignore one for an object with the annotation "
        "ignore-check.kubelet-winnet.io/<rule-id>: \"<reason>\" on the object or its pod "
        "template.\n\n" + EXIT_TEXT
    )


def colour_wanted(stream: TextIO, environ: Mapping[str, str] = os.environ) -> bool:
    """Colours on a terminal only; NO_COLOR (any value) turns them off, FORCE_COLOR on
    (no-color.org; NO_COLOR wins, as in CPython's own colouring)."""
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _run_check(args: argparse.Namespace, session: Session) -> int:
    from kubelet_winnet._kubelet.profile import DEFAULT_KUBELET_VERSION
    from kubelet_winnet._lint.report import Options, report_writer
    from kubelet_winnet._lint.rules import (
        RULES_BY_ID,
        Severity,
        check_pod,
        host_network_reach,
        ignored_rules,
        unknown_ignores,
    )
    from kubelet_winnet._lint.targeting import Target
    from kubelet_winnet.cli.session import limits_of

    if args.list_rules or args.explain is not None:
        return _rules_help(args, session)
    path = args.config if args.config is not None else find_config()
    config = Config()
    if path is not None:
        try:
            config = load_config(path, limits_of(args), RULES_BY_ID, session.note)
        except ConfigError as exc:
            session.error(str(exc))
            return session.status
    if args.kubelet_version is None:
        args.kubelet_version = config.kubelet_version
    if args.feature_gates is None and config.feature_gates is not None:
        args.feature_gates = config.feature_gates
        args.feature_gates_from = f"featureGates of {config.source}"
    if args.fail_on is None:
        args.fail_on = config.fail_on or _FAIL_ON_DEFAULT
    args.windows_only = args.windows_only or config.windows_only
    args.assume_windows = args.assume_windows or config.assume_windows
    given = args.kubelet_version is not None
    if not given:
        args.kubelet_version = DEFAULT_KUBELET_VERSION
    if config.skip and not _apply_skip(args, session, config):
        return session.status
    if not check_profile(args, session):
        return session.status
    from kubelet_winnet._kubelet.pod import read_pod

    reach = host_network_reach(args.kubelet_version, args.feature_gates, given)
    threshold = None if args.fail_on == "never" else Severity[args.fail_on.upper()]
    colour = args.output == "text" and colour_wanted(session.out)
    writer = report_writer(args.output, session.out, Options(threshold, args.verbose, colour))
    inputs = InputNotes(session, args.max_bytes, "check")
    # rules or severities chosen by a config file
    configured = config.include is not None or bool(config.exclude or config.severity)
    for item in pods(args, session, inputs.document, inputs.bad):
        inputs.document(item.document)
        try:  # the library's reading: "true" is not true, wrong types are bad input
            read_pod(item.document.value)
        except InvalidPodError as exc:
            session.pods -= 1  # read, but not checked: an input error instead
            invalid_pod(session, item.document, exc)
            continue
        except WinnetError as exc:
            session.error(f"{item.where}: document {item.document.document}: {exc}")
            continue
        writer.pod(item.document, item.pod)
        target = item.target
        if args.assume_windows and target is Target.UNTARGETED:
            target = Target.WINDOWS
        ignored = ignored_rules(item.pod)
        if ignored:
            for name, nearest in unknown_ignores(ignored):
                session.note(
                    f"{item.where}: {item.pod.identity}: ignore-check.kubelet-winnet.io/"
                    f"{_clip(name)} names no rule, so it silences nothing"
                    + (f" (did you mean {nearest}?)" if nearest else "")
                )
        findings = check_pod(item.pod, target, reach, inputs.runtime_classes)
        if not findings:
            continue
        if configured:
            findings = [_configured(f, config) for f in findings if config.checks(f.rule.id)]
        # In line order within the object, as a reader of the file meets them.
        line_of = item.document.line_of
        located = sorted(
            ((line_of(f.field), i, f) for i, f in enumerate(findings)),
            key=lambda entry: entry[:2],
        ) if len(findings) > 1 else [(line_of(f.field), 0, f) for f in findings]
        for line, _, finding in located:
            reason = ignored.get(finding.rule.id)
            if reason is None and threshold is not None and finding.severity >= threshold:
                session.fail(EXIT_FINDINGS)
            writer.finding(item.document, item.pod, finding, reason, line)
    writer.close(session)
    inputs.note_empty(input_paths(args))
    if args.verbose or not args.quiet:  # it counts the skipped pods too (-v lists them)
        session.err.write(f"{session.prog}: {writer.summary(session, session.files)}\n")
    return session.status


def _configured(finding: Finding, config: Config) -> Finding:
    """The finding at the severity the configuration gives its rule, lowered as the rule
    lowers it (a pod pinned to no OS, no spec.os.name)."""
    from kubelet_winnet._lint.rules import Severity

    level = config.severity.get(finding.rule.id)
    if level is None:
        return finding
    lowered = finding.rule.severity - finding.severity
    severity = Severity(max(Severity.INFO, Severity[level.upper()] - lowered))
    return dataclasses.replace(finding, severity=severity)


def _apply_skip(args: argparse.Namespace, session: Session, config: Config) -> bool:
    """Drop the files that match a skip pattern from the input (directories expanded
    here); False when nothing is left to read."""
    kept: list[str] = []
    for entry in expand_paths(input_paths(args)):
        path = session.source(entry)  # bad input and skipped files reported here
        if path is not None and not config.skips(path):
            kept.append(path)
    args.inputs = kept
    if not kept and not session.errors:
        session.note(f"every file of the input matches a skip pattern of {config.source}")
    return bool(kept)


def _rules_help(args: argparse.Namespace, session: Session) -> int:
    """``--list-rules`` and ``--explain RULE``."""
    import difflib
    import json

    from kubelet_winnet._lint.rules import (
        REASONS_BY_ID,
        RULES,
        RULES_BY_ID,
        nearest_rule,
        rule_page,
    )

    if args.explain is not None:
        rule = RULES_BY_ID.get(args.explain)
        reason = REASONS_BY_ID.get(args.explain)
        if rule is None and reason is not None:
            # An id `explain` prints: say what it is, then the rule it is a case of.
            if reason.rule is None:
                session.out.write(f"{reason.id}: a note of `explain` about the flags, not a "
                                  f"check rule: {reason.summary}.\n")
                return session.status
            session.out.write(f"{reason.id}: a reason `explain` gives for rule "
                              f"{reason.rule}: {reason.summary}.\n\n")
            rule = RULES_BY_ID[reason.rule]
        if rule is None:
            # The nearest of the rule ids and the ids explain prints, which it also takes.
            close = difflib.get_close_matches(
                args.explain, [*RULES_BY_ID, *REASONS_BY_ID], n=1, cutoff=0.6)
            nearest = close[0] if close else nearest_rule(args.explain)
            session.error(f"--explain: {_clip(args.explain)} is not a rule nor an id "
                          "explain prints" + (f" (did you mean {nearest}?)" if nearest else "")
                          + "; --list-rules lists the rules")
            return session.status
        session.out.write(rule_page(rule.id))
        return session.status
    if args.output == "json":
        session.out.write(json.dumps([
            {"id": r.id, "severity": r.severity.label, "summary": r.summary,
             "severityWithoutOsName": r.severity_without_os.label
             if r.severity_without_os else None,
             "lowerWhenPinnedToNoOs": r.windows_nodes_only, "helpUri": r.help_uri}
            for r in RULES
        ], indent=2) + "\n")
        return session.status
    width = max(len(r.id) for r in RULES)
    for r in RULES:
        session.out.write(f"{r.id.ljust(width)}  {r.severity.label.ljust(7)}  {r.summary}\n")
    return session.status


def _clip(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


COMMAND = Command("check", _configure_check, _run_check)
