"""``netsh int ipv4 show excludedportrange protocol=tcp`` and ``netsh int ipv4 show
dynamicport tcp`` outputs, read by their shape, not their words: Windows prints the
headings in the system's language (German "Startport      Endport", Chinese
"启动端口"), so a heading is any line that is not data.

* excluded ranges: rows of two port numbers, the second not below the first, with an
  optional ``*`` (an administered, persistent exclusion);
* dynamic range: two ``<label> : <number>`` lines, the start port and the number of ports.

The protocol is the one word netsh never translates: a heading naming ``tcp`` or ``udp``
(``Protocol tcp Port Exclusion Ranges``, ``Protokoll tcp ...``). Such a heading after
data starts another output: a file can hold a TCP and a UDP output, or the same output
saved before and after a change, of which the last is the node's current state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from kubelet_winnet._printable import cut
from kubelet_winnet.errors import NodeConfigError
from kubelet_winnet.runtime._node import PortRange
from kubelet_winnet.sources.manifests.lines import editor_lines

__all__ = ["MAX_ROWS", "PortRanges", "parse_netsh"]

# Numbers of any length: a row or count out of range is an error, not a heading.
_ROW = re.compile(r"\s*(\d+)\s+(\d+)\s*(\*)?\s*")
_LABELLED = re.compile(r"[^:：]*[:：]\s*(\d+)\s*")
_MAX_DIGITS = 6  # int() of thousands of digits is slow, then refused
_RULE = re.compile(r"\s*-{3,}(\s+-{3,})*\s*")
_PROTOCOL = re.compile(r"(?<![A-Za-z0-9])(tcp|udp)(?![A-Za-z0-9])", re.IGNORECASE)
# Ranges of one file: netsh lists disjoint ranges, so one per port at most.
MAX_ROWS = 65535

Protocol = Literal["tcp", "udp"]


@dataclass(frozen=True)
class PortRanges:
    """One netsh output: ``line`` where it starts; ``protocol_named`` False when no
    heading said the protocol (then taken as TCP, what the documented command asks)."""

    source: str
    kind: Literal["excluded", "dynamic"]
    ranges: tuple[tuple[PortRange, int], ...]  # each with its line
    protocol: Protocol = "tcp"
    line: int = 1
    protocol_named: bool = True

    def describe(self) -> str:
        protocol = self.protocol.upper() if self.protocol_named else \
            "TCP (no heading names the protocol: taken as TCP)"
        if self.kind == "dynamic":
            return f"netsh {protocol} dynamic port range {self.ranges[0][0]}"
        count = len(self.ranges)
        return f"netsh {protocol} excluded port ranges ({count} range{'' if count == 1 else 's'})"


@dataclass
class _Output:
    line: int
    protocol: str | None = None
    ruled: bool = False
    rows: list[tuple[PortRange, int]] | None = None
    labelled: list[tuple[str, int]] | None = None

    @property
    def has_data(self) -> bool:
        return bool(self.rows or self.labelled)


def _number(text: str) -> int:
    """``text``'s value, or 10**6 for any longer number (past every port and count)."""
    return int(text) if len(text) <= _MAX_DIGITS else 10**_MAX_DIGITS


def _port(text: str, where: str) -> int:
    value = _number(text)
    if not 1 <= value <= 65535:
        shown = cut(text, 20)
        raise NodeConfigError(where, f"port {shown} is outside 1 to 65535")
    return value


def _row(match: re.Match[str], where: str, protocol: Protocol) -> PortRange:
    start, end = _port(match[1], where), _port(match[2], where)
    if end < start:
        raise NodeConfigError(where, f"range {start}-{end} ends before it starts")
    return PortRange(start, end, "excluded", match[3] is not None, protocol)


def _split(text: str, source: str) -> list[_Output]:
    """The file's outputs, each with its rows (already checked) or labelled numbers."""
    outputs = [_Output(1)]
    rows = 0
    for number, line in enumerate(editor_lines(text), 1):
        current = outputs[-1]
        row = _ROW.fullmatch(line)
        if row is not None:
            if current.rows is None:
                current.rows = []
            rows += 1
            if rows > MAX_ROWS:
                raise NodeConfigError(f"{source}:{number}", f"more than {MAX_ROWS} port ranges "
                                      "in one file: netsh lists at most one per port")
            protocol: Protocol = "udp" if current.protocol == "udp" else "tcp"
            current.rows.append((_row(row, f"{source}:{number}", protocol), number))
            continue
        if _RULE.fullmatch(line):
            current.ruled = True
            continue
        found = _LABELLED.fullmatch(line)
        if found is not None:
            if current.labelled is None:
                current.labelled = []
            current.labelled.append((found[1], number))
            continue
        named = _PROTOCOL.search(line)
        if named is None:
            continue
        protocol_word = named[1].lower()
        if current.has_data or current.ruled or (current.protocol not in (None, protocol_word)):
            current = _Output(number)
            outputs.append(current)
        current.protocol = protocol_word
    return outputs


def _dynamic(labelled: list[tuple[str, int]], source: str, protocol: Protocol) -> PortRange:
    if len(labelled) != 2:
        raise NodeConfigError(
            f"{source}:{labelled[0][1]}",
            "expected a start port and a number of ports, found "
            + ("1 number" if len(labelled) == 1 else f"{len(labelled)} numbers"))
    (start_text, start_line), (count_text, count_line) = labelled
    start = _port(start_text, f"{source}:{start_line}")
    count = _number(count_text)
    if count < 1 or start + count - 1 > 65535:
        shown = cut(count_text, 20)
        raise NodeConfigError(f"{source}:{count_line}",
                              f"{shown} ports from {start} run past port 65535")
    return PortRange(start, start + count - 1, "dynamic", protocol=protocol)


def parse_netsh(text: str, source: str) -> list[PortRanges] | None:
    """Every netsh output of the text in file order, or None when it has neither shape."""
    found: list[PortRanges] = []
    for output in _split(text, source):
        protocol: Protocol = "udp" if output.protocol == "udp" else "tcp"
        named = output.protocol is not None
        if output.rows and output.labelled:
            raise NodeConfigError(f"{source}:{output.line}", "holds both port rows and "
                                  "labelled numbers: save each netsh output to its own file")
        if output.rows or (output.ruled and named and not output.labelled):
            found.append(PortRanges(source, "excluded", tuple(output.rows or ()), protocol,
                                    output.line, named))
        elif output.labelled:
            dynamic = _dynamic(output.labelled, source, protocol)
            found.append(PortRanges(source, "dynamic", ((dynamic, output.labelled[0][1]),),
                                    protocol, output.line, named))
    return found or None
