"""``check`` findings as text, JSON or SARIF 2.1.0, written as they are found."""

from __future__ import annotations

import json
import os
import urllib.parse
from typing import Any, Protocol, TextIO

from kubelet_winnet._describe import describe_path
from kubelet_winnet._lint.rules import PROJECT_URL, RULES, Finding, Severity
from kubelet_winnet._lint.targeting import PodObject
from kubelet_winnet._printable import printable

__all__ = ["ReportWriter", "report_writer"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_RULE_INDEX = {rule.id: index for index, rule in enumerate(RULES)}


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


class ReportWriter(Protocol):
    def finding(
        self, document: Document, pod: PodObject, finding: Finding, ignored: str | None,
        line: int,
    ) -> None: ...

    def close(self, session: Session) -> None: ...

    def summary(self, session: Session) -> str: ...


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


class _Base:
    def __init__(self, out: TextIO) -> None:
        self._out = out
        self.counts = dict.fromkeys(Severity, 0)
        self.ignored = 0

    def _count(self, finding: Finding, ignored: str | None) -> None:
        if ignored is None:
            self.counts[finding.severity] += 1
        else:
            self.ignored += 1

    def summary(self, session: Session) -> str:
        return (
            f"{_count(session.pods, 'pod')} checked: "
            f"{_count(self.counts[Severity.ERROR], 'error')}, "
            f"{_count(self.counts[Severity.WARNING], 'warning')}, "
            f"{self.counts[Severity.INFO]} info, {self.ignored} ignored by annotation; "
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


def _subject(pod: PodObject, finding: Finding) -> str:
    text = pod.identity
    if finding.container is not None:
        text += f" container {finding.container}"
    return text


class _Text(_Base):
    def finding(
        self, document: Document, pod: PodObject, finding: Finding, ignored: str | None,
        line: int,
    ) -> None:
        self._count(finding, ignored)
        if ignored is not None:
            return
        self._out.write(printable(
            f"{document.source}:{line}: {finding.severity.label} {finding.rule.id}: "
            f"{_subject(pod, finding)}: {finding.message} [{describe_path(finding.field)}]"
        ) + "\n")

    def close(self, session: Session) -> None:
        pass


class _Json(_Base):
    def __init__(self, out: TextIO) -> None:
        super().__init__(out)
        out.write('{\n"findings": [')
        self._first = True

    def finding(
        self, document: Document, pod: PodObject, finding: Finding, ignored: str | None,
        line: int,
    ) -> None:
        self._count(finding, ignored)
        if ignored is not None:
            return
        record: dict[str, Any] = {
            "rule": finding.rule.id,
            "severity": finding.severity.label,
            "message": finding.message,
            "file": document.source,
            "line": line,
            "document": document.document,
            "item": document.item,
            "object": _object(pod),
            "container": finding.container,
            "field": describe_path(finding.field),
            "helpUri": finding.rule.help_uri,
        }
        self._out.write(("\n" if self._first else ",\n") + json.dumps(record))
        self._first = False

    def close(self, session: Session) -> None:
        summary = json.dumps(self._summary_dict(session))
        self._out.write(("" if self._first else "\n") + f'],\n"summary": {summary}\n}}\n')


def _uri(source: str) -> str:
    """An RFC 3986 URI reference for a file name: its bytes percent-encoded, so a name
    that is not UTF-8 (lone surrogates from the file system) names the same bytes."""
    if source == "<stdin>":
        return "stdin"
    raw = os.fsencode(source.replace(os.sep, "/"))
    if os.path.isabs(source):
        return "file://" + urllib.parse.quote(raw)
    return urllib.parse.quote(raw)


class _Sarif(_Base):
    def __init__(self, out: TextIO) -> None:
        super().__init__(out)
        from kubelet_winnet import __version__

        driver = {
            "name": "kubelet-winnet",
            "version": __version__,
            "informationUri": PROJECT_URL,
            "rules": [
                {
                    "id": rule.id,
                    "shortDescription": {"text": rule.summary},
                    "helpUri": rule.help_uri,
                    "defaultConfiguration": {"level": rule.severity.sarif_level},
                }
                for rule in RULES
            ],
        }
        head = json.dumps(
            {"$schema": SARIF_SCHEMA, "version": "2.1.0"}, indent=None
        )[:-1]  # leave the object open
        out.write(f'{head}, "runs": [{{"tool": {{"driver": {json.dumps(driver)}}}, '
                  '"results": [')
        self._first = True

    def finding(
        self, document: Document, pod: PodObject, finding: Finding, ignored: str | None,
        line: int,
    ) -> None:
        self._count(finding, ignored)
        physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(document.source)}}
        if line > 0:
            physical["region"] = {"startLine": line}
        result: dict[str, Any] = {
            "ruleId": finding.rule.id,
            "ruleIndex": _RULE_INDEX[finding.rule.id],
            "level": finding.severity.sarif_level,
            "message": {"text": f"{_subject(pod, finding)}: {finding.message}"},
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
        if ignored is not None:
            result["suppressions"] = [{"kind": "inSource", "justification": ignored}]
        self._out.write(("\n" if self._first else ",\n") + json.dumps(result))
        self._first = False

    def close(self, session: Session) -> None:
        tail = {
            "invocations": [{"executionSuccessful": session.status != 2}],
            "properties": self._summary_dict(session),
        }
        self._out.write(f"], {json.dumps(tail)[1:-1]}}}]}}\n")


def report_writer(output: str, out: TextIO) -> ReportWriter:
    if output == "json":
        return _Json(out)
    if output == "sarif":
        return _Sarif(out)
    return _Text(out)
