"""The Windows part of the ``ContainerConfig``: ``generateWindowsContainerConfig`` and
``calculateWindowsResources`` / ``calculateCPUMaximum``
(pkg/kubelet/kuberuntime/kuberuntime_container_windows.go). The security context it
carries is the core's decision (:func:`~kubelet_winnet._kubelet.rules.decide_container`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._describe import describe
from kubelet_winnet._kubelet import golang
from kubelet_winnet._kubelet.messages import fill_container_security_context
from kubelet_winnet._kubelet.node import NodeContext
from kubelet_winnet._kubelet.pod import get_object, read_field
from kubelet_winnet._kubelet.quantity import go_milli_value, nanos_value, parse_nanos
from kubelet_winnet._kubelet.request_facts import CPU_MAXIMUM_HELPER, SATURATING_MILLI_VALUE
from kubelet_winnet._kubelet.rules import ContainerDecision
from kubelet_winnet._kubelet.timeline import MAX_MINOR
from kubelet_winnet.errors import InvalidPodError

__all__ = [
    "calculate_cpu_maximum",
    "container_resources",
    "fill_windows_config",
    "fill_windows_resources",
    "quantity_nanos",
    "quantity_text",
]


def calculate_cpu_maximum(
    cpu_limit_milli: int, processor_count: int, minor: int = MAX_MINOR
) -> int:
    """Hundredths of a percent of all processors, clamped to [1, 10000], computed in Go's
    int64 arithmetic (products wrap; division truncates toward zero), per release:

    * 1.27+: ``calculateCPUMaximum`` (kuberuntime_container_windows.go, PR #114231):
      ``10 * cpuLimit.MilliValue() / cpuCount``;
    * 1.26: inline in ``calculateWindowsResources``:
      ``10000 * cpuLimit.MilliValue() / NumCPU / 1000``, which overflows 1000 times sooner.

    ``cpu_limit_milli`` is the int64 ``MilliValue()`` (:func:`go_milli_value`).
    """
    if CPU_MAXIMUM_HELPER.holds(minor):
        maximum = golang.div_int64(golang.mul_int64(10, cpu_limit_milli), processor_count)
    else:
        maximum = golang.div_int64(
            golang.div_int64(golang.mul_int64(10000, cpu_limit_milli), processor_count), 1000
        )
    return max(1, min(10000, maximum))


def quantity_text(value: object, where: str) -> str:
    """A quantity field as the text ``ParseQuantity`` reads (a string, or a JSON
    number's digits: Quantity unmarshals both), checked to parse."""
    if type(value) is int:
        if value.bit_length() > 100:  # far beyond any resource; str() of it is costly
            raise InvalidPodError(where, "quantity out of range")
        value = str(value)
    elif type(value) is float:
        value = repr(value)
    if type(value) is not str:
        raise InvalidPodError(where, f"expected a quantity string, got {describe(value)}")
    try:
        parse_nanos(value)
    except ValueError as exc:
        raise InvalidPodError(where, str(exc)) from None
    return value


def quantity_nanos(value: object, where: str) -> int:
    """A quantity field in billionths (:func:`quantity_text`, parsed)."""
    return parse_nanos(quantity_text(value, where))


def _quantities(raw: Mapping[str, Any] | None, where: str) -> dict[str, str]:
    """Resource name -> quantity text of ``resources.limits`` or ``.requests`` at
    ``where``, each checked."""
    if raw is None:
        return {}
    values = {}
    for name in raw:
        if type(name) is not str:
            raise InvalidPodError(where, "expected string resource names")
        values[name] = quantity_text(read_field(raw, name, f"{where}."), f"{where}.{name}")
    return values


def container_resources(
    container: Mapping[str, Any], at: str
) -> tuple[dict[str, str], dict[str, str]]:
    """(limits, requests) as quantity texts; requests default to limits (defaults.go).
    Texts, not values: past the int64 range ``Value()`` depends on how ``ParseQuantity``
    stores the text (quantity.py :func:`go_value`)."""
    resources = get_object(container, "resources", at)
    if resources is None:
        return {}, {}
    here = f"{at}resources."
    limits = _quantities(get_object(resources, "limits", here), f"{here}limits")
    requests = _quantities(get_object(resources, "requests", here), f"{here}requests")
    for name, amount in limits.items():
        requests.setdefault(name, amount)
    return limits, requests


def fill_windows_resources(
    target: api_pb2.WindowsContainerResources, container: Mapping[str, Any], at: str,
    node: NodeContext, minor: int = MAX_MINOR,
) -> None:
    """``calculateWindowsResources`` into ``target`` (marked present): ``if
    !cpuLimit.IsZero()`` sets ``cpu_maximum`` and ``if memLimit != 0`` the memory limit,
    so a zero CPU or memory limit leaves the field unset (0 on the wire); ``cpu_count``
    and ``cpu_shares`` are never set."""
    target.SetInParent()
    resources = get_object(container, "resources", at)
    if resources is None:
        return
    here = f"{at}resources."
    limits = _quantities(get_object(resources, "limits", here), f"{here}limits")
    _quantities(get_object(resources, "requests", here), f"{here}requests")  # checked only
    cpu = limits.get("cpu")
    if cpu is not None and parse_nanos(cpu):  # !cpuLimit.IsZero()
        milli = go_milli_value(cpu, saturating=SATURATING_MILLI_VALUE.holds(minor))
        target.cpu_maximum = calculate_cpu_maximum(milli, node.processor_count, minor)
    memory = limits.get("memory")
    if memory is not None and parse_nanos(memory):
        amount = nanos_value(parse_nanos(memory))
        if not golang.INT64_MIN <= amount <= golang.INT64_MAX:
            # memory_limit_in_bytes is an int64, as is the Quantity.Value() it comes from.
            raise InvalidPodError(
                f"{here}limits.memory",
                f"a limit of {amount} bytes does not fit the request's int64 "
                f"memory_limit_in_bytes (at most {golang.format_int64(golang.INT64_MAX)})",
            )
        target.memory_limit_in_bytes = amount


def fill_windows_config(
    target: api_pb2.WindowsContainerConfig, container: Mapping[str, Any], at: str,
    node: NodeContext, minor: int, decision: ContainerDecision,
) -> None:
    """``generateWindowsContainerConfig``: the resources, then the security context of
    the decision (run-as user, GMSA credential spec, HostProcess)."""
    fill_windows_resources(target.resources, container, at, node, minor)
    fill_container_security_context(target.security_context, decision)
