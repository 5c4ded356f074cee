"""``decision_table``: the cells ``kubelet-winnet matrix`` prints, flat, for a
parametrized test. The expectations restate the kubelet rules (kubelet-rules.md): 1.26-1.32
send ``namespace_options`` unless the gate is off, 1.33-1.37 never, 1.38 refuses the gate."""

from __future__ import annotations

import json

import pytest

import kubelet_winnet as kw
from kubelet_winnet.testing import DecisionRow, decision_table
from tests.strategies import run_main

ROWS = decision_table()


def test_the_table_is_the_matrix_commands(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_main(capsys, "matrix", "-o", "json")
    assert status == 0
    printed = [(row["pod"], cell) for row in json.loads(out)["rows"] for cell in row["cells"]]
    assert [(r.pod, r.cell.to_dict()) for r in ROWS] == printed


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_each_cell_follows_the_gate_timeline(row: DecisionRow) -> None:
    minor = int(row.cell.kubelet.split(".")[1])
    if minor >= 38 and row.cell.gates != "default":
        assert row.cell.outcome == "flag-error"
        assert row.cell.error == "unrecognized feature gate: WindowsHostNetwork"
        return
    if row.cell.outcome == "refused":
        with pytest.raises(kw.SandboxConfigError):
            kw.windows_sandbox_config(row.manifest)
        return
    sends = 26 <= minor <= 32 and row.cell.gates != "off"
    host_network = row.manifest["spec"]["hostNetwork"]
    assert row.cell.network == (("NODE" if host_network else "POD") if sends else None)


def test_ids_are_unique_and_pods_can_be_given() -> None:
    assert len({r.id for r in ROWS}) == len(ROWS)
    rows = decision_table({"mine": {"spec": {"containers": [{"name": "c"}]}}})
    assert {r.pod for r in rows} == {"mine"}
    assert len(rows) == len(ROWS) // len({r.pod for r in ROWS})


@pytest.mark.parametrize(("pods", "error"), [
    (["x"], kw.InvalidArgumentError),
    ({1: {}}, kw.InvalidArgumentError),
    ({"bad": {"spec": {"hostNetwork": "yes"}}}, kw.InvalidPodError),
])
def test_bad_pods_get_typed_errors(pods: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        decision_table(pods)  # type: ignore[arg-type]


@pytest.mark.parametrize("row", [r for r in ROWS if r.cell.outcome != "flag-error"],
                         ids=lambda r: r.id)
def test_a_rows_feature_gates_build_the_request_its_cell_says(row: DecisionRow) -> None:
    """``row.feature_gates`` is the flag the cell's gate state means: the request built
    with it sends the network the cell shows (or the kubelet refuses the pod)."""
    assert row.feature_gates == {"default": None, "on": "WindowsHostNetwork=true",
                                 "off": "WindowsHostNetwork=false"}[row.cell.gates]
    try:
        config = kw.windows_sandbox_config(row.manifest, kubelet_version=row.cell.kubelet,
                                           feature_gates=row.feature_gates)
    except kw.SandboxConfigError:
        assert row.cell.outcome == "refused"
        return
    options = config.security_context
    sent = (("NODE" if options.namespace_options.network else "POD")
            if options.HasField("namespace_options") else None)
    assert sent == row.cell.network
