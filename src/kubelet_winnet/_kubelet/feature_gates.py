"""``--feature-gates``: the gate names this library models and the flag parsed with the
kubelet's texts into :class:`FeatureGates`.

Flag parsing follows ``k8s.io/component-base/featuregate/feature_gate.go`` (``Set`` /
``SetFromMap``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from kubelet_winnet._describe import describe, type_name
from kubelet_winnet._kubelet import golang
from kubelet_winnet._printable import cut
from kubelet_winnet.errors import FeatureGateError, InvalidArgumentError

if TYPE_CHECKING:
    from typing import TypeAlias

    # What the public functions take for feature gates; any other value is still an
    # InvalidArgumentError at run time.
    FeatureGatesInput: TypeAlias = "str | Mapping[str, bool] | None"

__all__ = [
    "ALL_ALPHA",
    "ALL_BETA",
    "CONTAINER_STOP_SIGNALS",
    "IN_PLACE_POD_VERTICAL_SCALING",
    "MODELLED_GATES",
    "WINDOWS_HOST_NETWORK",
    "FeatureGates",
    "parse_feature_gates",
]

WINDOWS_HOST_NETWORK = "WindowsHostNetwork"
IN_PLACE_POD_VERTICAL_SCALING = "InPlacePodVerticalScaling"
CONTAINER_STOP_SIGNALS = "ContainerStopSignals"
ALL_ALPHA = "AllAlpha"
ALL_BETA = "AllBeta"
MODELLED_GATES = frozenset(
    {WINDOWS_HOST_NETWORK, IN_PLACE_POD_VERTICAL_SCALING, CONTAINER_STOP_SIGNALS, ALL_ALPHA,
     ALL_BETA}
)


# --- feature gates ----------------------------------------------------------------------

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
# The kubelet echoes names and values verbatim; ours are cut so a message stays small.
_MAX_ECHO = 200


def _echo(text: str) -> str:
    return cut(text, _MAX_ECHO)


def _items_of(settings: object) -> list[tuple[object, object]]:
    try:
        if not isinstance(settings, Mapping):
            raise InvalidArgumentError(
                "feature_gates", "a mapping of gate names to booleans", type_name(settings)
            )
        return list(settings.items())
    except InvalidArgumentError:
        raise
    except Exception as exc:  # a caller's Mapping.items() (or __instancecheck__) can raise anything
        raise InvalidArgumentError(
            "feature_gates",
            "a readable mapping of gate names to booleans",
            f"{type_name(settings)} (reading it raised {type_name(exc)})",
        ) from None


class FeatureGates(Mapping[str, bool]):
    """Explicitly set gates, immutable and hashable. Build with
    [`parse_feature_gates`][kubelet_winnet.parse_feature_gates]."""

    __slots__ = ("_hash", "_items")

    def __init__(self, settings: Mapping[str, bool] | None = None) -> None:
        items: dict[str, bool] = {}
        for name, value in _items_of({} if settings is None else settings):
            if type(name) is not str:
                raise FeatureGateError(
                    f"feature gate names must be strings, got {describe(name)}", ""
                )
            if type(value) is not bool:
                raise FeatureGateError(
                    f"invalid value of {_echo(name)}={describe(value)}, err: expected a "
                    "boolean",
                    name,
                )
            items[name] = value
        self._items = items
        self._hash = hash(frozenset(items.items()))

    @classmethod
    def from_flag(cls, flag: str) -> FeatureGates:
        """Parse a ``--feature-gates`` value with the kubelet's error texts."""
        if type(flag) is not str:
            raise InvalidArgumentError("feature_gates", "a --feature-gates string", type_name(flag))
        settings: dict[str, bool] = {}
        for item in flag.split(","):
            if not item:
                continue
            name, sep, raw = item.partition("=")
            name = name.strip(_GO_SPACE)
            if not sep:
                raise FeatureGateError(f"missing bool value for {_echo(name)}", name)
            raw = raw.strip(_GO_SPACE)
            value = _BOOLS.get(raw)
            if value is None:
                shown = _echo(raw)
                raise FeatureGateError(
                    f"invalid value of {_echo(name)}={shown}, err: strconv.ParseBool: "
                    f"parsing {golang.quote(shown)}: invalid syntax",
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
        return f"FeatureGates({_echo(self.to_flag())!r})"

    def to_flag(self) -> str:
        return ",".join(f"{k}={str(v).lower()}" for k, v in self._items.items())


_NO_GATES = FeatureGates()


def parse_feature_gates(value: FeatureGatesInput) -> FeatureGates:
    """Accept ``None``, a flag string, a mapping of name to bool, or
    [`FeatureGates`][kubelet_winnet.FeatureGates]."""
    if value is None:
        return _NO_GATES
    if type(value) is FeatureGates:
        return value
    if type(value) is str:
        return FeatureGates.from_flag(value)
    return FeatureGates(value)  # type: ignore[arg-type]  # checked there

