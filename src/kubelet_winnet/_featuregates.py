"""The kubelet's ``--feature-gates`` flag, as far as KEP-3503 is concerned.

Parsing follows k8s.io/component-base/featuregate (``featureGate.Set`` / ``SetFromMap``):
comma-separated ``NAME=VALUE`` items, each side trimmed, empty items skipped, a later
item overriding an earlier one, values as Go's ``strconv.ParseBool``. Only
``WindowsHostNetwork`` and the ``AllAlpha`` / ``AllBeta`` switches are modelled; other
names are accepted and reported, because real kubelet flag lines carry dozens of gates.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from kubelet_winnet._versions import GateStage, KubeletVersion, gate_status
from kubelet_winnet.errors import FeatureGateError

__all__ = [
    "MODELLED_GATES",
    "WINDOWS_HOST_NETWORK",
    "FeatureGates",
    "GateResolution",
    "parse_feature_gates",
    "resolve_gates",
]

WINDOWS_HOST_NETWORK = "WindowsHostNetwork"
ALL_ALPHA = "AllAlpha"
ALL_BETA = "AllBeta"
MODELLED_GATES = frozenset({WINDOWS_HOST_NETWORK, ALL_ALPHA, ALL_BETA})

# strconv.ParseBool's accepted spellings.
_BOOLS = {
    "1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
    "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False,
}
# Go's strings.TrimSpace trims Unicode White_Space. Python's str.strip() also drops
# U+001C..U+001F (information separators), which Go keeps.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + (
    "\u2028\u2029\u202f\u205f\u3000"
)
_GO_ESCAPES = {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t",
               "\v": r"\v", "\\": "\\\\", '"': '\\"'}


def _go_quote(text: str) -> str:
    """Go's ``%q`` / ``strconv.Quote`` for the strings a flag can hold."""
    out = []
    for ch in text:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


class FeatureGates(Mapping[str, bool]):
    """Explicitly set gates, immutable and hashable. Build with :func:`parse_feature_gates`."""

    __slots__ = ("_hash", "_items")

    def __init__(self, settings: Mapping[str, bool] | None = None) -> None:
        items: dict[str, bool] = {}
        for name, value in (settings or {}).items():
            if not isinstance(name, str):
                raise FeatureGateError(
                    f"feature gate names must be strings, got {type(name).__name__}", str(name)
                )
            if not isinstance(value, bool):
                raise FeatureGateError(
                    f"invalid value of {name}={value!r}, err: expected a boolean, "
                    f"got {type(value).__name__}",
                    name,
                )
            items[name] = value
        self._items = items
        self._hash = hash(frozenset(items.items()))

    @classmethod
    def from_flag(cls, flag: str) -> FeatureGates:
        """Parse a ``--feature-gates`` value with the kubelet's error texts."""
        settings: dict[str, bool] = {}
        for item in flag.split(","):
            if not item:
                continue
            name, sep, raw = item.partition("=")
            name = name.strip(_GO_SPACE)
            if not sep:
                raise FeatureGateError(f"missing bool value for {name}", name)
            raw = raw.strip(_GO_SPACE)
            value = _BOOLS.get(raw)
            if value is None:
                raise FeatureGateError(
                    f"invalid value of {name}={raw}, err: strconv.ParseBool: "
                    f"parsing {_go_quote(raw)}: invalid syntax",
                    name,
                )
            settings[name] = value
        return cls(settings)

    def __getitem__(self, name: str) -> bool:
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FeatureGates):
            return self._items == other._items
        return NotImplemented

    def __repr__(self) -> str:
        return f"FeatureGates({self.to_flag()!r})"

    def to_flag(self) -> str:
        return ",".join(f"{k}={str(v).lower()}" for k, v in self._items.items())


_NO_GATES = FeatureGates()


def parse_feature_gates(value: object) -> FeatureGates:
    """Accept ``None``, a flag string, a mapping of name to bool, or :class:`FeatureGates`."""
    if value is None:
        return _NO_GATES
    if isinstance(value, FeatureGates):
        return value
    if isinstance(value, str):
        return _from_flag(value)
    if isinstance(value, Mapping):
        return FeatureGates(value)
    raise FeatureGateError(
        "feature_gates must be a --feature-gates string, a mapping or FeatureGates, "
        f"got {type(value).__name__}",
        "",
    )


@functools.lru_cache(maxsize=256)
def _from_flag(flag: str) -> FeatureGates:
    return FeatureGates.from_flag(flag)


@dataclass(frozen=True)
class GateResolution:
    """``WindowsHostNetwork`` as one kubelet sees it."""

    version: KubeletVersion
    stage: GateStage
    # The gate's value (default, or set); None when the gate does not exist.
    enabled: bool | None
    explicitly_set: bool
    # What matters for the sandbox config: the kubelet sets namespace_options.
    sets_namespace_options: bool
    not_modelled: tuple[str, ...]
    # What the kubelet logs while parsing the flag.
    log_lines: tuple[str, ...]


@functools.lru_cache(maxsize=512)
def resolve_gates(version: KubeletVersion, gates: FeatureGates) -> GateResolution:
    """Apply ``gates`` as kubelet ``version`` would; raise its ``FeatureGateError`` texts."""
    status = gate_status(version.minor)
    explicit = gates.get(WINDOWS_HOST_NETWORK)
    log_lines: tuple[str, ...] = ()
    if status.stage is GateStage.REMOVED:
        if explicit is not None:
            raise FeatureGateError(
                f"unrecognized feature gate: {WINDOWS_HOST_NETWORK}", WINDOWS_HOST_NETWORK
            )
        enabled: bool | None = None
    elif explicit is not None:
        enabled = explicit
        if status.stage is GateStage.DEPRECATED:
            log_lines = (
                f"Setting deprecated feature gate {WINDOWS_HOST_NETWORK}="
                f"{str(explicit).lower()}. It will be removed in a future release.",
            )
    elif status.stage is GateStage.ALPHA and ALL_ALPHA in gates:
        # AllAlpha switches every alpha gate not set by name.
        enabled = gates[ALL_ALPHA]
    else:
        enabled = status.default
    return GateResolution(
        version=version,
        stage=status.stage,
        enabled=enabled,
        explicitly_set=explicit is not None,
        sets_namespace_options=status.sets_namespace_options and bool(enabled),
        not_modelled=tuple(name for name in gates if name not in MODELLED_GATES),
        log_lines=log_lines,
    )
