"""``kubelet-winnet audit``: every Windows pod of a cluster, judged by the node it runs on.

For each pod: the node, that node's kubelet version (``status.nodeInfo.kubeletVersion``)
and runtime (``containerRuntimeVersion``), and the judgement of the pod on that node,
rendered: the command decides nothing itself. The ``check`` findings come from the same
verdict.

This module is the run: flags, the source, the order of the objects, the exit status.
:class:`~kubelet_winnet._lint.auditor.Auditor` is the pure part (objects in,
:class:`~kubelet_winnet._lint.audit_records.PodAudit` out); the records and their writers
are :mod:`kubelet_winnet.cli.output.audit_report`; the sources live in
:mod:`kubelet_winnet.sources.cluster.source`.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TextIO

from kubelet_winnet import DEFAULT_KUBELET_VERSION, kubelet_profile
from kubelet_winnet._lint.audit_records import Totals, record_rule
from kubelet_winnet._lint.auditor import Auditor
from kubelet_winnet._lint.rules import Severity
from kubelet_winnet._printable import clip
from kubelet_winnet.cli.output.audit_report import EFFECT_TEXT, Writer, writer_for
from kubelet_winnet.cli.session import Command
from kubelet_winnet.errors import (
    ClusterAccessError,
    FeatureGateError,
    InvalidPodError,
    UnsupportedVersionError,
)
from kubelet_winnet.sources.cluster.source import (
    DEFAULT_PAGE_BYTES,
    DEFAULT_PAGE_SIZE,
    DEFAULT_REQUEST_TIMEOUT,
    ClusterObject,
    LiveCluster,
    dump_objects,
    parse_timeout,
)

if TYPE_CHECKING:
    from kubelet_winnet._lint.node_checks import NodeFinding
    from kubelet_winnet.cli.session import Session

__all__ = ["COMMAND", "configure_audit", "run_audit"]

# --- command line --------------------------------------------------------------------------


def configure_audit(parser: argparse.ArgumentParser) -> None:
    from kubelet_winnet.cli.session import add_limit_arguments, exit_text, positive_int

    parser.epilog = exit_text(
        (0, "the cluster (or every dump) read; no finding at or above --fail-on that no "
         "ignore annotation silences (always with --fail-on never)"),
        (1, "a finding at or above --fail-on that no ignore annotation silences"),
        (2, "a cluster or dump that cannot be read, wholly or in part (what was read is "
         "still reported), bad flags or usage, or output that cannot be written"),
    )

    source = parser.add_argument_group("source (live by default; a dump with -f)")
    source.add_argument("-f", "--filename", action="append", default=[], metavar="FILE",
                        help="read a dump (kubectl get nodes,pods -A -o json) instead of the "
                        "API server; repeatable, - for stdin, directories searched")
    source.add_argument("--kubeconfig", default=None,
                        help="kubeconfig file (default: KUBECONFIG or ~/.kube/config)")
    source.add_argument("--context", default=None, help="kubeconfig context to use")
    source.add_argument("-n", "--namespace", default=None,
                        help="namespace of the pods (default: the context's, else default)")
    source.add_argument("-A", "--all-namespaces", action="store_true",
                        help="pods of every namespace")
    source.add_argument("--page-size", type=positive_int, default=DEFAULT_PAGE_SIZE,
                        metavar="N", help="objects per list request (default %(default)s)")
    source.add_argument("--request-timeout", type=_timeout, default=DEFAULT_REQUEST_TIMEOUT,
                        metavar="DURATION",
                        help="the longest one list request may take, body included, "
                        "spelled as kubectl spells it: whole seconds, or 1s, 2m, 3h; 0 for "
                        f"no limit (default {DEFAULT_REQUEST_TIMEOUT:g}s; kubectl's is 0)")
    parser.add_argument(
        "--kubelet-version", default=DEFAULT_KUBELET_VERSION,
        help="kubelet release for pods without a node that reports one (default "
        f"{DEFAULT_KUBELET_VERSION}: the newest kubelet that sends hostNetwork to the "
        "runtime); a pod on a node is judged by that node's kubelet",
    )
    parser.add_argument(
        "--feature-gates", default=None,
        help="--feature-gates of every kubelet, e.g. WindowsHostNetwork=false (nodes do "
        "not publish theirs)",
    )
    parser.add_argument(
        "--node-config", metavar="DIR",
        help="a directory per node, named by node name, of the files kubelet-winnet node "
        "reads: each pod's row then says what its network and hostPorts get on that node",
    )
    parser.add_argument("-o", "--output", choices=("text", "json", "csv", "html"),
                        default="text",
                        help="text: a table per namespace with totals; json: every pod and "
                        "the totals; csv: one row per pod; html: one self-contained page "
                        "(a summary, a card per node, the pods with something to say)")
    parser.add_argument("--output-file", metavar="FILE",
                        help="write the output to FILE instead of stdout")
    parser.add_argument(
        "--docs-url", metavar="URL",
        help="where the rule pages are published: -o html links each rule to URL/<rule-id>.md "
        "({rule} in URL is replaced by the id instead); default: the rule pages embedded",
    )
    parser.add_argument(
        "--fail-on", choices=("error", "warning", "info", "never"), default="warning",
        help="exit 1 when a finding has this severity or higher; never: report only, as "
        "check takes it (default %(default)s)",
    )
    add_limit_arguments(
        parser, _DUMP_MAX_BYTES,
        f"bytes read per dump file (default {_DUMP_MAX_BYTES}: a dump of a large cluster "
        "is big; memory does not grow with it), or per page of a live list (default "
        f"{DEFAULT_PAGE_BYTES})",
    )
    parser.set_defaults(max_bytes=None)  # each source has its own default


def _timeout(text: str) -> float:
    try:
        return parse_timeout(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


_DUMP_MAX_BYTES = 4 * 1024**3
_LARGE_DUMP = 8 * 1024 * 1024  # bytes of dump, or ...
_LARGE_LIST = 2000  # ... pods announced by the API server, before a progress bar shows


class _Progress:
    """A tqdm bar on stderr, only when stderr is a terminal and the work is large; tqdm
    is optional (the ``audit`` extra)."""

    def __init__(self, err: TextIO) -> None:
        self._err = err
        self._bar: Any = None
        self._enabled = _isatty(err)

    def start(self, total: int | None, large: bool) -> None:
        if not self._enabled or not large or self._bar is not None:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            self._enabled = False
            return
        self._bar = tqdm(total=total, unit="pod", file=self._err, leave=False,
                         dynamic_ncols=True)

    def update(self) -> None:
        if self._bar is not None:
            self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def run_audit(args: argparse.Namespace, session: Session) -> int:
    try:
        kubelet_profile(args.kubelet_version, args.feature_gates)
    except FeatureGateError as exc:  # the kubelet's text, after where the value is
        session.error(f"--feature-gates {json.dumps(args.feature_gates)}: {exc}")
        return session.status
    except UnsupportedVersionError as exc:
        session.error(f"--kubelet-version {json.dumps(args.kubelet_version)}: {exc.reason}")
        return session.status
    if args.filename and (args.kubeconfig or args.context or args.namespace
                          or args.all_namespaces):
        session.error("-f reads a dump: --kubeconfig, --context, -n and -A are for the "
                      "live API server")
        return session.status
    if args.docs_url is not None:
        from kubelet_winnet.cli.config import docs_url_error

        why = docs_url_error(args.docs_url)
        if why is not None:
            session.error(f"--docs-url {clip(args.docs_url, 80)!r}: {why}")
            return session.status
    from kubelet_winnet.cli.output.audit_page import SpoolError

    if args.output_file is None:
        try:  # the page goes to stdout only once its spool is whole (audit_page)
            return _audit(args, session)
        except SpoolError as exc:
            session.error(str(exc))
            return session.status
    try:
        output = _OutputFile(args.output_file)
    except OSError as exc:
        session.error(f"--output-file {clip(args.output_file, 200)}: cannot write: "
                      f"{exc.strerror or type(exc).__name__}")
        return session.status
    try:
        session.out = output.stream
        status = _audit(args, session)
        output.commit()
        return status
    except SpoolError as exc:
        session.error(f"{exc}; {clip(args.output_file, 200)} is left as it was")
        return session.status
    finally:
        output.discard()  # what was not committed (an error, a signal) is removed


class _OutputFile:
    """``--output-file FILE``, whole or not at all: the output is written to a temporary
    file beside FILE (its name starts with ``.FILE.``), which :meth:`commit` renames over
    FILE once the output is complete. A run that ends before (the page's spool full,
    SIGTERM, SIGHUP, SIGINT) removes it and leaves FILE as it was; only SIGKILL can leave
    the temporary file. A FILE that is not a regular file (``/dev/stdout``, a FIFO) is
    written in place."""

    def __init__(self, path: str) -> None:
        real = os.path.realpath(path)
        self._temp: str | None = None
        self._target = real
        if os.path.exists(real) and not os.path.isfile(real):
            self.stream: TextIO = open(path, "w", encoding="utf-8")  # noqa: SIM115
            return
        fd, self._temp = tempfile.mkstemp(dir=os.path.dirname(real),
                                          prefix=f".{os.path.basename(real)}.", suffix=".tmp")
        try:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(self._temp, 0o666 & ~umask)  # as open() would have created FILE
            self.stream = open(fd, "w", encoding="utf-8")  # noqa: SIM115
        except BaseException:
            os.close(fd)
            self.discard()
            raise

    def commit(self) -> None:
        self.stream.close()
        if self._temp is not None:
            os.replace(self._temp, self._target)
            self._temp = None

    def discard(self) -> None:
        import contextlib

        with contextlib.suppress(OSError):
            if hasattr(self, "stream"):
                self.stream.close()
            if self._temp is not None:
                os.unlink(self._temp)
                self._temp = None


def _html_writer(auditor: Auditor, args: argparse.Namespace) -> Callable[[TextIO], Writer]:
    """``-o html``: the page of :mod:`kubelet_winnet.cli.output.audit_page`, each node's card from
    its Node object and (``--node-config``) its files, as ``node`` reads them."""
    from kubelet_winnet.cli.output.audit_page import PageWriter
    from kubelet_winnet.cli.output.node_report import node_card

    def card(name: str) -> Any:
        node = auditor.nodes.get(name)
        note = ("not in the input: its pods are judged as --kubelet-version" if node is None
                else "" if node.os else "does not report its OS")
        kubelet = node.kubelet_version if node is not None else ""
        if node is not None and not kubelet:
            note += (f"{'; ' if note else ''}reports no kubelet version: judged as "
                     f"--kubelet-version {args.kubelet_version}")
        return node_card(name, kubelet or args.kubelet_version,
                         node.runtime if node is not None else "",
                         auditor.node_files.get(name), args.feature_gates, note=note)

    def names() -> list[str]:
        return [n.name for n in auditor.nodes.values() if n.os == "windows"]

    return lambda out: PageWriter(out, card, names, EFFECT_TEXT, args.docs_url)


def _unmatched_node_folders(folders: Mapping[str, object], nodes: Iterable[str],
                            directory: str, session: Session) -> None:
    """An error for each ``--node-config`` folder named after no node of the input: its
    files judged nothing (a typo in the folder name, or the wrong cluster)."""
    seen = set(nodes)
    for name in folders:
        if name not in seen:
            session.error(f"--node-config {os.path.join(directory, name)}: no node {name!r} in "
                          f"the input ({len(seen)} node{'' if len(seen) == 1 else 's'}); "
                          "name each folder after its node")


def _audit(args: argparse.Namespace, session: Session) -> int:
    auditor = Auditor(args.kubelet_version, args.feature_gates)
    if args.node_config is not None:
        from kubelet_winnet.sources.node.folders import read_node_folders

        folders = read_node_folders(args.node_config)
        for kind, text in folders.messages:
            (session.error if kind == "error" else session.note)(text)
        auditor.node_files = folders.found
        auditor.node_config = True
    make_writer = (_html_writer(auditor, args) if args.output == "html"
                   else writer_for(args.output, args.node_config is not None))
    # Made at the first pod (or at the end): when nothing could be read, the error line on
    # stderr is the whole answer, not a table of zeros under it.
    writer: Writer | None = None
    read = 0  # objects of the input, of any kind
    # never: above every severity, so no finding fails the run.
    threshold = {"error": 3, "warning": 2, "info": 1, "never": 4}[args.fail_on]
    rank = {s.label: s.value for s in Severity}
    totals = Totals()
    rules: set[str] = set()
    progress = _Progress(session.err)
    live = None
    error: str | None = None
    other_kinds = _Kinds()  # objects of a dump that are neither Pods nor Nodes
    try:
        objects, live = _source(args, session, progress, other_kinds)
        def counted(objects: Iterator[ClusterObject]) -> Iterator[ClusterObject]:
            nonlocal read
            for item in objects:
                read += 1
                yield item

        for item in _ordered(counted(objects), auditor):
            if live is not None and live.expected_pods is not None:
                progress.start(live.expected_pods, live.expected_pods >= _LARGE_LIST)
            progress.update()
            try:
                record = auditor.pod(item.value, item.where)
            except InvalidPodError as exc:
                session.error(f"{item.where}: {exc}")
                continue
            if record is None:
                continue
            totals.add(record)
            for finding in record.findings:
                rules.add(finding.rule)
                if finding.ignored is None and rank[finding.severity] >= threshold:
                    session.fail(1)
            if writer is None:
                writer = make_writer(session.out)
            writer.add(record)
    except ClusterAccessError as exc:
        error = str(exc)
        session.error(error)
    progress.close()
    if args.node_config is not None and error is None:
        _unmatched_node_folders(auditor.node_files, auditor.nodes, args.node_config, session)
    node_findings = auditor.node_findings()
    for name, found in node_findings.items():
        for own in found:
            if own.severity.value >= threshold:
                session.fail(1)
            if args.output == "csv":  # one row per pod: the node's own findings on stderr
                where = f"{own.source}:{own.line}" if own.line else own.source
                session.note(f"node {name}: {where}: {own.severity.label} "
                             f"{own.rule.id}: {own.message}")
    summary = _summary(args, auditor, rules, node_findings)
    if error is not None:  # what was read is still reported, marked incomplete
        summary["error"] = error
    nothing_read = not read and not other_kinds.count and session.errors > 0
    if writer is None and not (nothing_read and args.output != "json"):
        # JSON stays one document (its summary carries the error); text and CSV say nothing.
        writer = make_writer(session.out)
    if writer is not None:
        writer.close(summary, totals, rules)
    _note_other_kinds(session, other_kinds)
    return session.status


def _source(args: argparse.Namespace, session: Session, progress: _Progress,
            other_kinds: _Kinds) -> tuple[Iterator[ClusterObject], LiveCluster | None]:
    """The objects to audit: a dump's, or the live cluster's (then also the cluster)."""
    if args.filename:
        size = sum(_size(p) for p in args.filename)
        progress.start(None, size >= _LARGE_DUMP)
        return _dump(args, session, other_kinds.add), None
    live = LiveCluster(args.kubeconfig, args.context, args.namespace,
                       args.all_namespaces, args.page_size,
                       request_timeout=args.request_timeout,
                       max_page_bytes=args.max_bytes or DEFAULT_PAGE_BYTES)
    return live.objects(), live


def _summary(args: argparse.Namespace, auditor: Auditor, rules: set[str],
             node_findings: dict[str, list[NodeFinding]]) -> dict[str, Any]:
    """The run's summary: the source, the nodes, what was skipped, the rules named."""
    return {
        "source": "dump" if args.filename else "live",
        "nodes": len(auditor.nodes),
        "windowsNodes": auditor.windows_nodes,
        "defaultKubelet": args.kubelet_version,
        "featureGates": args.feature_gates,
        "skipped": dict(auditor.skipped),
        "rules": {rule: record_rule(rule).help_uri for rule in sorted(rules)},
        **({"nodeFindings": {
            name: [{"rule": f.rule.id, "severity": f.severity.label, "message": f.message,
                    "file": f.source, "line": f.line} for f in found]
            for name, found in node_findings.items()}} if args.node_config is not None else {}),
    }


def _note_other_kinds(session: Session, other_kinds: _Kinds) -> None:
    """A note for the objects of a dump that are neither Pods nor Nodes."""
    if not other_kinds.count:
        return
    count = other_kinds.count
    kinds = sorted(other_kinds.kinds)
    shown = ", ".join(kinds[:5]) + (", ..." if len(kinds) > 5 or other_kinds.more else "")
    session.note(
        f"not audited: {count} object{'s' * (count != 1)} that {'is' if count == 1 else 'are'} "
        f"neither a Pod nor a Node{f' ({shown})' if shown else ''}; audit judges pods "
        f"where they run, {session.prog} check lints manifests and workload templates"
    )


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size if path != "-" else 0
    except OSError:
        return 0


def _dump(
    args: argparse.Namespace, session: Session, others: Callable[[object], None]
) -> Iterator[ClusterObject]:
    from kubelet_winnet.cli.session import limits_of

    limits = replace(limits_of(args), max_bytes=args.max_bytes or _DUMP_MAX_BYTES)
    return dump_objects(args.filename, session.error, limits, others, session.note)


@dataclass
class _Kinds:
    """How many objects of other kinds, and the first of their kinds in sorted order:
    a count, not a list, so a dump of a million ConfigMaps costs nothing."""

    count: int = 0
    kinds: set[str] = field(default_factory=set)  # at most 6, each clipped
    more: bool = False  # kinds were dropped

    def add(self, kind: object) -> None:
        self.count += 1
        if isinstance(kind, str):
            kind = kind[:60]
            if kind not in self.kinds:
                self.kinds.add(kind)
                if len(self.kinds) > 6:
                    self.kinds.remove(max(self.kinds))
                    self.more = True


def _ordered(objects: Iterator[ClusterObject], auditor: Auditor) -> Iterator[ClusterObject]:
    """Pods, each after its node wherever the node comes in the input. Nodes normally
    come first (the live source, ``kubectl get nodes,pods``); a scheduled pod whose node
    has not been seen yet (``[Node n1, Pod on n2, Node n2]``, or nodes in a later ``-f``
    file) waits in a temporary file (one JSON line each) until the input ends, so memory
    does not grow with the pods that wait; disk holds them meanwhile. A pod whose node
    never comes is then judged as one whose node is not in the input."""
    nodes = auditor.nodes
    with tempfile.TemporaryFile("w+", encoding="utf-8") as pending:
        waiting = 0
        for item in objects:
            if item.kind == "Node":
                auditor.node(item.value)
                continue
            if item.kind == "RuntimeClass":  # before the pods: kubectl get runtimeclasses,...
                auditor.runtime_class(item.value)
                continue
            spec = item.value.get("spec")
            node = spec.get("nodeName") if isinstance(spec, Mapping) else None
            if isinstance(node, str) and node and node not in nodes:
                pending.write(json.dumps([item.where, item.value]) + "\n")
                waiting += 1
                continue
            yield item
        if not waiting:
            return
        pending.seek(0)
        for line in pending:
            where, value = json.loads(line)
            yield ClusterObject("Pod", value, where)


COMMAND = Command("audit", configure_audit, run_audit)
