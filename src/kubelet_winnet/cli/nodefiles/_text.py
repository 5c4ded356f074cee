"""Whole small text files (TOML, netsh output, flag lists) as the input layer reads
manifests: bounded by ``Limits.max_bytes``, UTF-8 or, after its byte order mark, UTF-16
(what PowerShell 5.1's ``>`` and ``Out-File`` write), a bad byte reported with its line."""

from __future__ import annotations

import codecs

from kubelet_winnet.cli.input import DEFAULT_LIMITS, Limits
from kubelet_winnet.errors import NodeConfigError

__all__ = ["read_text"]


def read_text(path: str, limits: Limits = DEFAULT_LIMITS) -> str:
    """The text of ``path``; :class:`NodeConfigError` (``path[:line]: reason``) when it
    cannot be read, is larger than the limit, or is not UTF-8/UTF-16 text."""
    try:
        with open(path, "rb") as raw:
            data = raw.read(limits.max_bytes + 1)
    except OSError as exc:
        raise NodeConfigError(path, f"cannot read: {exc.strerror or type(exc).__name__}") from None
    if len(data) > limits.max_bytes:
        raise NodeConfigError(
            path, f"larger than {limits.max_bytes} bytes (raise the limit with --max-bytes)")
    encoding, skip = "utf-8", 0
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        raise NodeConfigError(f"{path}:1",
                              "UTF-32 is not supported (use UTF-8 or UTF-16 with a BOM)")
    if data.startswith(codecs.BOM_UTF8):
        skip = 3
    elif data.startswith(codecs.BOM_UTF16_LE):
        encoding, skip = "utf-16-le", 2
    elif data.startswith(codecs.BOM_UTF16_BE):
        encoding, skip = "utf-16-be", 2
    elif len(data) >= 2 and (data[0] == 0) != (data[1] == 0):
        raise NodeConfigError(f"{path}:1",
                              "looks like UTF-16 without a byte order mark; not UTF-8")
    try:
        text = data[skip:].decode(encoding)
    except UnicodeDecodeError as exc:
        good = exc.object[: exc.start].decode(encoding, "replace")
        name = "UTF-8" if encoding == "utf-8" else "UTF-16"
        bad = exc.object[exc.start : exc.start + 1].hex()
        raise NodeConfigError(f"{path}:{good.count(chr(10)) + 1}",
                              f"not valid {name} (byte 0x{bad})") from None
    return text.replace("\r\n", "\n")
