"""containerd's ``config.toml`` as a Windows node's containerd reads it: schema versions
1 to 4, the CRI runtime tables (which handlers exist and whether each is Hyper-V
isolated), the CNI folders, and the options 2.4 no longer reads.

Where each version keeps the CRI runtime tables is ``runtime._releases.CRI_RUNTIME_PLUGIN_IDS``
(containerd ``cmd/containerd/server/config/config.go`` and ``plugins/cri/runtime/plugin.go``
``migrateConfig``). A runtime is Hyper-V isolated when its ``options.SandboxIsolation`` is
1 (hcsshim ``cmd/containerd-shim-runhcs-v1/service_internal.go``: HYPERVISOR).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from kubelet_winnet.errors import NodeConfigError
from kubelet_winnet.runtime._node import Isolation
from kubelet_winnet.runtime._releases import (
    CRI_RUNTIME_PLUGIN_IDS,
    DEFAULT_ISOLATION,
    DEFAULT_RUNTIME_NAME,
)
from kubelet_winnet.sources.manifests import DEFAULT_LIMITS, Limits
from kubelet_winnet.sources.manifests.lines import as_lf
from kubelet_winnet.sources.node._text import read_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the tomli backport has tomllib's API
    import tomli as tomllib

__all__ = ["ContainerdConfig", "ContainerdDecodeError", "RuntimeTable", "Setting",
           "parse_containerd", "read_containerd"]

# Plugin ids whose `containerd.runtimes` tables are CRI runtime tables in some version.
_RUNTIME_IDS = ("cri", "io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime")
_IMAGES_ID = "io.containerd.cri.v1.images"
_BARE_KEY = re.compile(r"([A-Za-z0-9_-]+)\s*=")
_SPECIAL = re.compile(r"[\n#\"'\[\]{},]")  # in a value
_SPECIAL_IN_KEY = re.compile(r"[\n#\"'\[\]{},.=]")
_IN_BASIC = re.compile(r'["\\\n]')
_IN_LITERAL = re.compile(r"['\n]")
_POSITION = re.compile(r"\s*\(at line (\d+), column \d+\)\s*$")
_PART_TEXT = r"""(?:[A-Za-z0-9_-]+|"[^"\\\n]*"|'[^'\n]*')"""
_PARTS_TEXT = rf"({_PART_TEXT}(?:[ \t]*\.[ \t]*{_PART_TEXT})*)"
_SIMPLE_HEADER = re.compile(rf"\[\[?[ \t]*{_PARTS_TEXT}[ \t]*\]\]?[ \t]*(?:#.*)?")
_SIMPLE_KEY = re.compile(rf"{_PARTS_TEXT}[ \t]*=")
_PART = re.compile(r"""([A-Za-z0-9_-]+)|"([^"\\\n]*)"|'([^'\n]*)'""")
_LOOKED_UP = 8  # parts of the longest key read (plugins.ID.containerd.runtimes.NAME....)

Key = tuple[str, ...]


class ContainerdDecodeError(NodeConfigError):
    """A ``config.toml`` that containerd itself cannot decode (not TOML, ``version`` not an
    integer, ``plugins`` not a table): containerd exits at start-up with "failed to
    unmarshal TOML" (``cmd/containerd/server/config/config.go`` ``loadConfigFile``, whose
    error ``command/main.go`` returns). A file past this library's own bounds is a plain
    :class:`NodeConfigError`: containerd may well load it."""


@dataclass(frozen=True)
class Setting:
    """A value of the file, with the dotted key it was written at and its line."""

    value: Any
    key: str
    line: int


@dataclass(frozen=True)
class RuntimeTable:
    """A ``containerd.runtimes.<name>`` table: ``read`` is False when it sits under a
    plugin id the file's schema version does not read (the handler is then not
    registered)."""

    name: str
    isolation: Isolation
    key: str
    line: int
    read: bool


@dataclass(frozen=True)
class ContainerdConfig:
    source: str
    version: int  # 1 when the file has no version key (containerd reads it as version 1)
    version_line: int
    runtimes: tuple[RuntimeTable, ...]
    default_runtime_name: Setting | None
    bin_dir: Setting | None
    bin_dirs: Setting | None
    conf_dir: Setting | None
    enable_cdi: Setting | None
    sandbox_image: Setting | None
    # Plugin tables named without a dot in a version 2+ file: containerd 1.x refuses them
    # at start-up ("invalid plugin key URI", services/server/config/config.go ValidateV2).
    short_plugin_keys: tuple[Setting, ...] = ()

    def handlers(self) -> dict[str, Isolation]:
        """The handlers the runtime registers: containerd's Windows defaults
        (config_windows.go DefaultRuntimeConfig) with the file's read tables decoded over
        them (a map decoded into a filled map keeps its other keys: an inference from
        go-toml's decoding, not run on Windows)."""
        found: dict[str, Isolation] = dict(DEFAULT_ISOLATION)
        for table in self.runtimes:
            if table.read:
                found[table.name] = table.isolation
        return found

    @property
    def default_handler(self) -> str:
        name = self.default_runtime_name
        return name.value if name is not None and isinstance(name.value, str) and name.value \
            else DEFAULT_RUNTIME_NAME


def _path_of(parsed: Mapping[str, Any]) -> Key:
    path: list[str] = []
    node: Any = parsed
    while isinstance(node, dict) and len(node) == 1:
        key = next(iter(node))
        path.append(key)
        node = node[key]
        if isinstance(node, list) and node:
            node = node[-1]
    return tuple(path)


def _parts(key: str) -> Key:
    return tuple(next(g for g in m.groups() if g is not None) for m in _PART.finditer(key))


def _key_lines(text: str) -> dict[Key, int]:
    """The first line of every table header and key, and of their first prefixes (best
    effort: a line TOML itself cannot read alone, such as the middle of a multi-line
    array, is passed by). Most lines are read by a regular expression; tomllib reads only
    the rare header or key with escapes."""
    lines: dict[Key, int] = {}
    table: Key = ()
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if not stripped or stripped[0] == "#":
            continue
        bare = _BARE_KEY.match(stripped)
        if bare is not None:  # most lines: one plain key
            lines.setdefault((*table, bare[1]), number)
            continue
        simple = _SIMPLE_HEADER.fullmatch(stripped) if stripped[0] == "[" else \
            _SIMPLE_KEY.match(stripped)
        try:
            if simple is not None:
                path = _parts(simple[1])
            elif stripped[0] == "[":
                path = _path_of(tomllib.loads(stripped))
            elif "=" in stripped:
                path = _path_of(tomllib.loads(stripped.split("=", 1)[0] + "= 0"))
            else:
                continue
        except tomllib.TOMLDecodeError:
            continue
        if stripped[0] == "[":
            table, path = path, ()
        # The keys looked up are at most _LOOKED_UP parts long: a longer key's every
        # prefix would make the table quadratic in its parts.
        full = table + path
        for end in range(1, min(len(full), _LOOKED_UP) + 1):
            lines.setdefault(full[:end], number)
        lines.setdefault(full, number)
    return lines


def _line(lines: Mapping[Key, int], key: Key) -> int:
    for end in range(len(key), 0, -1):
        found = lines.get(key[:end])
        if found:
            return found
    return 0


def _dotted(key: Key) -> str:
    return ".".join(part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else f'"{part}"'
                    for part in key)


def _too_deep(text: str, max_depth: int) -> int:
    """The line where arrays, inline tables and dotted keys nest deeper than
    ``max_depth``, else 0. tomllib decodes brackets recursively (a deep file would end in
    RecursionError) and checks each dotted key's every prefix (a key of 25,000 parts takes
    minutes): both are bounded here first. A key part nests one table: ``[a.b]`` and
    ``a.b = 1`` count 2 each. Brackets and dots inside strings and comments do not count."""
    stack: list[str] = []  # the open brackets: "[" array or header, "{" inline table
    line, index, size = 1, 0, len(text)
    key = True  # at a key (a line's start, a header, after "{" or "," in an inline table)
    parts = 1  # of the key being read
    while index < size:
        special = (_SPECIAL_IN_KEY if key else _SPECIAL).search(text, index)  # at C speed
        if special is None:
            break
        index = special.start()
        char = text[index]
        if char == "\n":
            line += 1
            if not stack:
                key, parts = True, 1
        elif char == "#":
            end = text.find("\n", index)
            index = size if end < 0 else end
            continue
        elif char in "\"'":
            end = _after_string(text, index, char)
            line += text.count("\n", index, end)  # a multi-line string's lines
            index = end
            continue
        elif char == "." and key:
            parts += 1
            if len(stack) + parts > max_depth:
                return line
        elif char == "=":
            key = False
        elif char in "[{":
            if char == "{" or not key:
                key, parts = char == "{", 1
            stack.append(char)
            if len(stack) > max_depth:
                return line
        elif char in "]}":
            if stack:
                stack.pop()
            key = False
        elif char == "," and stack and stack[-1] == "{":
            key, parts = True, 1
        index += 1
    return 0


def _after_string(text: str, index: int, char: str) -> int:
    """Where the string opening at ``index`` ends (a newline ends a one-line string:
    tomllib reports it)."""
    quote = text[index:index + 3] if text.startswith(char * 3, index) else char
    index += len(quote)
    inside = _IN_BASIC if char == '"' else _IN_LITERAL
    while (stop := inside.search(text, index)) is not None:
        index = stop.start()
        if text.startswith(quote, index):
            return index + len(quote)
        if text[index] == "\\":
            index += 1
        elif len(quote) == 1:
            return index  # the newline is counted by the caller
        index += 1
    return len(text)


def parse_containerd(text: str, source: str,
                     max_depth: int = DEFAULT_LIMITS.max_depth) -> ContainerdConfig:
    """Read one ``config.toml``'s text; :class:`NodeConfigError` with ``source:line`` for
    TOML errors, nesting deeper than ``max_depth``, and values of the wrong type where
    containerd reads them."""
    data = _load(text, source, max_depth)
    lines = _key_lines(text)
    version_value = data.get("version", 1)
    version_line = _line(lines, ("version",))
    if type(version_value) is not int:
        raise ContainerdDecodeError(f"{source}:{version_line}", "version must be an integer, "
                                    "written without quotes: version = 2")
    version = max(version_value, 1)  # containerd reads 0 as 1
    plugins = data.get("plugins", {})
    if not isinstance(plugins, dict):
        raise ContainerdDecodeError(f"{source}:{_line(lines, ('plugins',))}",
                                    "plugins must be a table, written as [plugins.NAME] sections")
    newest = CRI_RUNTIME_PLUGIN_IDS[max(CRI_RUNTIME_PLUGIN_IDS)]
    read_ids = CRI_RUNTIME_PLUGIN_IDS.get(version, newest)
    runtimes = _runtime_tables(data, lines, source, read_ids)

    def first(*keys: Key) -> Setting | None:
        for key in keys:
            found = _setting(data, lines, key)
            if found is not None:
                return found
        return None

    read = [plugin for plugin in read_ids if isinstance(plugins.get(plugin), dict)]
    default_name = first(*(("plugins", p, "containerd", "default_runtime_name") for p in read))
    if default_name is not None and not isinstance(default_name.value, str):
        raise NodeConfigError(f"{source}:{default_name.line}",
                              "default_runtime_name must be a string")
    short = tuple(Setting(key, _dotted(("plugins", key)), _line(lines, ("plugins", key)))
                  for key in plugins if version >= 2 and "." not in key)
    return ContainerdConfig(
        short_plugin_keys=short,
        source=source,
        version=version,
        version_line=version_line,
        runtimes=tuple(runtimes),
        default_runtime_name=default_name,
        bin_dir=first(*(("plugins", p, "cni", "bin_dir") for p in read)),
        bin_dirs=first(*(("plugins", p, "cni", "bin_dirs") for p in read)),
        conf_dir=first(*(("plugins", p, "cni", "conf_dir") for p in read)),
        enable_cdi=first(*(("plugins", p, "enable_cdi") for p in read)),
        sandbox_image=first(
            ("plugins", _IMAGES_ID, "pinned_images", "sandbox"),
            *(("plugins", p, "sandbox_image") for p in read),
        ),
    )


def _load(text: str, source: str, max_depth: int) -> dict[str, Any]:
    """The TOML document, within ``max_depth``; its errors as one ``source:line`` line."""
    # TOML refuses a bare CR, so tomllib's lines (LF) are editors' up to any error it
    # reports; the nesting bound, counted first, counts a bare CR as editors do.
    deep = _too_deep(as_lf(text), max_depth)
    if deep:
        raise NodeConfigError(f"{source}:{deep}", f"nested deeper than {max_depth} levels "
                              "(raise the limit with --max-depth)")
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except RecursionError:  # a bound above Python's own: still one line
        raise NodeConfigError(source, "nested deeper than Python can decode "
                              f"(--max-depth is {max_depth})") from None
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = _POSITION.search(message)
        where = f"{source}:{match[1]}" if match else source
        reason = _POSITION.sub("", message) if match else message
        raise ContainerdDecodeError(where, f"not TOML: {reason}") from None
    return data


def _setting(data: dict[str, Any], lines: Mapping[Key, int], key: Key) -> Setting | None:
    """The value at ``key``, with its dotted key and line; ``None`` where it is not set."""
    node: Any = data
    for part in key:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return Setting(node, _dotted(key), _line(lines, key))


def _runtime_tables(data: dict[str, Any], lines: Mapping[Key, int], source: str,
                    read_ids: Collection[str]) -> list[RuntimeTable]:
    """Every ``containerd.runtimes`` table under a plugin id of some schema version, each
    marked ``read`` when the file's version reads that id (``read_ids``)."""
    runtimes: list[RuntimeTable] = []
    for plugin in _RUNTIME_IDS:
        tables = _setting(data, lines, ("plugins", plugin, "containerd", "runtimes"))
        if tables is None:
            continue
        if not isinstance(tables.value, dict):
            raise NodeConfigError(f"{source}:{tables.line}", f"{tables.key} must be a table")
        for name, body in tables.value.items():
            key = ("plugins", plugin, "containerd", "runtimes", name)
            if not isinstance(body, dict):
                raise NodeConfigError(f"{source}:{_line(lines, key)}",
                                      f"{_dotted(key)} must be a table")
            options = body.get("options", {})
            isolation_value: object = (
                options.get("SandboxIsolation", 0) if isinstance(options, dict) else 0)
            if type(isolation_value) is not int:
                spot = _line(lines, (*key, "options", "SandboxIsolation"))
                raise NodeConfigError(f"{source}:{spot}",
                                      "SandboxIsolation must be an integer (0 process, 1 Hyper-V)")
            runtimes.append(RuntimeTable(
                name, "hyperv" if isolation_value == 1 else "process", _dotted(key),
                _line(lines, key), plugin in read_ids,
            ))
    return runtimes


def read_containerd(path: str, limits: Limits = DEFAULT_LIMITS) -> ContainerdConfig:
    """:func:`parse_containerd` of a file (UTF-8, or UTF-16 with its BOM)."""
    return parse_containerd(read_text(path, limits), path, limits.max_depth)
