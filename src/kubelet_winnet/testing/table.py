"""The decision table as data: one entry per pod class, kubelet minor and
``WindowsHostNetwork`` state, the cells ``kubelet-winnet matrix`` prints (built by
``_lint/matrix.py``, the one home of them), flat for ``pytest.mark.parametrize``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubelet_winnet._describe import type_name
from kubelet_winnet._lint.matrix import GATE_STATES, POD_CLASSES, Cell, matrix_rows
from kubelet_winnet.errors import InvalidArgumentError

__all__ = ["GATE_STATES", "Cell", "DecisionRow", "decision_table"]


@dataclass(frozen=True)
class DecisionRow:
    """One cell of the table: the pod class (``pod``, its ``label`` and ``manifest``)
    and what that kubelet does with it (``cell``: ``cell.kubelet`` such as ``1.32``,
    ``cell.gates`` one of ``default``/``on``/``off``, ``cell.outcome`` ``sent``,
    ``refused`` or ``flag-error``, the network sent and what containerd gives)."""

    pod: str
    label: str
    manifest: Mapping[str, Any]
    cell: Cell

    @property
    def feature_gates(self) -> str | None:
        """The ``feature_gates`` argument of the cell's gate state (``None`` for
        ``default``, ``"WindowsHostNetwork=true"`` for ``on``, ``=false`` for ``off``),
        to build the request that kubelet sends."""
        return dict(GATE_STATES)[self.cell.gates]

    @property
    def id(self) -> str:
        """A test id: ``plain-host-network-1.32-default``."""
        return f"{self.pod}-{self.cell.kubelet}-{self.cell.gates}"


def decision_table(pods: Mapping[str, Mapping[str, Any]] | None = None) -> tuple[DecisionRow, ...]:
    """Every cell of ``kubelet-winnet matrix``: for each pod class (the representative
    classes, or ``pods``: name -> manifest), each supported kubelet minor and each gate
    state (left at its default, ``WindowsHostNetwork=true``, ``=false``). A malformed
    manifest in ``pods`` raises ``InvalidPodError``."""
    if pods is None:
        classes = [(c.id, c.label, c.manifest) for c in POD_CLASSES]
    elif isinstance(pods, Mapping):
        classes = []
        for name, manifest in pods.items():
            if not isinstance(name, str):
                raise InvalidArgumentError("pods", "a mapping of name (str) to manifest",
                                           f"a {type_name(name)} key")
            classes.append((name, name, manifest))
    else:
        raise InvalidArgumentError("pods", "a mapping of name to manifest, or None",
                                   type_name(pods))
    by_id = {pod_id: (label, manifest) for pod_id, label, manifest in classes}
    return tuple(
        DecisionRow(row.id, row.label, by_id[row.id][1], cell)
        for row in matrix_rows(classes)
        for cell in row.cells
    )
