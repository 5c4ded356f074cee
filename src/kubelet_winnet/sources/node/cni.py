"""CNI network configurations (``.conf``: one plugin; ``.conflist``: ``plugins``), read
through the input layer, as :class:`kubelet_winnet.runtime.CniNetwork`: each plugin's
``type``, the capabilities it declares true (CNI ``CONVENTIONS.md``: a runtime inserts
only those), its own ``dns`` block, and flannel's ``delegate.type`` and ``delegate.dns``.

containerd on Windows loads one network, the first file of ``conf_dir`` in name order
(``max_conf_num = 1``, containerd ``internal/cri/config/config_windows.go``; libcni
``ConfFiles`` lists ``.conf``, ``.conflist`` and ``.json`` sorted).

libcni reads each file with Go's ``encoding/json`` (``libcni/conf.go``
``NetworkConfFromBytes``, ``NetworkPluginConfFromBytes``): no byte order mark, no YAML,
whitespace only space, tab, CR and LF. go-cni ``loadFromConfDir`` stops at the first file
it cannot load, so such a file first in name order leaves the node without a network.
"""

from __future__ import annotations

import codecs
import io
import json
import unicodedata
from collections.abc import Callable
from typing import Any

from kubelet_winnet._kubelet.golang import json_fold
from kubelet_winnet.errors import NodeConfigError
from kubelet_winnet.runtime._node import CniDns, CniNetwork, CniPlugin
from kubelet_winnet.sources.manifests import DEFAULT_LIMITS, BadInput, Limits, read_source
from kubelet_winnet.sources.manifests.lines import TextLines, breaks
from kubelet_winnet.sources.node._text import read_text_and_head, refuse_template

__all__ = ["CNI_SUFFIXES", "check_loadable", "parse_cni", "read_cni"]

CNI_SUFFIXES = (".conf", ".conflist", ".json")


def _plugin(body: Any, where: Callable[..., str]) -> CniPlugin:
    if not isinstance(body, dict):
        raise NodeConfigError(where(), "a CNI plugin configuration must be an object")
    kind = body.get("type")
    if not isinstance(kind, str) or not kind:
        raise NodeConfigError(where(), "a CNI plugin configuration needs a type")
    capabilities = body.get("capabilities", {})
    if not isinstance(capabilities, dict):
        raise NodeConfigError(where(), "capabilities must be an object of booleans")
    for name, on in capabilities.items():
        # libcni decodes into map[string]bool (pkg/types/types.go NetConf): another value
        # fails the whole file, so the network does not load; null is false.
        if on is not None and type(on) is not bool:
            raise NodeConfigError(where("capabilities", name),
                                  f"capabilities.{name} must be true or false")
    declared = frozenset(name for name, on in capabilities.items() if on is True)
    delegate = body.get("delegate")
    delegate_type = delegate.get("type") if isinstance(delegate, dict) else None
    return CniPlugin(
        kind, declared, delegate_type if isinstance(delegate_type, str) else None,
        _dns(body, where, _NOT_LOADED),
        _dns(delegate, lambda *sub: where("delegate", *sub), _DELEGATE_FAILS)
        if isinstance(delegate, dict) else CniDns())


# Go's encoding/json matches a key to a field name without regard to case (json_fold), so
# "DNS" and "Nameservers" (calico's and azure-vnet's Windows files) are the dns block's.
_DNS_LISTS = {"NAMESERVERS": "nameservers", "SEARCH": "search", "OPTIONS": "options"}
_DELEGATE_FAILS = ("flannel's delegate decodes it (CNI's types.DNS) when each pod's network "
                   "is set up, and fails, so no pod sandbox of the node starts")


def _dns(body: dict[str, Any], where: Callable[..., str], fails: str) -> CniDns:
    """The ``dns`` block of a plugin's configuration (CNI pkg/types ``DNS``), decoded as
    Go decodes it: keys in any case, a later key of the same field over an earlier one
    (an object merged into what is there), ``null`` leaving a field as it is (a list:
    empty)."""
    lists: dict[str, tuple[str, ...]] = {"nameservers": (), "search": (), "options": ()}
    domain = ""
    for key, block in body.items():
        if json_fold(key) != "DNS" or block is None:
            continue
        if not isinstance(block, dict):
            raise NodeConfigError(where(key), f"{key} must be an object: {fails}")
        for field, value in block.items():
            name = _DNS_LISTS.get(json_fold(field))
            if name is not None:
                if value is None:
                    lists[name] = ()
                elif not isinstance(value, list) or not all(
                        isinstance(item, str) for item in value):
                    raise NodeConfigError(where(key, field),
                                          f"{key}.{field} must be a list of strings: {fails}")
                else:
                    lists[name] = tuple(value)
            elif json_fold(field) == "DOMAIN" and value is not None:
                if not isinstance(value, str):
                    raise NodeConfigError(where(key, field),
                                          f"{key}.{field} must be a string: {fails}")
                domain = value
    return CniDns(lists["nameservers"], domain, lists["search"], lists["options"])


def parse_cni(value: Any, source: str, line_of: Any = None) -> CniNetwork:
    """A decoded CNI configuration (``line_of(path)`` gives a field's line, if known)."""
    def where(*path: str | int) -> str:
        line = line_of(path) if line_of is not None else 0
        return f"{source}:{line}" if line else source

    if not isinstance(value, dict):
        raise NodeConfigError(where(), "a CNI configuration must be a JSON object")
    name = value.get("name")
    if not isinstance(name, str) or not name:
        raise NodeConfigError(where(), "a CNI configuration needs a name")
    if "plugins" in value:
        plugins = value["plugins"]
        if not isinstance(plugins, list) or not plugins:
            raise NodeConfigError(where("plugins"), "plugins must be a non-empty list")
        return CniNetwork(name, tuple(
            _plugin(p, lambda *sub, i=i: where("plugins", i, *sub))
            for i, p in enumerate(plugins)), source)
    return CniNetwork(name, (_plugin(value, where),), source)


_NOT_LOADED = ("containerd's CNI loader (libcni, Go's encoding/json) refuses the file, so a "
               "node whose first CNI file in name order this is loads no network")
_JSON_SPACE = " \t\n\r"


def _refused(where: str, what: str, fix: str) -> NodeConfigError:
    return NodeConfigError(where, f"{what}: {_NOT_LOADED}; {fix}")


def _not_json(text: str, path: str, limits: Limits, exc: ValueError) -> NodeConfigError:
    found = getattr(exc, "pos", None)
    position = found if isinstance(found, int) else -1
    # json counts lines at LF only; JSON's whitespace has CR too: editors' lines, columns
    line = 1 + breaks(text, 0, position) if position >= 0 else 0
    char = text[position] if 0 <= position < len(text) else ""
    where = f"{path}:{line}" if line else path
    if char and char.isspace() and char not in _JSON_SPACE:
        name = unicodedata.name(char, "a space").lower()
        column = position - TextLines(text).bounds(position)[0] + 1
        return _refused(where, f"a {name} (U+{ord(char):04X}) at column {column}, where JSON "
                        "allows only spaces, tabs and line breaks", "replace it with a space")
    if text.lstrip(_JSON_SPACE)[:1] not in ("{", "[", '"') and not isinstance(exc, RecursionError):
        is_yaml = next((True for item in read_source(_copy(text), limits, label=str(path))
                        if not isinstance(item, BadInput) and isinstance(item.value, dict)),
                       False)
        if is_yaml:
            return _refused(path, "written in YAML, not JSON", "write it as JSON")
    reason = getattr(exc, "msg", str(exc))
    return _refused(where, f"not JSON ({reason})", "correct the JSON")


def _copy(text: str) -> io.BytesIO:
    """The file as read once, to be read again (a FIFO named as a node file cannot be)."""
    return io.BytesIO(text.encode("utf-8"))


def check_loadable(path: str, limits: Limits = DEFAULT_LIMITS) -> str:
    """The text of the CNI file ``path``; :class:`NodeConfigError` when libcni would
    refuse it: a byte order mark, UTF-16, YAML, a template, or anything Go's
    ``json.Unmarshal`` refuses."""
    if not path.lower().endswith(CNI_SUFFIXES):
        raise NodeConfigError(path, "a CNI network in a file containerd never reads: its CNI "
                              "loader lists only .conf, .conflist and .json files of conf_dir")
    text, head = read_text_and_head(path, limits)
    refuse_template(text, path)
    if head.startswith(codecs.BOM_UTF8):
        raise _refused(f"{path}:1", "starts with a UTF-8 byte order mark (Go: \"invalid "
                       "character 'ï' looking for beginning of value\")",
                       "save it as UTF-8 without the mark")
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise _refused(f"{path}:1", "UTF-16 text (PowerShell 5.1's Out-File and > write it)",
                       "save it as UTF-8; if only this copy is UTF-16, copy the node's file "
                       "with Copy-Item instead")
    try:
        json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, RecursionError):
            raise NodeConfigError(path, "nested deeper than Python can decode "
                                  f"(--max-depth is {limits.max_depth})") from None
        raise _not_json(text, path, limits, exc) from None
    return text


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def read_cni(path: str, limits: Limits = DEFAULT_LIMITS) -> CniNetwork:
    """The one CNI network in the JSON file ``path``, when libcni would load it."""
    text = check_loadable(path, limits)
    found: CniNetwork | None = None
    for item in read_source(_copy(text), limits, label=str(path)):
        if isinstance(item, BadInput):
            raise NodeConfigError(f"{item.source}:{item.line}" if item.line else item.source,
                                  item.reason)
        if found is not None:
            raise NodeConfigError(f"{path}:{item.line}", "more than one JSON value in a CNI file")
        found = parse_cni(item.value, item.source, item.line_of)
    if found is None:
        raise NodeConfigError(path, "empty: no CNI configuration")
    return found
