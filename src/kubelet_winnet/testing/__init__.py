"""A test harness for kuberuntime and runtime code: the library as the oracle.

* ``FakeRuntime``: a recording ``runtime.v1`` runtime on a unix socket (grpcio).
* ``assert_kubelet_request`` / ``diff_kubelet_request``: a received request
  against the one the kubelet sends, field by field.
* ``decision_table``: the cells of ``kubelet-winnet matrix`` for a parametrized test.
* ``kubelet_winnet.testing.strategies``: hypothesis strategies (Windows pods,
  workloads, kubelet versions, feature gates, node facts).
* a pytest plugin (``kubelet_winnet.testing.plugin``, loaded by its ``pytest11`` entry
  point): the fixtures ``fake_cri_runtime`` and ``in_memory_hcn``.

Install with ``pip install 'kubelet-winnet[testing]'`` (hypothesis, grpcio). Importing
this package loads neither: grpc is imported when a ``FakeRuntime`` starts,
hypothesis with the strategies module.
"""

from __future__ import annotations

from kubelet_winnet.testing.compare import Difference, assert_kubelet_request, diff_kubelet_request
from kubelet_winnet.testing.fake import Call, FakeRuntime
from kubelet_winnet.testing.table import DecisionRow, decision_table

__all__ = [
    "Call",
    "DecisionRow",
    "Difference",
    "FakeRuntime",
    "assert_kubelet_request",
    "decision_table",
    "diff_kubelet_request",
]
