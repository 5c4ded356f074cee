"""``check`` findings as text, JSON, SARIF 2.1.0 or JUnit XML, written as they are found
(JUnit at the end: its counts come first)."""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from kubelet_winnet._describe import describe_path
from kubelet_winnet._describe import json_string as _quote
from kubelet_winnet._lint.rules import RULES, Finding, Rule, Severity, help_url, rule_page
from kubelet_winnet._lint.targeting import PodObject
from kubelet_winnet._printable import printable

__all__ = ["FORMATS", "SUPPRESSIONS", "Notification", "Options", "ReportWriter",
           "report_writer", "xml_text"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_RULE_INDEX = {rule.id: index for index, rule in enumerate(RULES)}
# How a finding is silenced: the ignore annotation, an ignore comment in the file, or an
# entry of the --baseline file (SARIF: inSource, inSource, external).
SUPPRESSIONS = ("annotation", "comment", "baseline")


@dataclass(frozen=True)
class Notification:
    """A note or input error of the run, where it is known: ``source`` (None: not a
    file), ``line`` (0: unknown)."""

    level: str  # "error" or "note"
    text: str
    source: str | None = None
    line: int = 0


class Document(Protocol):
    """Where a finding's object was read: the command line's input documents fit."""

    @property
    def source(self) -> str: ...
    @property
    def document(self) -> int: ...
    @property
    def item(self) -> int | None: ...


class Session(Protocol):
    """What a run has counted: the command line's session fits."""

    pods: int
    skipped_linux: int
    skipped_untargeted: int
    errors: int
    status: int
    diagnostics: list[str]  # the input errors' texts (bounded)


class ReportWriter(Protocol):
    def finding(
        self, document: Document, pod: PodObject, finding: Finding, ignored: str | None,
        line: int, how: str = "annotation", remark: str = "",
        also: tuple[str, int] | None = None,
    ) -> None: ...

    def pod(self, document: Document, pod: PodObject) -> None: ...

    def close(self, session: Session, notifications: Sequence[Notification] = ()) -> None: ...

    def summary(self, session: Session, files: int | None = None) -> str: ...


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


class _Base:
    def __init__(self, out: TextIO, options: Options | None = None) -> None:
        self._out = out
        self._options = options or Options()
        self.counts = dict.fromkeys(Severity, 0)
        self.ignored = 0  # by annotation
        self.commented = 0  # by an ignore comment
        self.baselined = 0  # accepted by the baseline

    def pod(self, document: Document, pod: PodObject) -> None:
        """A pod that was checked (JUnit lists the ones without findings)."""

    def _count(self, finding: Finding, ignored: str | None, how: str) -> None:
        if ignored is None:
            self.counts[finding.severity] += 1
        elif how == "baseline":
            self.baselined += 1
        elif how == "comment":
            self.commented += 1
        else:
            self.ignored += 1

    def summary(self, session: Session, files: int | None = None) -> str:
        where = "" if files is None else f" in {_count(files, 'file')}"
        return (
            f"{_count(session.pods, 'pod')}{where} checked: "
            f"{_count(self.counts[Severity.ERROR], 'error')}, "
            f"{_count(self.counts[Severity.WARNING], 'warning')}, "
            f"{self.counts[Severity.INFO]} info, "
            + (f"{self.ignored} ignored by annotation" if not self.commented else
               f"{self.ignored + self.commented} ignored by annotation or comment")
            + (f", {self.baselined} in the baseline" if self.baselined else "") + "; "
            f"{session.skipped_linux} Linux-targeted and {session.skipped_untargeted} "
            f"untargeted {'pod' if session.skipped_untargeted == 1 else 'pods'} skipped; "
            f"{_count(session.errors, 'input error')}"
        )

    def _summary_dict(self, session: Session) -> dict[str, int]:
        return {
            "podsChecked": session.pods,
            "errors": self.counts[Severity.ERROR],
            "warnings": self.counts[Severity.WARNING],
            "info": self.counts[Severity.INFO],
            "ignored": self.ignored,
            "ignoredByComment": self.commented,
            "baseline": self.baselined,
            "linuxPodsSkipped": session.skipped_linux,
            "untargetedPodsSkipped": session.skipped_untargeted,
            "inputErrors": session.errors,
        }


def _object(pod: PodObject) -> dict[str, str]:
    metadata = pod.manifest.get("metadata")
    out = {"kind": pod.kind}
    if isinstance(metadata, dict):
        for key in ("namespace", "name"):
            value = metadata.get(key)
            if isinstance(value, str):
                out[key] = value
    return out


def _object_json(pod: PodObject) -> str:
    """``json.dumps(_object(pod))``."""
    return "{" + ", ".join(f"{_quote(k)}: {_quote(v)}" for k, v in _object(pod).items()) + "}"




def _subject(pod: PodObject, finding: Finding) -> str:
    text = pod.identity
    if finding.container is not None:
        text += f" container {finding.container}"
    return text


class Options:
    """How findings are written: ``threshold`` (the --fail-on severity, None: never),
    ``details`` (text: the detail under each finding), ``colour`` (text: ANSI colours),
    ``docs_url`` (where the rule pages are published: helpUri; None: no helpUri)."""

    def __init__(self, threshold: Severity | None = Severity.WARNING, details: bool = False,
                 colour: bool = False, docs_url: str | None = None) -> None:
        self.threshold = threshold
        self.details = details
        self.colour = colour
        self.docs_url = docs_url


_COLOURS = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m",
            Severity.INFO: "\033[36m"}


class _Text(_Base):
    def finding(
        self, document: Document, pod: PodObject, finding: Finding, ignored: str | None,
        line: int, how: str = "annotation", remark: str = "",
        also: tuple[str, int] | None = None,
    ) -> None:
        self._count(finding, ignored, how)
        if ignored is not None:
            return
        label = finding.severity.label
        if self._options.colour:  # after escaping: the colour codes are ours
            label = f"{_COLOURS[finding.severity]}\033[1m{label}\033[0m"
        self._out.write(
            printable(f"{document.source}:{line}:") + f" {label} " + printable(
                f"{finding.rule.id}: {_subject(pod, finding)}: {finding.message} "
                f"[{describe_path(finding.field)}]" + (f" ({remark})" if remark else "")
            ) + "\n"
        )
        if self._options.details and finding.detail:
            self._out.write(f"    {printable(finding.detail)}\n")

    def close(self, session: Session, notifications: Sequence[Notification] = ()) -> None:
        pass


class _Json(_Base):
    def __init__(self, out: TextIO, options: Options | None = None) -> None:
        super().__init__(out, options)
        out.write('{\n"findings": [')
        self._first = True

    def finding(
        self, document: Document, pod: PodObject, finding: Finding, ignored: str | None,
        line: int, how: str = "annotation", remark: str = "",
        also: tuple[str, int] | None = None,
    ) -> None:
        self._count(finding, ignored, how)
        if ignored is not None:
            return
        # json.dumps of the record, written by hand with the C function behind it for
        # the strings (tests/lint/test_report.py compares the bytes with json.dumps).
        # Where first (file, line, document, item), then what, as in every JSON output.
        quote = _quote
        item = document.item
        container = finding.container
        uri = help_url(finding.rule.id, self._options.docs_url)
        self._out.write(
            f'{"" if self._first else ","}\n{{"file": {quote(document.source)}, '
            f'"line": {int(line)}, "document": {int(document.document)}, '
            f'"item": {"null" if item is None else int(item)}, '
            f'"object": {_object_json(pod)}, '
            f'"container": {"null" if container is None else quote(container)}, '
            f'"field": {quote(describe_path(finding.field))}, '
            f'"rule": {quote(finding.rule.id)}, '
            f'"severity": "{finding.severity.label}", "message": {quote(finding.text)}, '
            f'"headline": {quote(finding.message)}'
            + (f', "remark": {quote(remark)}' if remark else "")
            + (f', "related": {{"file": {quote(also[0])}, "line": {int(also[1])}}}'
               if also else "")
            + ("}" if uri is None else f', "helpUri": {quote(uri)}}}')
        )
        self._first = False

    def close(self, session: Session, notifications: Sequence[Notification] = ()) -> None:
        summary = json.dumps(self._summary_dict(session))
        notes = json.dumps([
            {"level": n.level, "message": n.text, "file": n.source, "line": n.line or None}
            for n in notifications
        ])
        self._out.write(("" if self._first else "\n")
                        + f'],\n"notifications": {notes},\n"summary": {summary}\n}}\n')


# What XML 1.0 forbids in a document (its production Char): C0 controls but tab, LF and
# CR, the surrogates (lone ones reach us from file names that are not UTF-8), U+FFFE and
# U+FFFF.
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_text(text: str) -> str:
    """``text`` with each character XML 1.0 forbids written as ``\\xNN`` or ``\\uXXXX``
    text, the notation of every other diagnostic (_printable.py)."""
    return _NOT_XML.sub(_escaped, text)


def _quoteattr(text: str) -> str:
    """An XML attribute value, quoted (xml.sax.saxutils imported on first use: it loads
    urllib.request, a fifth of ``check``'s start-up)."""
    from xml.sax.saxutils import quoteattr as quote

    return quote(xml_text(text))


def _xml_escape(text: str) -> str:
    from xml.sax.saxutils import escape

    return escape(xml_text(text))


def _uri(source: str) -> str:
    """An RFC 3986 URI reference for a file name: its bytes percent-encoded, so a name
    that is not UTF-8 (lone surrogates from the file system) names the same bytes."""
    if source == "<stdin>":
        return "stdin"
    try:
        raw = os.fsencode(source.replace(os.sep, "/"))
    except UnicodeEncodeError:  # a lone surrogate no file system name decodes to
        raw = source.replace(os.sep, "/").encode("utf-8", "surrogatepass")
    if os.path.isabs(source):
        return "file://" + urllib.parse.quote(raw)
    return urllib.parse.quote(raw)


#: The line breaks every line of a report counts: editors' and code scanning's.
NEWLINE_SEQUENCES = ["\r\n", "\n", "\r"]


class _Sarif(_Base):
    def __init__(self, out: TextIO, options: Options | None = None) -> None:
        super().__init__(out, options)
        from kubelet_winnet import __version__

        base = self._options.docs_url
        rules: list[dict[str, Any]] = []
        for rule in RULES:
            entry: dict[str, Any] = {
                "id": rule.id,
                "shortDescription": {"text": rule.summary},
                "help": {"text": rule.summary, "markdown": rule_page(rule.id)},
                "defaultConfiguration": {"level": rule.severity.sarif_level},
            }
            uri = help_url(rule.id, base)
            if uri is not None:  # only under a configured base: never a guessed address
                entry["helpUri"] = uri
            rules.append(entry)
        driver = {"name": "kubelet-winnet", "version": __version__, "rules": rules}
        head = json.dumps(
            {"$schema": SARIF_SCHEMA, "version": "2.1.0"}, indent=None
        )[:-1]  # leave the object open
        # Lines are editors' (the input layer counts LF, CRLF and a bare CR); SARIF's
        # default run.newlineSequences leaves the bare CR out.
        out.write(f'{head}, "runs": [{{"tool": {{"driver": {json.dumps(driver)}}}, '
                  f'"newlineSequences": {json.dumps(NEWLINE_SEQUENCES)}, "results": [')
        self._first = True

    def finding(
        self, document: Document, pod: PodObject, finding: Finding, ignored: str | None,
        line: int, how: str = "annotation", remark: str = "",
        also: tuple[str, int] | None = None,
    ) -> None:
        self._count(finding, ignored, how)
        physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(document.source)}}
        if line > 0:
            physical["region"] = {"startLine": line}
        result: dict[str, Any] = {
            "ruleId": finding.rule.id,
            "ruleIndex": _RULE_INDEX[finding.rule.id],
            "level": finding.severity.sarif_level,
            "message": {"text": f"{_subject(pod, finding)}: {finding.text}"
                        + (f" ({remark})" if remark else "")},
            "locations": [{
                "physicalLocation": physical,
                "logicalLocations": [{
                    "fullyQualifiedName": f"{pod.identity}/{describe_path(finding.field)}",
                    "kind": "object",
                }],
            }],
            "properties": {
                "field": describe_path(finding.field),
                "object": _object(pod),
                **({"container": finding.container} if finding.container else {}),
            },
        }
        if also is not None:  # the other file that set the field (a kustomize patch)
            related: dict[str, Any] = {"artifactLocation": {"uri": _uri(also[0])}}
            if also[1] > 0:
                related["region"] = {"startLine": also[1]}
            result["relatedLocations"] = [{"id": 0, "physicalLocation": related,
                                           "message": {"text": remark}}]
        if ignored is not None:
            result["suppressions"] = [{
                "kind": "external" if how == "baseline" else "inSource",
                "justification": ignored,
                "properties": {"by": how},
            }]
        self._out.write(("\n" if self._first else ",\n") + json.dumps(result))
        self._first = False

    def close(self, session: Session, notifications: Sequence[Notification] = ()) -> None:
        invocation: dict[str, Any] = {"executionSuccessful": session.status != 2}
        if notifications:  # notes and input errors reach code scanning, with their place
            invocation["toolExecutionNotifications"] = [
                _notification(n) for n in notifications]
        tail = {"invocations": [invocation], "properties": self._summary_dict(session)}
        self._out.write(f"], {json.dumps(tail)[1:-1]}}}]}}\n")


def _notification(note: Notification) -> dict[str, Any]:
    out: dict[str, Any] = {
        "level": note.level, "message": {"text": note.text},
        "descriptor": {"id": "input" if note.level == "error" else "note"},
    }
    if note.source is not None:
        physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(note.source)}}
        if note.line > 0:
            physical["region"] = {"startLine": note.line}
        out["locations"] = [{"physicalLocation": physical}]
    return out


class _Junit(_Base):
    """JUnit XML: one test case per finding (failed at or above the threshold, skipped
    when an annotation ignores it, passed below), one per pod without findings, one
    error case per input error. Buffered: the suite's counts come before its cases."""

    def __init__(self, out: TextIO, options: Options | None = None) -> None:
        super().__init__(out, options)
        self._cases: list[tuple[str, str, str]] = []  # (kind, opening tag, body)
        self._pods: dict[tuple[str, int, int | None], tuple[str, str]] = {}

    def pod(self, document: Document, pod: PodObject) -> None:
        self._pods.setdefault((document.source, document.document, document.item),
                              (document.source, pod.identity))

    def finding(
        self, document: Document, pod: PodObject, finding: Finding, ignored: str | None,
        line: int, how: str = "annotation", remark: str = "",
        also: tuple[str, int] | None = None,
    ) -> None:
        self._count(finding, ignored, how)
        self._pods[(document.source, document.document, document.item)] = ("", "")
        name = f"{finding.rule.id} {_subject(pod, finding)} {describe_path(finding.field)}"
        head = (f"<testcase classname={_quoteattr(document.source)} name={_quoteattr(name)} "
                f"file={_quoteattr(document.source)} line=\"{line}\"")
        text = (f"{document.source}:{line}: {finding.severity.label}: {finding.text}"
                + (f" ({remark})" if remark else ""))
        threshold = self._options.threshold
        if ignored is not None:
            self._cases.append(("skipped", head, f"<skipped message={_quoteattr(ignored)}/>"))
        elif threshold is not None and finding.severity >= threshold:
            self._cases.append((
                "failure", head,
                f"<failure message={_quoteattr(finding.message)} "
                f"type={_quoteattr(finding.severity.label)}>{_xml_escape(text)}</failure>",
            ))
        else:
            self._cases.append(("passed", head, f"<system-out>{_xml_escape(text)}</system-out>"))

    def close(self, session: Session, notifications: Sequence[Notification] = ()) -> None:
        cases = list(self._cases)
        for source, identity in self._pods.values():
            if identity:
                cases.append(("passed", f"<testcase classname={_quoteattr(source)} "
                              f"name={_quoteattr(identity)} file={_quoteattr(source)}", ""))
        for note in notifications:
            if note.level == "error":
                cases.append(("error", '<testcase classname="input" name="input error"',
                              f"<error message={_quoteattr(note.text)} type=\"input\"/>"))
        counts = {kind: sum(1 for c in cases if c[0] == kind)
                  for kind in ("failure", "error", "skipped")}
        out = self._out
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        attributes = (f'tests="{len(cases)}" failures="{counts["failure"]}" '
                      f'errors="{counts["error"]}" skipped="{counts["skipped"]}"')
        out.write(f'<testsuites name="kubelet-winnet" {attributes}>\n')
        out.write(f'<testsuite name="kubelet-winnet check" {attributes}>\n')
        for _, head, body in cases:
            out.write(f"{head}>{body}</testcase>\n" if body else f"{head}/>\n")
        out.write("</testsuite>\n</testsuites>\n")


FORMATS = ("text", "json", "sarif", "junit")


def report_writer(output: str, out: TextIO, options: Options | None = None) -> ReportWriter:
    writers: dict[str, type[_Base]] = {"json": _Json, "sarif": _Sarif, "junit": _Junit}
    writer: ReportWriter = writers.get(output, _Text)(out, options)  # type: ignore[assignment]
    return writer


# --- the node command's findings (_lint/node_checks.py) -------------------------------------
# (rule, severity, message, file, line, ignore reason or None) per finding.
NodeResult = tuple[Rule, Severity, str, str, int, "str | None"]


def node_sarif(results: list[NodeResult], diagnostics: list[str], status: int,
               stopped: str | None = None) -> str:
    """A SARIF 2.1.0 log of one node's findings: the node rules as the driver's rules,
    each finding at its file and line, ignored ones as suppressions, input errors as
    tool execution notifications; ``stopped``: why the node was not judged (the run is
    then unsuccessful and says so, rather than reading as a clean node)."""
    from kubelet_winnet import __version__
    from kubelet_winnet._lint.node_rules import NODE_RULES, node_rule_page

    index = {rule.id: i for i, rule in enumerate(NODE_RULES)}
    rules = [{"id": rule.id, "shortDescription": {"text": rule.summary},
              "help": {"text": rule.summary, "markdown": node_rule_page(rule.id)},
              "defaultConfiguration": {"level": rule.severity.sarif_level}}
             for rule in NODE_RULES]
    out: list[dict[str, Any]] = []
    for rule, severity, message, source, line, ignored in results:
        physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(source or "node")}}
        if line > 0:
            physical["region"] = {"startLine": line}
        result: dict[str, Any] = {
            "ruleId": rule.id, "ruleIndex": index[rule.id], "level": severity.sarif_level,
            "message": {"text": message}, "locations": [{"physicalLocation": physical}],
        }
        if ignored is not None:
            result["suppressions"] = [{"kind": "inSource", "justification": ignored}]
        out.append(result)
    invocation: dict[str, Any] = {"executionSuccessful": status != 2 and stopped is None,
                                  "exitCode": status}
    notifications = [{"level": "error", "message": {"text": text}, "descriptor": {"id": "input"}}
                     for text in diagnostics]
    if stopped is not None:
        invocation["exitCodeDescription"] = f"the node was not judged: {stopped}"
        notifications.append({"level": "error", "descriptor": {"id": "stopped"},
                              "message": {"text": f"The node was not judged: {stopped}."}})
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return json.dumps({
        "$schema": SARIF_SCHEMA, "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "kubelet-winnet", "version": __version__,
                                      "rules": rules}},
                  "results": out, "invocations": [invocation]}],
    })


def node_junit(node: str, results: list[NodeResult], threshold: Severity | None,
               diagnostics: Sequence[str] = (), stopped: str | None = None) -> str:
    """JUnit XML of one node's findings: one test case per finding, failed at or above
    ``threshold``, skipped when ignored; each input error a test case in error (and
    ``stopped``, why the node was not judged); one passing case when there is none."""
    cases: list[tuple[str, str]] = []
    for text in diagnostics:
        cases.append(("error", f"<testcase classname={_quoteattr(node)} name=\"input\">"
                      f"<error message={_quoteattr(text)} type=\"input\"/></testcase>"))
    if stopped is not None:
        text = f"The node was not judged: {stopped}."
        cases.append(("error", f"<testcase classname={_quoteattr(node)} name=\"node\">"
                      f"<error message={_quoteattr(text)} type=\"stopped\"/></testcase>"))
    for rule, severity, message, source, line, ignored in results:
        head = (f"<testcase classname={_quoteattr(node)} name={_quoteattr(rule.id)} "
                f"file={_quoteattr(source)} line=\"{line}\"")
        text = f"{source}:{line}: {severity.label}: {message}"
        if ignored is not None:
            cases.append(("skipped", f"{head}><skipped message={_quoteattr(ignored)}/>"
                          "</testcase>"))
        elif threshold is not None and severity >= threshold:
            cases.append(("failure", f"{head}><failure message={_quoteattr(message)} "
                          f"type={_quoteattr(severity.label)}>{_xml_escape(text)}</failure>"
                          "</testcase>"))
        else:
            cases.append(("passed", f"{head}><system-out>{_xml_escape(text)}</system-out>"
                          "</testcase>"))
    if not cases:
        cases.append(("passed", f"<testcase classname={_quoteattr(node)} name=\"node\"/>"))
    failures = sum(1 for kind, _ in cases if kind == "failure")
    skipped = sum(1 for kind, _ in cases if kind == "skipped")
    errors = sum(1 for kind, _ in cases if kind == "error")
    attributes = (f'tests="{len(cases)}" failures="{failures}" errors="{errors}" '
                  f'skipped="{skipped}"')
    body = "\n".join(case for _, case in cases)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuites name="kubelet-winnet" {attributes}>\n'
            f'<testsuite name="kubelet-winnet node" {attributes}>\n{body}\n'
            "</testsuite>\n</testsuites>\n")
