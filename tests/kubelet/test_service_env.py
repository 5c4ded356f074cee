"""Service-link variables (_kubelet/service_env.py) against getServiceEnvVarMap
(kubelet_pods.go) and envvars.FromServices (pkg/kubelet/envvars/envvars.go). Expected
values are written out from those rules."""

from __future__ import annotations

from typing import Any

import pytest

import kubelet_winnet as kw


def _service(name: str, ns: str, ip: str, *ports: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns},
            "spec": {"clusterIP": ip, "ports": list(ports)}}


def _env(services: Any, ns: str = "shop", **spec: Any) -> dict[str, str]:
    pod = {"kind": "Pod", "metadata": {"name": "web", "namespace": ns},
           "spec": {"containers": [{"name": "c", "command": ["$(DB_SERVICE_HOST)"]}], **spec}}
    config = kw.container_config(pod, "c", services=services)
    return {e.key: e.value.decode() for e in config.envs}


def test_enable_service_links_defaults_to_true() -> None:
    """defaults.go sets enableServiceLinks to true: the pod's own Services are linked."""
    env = _env([_service("db", "shop", "10.0.0.5", {"port": 5432})])
    assert env["DB_SERVICE_HOST"] == "10.0.0.5"
    assert _env([_service("db", "shop", "10.0.0.5", {"port": 5432})],
                enableServiceLinks=False) == {}


def test_named_ports_udp_and_ipv6() -> None:
    """FromServices: <NAME>_SERVICE_PORT_<PORTNAME> for named ports, the protocol lower-
    cased in the link URL and upper-cased in its name, net.JoinHostPort brackets IPv6."""
    env = _env([_service("my-dns", "shop", "fd00::a", {"name": "dns-udp", "port": 53,
                                                       "protocol": "UDP"},
                         {"name": "dns-tcp", "port": 53, "protocol": "TCP"})])
    assert env == {
        "MY_DNS_SERVICE_HOST": "fd00::a", "MY_DNS_SERVICE_PORT": "53",
        "MY_DNS_SERVICE_PORT_DNS_UDP": "53", "MY_DNS_SERVICE_PORT_DNS_TCP": "53",
        "MY_DNS_PORT": "udp://[fd00::a]:53",
        "MY_DNS_PORT_53_UDP": "udp://[fd00::a]:53", "MY_DNS_PORT_53_UDP_PROTO": "udp",
        "MY_DNS_PORT_53_UDP_PORT": "53", "MY_DNS_PORT_53_UDP_ADDR": "fd00::a",
        "MY_DNS_PORT_53_TCP": "tcp://[fd00::a]:53", "MY_DNS_PORT_53_TCP_PROTO": "tcp",
        "MY_DNS_PORT_53_TCP_PORT": "53", "MY_DNS_PORT_53_TCP_ADDR": "fd00::a",
    }


def test_container_env_wins_and_command_sees_service_vars() -> None:
    """The container's own variable of a service variable's name wins (the service one is
    only appended when absent); command expansion sees the final environment."""
    pod = {"kind": "Pod", "metadata": {"name": "web", "namespace": "shop"},
           "spec": {"containers": [{"name": "c", "command": ["$(DB_SERVICE_HOST)"],
                                    "env": [{"name": "DB_SERVICE_HOST", "value": "mine"}]}]}}
    config = kw.container_config(pod, "c",
                                 services=[_service("db", "shop", "10.0.0.5", {"port": 1})])
    env = {e.key: e.value.decode() for e in config.envs}
    assert env["DB_SERVICE_HOST"] == "mine"
    assert list(config.command) == ["mine"]
    assert [e.key for e in config.envs].count("DB_SERVICE_HOST") == 1


def test_other_namespaces_and_headless_services_are_ignored() -> None:
    env = _env([_service("db", "other", "10.0.0.5", {"port": 1}),
                _service("cache", "shop", "None", {"port": 2}),
                _service("queue", "shop", "", {"port": 3})])
    assert env == {}


@pytest.mark.parametrize(
    ("services", "message"),
    [
        ("x", "services: expected a list of Service mappings or None, got str"),
        ([1], "services[0]: expected a mapping, got int"),
        ([{"metadata": {"name": "a"}, "spec": {"clusterIP": "1.2.3.4", "ports": []}}],
         "services[0].spec.ports: expected at least one port, got none"),
        ([{"metadata": {"name": "a"}, "spec": {"clusterIP": "1.2.3.4",
                                                "ports": [{"port": "80"}]}}],
         "services[0].spec.ports[0].port: expected a port number from 1 to 65535, got str"),
        ([{"metadata": {}}], "services[0].metadata.name: expected a Service name, got nothing"),
    ],
)
def test_bad_services_argument_names_the_path(services: Any, message: str) -> None:
    with pytest.raises(kw.InvalidArgumentError) as caught:
        _env(services)
    assert str(caught.value) == message
