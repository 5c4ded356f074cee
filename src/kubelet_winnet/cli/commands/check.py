"""``kubelet-winnet check``: the linter over manifests (the rules are
:mod:`kubelet_winnet._lint.rules`, applied by :mod:`kubelet_winnet._lint.checks`)."""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

from kubelet_winnet._kubelet.pod import read_pod
from kubelet_winnet._lint.checks import check_pod
from kubelet_winnet._lint.ignores import ignored_rules, unknown_ignores
from kubelet_winnet._lint.targeting import Target
from kubelet_winnet._printable import cut, printable
from kubelet_winnet.cli.config import (
    CONFIG_NAME,
    FAIL_ON,
    Config,
    ConfigError,
    docs_url_error,
    find_config,
    load_config,
    settings_keys,
)
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
from kubelet_winnet.cli.suppressions import (
    Baseline,
    Comments,
    filter_inputs,
    is_an_input,
    still_read,
)
from kubelet_winnet.errors import InvalidPodError, WinnetError
from kubelet_winnet.sources.manifests import Named

if TYPE_CHECKING:
    from kubelet_winnet._lint.report import Notification
    from kubelet_winnet._lint.rules import Finding

__all__ = ["COMMAND"]

_FAIL_ON_DEFAULT = "warning"

EXIT_TEXT = """\
exit status:
  0    every file read; no finding at or above --fail-on (always with --fail-on never)
  1    a finding at or above --fail-on that no ignore annotation, ignore comment or
       baseline entry silences
  2    bad input (a file, document or field that cannot be read), a mistake in the
       settings file, bad flags or usage, nothing given that holds Kubernetes
       manifests (unless --allow-empty), or output that cannot be written
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
        f"nearest one above it); its keys: {settings_keys()}",
    )
    parser.add_argument(
        "--allow-empty", action="store_true",
        help="exit 0 when no file given holds Kubernetes manifests (by default such a run, "
        "e.g. only unrendered Helm templates, is status 2; allowEmpty in the settings file)",
    )
    parser.add_argument(
        "--baseline", metavar="FILE",
        help="findings recorded in FILE (JSON) do not fail the run, new ones do; an entry "
        "that matches no finding any more is a note",
    )
    parser.add_argument(
        "--create-baseline", action="store_true",
        help="write every finding of this run to the --baseline FILE (accepting them all)",
    )
    parser.add_argument(
        "--docs-url", metavar="URL",
        help="where the rule pages are published: SARIF and JSON give each rule's helpUri "
        "as URL/<rule-id>.md ({rule} in URL is replaced by the id instead); default "
        "docsUrl in the settings file, else no helpUri",
    )
    parser.add_argument("--list-rules", action="store_true",
                        help="list the rules (-o json: as JSON) and exit")
    parser.add_argument("--explain", metavar="RULE",
                        help="print the documentation of one rule and exit")
    parser.epilog = (
        "rules: " + ", ".join(f"{r.id} ({r.severity_text})" for r in RULES)
        + ". Ignore one for an object with the annotation "
        "ignore-check.kubelet-winnet.io/<rule-id>: \"<reason>\" on the object or its pod "
        "template, or with a comment # kubelet-winnet:ignore <rule-id> <reason> on the "
        "finding's line or the object's kind: or metadata: line.\n\n" + EXIT_TEXT
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


@dataclasses.dataclass
class _Settings:
    """The run's settings: the command line over the settings file, merged into a copy of
    the parsed arguments (``args``; the parsed ones are left as parsed)."""

    args: argparse.Namespace
    config: Config
    baseline: Baseline | None
    docs_url: str | None
    allow_empty: bool
    given: bool  # --kubelet-version or the settings file named the kubelet
    arguments: list[str]  # the inputs as given, before a filter expands them to files
    left_out: str = ""


def _run_check(args: argparse.Namespace, session: Session) -> int:
    if args.list_rules or args.explain is not None:
        return _rules_help(args, session)
    record = _Record(session)
    settings = _settings(args, session, record)
    if isinstance(settings, int):
        return settings
    return _check(settings, session, record)


def _settings(args: argparse.Namespace, session: Session,
              record: _Record) -> _Settings | int:
    """The settings file read and merged under the command line, the baseline opened;
    the exit status when the run stops before reading a manifest."""
    from kubelet_winnet._kubelet.profile import DEFAULT_KUBELET_VERSION
    from kubelet_winnet._lint.rules import RULES_BY_ID
    from kubelet_winnet.cli.session import limits_of

    config = Config()
    try:
        # --config names its file itself (it may be <(...)); a found one must be regular
        path = Named(args.config) if args.config is not None else find_config()
        if path is not None:
            config = load_config(path, limits_of(args), RULES_BY_ID)
    except ConfigError as exc:
        for message in exc.messages:  # every mistake of the file, then stop
            session.error(message)
        return _failed_early(args, session, record, exc.source)
    if args.create_baseline and args.baseline is None:
        session.error("--create-baseline needs --baseline FILE: the file to write")
        return _failed_early(args, session, record)
    docs_url = args.docs_url if args.docs_url is not None else config.docs_url
    if args.docs_url is not None:
        why = docs_url_error(args.docs_url)
        if why is not None:
            session.error(f"--docs-url {cut(args.docs_url, 60)!r}: {why}")
            return _failed_early(args, session, record)
    usable, baseline = _baseline(args, session)
    if not usable:
        return _failed_early(args, session, record)
    merged = _merged(args, config)
    given = merged.kubelet_version is not None
    if not given:
        merged.kubelet_version = DEFAULT_KUBELET_VERSION
    settings = _Settings(merged, config, baseline, docs_url,
                         args.allow_empty or config.allow_empty, given, input_paths(args))
    if config.skip or settings.baseline is not None:
        settings.left_out = filter_inputs(merged, session, config, settings.baseline)
    if not check_profile(merged, session):
        return _failed_early(merged, session, record)
    return settings


def _merged(args: argparse.Namespace, config: Config) -> argparse.Namespace:
    """A copy of ``args`` with the settings file's values where the command line gave
    none."""
    merged = argparse.Namespace(**vars(args))
    if merged.kubelet_version is None:
        merged.kubelet_version = config.kubelet_version
    if merged.feature_gates is None and config.feature_gates is not None:
        merged.feature_gates = config.feature_gates
        merged.feature_gates_from = f"featureGates of {config.source}"
    if merged.fail_on is None:
        merged.fail_on = config.fail_on or _FAIL_ON_DEFAULT
    merged.windows_only = args.windows_only or config.windows_only
    merged.assume_windows = args.assume_windows or config.assume_windows
    merged.allow_remote = args.allow_remote or config.allow_remote
    return merged


def _baseline(args: argparse.Namespace, session: Session) -> tuple[bool, Baseline | None]:
    """``--baseline`` (None without one), and whether the run can go on (else said why)."""
    from kubelet_winnet.cli.session import limits_of

    if args.baseline is None:
        return True, None
    baseline = Baseline(Named(args.baseline))
    if is_an_input(args.baseline, input_paths(args)):
        # Left out of the input, it would leave nothing to check; created, it would
        # overwrite a manifest.
        session.error(f"--baseline {args.baseline} is also an input: name another file "
                      "for the baseline")
        return False, None
    if args.create_baseline:
        refusal = baseline.refuses_to_replace(limits_of(args))
        if refusal is not None:
            session.error(refusal)
            return False, None
    elif not baseline.load(session, limits_of(args)):
        return False, None
    return True, baseline


def _check(settings: _Settings, session: Session, record: _Record) -> int:
    """Every pod of the input judged and checked, each finding written unless silenced."""
    from kubelet_winnet._kubelet.profile import kubelet_profile
    from kubelet_winnet._lint.reach import host_network_reach
    from kubelet_winnet._lint.report import Options, report_writer
    from kubelet_winnet._lint.rules import Severity

    args, config, baseline = settings.args, settings.config, settings.baseline
    reach = host_network_reach(args.kubelet_version, args.feature_gates, settings.given)
    profile = kubelet_profile(args.kubelet_version, args.feature_gates)
    threshold = None if args.fail_on == "never" else Severity[args.fail_on.upper()]
    colour = args.output == "text" and colour_wanted(session.out)
    writer = report_writer(args.output, session.out,
                           Options(threshold, args.verbose, colour, settings.docs_url))
    inputs = InputNotes(session, args.max_bytes, "check")
    comments = Comments(session, args.max_bytes)
    for item in pods(args, session, inputs.document, inputs.bad):
        inputs.document(item.document)
        _check_item(item, settings, session, (reach, profile, threshold), writer, inputs,
                    comments)
    inputs.note_empty(still_read(settings.arguments, input_paths(args))
                      if settings.left_out else settings.arguments)
    if not inputs.with_objects and not session.errors:
        if not settings.allow_empty:
            session.error(_nothing_checked(session.files, len(inputs.explained),
                                           settings.left_out)
                          + "; an empty run fails so that CI does not pass unchecked "
                          "(--allow-empty, or allowEmpty: true in the settings file, "
                          "accepts it)")
        elif settings.left_out and not session.files:
            session.note(f"every file of the input was left out ({settings.left_out})")
    if baseline is not None:
        if args.create_baseline:
            baseline.write(session)
        else:
            baseline.note_stale(session, inputs.files)
    writer.close(session, record.notifications(args, config, inputs.files, baseline))
    if args.verbose or not args.quiet:  # it counts the skipped pods too (-v lists them)
        session.err.write(f"{session.prog}: {writer.summary(session, session.files)}\n")
    return session.status


def _check_item(item: Any, settings: _Settings, session: Session, judged: tuple[Any, ...],
                writer: Any, inputs: InputNotes, comments: Comments) -> None:
    """One pod: its judgement, its findings, each silenced or written."""
    args, config, baseline = settings.args, settings.config, settings.baseline
    reach, profile, threshold = judged
    try:  # the library's reading: "true" is not true, wrong types are bad input
        facts = read_pod(item.document.value)
    except InvalidPodError as exc:
        session.pods -= 1  # read, but not checked: an input error instead
        invalid_pod(session, item.document, exc)
        return
    except WinnetError as exc:
        session.error(f"{item.where}: document {item.document.document}: {exc}")
        return
    writer.pod(item.document, item.pod)
    target = item.target
    if args.assume_windows and target is Target.UNTARGETED:
        target = Target.WINDOWS
    ignored = ignored_rules(item.pod)
    for name, nearest in unknown_ignores(ignored) if ignored else ():
        session.note(
            f"{item.where}: {item.pod.identity}: ignore-check.kubelet-winnet.io/"
            f"{cut(name, 60)} names no rule, so it silences nothing"
            + (f" (did you mean {nearest}?)" if nearest else "")
        )
    findings = check_pod(item.pod, target, reach, inputs.node, facts=facts, profile=profile)
    if findings and (config.include is not None or config.exclude or config.severity):
        findings = [_configured(f, config) for f in findings if config.checks(f.rule.id)]
    if not findings:
        return
    # In line order within the object, as a reader of the file meets them.
    line_of = item.document.line_of
    located = sorted(
        ((line_of(f.field), i, f) for i, f in enumerate(findings)),
        key=lambda entry: entry[:2],
    ) if len(findings) > 1 else [(line_of(f.field), 0, f) for f in findings]
    skips = comments.of(item.document)
    for line, _, finding in located:
        place = item.document.place(finding.field, line)
        how = "annotation"
        reason = ignored.get(finding.rule.id)
        if reason is None and skips is not None:
            reason = skips.reason(finding.rule.id, line)
            how = "comment"
        if reason is None and baseline is not None:
            reason = baseline.accepts(item.document, item.pod, finding, args.create_baseline)
            how = "baseline"
        if reason is None and threshold is not None and finding.severity >= threshold:
            session.fail(EXIT_FINDINGS)
        writer.finding(item.document, item.pod, finding, reason, place.line, how,
                       place.remark, place.also)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _nothing_checked(files: int, templates: int, left_out: str) -> str:
    """Why a run checked nothing: what was read held no manifests, or every file was
    left out (``left_out``: which, as :func:`_filter_inputs` says it)."""
    if not files and left_out:
        return f"nothing was checked: every file of the input was left out ({left_out})"
    return (f"nothing was checked: no file of the input ({_count(files, 'file')}"
            + (f"; {left_out} left out" if left_out else "") + ") held Kubernetes manifests"
            + (f" ({templates} Helm template{'s' * (templates != 1)} or "
               f"kustomization{'s' * (templates != 1)} left unrendered)" if templates else ""))


def _failed_early(args: argparse.Namespace, session: Session, record: _Record,
                  source: str | None = None) -> int:
    """A run stopped before reading any manifest (bad settings or flags): the report
    formats still get a report, with the errors as its notifications."""
    if args.output != "text":
        from kubelet_winnet._lint.report import report_writer

        report_writer(args.output, session.out).close(
            session, record.notifications(args, Config(source=source or ""), set(), None))
    return session.status


class _Record:
    """Every note and error of the run in order (bounded), for the reports: the
    session's methods, wrapped."""

    def __init__(self, session: Session) -> None:
        self.said: list[tuple[str, str]] = []
        note, error = session.note, session.error

        def noted(text: str) -> None:
            if len(self.said) < 2000:
                self.said.append(("note", printable(text)))
            note(text)

        def failed(text: str) -> None:
            if len(self.said) < 2000:
                self.said.append(("error", printable(text)))
            error(text)

        session.note = noted  # type: ignore[method-assign]
        session.error = failed  # type: ignore[method-assign]

    def notifications(self, args: argparse.Namespace, config: Config, files: set[str],
                      baseline: Baseline | None) -> list[Notification]:
        from kubelet_winnet._lint.report import Notification

        known = {printable(f) for f in (*files, *input_paths(args))}
        for extra in (args.config, config.source or None,
                      baseline.path if baseline is not None else None):
            if extra:
                known.add(printable(extra))
        out = []
        for level, text in self.said:
            source, line = _place(text, known)
            out.append(Notification(level, text, source, line))
        return out


def _place(text: str, known: set[str]) -> tuple[str | None, int]:
    """The file (one of ``known``) and line a diagnostic starts with, as every
    diagnostic names them: ``FILE:LINE: ...`` or ``FILE: ...`` (after "configuration ")."""
    rest = text.removeprefix("configuration ")
    at = rest.find(":")
    while at > 0:
        if rest[:at] in known:
            line = ""
            for char in rest[at + 1:at + 12]:
                if not char.isdigit():
                    break
                line += char
            return rest[:at], int(line) if line else 0
        at = rest.find(":", at + 1)
    return None, 0


def _configured(finding: Finding, config: Config) -> Finding:
    """The finding at the severity the configuration gives its rule: the level the user
    wrote, never lowered again for a pod pinned to no OS or without spec.os.name (a
    setting that could not raise a finding above info would be ignored silently)."""
    from kubelet_winnet._lint.rules import Severity

    level = config.severity.get(finding.rule.id)
    if level is None:
        return finding
    return dataclasses.replace(finding, severity=Severity[level.upper()])


def _rules_help(args: argparse.Namespace, session: Session) -> int:
    """``--list-rules`` and ``--explain RULE``."""
    import difflib
    import json

    from kubelet_winnet._lint.ignores import nearest_rule
    from kubelet_winnet._lint.rules import REASONS_BY_ID, RULES, RULES_BY_ID, help_url, rule_page

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
            session.error(f"--explain: {cut(args.explain, 60)} is not a rule nor an id "
                          "explain prints" + (f" (did you mean {nearest}?)" if nearest else "")
                          + "; --list-rules lists the rules")
            return session.status
        session.out.write(rule_page(rule.id))
        return session.status
    docs_url = args.docs_url
    if docs_url is not None and docs_url_error(docs_url) is not None:
        session.error(f"--docs-url {cut(docs_url, 60)!r}: {docs_url_error(docs_url)}")
        return session.status
    if args.output == "json":
        session.out.write(json.dumps([
            {"id": r.id, "severity": r.severity.label, "severityText": r.severity_text,
             "summary": r.summary,
             "severityWithoutOsName": r.severity_without_os.label
             if r.severity_without_os else None,
             "lowerWhenPinnedToNoOs": r.windows_nodes_only, "page": r.help_uri,
             **({"helpUri": help_url(r.id, docs_url)} if docs_url else {})}
            for r in RULES
        ], indent=2) + "\n")
        return session.status
    width = max(len(r.id) for r in RULES)
    column = max(len(r.severity_text) for r in RULES)
    for r in RULES:
        session.out.write(f"{r.id.ljust(width)}  {r.severity_text.ljust(column)}  "
                          f"{r.summary}\n")
    return session.status




COMMAND = Command("check", _configure_check, _run_check)
