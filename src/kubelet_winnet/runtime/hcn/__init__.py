"""The Host Compute Network side: documents, HRESULTs, clients and sandbox networks.

Layers, pure first:

* :mod:`._hresult` and :mod:`._documents`: pure
  decoding and JSON builders/parsers.
* :class:`HcnClient`: the seven namespace calls, with the freeing/closing rules.
  :class:`ComputeNetwork` runs them through ctypes (importing it loads nothing);
  :class:`InMemoryHcn` keeps namespaces in memory for tests and dry runs.
* :class:`SandboxNetworks`: applies a ``runtime.NetworkPlan`` with durable state.
"""

from __future__ import annotations

from kubelet_winnet.errors import HcnError, HcnNotFoundError
from kubelet_winnet.runtime.hcn._binding import GUID, ComputeNetwork
from kubelet_winnet.runtime.hcn._client import FUNCTIONS, HcnClient, NamespaceHandle
from kubelet_winnet.runtime.hcn._documents import (
    Namespace,
    NamespaceResource,
    endpoint_modify_request,
    namespace_query,
    namespace_settings,
    parse_guid_list,
    parse_namespace,
    parse_namespace_list,
)
from kubelet_winnet.runtime.hcn._hresult import error_for, parse_error_record
from kubelet_winnet.runtime.hcn._memory import InMemoryHcn
from kubelet_winnet.runtime.hcn._sandbox import (
    DEFAULT_OWNER,
    ReconcileReport,
    SandboxNetwork,
    SandboxNetworks,
)

__all__ = [
    "DEFAULT_OWNER",
    "FUNCTIONS",
    "GUID",
    "ComputeNetwork",
    "HcnClient",
    "HcnError",
    "HcnNotFoundError",
    "InMemoryHcn",
    "Namespace",
    "NamespaceHandle",
    "NamespaceResource",
    "ReconcileReport",
    "SandboxNetwork",
    "SandboxNetworks",
    "endpoint_modify_request",
    "error_for",
    "namespace_query",
    "namespace_settings",
    "parse_error_record",
    "parse_guid_list",
    "parse_namespace",
    "parse_namespace_list",
]
