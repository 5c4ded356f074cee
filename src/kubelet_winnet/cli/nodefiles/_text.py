"""Whole small text files (TOML, netsh output, flag lists) as the input layer reads
manifests: bounded by ``Limits.max_bytes``, UTF-8 or, after its byte order mark, UTF-16
(what PowerShell 5.1's ``>`` and ``Out-File`` write), a bad byte reported with its line."""

from __future__ import annotations

from kubelet_winnet.cli.input import DEFAULT_LIMITS, Limits
from kubelet_winnet.cli.input.documents import Refused
from kubelet_winnet.cli.input.encoding import Text, line_after
from kubelet_winnet.errors import NodeConfigError

__all__ = ["read_text"]


def read_text(path: str, limits: Limits = DEFAULT_LIMITS) -> str:
    """The text of ``path``; :class:`NodeConfigError` (``path[:line]: reason``) when it
    cannot be read, is larger than the limit, or is not UTF-8/UTF-16 text. The encoding
    rules are the input layer's (``cli/input/encoding.py``)."""
    parts: list[str] = []
    try:
        with open(path, "rb") as raw:
            text = Text(raw, limits.max_bytes)
            while part := text.read():
                parts.append(part)
    except OSError as exc:
        raise NodeConfigError(path, f"cannot read: {exc.strerror or type(exc).__name__}") from None
    except Refused as exc:
        line = line_after(exc, "".join(parts)).line
        raise NodeConfigError(f"{path}:{line}", exc.reason) from None
    return "".join(parts).replace("\r\n", "\n")
