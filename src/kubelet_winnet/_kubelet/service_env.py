"""The service-link environment variables a kubelet gives every container.

``getServiceEnvVarMap`` (pkg/kubelet/kubelet_pods.go) picks the Services a pod sees and
``FromServices`` (pkg/kubelet/envvars/envvars.go) turns each into variables:

* a Service is skipped unless its ``clusterIP`` is set (not ``""``, not ``None``:
  ``IsServiceIPSet``);
* the master services (``kubernetes``) of the master service namespace (``default``, the
  kubelet's ``--master-service-namespace``) are always seen, the first one listed winning;
* with ``enableServiceLinks`` (API default true), every Service of the pod's own
  namespace too, the last one listed of a name winning over an earlier one and over the
  master service of that name;
* per Service ``<NAME>_SERVICE_HOST``, ``<NAME>_SERVICE_PORT`` (first port),
  ``<NAME>_SERVICE_PORT_<PORTNAME>`` for named ports, and the Docker-link variables
  ``<NAME>_PORT`` (first port) and ``<NAME>_PORT_<port>_<PROTO>[_PROTO|_PORT|_ADDR]``,
  where ``<NAME>`` is the name upper-cased with ``-`` as ``_`` and addresses are
  ``net.JoinHostPort`` (IPv6 in brackets).

The kubelet walks Go maps, so its order is unspecified; here Services come in name order
and each Service's variables in ``FromServices``' order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubelet_winnet._describe import type_name
from kubelet_winnet._kubelet.objectview import is_mapping
from kubelet_winnet.errors import InvalidArgumentError

__all__ = ["MASTER_SERVICE_NAMESPACE", "Service", "read_services", "service_env_vars"]

MASTER_SERVICE_NAMESPACE = "default"  # --master-service-namespace's default
_MASTER_SERVICES = frozenset({"kubernetes"})  # masterServices
_MAX_SERVICES = 100_000


@dataclass(frozen=True, slots=True)
class Port:
    name: str
    port: int
    protocol: str


@dataclass(frozen=True, slots=True)
class Service:
    name: str
    namespace: str
    cluster_ip: str
    ports: tuple[Port, ...]


def _text(value: object, where: str, default: str = "") -> str:
    if value is None:
        return default
    if type(value) is not str:
        raise InvalidArgumentError(where, "a string", type_name(value))
    return value


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not is_mapping(value):
        raise InvalidArgumentError(where, "a mapping", type_name(value))
    assert isinstance(value, Mapping)
    return value


def read_services(services: object) -> tuple[Service, ...]:
    """The caller's Service manifests (``metadata.name``, ``metadata.namespace``,
    ``spec.clusterIP``, ``spec.ports[].name/port/protocol``), checked."""
    if services is None:
        return ()
    if type(services) not in (list, tuple):
        raise InvalidArgumentError("services", "a list of Service mappings or None",
                                   type_name(services))
    assert isinstance(services, Sequence)
    if len(services) > _MAX_SERVICES:
        raise InvalidArgumentError("services", f"at most {_MAX_SERVICES} Services",
                                   f"{len(services)} items")
    out = []
    for index, raw in enumerate(services):
        at = f"services[{index}]"
        service = _mapping(raw, at)
        meta = _mapping(service.get("metadata"), f"{at}.metadata")
        spec = _mapping(service.get("spec"), f"{at}.spec")
        name = _text(meta.get("name"), f"{at}.metadata.name")
        if not name:
            raise InvalidArgumentError(f"{at}.metadata.name", "a Service name", "nothing")
        ports_raw = spec.get("ports") or []
        if type(ports_raw) not in (list, tuple):
            raise InvalidArgumentError(f"{at}.spec.ports", "a list", type_name(ports_raw))
        ports = []
        for number, port_raw in enumerate(ports_raw):
            here = f"{at}.spec.ports[{number}]"
            port = _mapping(port_raw, here)
            value = port.get("port")
            if type(value) is not int or not 1 <= value <= 65535:
                raise InvalidArgumentError(f"{here}.port", "a port number from 1 to 65535",
                                           type_name(value) if type(value) is not int
                                           else str(value))
            ports.append(Port(_text(port.get("name"), f"{here}.name"), value,
                              _text(port.get("protocol"), f"{here}.protocol") or "TCP"))
        cluster_ip = _text(spec.get("clusterIP"), f"{at}.spec.clusterIP")
        if cluster_ip not in ("", "None") and not ports:
            # FromServices reads Ports[0]; the API requires a port for such a Service.
            raise InvalidArgumentError(f"{at}.spec.ports", "at least one port", "none")
        out.append(Service(name, _text(meta.get("namespace"), f"{at}.metadata.namespace",
                                       "default") or "default", cluster_ip, tuple(ports)))
    return tuple(out)


def _env_name(name: str) -> str:
    return name.replace("-", "_").upper()  # makeEnvVariableName


def _join_host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"  # net.JoinHostPort


def _from_service(service: Service) -> list[tuple[str, str]]:
    prefix = _env_name(service.name)
    out = [(f"{prefix}_SERVICE_HOST", service.cluster_ip),
           (f"{prefix}_SERVICE_PORT", str(service.ports[0].port))]
    out += [(f"{prefix}_SERVICE_PORT_{_env_name(p.name)}", str(p.port))
            for p in service.ports if p.name]
    for index, port in enumerate(service.ports):
        proto = port.protocol.lower()
        address = f"{proto}://{_join_host_port(service.cluster_ip, port.port)}"
        if index == 0:  # Docker special-cases the first port
            out.append((f"{prefix}_PORT", address))
        base = f"{prefix}_PORT_{port.port}_{port.protocol.upper()}"
        out += [(base, address), (f"{base}_PROTO", proto), (f"{base}_PORT", str(port.port)),
                (f"{base}_ADDR", service.cluster_ip)]
    return out


def service_env_vars(
    services: tuple[Service, ...], namespace: str, enable_service_links: bool
) -> dict[str, str]:
    """``getServiceEnvVarMap(namespace, enableServiceLinks)``."""
    chosen: dict[str, Service] = {}
    for service in services:
        if service.cluster_ip in ("", "None"):  # !IsServiceIPSet
            continue
        if service.namespace == MASTER_SERVICE_NAMESPACE and service.name in _MASTER_SERVICES:
            chosen.setdefault(service.name, service)
        elif service.namespace == namespace and enable_service_links:
            chosen[service.name] = service
    env: dict[str, str] = {}
    for name in sorted(chosen):
        env.update(_from_service(chosen[name]))
    return env
