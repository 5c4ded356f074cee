"""The kubelet's ``--feature-gates`` flag and ``WindowsHostNetwork`` by kubelet version.

Spec: kubelet-rules.md "Feature-gate flag semantics" (k8s.io/component-base/featuregate
``Set`` / ``SetFromMap``) and "Timeline". Error texts are upstream's,
byte for byte.
"""

from __future__ import annotations

import string
from collections.abc import Iterator, Mapping

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import kubelet_winnet
from kubelet_winnet import (
    FeatureGateError,
    FeatureGates,
    InvalidArgumentError,
    WinnetError,
    kubelet_profile,
    parse_feature_gates,
)
from kubelet_winnet._kubelet.timeline import GateStage

WHN = "WindowsHostNetwork"
TRUE_SPELLINGS = ("1", "t", "T", "TRUE", "true", "True")
FALSE_SPELLINGS = ("0", "f", "F", "FALSE", "false", "False")
ALPHA_MINORS = range(26, 33)  # 1.26 .. 1.32
DEPRECATED_MINORS = range(33, 38)  # 1.33 .. 1.37
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c", "image": "i"}]},
}


def invalid_value(name: str, value: str, quoted: str | None = None) -> str:
    """component-base: ``invalid value of %s=%s, err: %v`` with a strconv.NumError."""
    quoted = f'"{value}"' if quoted is None else quoted
    return (
        f"invalid value of {name}={value}, err: "
        f"strconv.ParseBool: parsing {quoted}: invalid syntax"
    )


def gate_error(value: object) -> FeatureGateError:
    with pytest.raises(FeatureGateError) as info:
        parse_feature_gates(value)  # type: ignore[arg-type]
    return info.value


# --- flag syntax ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        ("", {}),
        (",", {}),
        (",,,", {}),
        (f"{WHN}=true", {WHN: True}),
        (f"{WHN}=false", {WHN: False}),
        (f"{WHN}=true,Foo=false", {WHN: True, "Foo": False}),
        # each side trimmed
        (f" {WHN} = false ", {WHN: False}),
        (f"\t{WHN}\t=\ttrue\n", {WHN: True}),
        (f"{WHN}=\u00a0false\u3000", {WHN: False}),  # Go's TrimSpace is Unicode-aware
        ("Foo=true , Bar=false", {"Foo": True, "Bar": False}),
        # empty items skipped
        (f",{WHN}=false,,Foo=true,", {WHN: False, "Foo": True}),
        # a later item overrides an earlier one
        (f"{WHN}=true,{WHN}=false", {WHN: False}),
        (f"{WHN}=false,Foo=true,{WHN}=true", {WHN: True, "Foo": True}),
        # names are taken as written (gate names are case-sensitive)
        ("windowshostnetwork=false", {"windowshostnetwork": False}),
        ("AllAlpha=false,AllBeta=true", {"AllAlpha": False, "AllBeta": True}),
    ],
)
def test_flag_parsing(flag: str, expected: dict[str, bool]) -> None:
    gates = parse_feature_gates(flag)
    assert isinstance(gates, FeatureGates)
    assert dict(gates) == expected


@pytest.mark.parametrize("spelling", TRUE_SPELLINGS + FALSE_SPELLINGS)
def test_every_parse_bool_spelling(spelling: str) -> None:
    expected = spelling in TRUE_SPELLINGS
    assert dict(parse_feature_gates(f"{WHN}={spelling}")) == {WHN: expected}
    assert dict(parse_feature_gates(f"Foo= {spelling} ")) == {"Foo": expected}


@pytest.mark.parametrize(
    "value",
    ["yes", "no", "on", "off", "y", "n", "2", "-1", "tRUE", "tRue", "fALSE", "TrUe",
     "enabled", "true1", "01", "maybe"],
)
def test_rejected_values(value: str) -> None:
    error = gate_error(f"{WHN}={value}")
    assert str(error) == invalid_value(WHN, value)
    assert error.gate == WHN
    assert isinstance(error, ValueError)
    assert isinstance(error, WinnetError)


def test_empty_value() -> None:
    assert str(gate_error(f"{WHN}=")) == invalid_value(WHN, "")
    assert str(gate_error(f"{WHN}=  ")) == invalid_value(WHN, "")
    assert str(gate_error(f"Foo=true,{WHN}=")) == (
        f'invalid value of {WHN}=, err: strconv.ParseBool: parsing "": invalid syntax'
    )


def test_value_in_message_is_trimmed() -> None:
    assert str(gate_error(f" {WHN} =  yes ")) == invalid_value(WHN, "yes")


def test_only_the_first_equals_sign_splits() -> None:
    # strings.SplitN(s, "=", 2)
    assert str(gate_error("a=b=c")) == invalid_value("a", "b=c")
    assert str(gate_error(f"{WHN}==true")) == invalid_value(WHN, "=true")


@pytest.mark.parametrize(
    ("value", "quoted"),
    [
        ('"true"', r'"\"true\""'),
        ("a\\b", r'"a\\b"'),
        ("a\tb", r'"a\tb"'),
        ("\x00", r'"\x00"'),
        ("\x7f", r'"\x7f"'),
        ("vrai\u2713", '"vrai\u2713"'),
        ("a\u200bb", r'"a\u200bb"'),
        ("\U0001f600", '"\U0001f600"'),
    ],
)
def test_value_is_quoted_as_go_strconv_quote(value: str, quoted: str) -> None:
    # %v of *strconv.NumError: `strconv.ParseBool: parsing ` + strconv.Quote(value) + ...
    assert str(gate_error(f"Foo={value}")) == invalid_value("Foo", value, quoted)


def test_go_trimspace_does_not_trim_information_separators() -> None:
    """strings.TrimSpace trims Unicode White_Space; U+001C..U+001F are not in it
    (Python's str.strip would drop them)."""
    assert str(gate_error(f"{WHN}=\x1ftrue")) == invalid_value(WHN, "\x1ftrue", r'"\x1ftrue"')
    assert dict(parse_feature_gates("\x1cFoo=true")) == {"\x1cFoo": True}


@pytest.mark.parametrize(
    ("flag", "name"),
    [
        (WHN, WHN),
        (f" {WHN} ", WHN),
        (f"Foo=true,{WHN}", WHN),
        (f"{WHN},Foo=maybe", WHN),  # the first bad item, in flag order, is reported
        ("AllAlpha", "AllAlpha"),
    ],
)
def test_missing_bool_value(flag: str, name: str) -> None:
    error = gate_error(flag)
    assert str(error) == f"missing bool value for {name}"
    assert error.gate == name


def test_whitespace_only_item_is_not_empty() -> None:
    """component-base skips only zero-length items (``len(s) == 0``); an item of
    blanks is trimmed to the empty name and has no ``=``."""
    assert str(gate_error(" ")) == "missing bool value for "
    assert str(gate_error(f"{WHN}=true, ,Foo=true")) == "missing bool value for "


def test_parse_errors_come_before_gate_errors() -> None:
    """``Set`` parses the whole flag before ``SetFromMap`` looks up names, so on 1.38 a
    bad value anywhere wins over the removed gate."""
    with pytest.raises(FeatureGateError) as info:
        kubelet_profile("1.38", f"{WHN}=true,Foo=maybe")
    assert str(info.value) == invalid_value("Foo", "maybe")


# --- mapping and FeatureGates input ----------------------------------------------------


def test_none_means_no_gates() -> None:
    assert dict(parse_feature_gates(None)) == {}
    assert parse_feature_gates(None) == parse_feature_gates("")


def test_mapping_input() -> None:
    gates = parse_feature_gates({WHN: False, "Foo": True})
    assert dict(gates) == {WHN: False, "Foo": True}
    assert gates == parse_feature_gates(f"{WHN}=false,Foo=true")
    assert dict(parse_feature_gates({})) == {}


def test_mapping_is_copied() -> None:
    source = {WHN: False}
    gates = parse_feature_gates(source)
    source[WHN] = True
    assert gates[WHN] is False


@pytest.mark.parametrize("value", ["true", "false", 1, 0, None, 1.0, [True], b"true"])
def test_mapping_values_must_be_bool(value: object) -> None:
    error = gate_error({WHN: value})
    assert error.gate == WHN
    with pytest.raises(FeatureGateError):
        FeatureGates({WHN: value})  # type: ignore[dict-item]


@pytest.mark.parametrize("name", [1, None, b"WindowsHostNetwork", (WHN,)])
def test_mapping_names_must_be_str(name: object) -> None:
    gate_error({name: True})


@pytest.mark.parametrize("value", [True, 1, 1.5, [f"{WHN}=true"], (WHN, True), b"Foo=true"])
def test_other_types_rejected(value: object) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        parse_feature_gates(value)  # type: ignore[arg-type]
    assert info.value.argument == "feature_gates"


class _RaisingMapping(Mapping[str, bool]):
    def __getitem__(self, key: str) -> bool:
        raise RuntimeError("boom")

    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("boom")

    def __len__(self) -> int:
        raise RuntimeError("boom")


def test_mapping_that_raises_is_an_invalid_argument() -> None:
    with pytest.raises(InvalidArgumentError):
        parse_feature_gates(_RaisingMapping())


def test_huge_value_in_a_flag_gives_a_bounded_message() -> None:
    error = gate_error(f"{WHN}=" + "x" * 100_000)
    assert len(str(error)) < 700


def test_huge_int_value_in_a_mapping_gives_a_bounded_message() -> None:
    error = gate_error({WHN: 10**5000})
    assert len(str(error)) < 300


def test_feature_gates_object() -> None:
    gates = FeatureGates({WHN: False})
    assert parse_feature_gates(gates) is gates
    assert isinstance(gates, Mapping)
    assert gates == FeatureGates.from_flag(f"{WHN}=false")
    assert hash(gates) == hash(FeatureGates({WHN: False}))
    assert gates != FeatureGates({WHN: True})
    assert len(gates) == 1
    assert list(gates) == [WHN]
    with pytest.raises(TypeError):
        gates[WHN] = True  # type: ignore[index]


def test_to_flag_round_trip() -> None:
    gates = parse_feature_gates(f" {WHN} = F ,Foo=1")
    assert parse_feature_gates(gates.to_flag()) == gates
    assert eval(repr(gates), {"FeatureGates": FeatureGates.from_flag}) == gates


def test_all_input_forms_give_the_same_profile() -> None:
    for minor in (30, 35, 38):
        version = f"1.{minor}"
        flag = kubelet_profile(version, "AllAlpha=false,Foo=true")
        mapping = kubelet_profile(version, {"AllAlpha": False, "Foo": True})
        obj = kubelet_profile(version, FeatureGates({"AllAlpha": False, "Foo": True}))
        assert flag == mapping == obj


# --- WindowsHostNetwork by kubelet version (Timeline) ---------------------------------


def namespace_options_present(version: str, gates: object) -> bool:
    config = kubelet_winnet.windows_sandbox_config(
        POD, kubelet_version=version, feature_gates=gates  # type: ignore[arg-type]
    )
    return config.security_context.HasField("namespace_options")


@pytest.mark.parametrize("minor", ALPHA_MINORS)
@pytest.mark.parametrize(
    ("flag", "enabled"),
    [
        ("", True),  # alpha, default true
        (f"{WHN}=true", True),
        (f"{WHN}=false", False),  # settable off: never locked
        ("AllAlpha=false", False),  # AllAlpha switches every alpha gate ...
        (f"AllAlpha=false,{WHN}=true", True),  # ... not set by name
        (f"{WHN}=true,AllAlpha=false", True),
        (f"AllAlpha=true,{WHN}=false", False),
        ("AllAlpha=true", True),
        ("AllBeta=false", True),  # the gate is alpha: AllBeta has no effect
        ("AllBeta=true", True),
        (f"AllBeta=true,{WHN}=false", False),
        ("Foo=false", True),
        ("HPAScaleToZero=false", True),  # another gate
    ],
)
def test_alpha_releases(minor: int, flag: str, enabled: bool) -> None:
    version = f"1.{minor}"
    profile = kubelet_profile(version, flag)
    assert profile.stage is GateStage.ALPHA
    assert profile.enabled is enabled
    assert profile.sets_namespace_options is enabled
    assert profile.explicitly_set is (WHN in parse_feature_gates(flag))
    assert profile.log_lines == ()
    assert namespace_options_present(version, flag) is enabled


@pytest.mark.parametrize("minor", DEPRECATED_MINORS)
@pytest.mark.parametrize(
    ("flag", "enabled", "log"),
    [
        ("", False, None),  # deprecated, default false
        (f"{WHN}=true", True, "true"),
        (f"{WHN}=false", False, "false"),
        (f"{WHN}=1", True, "true"),  # logged with %t
        (f"{WHN}=F", False, "false"),
        ("AllAlpha=true", False, None),  # no longer alpha
        ("AllBeta=true", False, None),
        (f"AllAlpha=false,{WHN}=true", True, "true"),
    ],
)
def test_deprecated_releases(minor: int, flag: str, enabled: bool, log: str | None) -> None:
    version = f"1.{minor}"
    profile = kubelet_profile(version, flag)
    assert profile.stage is GateStage.DEPRECATED
    assert profile.enabled is enabled
    # The code path is gone (PR #130250): never namespace_options, whatever the gate says.
    assert profile.sets_namespace_options is False
    assert namespace_options_present(version, flag) is False
    expected_log = () if log is None else (
        f"Setting deprecated feature gate WindowsHostNetwork={log}. "
        "It will be removed in a future release.",
    )
    assert profile.log_lines == expected_log


def test_deprecated_log_line_exact() -> None:
    assert kubelet_profile("1.33", f"{WHN}=true").log_lines == (
        "Setting deprecated feature gate WindowsHostNetwork=true. "
        "It will be removed in a future release.",
    )


def test_deprecated_log_line_reaches_explain() -> None:
    explanation = kubelet_winnet.explain(POD, kubelet_version="1.35", feature_gates={WHN: True})
    messages = [w.message for w in explanation.warnings]
    assert (
        "Setting deprecated feature gate WindowsHostNetwork=true. "
        "It will be removed in a future release."
    ) in messages


@pytest.mark.parametrize(
    "gates",
    [f"{WHN}=true", f"{WHN}=false", f"Foo=true,{WHN}=0", {WHN: True}, {WHN: False},
     FeatureGates({WHN: False})],
    ids=repr,
)
def test_removed_in_1_38(gates: object) -> None:
    with pytest.raises(FeatureGateError) as info:
        kubelet_profile("1.38", gates)  # type: ignore[arg-type]
    assert str(info.value) == "unrecognized feature gate: WindowsHostNetwork"
    assert info.value.gate == WHN
    with pytest.raises(FeatureGateError, match=r"^unrecognized feature gate: WindowsHostNetwork$"):
        kubelet_winnet.windows_sandbox_config(POD, kubelet_version="v1.38.0", feature_gates=gates)  # type: ignore[arg-type]
    with pytest.raises(FeatureGateError):
        kubelet_winnet.explain(POD, kubelet_version="1.38", feature_gates=gates)  # type: ignore[arg-type]


@pytest.mark.parametrize("flag", [None, "", "AllAlpha=true", "AllBeta=false", "Foo=true"])
def test_1_38_without_the_gate(flag: str | None) -> None:
    profile = kubelet_profile("1.38", flag)
    assert profile.stage is GateStage.REMOVED
    assert profile.enabled is None
    assert profile.sets_namespace_options is False
    assert profile.log_lines == ()
    assert namespace_options_present("1.38", flag) is False


@pytest.mark.parametrize("minor", range(26, 38))
def test_gate_is_recognised_before_1_38(minor: int) -> None:
    for value in ("true", "false"):
        kubelet_profile(f"1.{minor}", f"{WHN}={value}")


# --- gates the library does not model -------------------------------------------------


def test_not_modelled_gates_are_accepted_and_reported() -> None:
    flag = "HPAScaleToZero=true,Foo=false,AllAlpha=true,allbeta=true"
    for minor in (26, 32, 33, 38):
        profile = kubelet_profile(f"1.{minor}", flag)
        assert set(profile.not_modelled) == {"HPAScaleToZero", "Foo", "allbeta"}
    assert kubelet_profile("1.32", f"{WHN}=false,AllBeta=true").not_modelled == ()


@pytest.mark.parametrize(
    "name",
    ["windowshostnetwork", "WINDOWSHOSTNETWORK", "WindowsHostNetworks", "WindowHostNetwork",
     "WindowsHostNetwrok", "WindowsHostNet work"],
)
@pytest.mark.parametrize("minor", [26, 32, 33, 37])
def test_a_near_miss_of_the_gate_is_unrecognized(name: str, minor: int) -> None:
    """component-base featuregate.Set refuses unknown gates with "unrecognized feature
    gate: NAME"; no release has a gate this close to WindowsHostNetwork, so a typo there
    is refused instead of silently leaving the gate at its default."""
    with pytest.raises(FeatureGateError) as caught:
        kubelet_profile(f"1.{minor}", f"{name}=false")
    assert str(caught.value) == f"unrecognized feature gate: {name.strip()}"


@pytest.mark.parametrize("name", ["WindowsHostProcessContainers", "WindowsGracefulNodeShutdown",
                                  "HostNetwork", "Windows"])
def test_real_gates_that_are_not_near_misses_are_accepted(name: str) -> None:
    assert kubelet_profile("1.32", f"{name}=true").not_modelled == (name,)


def test_not_modelled_gates_in_explain_warnings() -> None:
    explanation = kubelet_winnet.explain(
        POD, feature_gates=f"HPAScaleToZero=true,{WHN}=true,Foo=false,AllAlpha=true"
    )
    codes = [w.code.value for w in explanation.warnings]
    assert codes.count("feature-gate-not-modelled") == 2
    texts = " ".join(
        w.message for w in explanation.warnings if w.code.value == "feature-gate-not-modelled"
    )
    assert "HPAScaleToZero" in texts
    assert "Foo" in texts
    assert explanation.config is not None
    plain = kubelet_winnet.explain(POD, feature_gates=f"{WHN}=true,AllAlpha=true")
    assert "feature-gate-not-modelled" not in [w.code.value for w in plain.warnings]
    code: object = kubelet_winnet.WarningCode.FEATURE_GATE_NOT_MODELLED
    assert isinstance(code, str)
    assert code == "feature-gate-not-modelled"


# --- properties -------------------------------------------------------------------------

KNOWN_NAMES = [WHN, "AllAlpha", "AllBeta", "Foo", "HPAScaleToZero", "windowsHostNetwork"]
names = st.sampled_from(KNOWN_NAMES) | st.text(
    string.ascii_letters + string.digits + "-_.", min_size=1, max_size=12
)
blanks = st.text(" \t", max_size=2)
spellings = st.sampled_from(TRUE_SPELLINGS + FALSE_SPELLINGS)


@st.composite
def good_items(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 5)) == 0:
        return ""  # an empty item
    name: str = draw(names)
    value: str = draw(spellings)
    return f"{draw(blanks)}{name}{draw(blanks)}={draw(blanks)}{value}{draw(blanks)}"


good_flags = st.lists(good_items(), max_size=8).map(",".join)


def oracle(flag: str) -> dict[str, bool]:
    """component-base ``Set`` for flags made of good items."""
    result: dict[str, bool] = {}
    for item in flag.split(","):
        if item:
            name, value = item.split("=", 1)
            result[name.strip(" \t")] = value.strip(" \t") in TRUE_SPELLINGS
    return result


@given(good_flags)
@example(f"{WHN}=true,{WHN}=false")
@example(",, AllAlpha = 0 ,")
def test_flag_matches_oracle(flag: str) -> None:
    """Comma split, each side trimmed, empty items skipped, later items override."""
    assert dict(parse_feature_gates(flag)) == oracle(flag)


@given(
    name=st.text(string.ascii_letters, min_size=1, max_size=8),
    value=st.text(
        "".join(c for c in string.printable if c not in '",=\\' and not c.isspace()),
        max_size=6,
    ),
)
@example(name=WHN, value="yes")
@example(name=WHN, value="")
def test_any_value_is_a_parse_bool_spelling_or_the_exact_error(name: str, value: str) -> None:
    flag = f"{name}={value}"
    if value in TRUE_SPELLINGS + FALSE_SPELLINGS:
        assert dict(parse_feature_gates(flag)) == {name: value in TRUE_SPELLINGS}
    else:
        assert str(gate_error(flag)) == invalid_value(name, value)


@given(minor=st.integers(26, 38), flag=good_flags)
def test_profile_matches_timeline(minor: int, flag: str) -> None:
    """Timeline: NODE/POD options only on 1.26-1.32 with the gate enabled, where enabled is
    the named value, else AllAlpha's, else the default (true)."""
    settings = oracle(flag)
    # A misspelt WindowsHostNetwork is no gate of any release. The generated names are
    # either known names or at most 12 characters (6 edits away), so the only near misses
    # are other spellings of its case.
    misspelt = any(n != WHN and n.lower() == WHN.lower() for n in settings)
    if misspelt or (minor == 38 and WHN in settings):
        with pytest.raises(FeatureGateError, match=r"^unrecognized feature gate: "):
            kubelet_profile(f"1.{minor}", flag)
        return
    profile = kubelet_profile(f"1.{minor}", flag)
    enabled = settings.get(WHN, settings.get("AllAlpha", True))
    assert profile.sets_namespace_options is (minor <= 32 and enabled)
    assert set(profile.not_modelled) == set(settings) - {WHN, "AllAlpha", "AllBeta"}


@pytest.mark.parametrize(("value", "quoted"), [
    ("\u00e9\x07", '"\u00e9\\a"'),  # é is printable to Go: kept
    ("x\x7f\u00ad", '"x\\x7f\\u00ad"'),  # DEL as \x7f, soft hyphen as \u00ad
    ("\ud800", '"\ufffd"'),  # Go's JSON reader holds U+FFFD for a lone surrogate
])
def test_parse_bool_error_quotes_as_go_strconv_quote(value: str, quoted: str) -> None:
    """strconv.ParseBool's NumError: `parsing ` + strconv.Quote(value)."""
    assert str(gate_error(f"{WHN}={value}")) == invalid_value(WHN, value, quoted)


# --- ContainerStopSignals (KEP-4960) ------------------------------------------------------
# kube_features.go's versioned table (1.33 at b0b89d3b, and the stored 1.35 one): one row,
# {1.33, Default: false, PreRelease: Alpha}; the gate does not exist before 1.33.
STOP = "ContainerStopSignals"


@pytest.mark.parametrize("minor", range(33, 39))
def test_container_stop_signals_is_alpha_and_off(minor: int) -> None:
    version = f"1.{minor}"
    assert kubelet_profile(version).stop_signals is False
    assert kubelet_profile(version, f"{STOP}=true").stop_signals is True
    assert kubelet_profile(version, "AllAlpha=true").stop_signals is True
    assert kubelet_profile(version, f"AllAlpha=true,{STOP}=false").stop_signals is False
    assert kubelet_profile(version, "AllBeta=true").stop_signals is False
    assert kubelet_profile(version, f"{STOP}=true").not_modelled == ()


@pytest.mark.parametrize("minor", range(26, 33))
@pytest.mark.parametrize("value", ["true", "false"])
def test_container_stop_signals_before_1_33_is_unrecognized(minor: int, value: str) -> None:
    """component-base featuregate Set: "unrecognized feature gate: NAME" for a gate its
    release does not know; AllAlpha=true there switches nothing and is no error."""
    with pytest.raises(FeatureGateError) as caught:
        kubelet_profile(f"1.{minor}", f"{STOP}={value}")
    assert str(caught.value) == f"unrecognized feature gate: {STOP}"
    assert kubelet_profile(f"1.{minor}", "AllAlpha=true").stop_signals is False


def test_container_stop_signals_is_no_unmodelled_gate_in_explain() -> None:
    explanation = kubelet_winnet.explain(POD, kubelet_version="1.33",
                                         feature_gates=f"{STOP}=true,Foo=true")
    texts = [w.message for w in explanation.warnings
             if w.code.value == "feature-gate-not-modelled"]
    assert len(texts) == 1 and "Foo" in texts[0] and STOP not in texts[0]
