"""runtime/_node.py: what a pod gets on one node (plan_pod_network).

Expected values come from the upstream rules the planner encodes, quoted at each test:
containerd sandbox_run.go (CNI only for a pod-network sandbox; host_port <= 0 dropped),
libcni injectRuntimeConfig (a capability reaches only plugins declaring it), the plugins'
own code (win-bridge applies port mappings, win-overlay never does), containerd
GetSandboxRuntime (unknown handler), hcsshim PR #2531 (Hyper-V HostProcess: no network).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2
from kubelet_winnet.errors import InvalidArgumentError, InvalidRequestError, NodeConfigError
from kubelet_winnet.runtime import (
    CniNetwork,
    CniPlugin,
    NodeFacts,
    PortRange,
    plan_pod_network,
    plan_sandbox_network,
)

PORTMAP = frozenset({"portMappings"})


def request(*, host_process: bool = False, handler: str = "",
            ports: tuple[tuple[int, int], ...] = ((80, 8080),)) -> api_pb2.RunPodSandboxRequest:
    message = api_pb2.RunPodSandboxRequest(runtime_handler=handler)
    for container, host in ports:
        message.config.port_mappings.add(container_port=container, host_port=host)
    if host_process:
        message.config.windows.security_context.host_process = True
    return message


def cni(*plugins: CniPlugin) -> CniNetwork:
    return CniNetwork("net", plugins, "10-net.conflist")


def node(runtime: str = "containerd://2.3.2", **kwargs: object) -> NodeFacts:
    return NodeFacts(runtime=runtime, **kwargs)  # type: ignore[arg-type]


def test_without_node_the_sandbox_plan_is_plan_sandbox_network() -> None:
    """Existing answers hold: no node facts, same policy, same NetworkPlan."""
    for hp in (False, True):
        for policy in ("kep", "containerd"):
            message = request(host_process=hp)
            got = plan_pod_network(message, policy=policy)
            assert got.sandbox == plan_sandbox_network(message, policy=policy)
            assert got.namespace == ("node" if hp else "pod")
            assert got.isolation is None
            assert [p.outcome for p in got.ports] == ["unknown"]


def test_a_request_the_kubelet_builds() -> None:
    pod = {"spec": {"containers": [{"name": "c", "ports": [
        {"containerPort": 80, "hostPort": 8080}, {"containerPort": 9090}]}]}}
    message = kw.run_pod_sandbox_request(pod, kubelet_version="1.34")
    plan = plan_pod_network(message, node(cni=cni(CniPlugin("win-bridge", PORTMAP))))
    assert [(p.container_port, p.host_port, p.outcome) for p in plan.ports] == [
        (80, 8080, "applied"), (9090, 0, "not-a-host-port")]
    assert plan.sandbox.policy == "containerd"  # the node runs containerd


def test_capability_not_declared_drops_the_port() -> None:
    """libcni injectRuntimeConfig: only declared capabilities are inserted; nerdctl's
    nerdctl-nat.conflist (nerdctl #5157) and Calico's conf declare none / only dns."""
    for plugins in ((CniPlugin("nat"),), (CniPlugin("calico", frozenset({"dns"})),)):
        plan = plan_pod_network(request(), node(cni=cni(*plugins)))
        (port,) = plan.ports
        assert port.outcome == "dropped" and port.applied is False
        assert "declares the portMappings capability" in port.reason


def test_win_overlay_declares_but_never_applies() -> None:
    """win-overlay_windows.go has no port mapping code; its sample-v2.conf declares it."""
    plan = plan_pod_network(request(), node(cni=cni(CniPlugin("win-overlay", PORTMAP))))
    assert plan.ports[0].outcome == "dropped"
    assert "never applies" in plan.ports[0].reason


@pytest.mark.parametrize("kind", ["win-bridge", "sdnbridge", "sdnoverlay", "nat", "azure-vnet"])
def test_plugins_that_apply(kind: str) -> None:
    plan = plan_pod_network(request(), node(cni=cni(CniPlugin(kind, PORTMAP))))
    assert plan.ports[0].outcome == "applied" and plan.ports[0].applied is True


def test_flannel_goes_by_its_delegate() -> None:
    """flannel.go copies runtimeConfig to the delegate; flannel_windows.go: win-bridge
    unless the delegate type is set."""
    applied = plan_pod_network(request(), node(cni=cni(CniPlugin("flannel", PORTMAP))))
    assert applied.ports[0].outcome == "applied"
    assert "delegate win-bridge" in applied.ports[0].reason
    overlay = plan_pod_network(
        request(), node(cni=cni(CniPlugin("flannel", PORTMAP, delegate="win-overlay"))))
    assert overlay.ports[0].outcome == "dropped"


def test_unknown_plugin_is_unknown() -> None:
    plan = plan_pod_network(request(), node(cni=cni(CniPlugin("antrea", PORTMAP))))
    assert plan.ports[0].outcome == "unknown" and plan.ports[0].applied is None


def test_host_process_never_reaches_cni() -> None:
    """sandbox_run.go: the pod network is set up only if !hostNetwork(config)."""
    plan = plan_pod_network(request(host_process=True), node(cni=cni(CniPlugin("nat"))))
    assert plan.namespace == "node"
    assert plan.ports[0].outcome == "host" and plan.ports[0].applied is True


@pytest.mark.parametrize(("runtime", "namespace"), [
    ("containerd://2.3.2", "node"),  # hcsshim v0.15.0-rc.1: before PR #2531
    ("containerd://2.3.3", "none"),  # v0.15.0-rc.3
    ("containerd://2.4.0", "none"),  # v0.15.0-rc.4
])
def test_hyperv_host_process(runtime: str, namespace: str) -> None:
    message = request(host_process=True, handler="runhcs-wcow-hypervisor")
    plan = plan_pod_network(message, node(runtime))
    assert plan.isolation == "hyperv" and plan.namespace == namespace
    assert plan.notes and "Hyper-V" in plan.notes[0]
    if namespace == "none":
        assert plan.ports[0].outcome == "dropped"
        assert plan.ports[0].reason == "the pod has no network at all"


def test_default_handler_decides_isolation() -> None:
    """GetSandboxRuntime: an empty handler is the default runtime (AKS hyperv mode and
    containerd's Hyper-V CI make the Hyper-V one the default)."""
    facts = node("containerd://2.4.0", handlers={"hv": "hyperv"}, default_handler="hv")
    plan = plan_pod_network(request(host_process=True), facts)
    assert (plan.handler, plan.isolation, plan.namespace) == ("hv", "hyperv", "none")


def test_unknown_handler_is_refused() -> None:
    plan = plan_pod_network(request(handler="missing"), node())
    assert plan.refused == 'no runtime for "missing" is configured'
    assert plan.namespace == "none" and plan.ports[0].outcome == "dropped"


def test_ports_in_windows_ranges() -> None:
    facts = node(cni=cni(CniPlugin("win-bridge", PORTMAP)),
                 excluded_ports=(PortRange(8000, 8100),),
                 dynamic_ports=PortRange(49152, 65535, "dynamic"))
    excluded, dynamic, free = plan_pod_network(
        request(ports=((1, 8080), (2, 50000), (3, 30000))), facts).ports
    assert excluded.outcome == "dropped" and "8000-8100" in excluded.reason
    assert "WSAEACCES" in excluded.reason
    assert dynamic.outcome == "applied" and "49152-65535" in dynamic.warning
    assert free.outcome == "applied" and free.warning == ""


@given(st.integers(1, 65535), st.integers(1, 65535), st.integers(1, 65535))
def test_excluded_range_membership(start: int, end: int, port: int) -> None:
    """A bind to any port from start to end inclusive fails (WSAEACCES 10013)."""
    if start > end:
        with pytest.raises(NodeConfigError, match="ends before it starts"):
            PortRange(start, end)
        return
    facts = node(cni=cni(CniPlugin("win-bridge", PORTMAP)), excluded_ports=(PortRange(start, end),))
    (plan,) = plan_pod_network(request(ports=((1, port),)), facts).ports
    assert (plan.outcome == "dropped") is (start <= port <= end)


def test_bad_facts_are_typed_errors() -> None:
    with pytest.raises(NodeConfigError, match="outside 1 to 65535"):
        PortRange(0, 10)
    with pytest.raises(InvalidArgumentError, match="start"):
        PortRange("1", 10)  # type: ignore[arg-type]
    with pytest.raises(NodeConfigError, match="default_runtime_name"):
        NodeFacts(handlers={"a": "process"}, default_handler="b")
    with pytest.raises(NodeConfigError, match="isolation must be"):
        NodeFacts(handlers={"runhcs-wcow-process": "vm"})  # type: ignore[dict-item]
    with pytest.raises(NodeConfigError, match="no plugin"):
        CniNetwork("n", ())
    with pytest.raises(InvalidArgumentError, match="node"):
        plan_pod_network(request(), {"runtime": "containerd://2.4.0"})  # type: ignore[arg-type]
    with pytest.raises(InvalidRequestError):
        plan_pod_network(b"\xff", node())


def _udp_request(port: int) -> api_pb2.RunPodSandboxRequest:
    message = request(ports=())
    message.config.port_mappings.add(container_port=1, host_port=port, protocol=api_pb2.UDP)
    return message


def test_an_exclusion_holds_only_for_its_own_protocol() -> None:
    # netsh keeps TCP and UDP exclusions apart (`show excludedportrange protocol=udp`):
    # a UDP exclusion leaves the TCP port free, and the other way round.
    facts = node(cni=cni(CniPlugin("win-bridge", PORTMAP)),
                 excluded_ports=(PortRange(8000, 8100, protocol="udp"),),
                 dynamic_ports=PortRange(8000, 8100, "dynamic", protocol="udp"))
    (tcp,) = plan_pod_network(request(ports=((1, 8080),)), facts).ports
    assert (tcp.outcome, tcp.warning) == ("applied", "")
    (udp,) = plan_pod_network(_udp_request(8080), facts).ports
    assert udp.outcome == "dropped" and "UDP port 8080" in udp.reason
    assert "8000-8100" in udp.reason


# Called through Any: the wrong types below are the point.
_CniPlugin: Any = CniPlugin
_CniNetwork: Any = CniNetwork
_NodeFacts: Any = NodeFacts
_PortRange: Any = PortRange


@pytest.mark.parametrize(("build", "argument"), [
    (lambda: _CniPlugin(7), "type"),
    (lambda: _CniPlugin("win-bridge", {"portMappings": True}), "capabilities"),
    (lambda: _CniPlugin("win-bridge", frozenset({1})), "capabilities"),
    (lambda: _CniPlugin("flannel", delegate=["win-bridge"]), "delegate"),
    (lambda: _CniNetwork(None, (CniPlugin("nat"),)), "name"),
    (lambda: _CniNetwork("n", CniPlugin("nat")), "plugins"),
    (lambda: _CniNetwork("n", ("nat",)), "plugins[0]"),
    (lambda: _CniNetwork("n", (CniPlugin("nat"),), source=3), "source"),
    (lambda: _NodeFacts(handlers=["runhcs-wcow-process"]), "handlers"),
    (lambda: _NodeFacts(handlers={1: "process"}, default_handler=1), "default_handler"),
    (lambda: _NodeFacts(handlers={1: "process"}), "handlers"),
    (lambda: _NodeFacts(cni="10-net.conflist"), "cni"),
    (lambda: _NodeFacts(excluded_ports=PortRange(1, 2)), "excluded_ports"),
    (lambda: _NodeFacts(excluded_ports=[PortRange(1, 2)]), "excluded_ports"),
    (lambda: _NodeFacts(dynamic_ports=(49152, 65535)), "dynamic_ports"),
    (lambda: _PortRange(1, 2, administered="yes"), "administered"),
])
def test_wrongly_typed_node_facts_name_the_argument(build: Any, argument: str) -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        build()
    assert raised.value.argument == argument
    assert isinstance(raised.value, TypeError)


@pytest.mark.parametrize("runtime", ["2.3.3", "banana", "containerd", "containerd://",
                                     "://2.4.0"])
def test_a_runtime_not_written_name_and_version_is_refused_not_made_unknown(
        runtime: str) -> None:
    """NodeFacts(runtime="2.3.3") was taken, and the runtime judged as not known, where
    `node --runtime 2.3.3` is an error: the same error, in the same words."""
    with pytest.raises(InvalidArgumentError) as raised:
        NodeFacts(runtime=runtime)
    assert raised.value.argument == "runtime"
    assert str(raised.value) == (
        "runtime: expected NAME://VERSION, as the Node's containerRuntimeVersion "
        f"(containerd://2.4.0), got {runtime!r}")


@pytest.mark.parametrize("runtime", ["", "containerd://2.3.3", "containerd://Unknown",
                                     "docker://20.10.7"])
def test_a_runtime_the_kubelet_reports_is_taken(runtime: str) -> None:
    # the kubelet writes "<type>://<version>", "Unknown" when the runtime does not say
    # (pkg/kubelet/nodestatus/setters.go VersionInfo); "" is the default, not known
    assert NodeFacts(runtime=runtime).runtime == runtime


def test_a_cni_plugin_without_a_type_or_a_network_without_a_name_is_refused() -> None:
    # libcni refuses both; read from a file they were refused, built here they were taken
    with pytest.raises(NodeConfigError) as raised:
        CniPlugin("")
    assert str(raised.value) == "type: a CNI plugin configuration needs a type"
    with pytest.raises(NodeConfigError) as raised:
        CniNetwork("", (CniPlugin("nat"),), source="10-net.conflist")
    assert str(raised.value) == "10-net.conflist: a CNI configuration needs a name"


def test_a_port_range_of_the_other_kind_is_refused_not_used_as_this_kind() -> None:
    # a dynamic range among the excluded ones (or the other way round) was used as the
    # field's kind, whatever the range said
    with pytest.raises(NodeConfigError) as raised:
        NodeFacts(excluded_ports=(PortRange(1, 2), PortRange(49152, 65535, "dynamic")))
    assert str(raised.value) == (
        "excluded_ports[1]: the range 49152-65535 is of kind dynamic, not excluded")
    with pytest.raises(NodeConfigError) as raised:
        NodeFacts(dynamic_ports=PortRange(49152, 65535))
    assert str(raised.value) == (
        "dynamic_ports: the range 49152-65535 is of kind excluded, not dynamic")


@pytest.mark.parametrize("capabilities", [frozenset(), PORTMAP])
def test_a_network_of_many_plugins_is_named_in_a_sentence(
        capabilities: frozenset[str]) -> None:
    # A conflist of 100,000 plugins made a 300 KB reason ("x, x, x, ..."), once per pod
    # class and finding. Each type once, the first few, and how many more.
    plugins = [CniPlugin(f"p{i % 20}", capabilities) for i in range(100_000)]
    plan = plan_pod_network(request(), node(cni=cni(*plugins)))
    (port,) = plan.ports
    assert len(port.reason) < 400
    assert "p0, p1, p2, p3, p4, p5, p6, p7 and 12 more" in port.reason


def test_a_node_without_cni_plugins_refuses_only_sandboxes_that_reach_cni() -> None:
    """NodeFacts.cni_fails: containerd runs CNI ADD for a sandbox with its own network
    namespace, and RunPodSandbox fails with it; a HostProcess sandbox never reaches CNI
    (sandbox_run.go), so it starts on the node's network."""
    import kubelet_winnet as kw
    from kubelet_winnet.runtime import NodeFacts

    facts = NodeFacts(runtime="containerd://2.4.0", cni_fails=("no CNI plugin is found",))
    plain = {"spec": {"containers": [{"name": "c", "image": "i",
                                      "ports": [{"containerPort": 80, "hostPort": 8080}]}]}}
    host_process = {"spec": {"hostNetwork": True, "securityContext": {
        "windowsOptions": {"hostProcess": True}}, "containers": [{"name": "c", "image": "i"}]}}
    node = kw.NodeKnowledge(files=facts)
    refused = kw.judge(plain, node=node)
    assert (refused.starts, refused.runtime_refused, refused.network.value) == (
        False, "no CNI plugin is found", "none")
    assert [(p.host_port, p.outcome) for p in refused.ports if p.host_port] == [
        (8080, "dropped")]
    started = kw.judge(host_process, node=node)
    assert (started.starts, started.runtime_refused, started.network.value) == (
        True, None, "node")
    stopped = kw.judge(host_process, node=kw.NodeKnowledge(files=NodeFacts(
        runtime="containerd://2.4.0", stops=("containerd does not start",))))
    assert (stopped.starts, stopped.runtime_refused) == (False, "containerd does not start")


@pytest.mark.parametrize("field", ["stops", "cni_fails"])
def test_node_facts_stops_must_be_sentences(field: str) -> None:
    from kubelet_winnet.errors import InvalidArgumentError
    from kubelet_winnet.runtime import NodeFacts

    with pytest.raises(InvalidArgumentError) as raised:
        NodeFacts(**{field: "containerd does not start"})  # type: ignore[arg-type]
    assert f"{field}: expected a tuple of strings, got str" in str(raised.value)
