"""``kubelet-winnet check``: the linter over manifests (the rules are
:mod:`kubelet_winnet._lint.rules`)."""

from __future__ import annotations

import argparse

from kubelet_winnet.cli.session import (
    EXIT_FINDINGS,
    EXIT_TEXT,
    Command,
    Session,
    add_input_arguments,
    add_profile_arguments,
    check_profile,
    invalid_pod,
    pods,
    report_skipped,
)
from kubelet_winnet.errors import InvalidPodError, WinnetError

__all__ = ["COMMAND"]



def _configure_check(parser: argparse.ArgumentParser) -> None:
    from kubelet_winnet._lint.rules import RULES

    add_input_arguments(parser)
    add_profile_arguments(parser)
    parser.add_argument(
        "-o", "--output", choices=("text", "json", "sarif"), default="text",
        help="text: file:line: severity rule-id: message [field]; json: findings and a "
        "summary; sarif: SARIF 2.1.0",
    )
    parser.add_argument(
        "--fail-on", choices=("error", "warning", "info"), default="warning",
        help="exit 1 when a finding has this severity or higher (default %(default)s)",
    )
    parser.epilog = (
        "rules: " + ", ".join(
            f"{r.id} ({r.severity.label}"
            + (f", {r.severity_without_os.label} without spec.os.name: windows"
               if r.severity_without_os is not None else "")
            + ")"
            for r in RULES
        )
        + ". Ignore one for an object with the annotation "
        "ignore-check.kubelet-winnet.io/<rule-id>: \"<reason>\" on the object or its pod "
        "template.\n\n" + EXIT_TEXT
    )


def _run_check(args: argparse.Namespace, session: Session) -> int:
    from kubelet_winnet._lint.report import report_writer
    from kubelet_winnet._lint.rules import check_pod, host_network_reach

    if not check_profile(args, session):
        return session.status
    from kubelet_winnet._kubelet.pod import read_pod

    reach = host_network_reach(args.kubelet_version, args.feature_gates)
    threshold = {"error": 3, "warning": 2, "info": 1}[args.fail_on]
    writer = report_writer(args.output, session.out)
    for item in pods(args, session):
        try:  # the library's reading: "true" is not true, wrong types are bad input
            read_pod(item.document.value)
        except InvalidPodError as exc:
            session.pods -= 1  # read, but not checked: an input error instead
            invalid_pod(session, item.document, exc)
            continue
        except WinnetError as exc:
            session.error(f"{item.where}: document {item.document.document}: {exc}")
            continue
        findings = check_pod(item.pod, item.target, reach)
        if not findings:
            continue
        from kubelet_winnet._lint.rules import ignored_rules

        ignored = ignored_rules(item.pod)
        # In line order within the object, as a reader of the file meets them.
        located = sorted(
            ((item.document.line_of(f.field), i, f) for i, f in enumerate(findings)),
            key=lambda entry: entry[:2],
        )
        for line, _, finding in located:
            reason = ignored.get(finding.rule.id)
            if reason is None and finding.severity >= threshold:
                session.fail(EXIT_FINDINGS)
            writer.finding(item.document, item.pod, finding, reason, line)
    writer.close(session)
    if args.verbose:
        session.err.write(f"kubelet-winnet: {writer.summary(session)}\n")
    elif args.output == "text":
        report_skipped(session)
    return session.status


COMMAND = Command("check", _configure_check, _run_check)
