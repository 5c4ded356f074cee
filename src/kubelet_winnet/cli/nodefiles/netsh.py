"""``netsh int ipv4 show excludedportrange protocol=tcp`` and ``netsh int ipv4 show
dynamicport tcp`` outputs, read by their shape, not their words: Windows prints the
headings in the system's language (German "Startport      Endport", Chinese
"启动端口"), so a heading is any line that is not data.

* excluded ranges: rows of two port numbers, the second not below the first, with an
  optional ``*`` (an administered, persistent exclusion);
* dynamic range: two ``<label> : <number>`` lines, the start port and the number of ports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from kubelet_winnet.errors import NodeConfigError
from kubelet_winnet.runtime._node import PortRange

__all__ = ["PortRanges", "parse_netsh"]

# Numbers of any length: a row or count out of range is an error, not a heading.
_ROW = re.compile(r"\s*(\d+)\s+(\d+)\s*(\*)?\s*")
_LABELLED = re.compile(r"[^:：]*[:：]\s*(\d+)\s*")
_MAX_DIGITS = 6  # int() of thousands of digits is slow, then refused
_RULE = re.compile(r"\s*-{3,}(\s+-{3,})*\s*")


@dataclass(frozen=True)
class PortRanges:
    source: str
    kind: Literal["excluded", "dynamic"]
    ranges: tuple[tuple[PortRange, int], ...]  # each with its line


def _number(text: str) -> int:
    """``text``'s value, or 10**6 for any longer number (past every port and count)."""
    return int(text) if len(text) <= _MAX_DIGITS else 10**_MAX_DIGITS


def _port(text: str, where: str) -> int:
    value = _number(text)
    if not 1 <= value <= 65535:
        shown = text if len(text) <= 20 else text[:17] + "..."
        raise NodeConfigError(where, f"port {shown} is outside 1 to 65535")
    return value


def parse_netsh(text: str, source: str) -> PortRanges | None:
    """The ranges of one netsh output, or None when the text has neither shape."""
    rows: list[tuple[PortRange, int]] = []
    labelled: list[tuple[str, int]] = []
    ruled = False
    for number, line in enumerate(text.split("\n"), 1):
        where = f"{source}:{number}"
        if _RULE.fullmatch(line):
            ruled = True
            continue
        row = _ROW.fullmatch(line)
        if row is not None:
            start, end = _port(row[1], where), _port(row[2], where)
            if end < start:
                raise NodeConfigError(where, f"range {start}-{end} ends before it starts")
            rows.append((PortRange(start, end, "excluded", row[3] is not None), number))
            continue
        found = _LABELLED.fullmatch(line)
        if found is not None:
            labelled.append((found[1], number))
    if rows and labelled:
        raise NodeConfigError(source, "holds both port rows and labelled numbers: "
                              "save each netsh output to its own file")
    if rows or (ruled and not labelled and "tcp" in text.lower()):
        return PortRanges(source, "excluded", tuple(rows))
    if not labelled:
        return None
    if len(labelled) != 2:
        raise NodeConfigError(
            f"{source}:{labelled[0][1]}",
            "expected a start port and a number of ports, found "
            + ("1 number" if len(labelled) == 1 else f"{len(labelled)} numbers"))
    (start_text, start_line), (count_text, count_line) = labelled
    start = _port(start_text, f"{source}:{start_line}")
    count = _number(count_text)
    if count < 1 or start + count - 1 > 65535:
        shown = count_text if len(count_text) <= 20 else count_text[:17] + "..."
        raise NodeConfigError(f"{source}:{count_line}",
                              f"{shown} ports from {start} run past port 65535")
    return PortRanges(source, "dynamic",
                      ((PortRange(start, start + count - 1, "dynamic"), start_line),))
