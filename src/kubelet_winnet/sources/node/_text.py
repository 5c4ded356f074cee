"""Whole small text files (TOML, netsh output, flag lists) as the input layer reads
manifests: bounded by ``Limits.max_bytes``, UTF-8 or, after its byte order mark, UTF-16
(what PowerShell 5.1's ``>`` and ``Out-File`` write), a bad byte reported with its line."""

from __future__ import annotations

import re

from kubelet_winnet._printable import cut
from kubelet_winnet.errors import NodeConfigError
from kubelet_winnet.sources.manifests import DEFAULT_LIMITS, Limits
from kubelet_winnet.sources.manifests.documents import Refused
from kubelet_winnet.sources.manifests.encoding import Text
from kubelet_winnet.sources.manifests.lines import breaks, line_after
from kubelet_winnet.sources.manifests.paths import Named, open_input

__all__ = ["read_text", "read_text_and_head", "refuse_template"]

# A Go template action ({{ .Values.x }}, {{- if ... }}, {{ end }}): what a chart, a
# cloud-init or a containerd config template holds before it is rendered.
_TEMPLATE = re.compile(r"\{\{-?\s*[.$/A-Za-z_(\"][^\n{}]{0,200}?-?\}\}")


def read_text_and_head(path: str, limits: Limits = DEFAULT_LIMITS) -> tuple[str, bytes]:
    """The text of ``path`` and its first bytes as stored (to tell a byte order mark);
    :class:`NodeConfigError` (``path[:line]: reason``) when it cannot be read, is larger
    than the limit, or is not UTF-8/UTF-16 text. The encoding rules are the input
    layer's (``sources/manifests/encoding.py``)."""
    parts: list[str] = []
    head = b""
    try:
        with open_input(path, streams=isinstance(path, Named)) as raw:
            head = raw.peek(4)[:4]
            text = Text(raw, limits.max_bytes)
            while part := text.read():
                parts.append(part)
    except OSError as exc:
        raise NodeConfigError(path, f"cannot read: {exc.strerror or type(exc).__name__}") from None
    except Refused as exc:
        line = line_after(exc, "".join(parts)).line
        raise NodeConfigError(f"{path}:{line}", exc.reason) from None
    return "".join(parts).replace("\r\n", "\n"), head


def read_text(path: str, limits: Limits = DEFAULT_LIMITS) -> str:
    """The text of ``path`` (see :func:`read_text_and_head`)."""
    return read_text_and_head(path, limits)[0]


def refuse_template(text: str, path: str) -> None:
    """:class:`NodeConfigError` when ``text`` holds a Go template action: the file is the
    template a node's configuration is made from, not what the component reads."""
    found = _TEMPLATE.search(text)
    if found is not None:
        line = 1 + breaks(text, 0, found.start())
        shown = cut(found[0], 40)
        raise NodeConfigError(
            f"{path}:{line}", f"a template ({shown} is a placeholder), not a configuration: "
            "give the file as the node has it, rendered")
