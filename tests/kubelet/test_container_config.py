"""container_config / create_container_request against generateContainerConfig
(kuberuntime_container.go), makeEnvironmentVariables (kubelet_pods.go), labels.go and
kuberuntime_container_windows.go. Expected values come from those rules."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._kubelet.container_config import PodRequests
from kubelet_winnet._kubelet.expansion import expand
from kubelet_winnet._kubelet.kuberuntime_container_windows import calculate_cpu_maximum
from kubelet_winnet._kubelet.labels import container_hash
from tests.strategies import wrap


def pod(containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"kind": "Pod",
            "metadata": {"name": "web", "namespace": "shop", "uid": "u-1",
                         "labels": {"app": "web"}, "annotations": {"note": "x"}},
            "spec": {"containers": containers, **spec}}


# --- TestCalculateCPUMaximum (kuberuntime_container_windows_test.go) -----------------


@given(limit=st.sampled_from(["1", "94", "2", "1m", "500m", "3"]),
       count=st.integers(1, 256))
@example(limit="1", count=1).via("max range when same amount")  # -> 10000
@example(limit="94", count=96).via("percentage calculation is working as intended")  # 9791
@example(limit="1", count=2).via("half range when half amount")  # 5000
@example(limit="2", count=1).via("max range when more requested than available")  # 10000
@example(limit="1m", count=100).via("min range when less than minimum")  # 1
def test_calculate_cpu_maximum(limit: str, count: int) -> None:
    """calculateCPUMaximum: `10 * cpuLimit.MilliValue() / cpuCount`, clamped to
    [1, 10000]."""
    pinned = {("1", 1): 10000, ("94", 96): 9791, ("1", 2): 5000, ("2", 1): 10000,
              ("1m", 100): 1}
    milli = {"1": 1000, "94": 94000, "2": 2000, "1m": 1, "500m": 500, "3": 3000}[limit]
    got = calculate_cpu_maximum(milli, count)
    if (limit, count) in pinned:
        assert got == pinned[limit, count]
    assert got == max(1, min(10000, (10 * milli) // count))


def test_windows_resources_and_security_context() -> None:
    """generateWindowsContainerConfig: resources always present (cpu_maximum from
    limits.cpu, memory limit in bytes, cpu_count never set) and the security context
    from the effective windowsOptions over the image user."""
    manifest = pod([{"name": "app", "image": "img:1",
                     "resources": {"limits": {"cpu": "3", "memory": "256Mi"}},
                     "securityContext": {"windowsOptions": {
                         "gmsaCredentialSpec": "spec",
                         "runAsUserName": "ContainerAdministrator"}}}])
    node = kw.NodeContext(processor_count=4)
    config = kw.container_config(manifest, "app", node=node, image_username="foo")
    assert config.windows.resources == api_pb2.WindowsContainerResources(
        cpu_maximum=7500, memory_limit_in_bytes=256 * 1024 * 1024
    )
    assert config.windows.security_context == api_pb2.WindowsContainerSecurityContext(
        run_as_username="ContainerAdministrator", credential_spec="spec"
    )
    plain = kw.container_config(pod([{"name": "app", "image": "i"}]), "app",
                                image_username="imguser")
    assert plain.windows.HasField("resources") and plain.windows.resources.ByteSize() == 0
    assert plain.windows.security_context.run_as_username == "imguser"
    assert not plain.HasField("linux")


# --- identity, labels, annotations, log path ------------------------------------------


def test_metadata_image_labels_annotations_log_path() -> None:
    manifest = pod([{"name": "app", "image": "mcr.microsoft.com/x:1",
                     "command": ["cmd", "/c"], "args": ["echo", "$(GREETING)"],
                     "workingDir": "C:\\app", "stdin": True, "tty": True,
                     "env": [{"name": "GREETING", "value": "hi"}],
                     "ports": [{"containerPort": 80, "name": "http"}]}],
                   terminationGracePeriodSeconds=60)
    config = kw.container_config(manifest, "app", attempt=2, image_ref="sha256:abc",
                                 kubelet_version="1.33")
    assert config.metadata == api_pb2.ContainerMetadata(name="app", attempt=2)
    assert config.image.image == "sha256:abc"
    assert config.image.user_specified_image == "mcr.microsoft.com/x:1"
    assert list(config.command) == ["cmd", "/c"]
    assert list(config.args) == ["echo", "hi"]  # ExpandContainerCommandAndArgs
    assert config.working_dir == "C:\\app"
    assert (config.stdin, config.stdin_once, config.tty) == (True, False, True)
    assert dict(config.labels) == {  # newContainerLabels: no pod labels
        "io.kubernetes.pod.name": "web", "io.kubernetes.pod.namespace": "shop",
        "io.kubernetes.pod.uid": "u-1", "io.kubernetes.container.name": "app",
    }
    annotations = dict(config.annotations)
    assert annotations["io.kubernetes.container.restartCount"] == "2"
    assert annotations["io.kubernetes.container.terminationMessagePath"] == "/dev/termination-log"
    assert annotations["io.kubernetes.container.terminationMessagePolicy"] == "File"
    assert annotations["io.kubernetes.pod.terminationGracePeriod"] == "60"
    assert json.loads(annotations["io.kubernetes.container.ports"]) == [
        {"name": "http", "containerPort": 80, "protocol": "TCP"}]
    assert annotations["io.kubernetes.container.ports"] == (
        '[{"name":"http","containerPort":80,"protocol":"TCP"}]')
    assert "note" not in annotations  # pod annotations are not copied
    assert config.log_path == "app\\2.log"
    old = kw.container_config(manifest, "app", kubelet_version="1.26")
    assert old.image.image == "mcr.microsoft.com/x:1" and old.image.user_specified_image == ""


def test_init_and_ephemeral_containers_are_found() -> None:
    manifest = pod([{"name": "main"}], initContainers=[{"name": "setup", "image": "i"}],
                   ephemeralContainers=[{"name": "debug", "image": "d"}])
    assert kw.container_config(manifest, "setup").metadata.name == "setup"
    assert kw.container_config(manifest, "debug").image.image == "d"
    with pytest.raises(kw.InvalidPodError, match="no container named"):
        kw.container_config(manifest, "nope")


# --- environment -------------------------------------------------------------------------


@given(text=st.text(alphabet="$()AB x", max_size=12))
@example(text="$(A)").via("defined")
@example(text="$$(A)").via("escaped")
@example(text="$(C)").via("undefined stays")
@example(text="$(A").via("unterminated")
def test_expansion_rules(text: str) -> None:
    """expansion.Expand: `$$` -> `$`; `$(NAME)` -> value or itself; lone `$x` kept."""
    env = {"A": "1", "B": "2"}
    out, i = [], 0
    while i < len(text):
        if text[i] == "$" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt == "(":
                close = text.find(")", i + 2)
                if close != -1:
                    name = text[i + 2:close]
                    out.append(env.get(name, f"$({name})"))
                    i = close + 1
                    continue
                out.append("$(")
                i += 2
                continue
            out.append("$" + nxt)
            i += 2
            continue
        out.append(text[i])
        i += 1
    assert expand(text, env) == "".join(out)


def test_expansion_of_many_unterminated_references_is_linear() -> None:
    """A million unterminated `$(` (2 MB, within MAX_EXPANDED_CONTAINER) stay as they
    are, in a child given 60 s: a search for the closing `)` from each one would take
    hours (10^12 steps)."""
    code = (
        "from kubelet_winnet._kubelet.expansion import expand\n"
        "text = '$(' * 1_000_000 + '$$'\n"
        "assert expand(text, {}, limit=1 << 24) == '$(' * 1_000_000 + '$'\n"
    )
    subprocess.run([sys.executable, "-c", code], timeout=60, check=True)


def test_env_sources() -> None:
    manifest = pod([{
        "name": "app", "image": "i",
        "resources": {"limits": {"memory": "1Gi"}, "requests": {"cpu": "250m"}},
        "envFrom": [{"configMapRef": {"name": "cm"}, "prefix": "CM_"},
                    {"secretRef": {"name": "missing", "optional": True}}],
        "env": [
            {"name": "LIT", "value": "a-$(CM_K)"},
            {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
            {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            {"name": "HOSTIP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
            {"name": "PODIP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory",
                                                               "divisor": "1Mi"}}},
            {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
            {"name": "REQ", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu",
                                                               "divisor": "1m"}}},
            {"name": "SEC", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
            {"name": "OPT", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "no",
                                                              "optional": True}}},
        ],
    }])
    node = kw.NodeContext(node_name="n1", node_ips=("10.1.0.5",), allocatable_cpu="8")
    config = kw.container_config(manifest, "app", node=node, pod_ips=("10.244.0.9",),
                                 config_maps={"cm": {"K": "v"}}, secrets={"s": {"k": b"pw"}})
    assert {kv.key: kv.value for kv in config.envs} == {
        "CM_K": "v", "LIT": "a-v", "POD": "web", "NS": "shop", "APP": "web",
        "NODE": "n1", "HOSTIP": "10.1.0.5", "PODIP": "10.244.0.9",
        "MEM": "1024",  # ceil(1Gi / 1Mi)
        "CPU": "8",  # no cpu limit: node allocatable (defaultPodLimitsForDownwardAPI)
        "REQ": "250", "SEC": "pw",
    }


def test_env_errors_are_the_kubelets() -> None:
    def one(env: dict[str, Any], **kwargs: Any) -> None:
        kw.container_config(pod([{"name": "c", "env": [env]}]), "c", **kwargs)

    cm_ref = {"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}
    with pytest.raises(kw.SandboxConfigError) as info:
        one(cm_ref)
    assert str(info.value) == "couldn't get configMap shop/cm, no kubeClient defined"
    with pytest.raises(kw.SandboxConfigError) as info:
        one(cm_ref, config_maps={})
    assert str(info.value) == 'configmaps "cm" not found'
    with pytest.raises(kw.SandboxConfigError) as info:
        one(cm_ref, config_maps={"cm": {}})
    assert str(info.value) == "couldn't find key k in ConfigMap shop/cm"
    secret_ref = {"name": "X", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}
    with pytest.raises(kw.SandboxConfigError) as info:
        one(secret_ref, secrets={"s": {}})
    assert str(info.value) == "couldn't find key k in Secret shop/s"
    with pytest.raises(kw.SandboxConfigError) as info:
        one({"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "spec.bogus"}}})
    assert str(info.value) == "field label not supported: spec.bogus"
    with pytest.raises(kw.SandboxConfigError) as info:
        one({"name": "X", "valueFrom": {"resourceFieldRef": {"resource": "limits.gpu"}}})
    assert str(info.value) == "unsupported container resource : limits.gpu"
    with pytest.raises(kw.InvalidArgumentError):
        one(secret_ref, secrets={"s": {"k": b"\xff"}})


# --- requests --------------------------------------------------------------------------


def test_create_container_request_carries_the_sandbox_config() -> None:
    manifest = pod([{"name": "c", "image": "i"}], hostNetwork=True)
    request = kw.create_container_request(manifest, "c", pod_sandbox_id="sb-1",
                                          attempt=1, sandbox_attempt=3)
    assert request.pod_sandbox_id == "sb-1"
    assert request.sandbox_config == kw.pod_sandbox_config(manifest, attempt=3)
    assert request.config == kw.container_config(manifest, "c", attempt=1)


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"container_name": 3}, "container_name"),
        ({"image_ref": b"x"}, "image_ref"),
        ({"image_username": None}, "image_username"),
        ({"pod_ips": "10.0.0.1"}, "pod_ips"),
        ({"config_maps": [1]}, "config_maps"),
        ({"attempt": -1}, "attempt"),
        ({"node": "node"}, "node"),
    ],
)
def test_argument_types(kwargs: dict[str, Any], argument: str) -> None:
    call: dict[str, Any] = {"container_name": "c", **kwargs}
    name = call.pop("container_name")
    with pytest.raises(kw.InvalidArgumentError) as info:
        kw.container_config(pod([{"name": "c"}]), name, **call)
    assert info.value.argument == argument


@pytest.mark.parametrize(
    ("container", "field"),
    [
        ({"name": "c", "image": 5}, "spec.containers[0].image"),
        ({"name": "c", "command": "ping"}, "spec.containers[0].command"),
        ({"name": "c", "args": [1]}, "spec.containers[0].args[0]"),
        ({"name": "c", "tty": "true"}, "spec.containers[0].tty"),
        ({"name": "c", "resources": {"limits": {"cpu": "lots"}}},
         "spec.containers[0].resources.limits.cpu"),
        ({"name": "c", "env": [{"name": 1}]}, "spec.containers[0].env[0].name"),
    ],
)
def test_typed_pod_errors(container: dict[str, Any], field: str) -> None:
    with pytest.raises(kw.InvalidPodError) as info:
        kw.container_config(pod([container]), "c")
    assert info.value.field == field


def test_upstream_hash_container_row() -> None:
    """TestHashContainer (pkg/kubelet/container/helpers_test.go): name test_container,
    image foo/image:v1 (args and ports do not count since 1.31) -> 0x8e45cbd0."""
    assert container_hash("test_container", "foo/image:v1") == "8e45cbd0"
    manifest = pod([{"name": "test_container", "image": "foo/image:v1",
                     "args": ["/bin/sh", "-c", "echo abc"], "ports": [{"containerPort": 8001}]}])
    new = kw.container_config(manifest, "test_container", kubelet_version="1.31")
    assert new.annotations["io.kubernetes.container.hash"] == "8e45cbd0"
    old = kw.container_config(manifest, "test_container", kubelet_version="1.30")
    assert "io.kubernetes.container.hash" not in old.annotations


@pytest.mark.parametrize(
    ("pre_stop", "expected"),
    [
        ({"exec": {"command": ["/azurediskplugin.exe", "--pre-stop-hook=true"]}},
         '{"exec":{"command":["/azurediskplugin.exe","--pre-stop-hook=true"]}}'),
        ({"httpGet": {"port": 8080}}, '{"httpGet":{"path":"/","port":8080,"scheme":"HTTP"}}'),
        ({"httpGet": {"port": "http", "host": "h", "path": "/q?a=<b>",
                      "httpHeaders": [{"name": "X", "value": "1"}]}},
         '{"httpGet":{"path":"/q?a=\\u003cb\\u003e","port":"http","host":"h",'
         '"scheme":"HTTP","httpHeaders":[{"name":"X","value":"1"}]}}'),
        ({"tcpSocket": {"port": 22}}, '{"tcpSocket":{"port":22}}'),
        ({"sleep": {"seconds": 5}}, '{"sleep":{"seconds":5}}'),
    ],
)
def test_pre_stop_annotation(pre_stop: dict[str, Any], expected: str) -> None:
    """newContainerAnnotations: json.Marshal(container.Lifecycle.PreStop) - Go field
    order, omitempty, HTML characters escaped; httpGet defaults path "/", scheme HTTP."""
    manifest = pod([{"name": "c", "lifecycle": {"preStop": pre_stop}}])
    annotations = kw.container_config(manifest, "c").annotations
    assert annotations["io.kubernetes.container.preStopHandler"] == expected


@given(
    milli=st.integers(1, 10**7), count=st.integers(1, 1024),
    memory_mi=st.integers(0, 10**6), unit=st.sampled_from(["m", ""]),
)
def test_windows_resources_property(milli: int, count: int, memory_mi: int, unit: str) -> None:
    """calculateWindowsResources: `if !cpuLimit.IsZero() { CpuMaximum =
    calculateCPUMaximum(cpuLimit, ProcessorCount) }`; `if memLimit != 0 {
    MemoryLimitInBytes = memLimit }`; CpuCount is never set."""
    cpu = f"{milli}m" if unit == "m" else str(milli)
    cpu_milli = milli if unit == "m" else milli * 1000
    limits = {"cpu": cpu, "memory": f"{memory_mi}Mi"}
    config = kw.container_config(pod([{"name": "c", "resources": {"limits": limits}}]), "c",
                                 node=kw.NodeContext(processor_count=count))
    resources = config.windows.resources
    assert resources.cpu_maximum == max(1, min(10000, 10 * cpu_milli // count))
    assert resources.memory_limit_in_bytes == memory_mi * 2**20
    assert resources.cpu_count == 0 and resources.cpu_shares == 0


env_names = st.from_regex(r"[A-Z_][A-Z0-9_]{0,8}", fullmatch=True)


@given(env=st.lists(st.tuples(env_names, st.text(alphabet="ab c-/", max_size=8)), max_size=6))
def test_literal_env_property(env: list[tuple[str, str]]) -> None:
    """makeEnvironmentVariables: env in declaration order, a later entry of the same name
    overriding an earlier one; literal values without `$` are kept as written."""
    manifest = pod([{"name": "c", "env": [{"name": k, "value": v} for k, v in env]}])
    got = [(kv.key, kv.value) for kv in kw.container_config(manifest, "c").envs]
    expected: dict[str, str] = {}
    for key, text in env:
        expected[key] = text
    assert got == list(expected.items())


def test_lone_surrogates_are_typed_errors() -> None:
    manifest = pod([{"name": "c", "args": ["ok", "\udc80"]}])
    with pytest.raises(kw.InvalidPodError) as info:
        kw.container_config(manifest, "c")
    assert info.value.field == "spec.containers[0].args[1]"
    with pytest.raises(kw.InvalidArgumentError):
        kw.container_config(pod([{"name": "c", "envFrom": [{"configMapRef": {"name": "m"}}]}]),
                            "c", config_maps={"m": {"\ud800": "v"}})


def test_hash_cache_keeps_the_upstream_value_and_stays_bounded() -> None:
    """The (name, image) -> hash cache (docs/performance.md) gives the upstream row's
    value from a warm cache and after it was cleared by 300 other containers."""
    from kubelet_winnet._kubelet import labels as module

    assert container_hash("test_container", "foo/image:v1") == "8e45cbd0"
    assert container_hash("test_container", "foo/image:v1") == "8e45cbd0"  # cached
    for i in range(300):
        container_hash(f"c{i}", "foo/image:v1")
    assert len(module._HASHES) <= 256
    assert container_hash("test_container", "foo/image:v1") == "8e45cbd0"


# --- one pod, several containers -------------------------------------------------------


def test_termination_log_is_the_last_mount() -> None:
    """makeMounts appends the termination log last: ``<root>\\pods\\<uid>\\containers\\
    <name>\\<id>`` (kubelet_pods.go), after the volume mounts."""
    manifest = wrap("Deployment", pod(
        [{"name": "app", "image": "img:1", "command": ["run", "$(A)", "$$x"],
          "env": [{"name": "A", "value": "1"},
                  {"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
          "volumeMounts": [{"name": "c", "mountPath": "C:\\c"}, {"name": "h", "mountPath": "/h"}],
          "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}}}],
        hostNetwork=True, volumes=[{"name": "c", "configMap": {"name": "c"}},
                                   {"name": "h", "hostPath": {"path": "C:\\host"}}]))
    config = kw.container_config(manifest, "app")
    assert list(config.command) == ["run", "1", "$x"]
    paths = [m.container_path for m in config.mounts]
    assert paths[:2] == ["C:\\c", "/h"]
    assert config.mounts[-1].host_path.endswith("\\containers\\app\\00000000")


def test_pod_requests_builds_each_container_as_alone() -> None:
    """PodRequests builds every container of a pod with one builder (its later
    containers located through the builder's index): each message is the one a
    builder of that container alone gives."""
    manifest = pod(
        [{"name": f"c{i}", "image": f"img:{i}", "env": [{"name": "A", "value": str(i)}],
          "securityContext": {"windowsOptions": {"runAsUserName": f"u{i}"}}}
         for i in range(4)],
        hostNetwork=True, initContainers=[{"name": "init", "image": "i"}],
        securityContext={"windowsOptions": {"gmsaCredentialSpec": "spec"}},
    )
    requests = PodRequests(manifest)
    for name in ["c2", "init", "c0", "c3", "c1", "c2"]:
        alone = kw.container_config(manifest, name, pod_ips=("10.0.0.5",))
        assert requests.container_config(name, pod_ips=("10.0.0.5",)) == alone
        assert alone.windows.security_context.credential_spec == "spec"
