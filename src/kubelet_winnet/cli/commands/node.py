"""``kubelet-winnet node PATH...``: one Windows node judged by its own files.

The files are read by :mod:`kubelet_winnet.sources.node`; what each class of pod gets and
the node rules of :mod:`kubelet_winnet._lint.node_rules` checked against the files are
:mod:`kubelet_winnet._lint.node_checks`; the report and its formats are
:mod:`kubelet_winnet.cli.output.node_report`. This module is the command: its flags, the run,
the exit status.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from kubelet_winnet._lint.node_checks import ignored_node_rules, node_findings, pod_classes
from kubelet_winnet._printable import cut
from kubelet_winnet.cli.output.node_report import WRITERS, NodeReport
from kubelet_winnet.cli.session import (
    EXIT_BAD_INPUT,
    EXIT_FINDINGS,
    Command,
    Session,
    add_limit_arguments,
    exit_text,
    limits_of,
)

if TYPE_CHECKING:
    from kubelet_winnet.sources.node import NodeFiles

__all__ = ["COMMAND", "FORMATS"]

FORMATS = ("text", "json", "sarif", "junit", "html")


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("node_paths", nargs="*", metavar="PATH",
                        help="a directory of one node's files, or the files: containerd "
                        "config.toml, CNI .conf/.conflist, KubeletConfiguration and "
                        "KubeProxyConfiguration YAML, kubelet or kube-proxy flags, netsh "
                        "port-range outputs, the Node object (kubectl get node NAME -o json)")
    parser.add_argument("-o", "--output", choices=FORMATS, default="text")
    parser.add_argument("--kubelet-version", metavar="VERSION",
                        help="the node's kubelet when no Node object is given")
    parser.add_argument("--runtime", metavar="NAME://VERSION",
                        help="the node's runtime (containerd://2.4.0) when no Node object "
                        "is given")
    parser.add_argument("--host-port", type=int, default=8080, metavar="PORT",
                        help="the hostPort each pod class asks for (default %(default)s)")
    parser.add_argument("--fail-on", choices=("error", "warning", "info", "never"),
                        default="warning",
                        help="exit 1 when a finding has this severity or higher")
    parser.add_argument("--ignore", action="append", default=[], metavar="RULE",
                        help="a rule not to report (repeatable); the Node object's "
                        "annotation ignore-check.kubelet-winnet.io/RULE does the same")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="say on stderr what each file was read as, one line per file")
    parser.add_argument("--list-rules", action="store_true", help="list the node rules")
    parser.add_argument("--explain", metavar="RULE", help="print a node rule's page")
    from kubelet_winnet.sources.node import NODE_LIMITS

    add_limit_arguments(parser, NODE_LIMITS.max_bytes)
    parser.epilog = exit_text(
        (0, "every file read; no finding at or above --fail-on"),
        (1, "a finding at or above --fail-on"),
        (2, "a file that cannot be read, bad flags"),
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


def _run(args: argparse.Namespace, session: Session) -> int:
    from kubelet_winnet._lint.node_rules import NODE_RULES, NODE_RULES_BY_ID, node_rule_page

    out = session.out
    if args.list_rules:
        for rule in NODE_RULES:
            out.write(f"{rule.id}  {rule.severity.label}  {rule.summary}\n")
        return session.status
    if args.explain is not None:
        if args.explain not in NODE_RULES_BY_ID:
            _no_rule(session, "--explain", args.explain)
            return session.status
        out.write(node_rule_page(args.explain))
        return session.status
    report = NodeReport()
    _judge(args, session, report)
    # A stopped run too: a missing report reads as "nothing found".
    WRITERS[args.output](session, report)
    return session.status


def _no_rule(session: Session, where: str, name: str) -> None:
    from kubelet_winnet._lint.node_rules import nearest_node_rule

    near = nearest_node_rule(name)
    session.error(f"{where}: no node rule {name!r}" + (f"; did you mean {near}?" if near else ""))


def _arguments(args: argparse.Namespace, session: Session) -> None:
    from kubelet_winnet._lint.node_rules import NODE_RULES_BY_ID
    from kubelet_winnet.errors import InvalidArgumentError
    from kubelet_winnet.runtime._releases import RUNTIME_FORM, check_runtime

    for name in args.ignore:
        if name not in NODE_RULES_BY_ID:
            _no_rule(session, "--ignore", name)
    if args.runtime is not None:
        try:
            check_runtime(args.runtime, "--runtime")
            if not args.runtime:  # the library's "not known"; the flag says a runtime
                raise InvalidArgumentError("--runtime", RUNTIME_FORM, "''")
        except InvalidArgumentError as exc:
            session.error(str(exc))
    if not 1 <= args.host_port <= 65535:
        session.error(f"--host-port: {args.host_port} is not a port (1 to 65535)")
    if not args.node_paths:
        session.error("node: name a directory of one node's files, or the files")


def _judge(args: argparse.Namespace, session: Session, report: NodeReport) -> None:
    """Fill ``report``; ``report.stopped`` says why when the node cannot be judged."""
    from kubelet_winnet import DEFAULT_KUBELET_VERSION, parse_kubelet_version
    from kubelet_winnet._lint.node_rules import NODE_RULES_BY_ID, nearest_node_rule
    from kubelet_winnet._lint.rules import Severity
    from kubelet_winnet._printable import printable
    from kubelet_winnet.errors import UnsupportedVersionError, WinnetError
    from kubelet_winnet.sources.node import read_node

    _arguments(args, session)
    if session.status == EXIT_BAD_INPUT:
        report.stopped = "the command line is not valid; the errors say why"
        return
    files = read_node(args.node_paths, limits_of(args))
    session.files = files.files
    report.files = files.read_as
    for problem in files.errors:
        session.error(str(problem))
    for skipped in files.skipped:
        session.note(skipped)
    if args.verbose:
        for path, what in files.read_as:
            # "not read: why" and "not a node file" say it themselves: no "read as"
            said = what if what.startswith(("not read:", "not a node file")) else (
                f"read as {what}")
            session.err.write(printable(f"{session.prog}: {path}: {said}") + "\n")
    if files.empty:  # an empty run is not a pass (as check's), nor a table of defaults
        if not files.errors:
            count = f"{files.files} file" + ("" if files.files == 1 else "s")
            session.error(f"node: no node file in {', '.join(args.node_paths)} ({count} read)")
        report.stopped = "no file was read as a node file; the errors say why"
        return
    node = files.node
    report.name = node.name if node else report.name
    kubelet = (node.kubelet_version if node and node.kubelet_version
               else args.kubelet_version or DEFAULT_KUBELET_VERSION)
    report.kubelet = kubelet
    if not (node and node.kubelet_version) and not args.kubelet_version:
        session.note(f"no Node object and no --kubelet-version: the node is judged as "
                     f"kubelet {DEFAULT_KUBELET_VERSION}")
    try:  # a version the rules cannot judge must not pass their checks in silence
        parse_kubelet_version(kubelet)
    except UnsupportedVersionError as exc:
        given = (f"{node.source}:{node.kubelet_version_line}: status.nodeInfo.kubeletVersion"
                 if node and node.kubelet_version else "--kubelet-version")
        session.error(f"{given} {cut(kubelet, 80)!r}: {exc.reason}")
        report.stopped = "the kubelet version is not one the rules can judge"
        return
    runtime = node.runtime if node and node.runtime else args.runtime or ""
    report.runtime = runtime
    try:
        findings = node_findings(files, kubelet_version=args.kubelet_version,
                                 runtime=args.runtime or None)
        classes = pod_classes(files, args.host_port, kubelet, runtime, findings)
    except WinnetError as exc:  # a NodeConfigError from facts the files contradict
        session.error(str(exc))
        report.stopped = "the node's files contradict each other; the errors say why"
        return
    ignored = ignored_node_rules(files, args.ignore)
    for rule_id in ignored:
        if rule_id not in NODE_RULES_BY_ID:
            near = nearest_node_rule(rule_id)
            session.note(f"the Node object's ignore annotation names no node rule "
                         f"{rule_id!r}" + (f"; did you mean {near}?" if near else ""))
    threshold = None if args.fail_on == "never" else Severity[args.fail_on.upper()]
    shown = [f for f in findings if f.rule.id not in ignored]
    if threshold is not None and any(f.severity >= threshold for f in shown):
        session.fail(EXIT_FINDINGS)
    note = _judged_without(files)
    if note:  # the table stands on the files that were read, and says so
        session.note(note)
    report.classes, report.findings = classes, list(findings)
    report.ignored, report.threshold = ignored, threshold
    report.node_files = files


def _judged_without(files: NodeFiles) -> str:
    """The note for a table judged without the files that could not be read, or "". A
    config.toml containerd cannot decode is judged: containerd does not start with it."""
    from kubelet_winnet.sources.node.containerd import ContainerdDecodeError

    unread = [e for e in files.errors if not isinstance(e, ContainerdDecodeError)]
    if not unread:
        return ""
    one = len(unread) == 1
    return (f"the pod classes are judged without the {len(unread)} file{'' if one else 's'} "
            f"that could not be read (the error{'' if one else 's'} above): what "
            f"{'it says' if one else 'they say'} is not known here"
            + ("; containerd's default configuration stands in for the node's config.toml"
               if files.containerd is None and len(unread) == len(files.errors) and any(
                   (e.file or e.where).lower().endswith(".toml") for e in unread)
               else ""))


COMMAND = Command("node", _configure, _run)
