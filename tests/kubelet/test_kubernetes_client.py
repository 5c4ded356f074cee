"""V1Pod input from the official client, whichever generation is installed (36.x plain
classes, 37.x pydantic models). `.ci/run` runs this module under both.

A ``kubernetes.client.V1Pod`` (client 36.x and 37.x; imported lazily, only when such an
object is passed) gives the same results as the manifest it was made from.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import kubelet_winnet as kw
from kubelet_winnet._kubelet.pod import WORKLOAD_TEMPLATE_PATHS
from tests.strategies import CORPUS, REPO_ROOT, deserialize, fixture_files, require

kubernetes = require("kubernetes")
from kubernetes import client  # noqa: E402

EXAMPLES = REPO_ROOT / "examples"
VERSIONS = ("1.26", "1.32", "1.33", "1.38")


def _pods(files: list[Path]) -> list[tuple[str, dict[str, Any]]]:
    """(label, Pod manifest) for every pod template in ``files``."""
    found = []
    for path in files:
        for number, doc in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8"))):
            if not isinstance(doc, dict):
                continue
            kind = doc.get("kind")
            if kind == "Pod":
                found.append((f"{path.name}#{number}", doc))
            elif isinstance(kind, str) and kind in WORKLOAD_TEMPLATE_PATHS:
                template: Any = doc
                for key in WORKLOAD_TEMPLATE_PATHS[kind]:
                    template = template[key]
                pod = {"apiVersion": "v1", "kind": "Pod", **template}
                found.append((f"{path.name}#{number}", pod))
    return found


# The project's manifests and examples always; the corpus's, marked, where it is there.
PODS: list[Any] = [
    pytest.param(*pod, id=pod[0]) for pod in _pods(
        [p for p in fixture_files() if p.suffix == ".yaml"] + sorted(EXAMPLES.glob("*.yaml")))
]
if CORPUS.is_dir():
    PODS += [pytest.param(*pod, id=pod[0], marks=pytest.mark.corpus)
             for pod in _pods(sorted(CORPUS.glob("*.yaml")))]
else:
    PODS.append(pytest.param(None, None, id="corpus-absent", marks=pytest.mark.corpus))


def _v1pod(manifest: dict[str, Any]) -> Any:
    # The client's own deserializer: what `kubernetes` users hold after a list/watch.
    try:
        return deserialize(manifest, "V1Pod")
    except Exception:
        # Client 37 refuses integer quantities (`limits: {gpu: 1}`), which the API server
        # accepts. Resources are not read by the rules: drop them and build again.
        spec = dict(manifest["spec"])
        for kind in ("initContainers", "containers"):
            if kind in spec:
                spec[kind] = [
                    {k: v for k, v in c.items() if k != "resources"} for c in spec[kind]
                ]
        return deserialize({**manifest, "spec": spec}, "V1Pod")


def test_installed_client_is_a_supported_generation() -> None:
    major = int(kubernetes.__version__.split(".")[0])
    assert major in (36, 37)


def _refusal(manifest: dict[str, Any], version: str) -> str | None:
    try:
        kw.windows_sandbox_config(manifest, kubelet_version=version)
    except kw.SandboxConfigError as refusal:
        return str(refusal)
    return None


@pytest.mark.parametrize(("label", "manifest"), PODS)
def test_v1pod_gives_the_same_result_as_the_manifest(label: str, manifest: dict[str, Any]) -> None:
    pod = _v1pod(manifest)
    assert type(pod).__name__ == "V1Pod"
    for version in VERSIONS:
        refusal = _refusal(manifest, version)
        if refusal is not None:
            with pytest.raises(kw.SandboxConfigError) as caught:
                kw.windows_sandbox_config(pod, kubelet_version=version)
            assert str(caught.value) == refusal
            continue
        expected = kw.windows_sandbox_config(manifest, kubelet_version=version)
        actual = kw.windows_sandbox_config(pod, kubelet_version=version)
        assert actual.SerializeToString(deterministic=True) == expected.SerializeToString(
            deterministic=True
        )
        assert actual.security_context.HasField(
            "namespace_options"
        ) == expected.security_context.HasField("namespace_options")


def test_v1_deployment_uses_its_template() -> None:
    template = client.V1PodTemplateSpec(
        spec=client.V1PodSpec(
            host_network=True,
            containers=[
                client.V1Container(
                    name="agent",
                    security_context=client.V1SecurityContext(
                        windows_options=client.V1WindowsSecurityContextOptions(
                            host_process=True, run_as_user_name="NT AUTHORITY\\SYSTEM"
                        )
                    ),
                )
            ],
        )
    )
    deployment = client.V1Deployment(
        spec=client.V1DeploymentSpec(selector=client.V1LabelSelector(), template=template)
    )
    config = kw.windows_sandbox_config(deployment)
    # Step 3c: every container HostProcess with hostNetwork -> host_process; step 2: NODE.
    assert config.security_context.host_process
    assert config.security_context.namespace_options.network == 2
    # run_as_username comes from the pod level only (step 5); this one is container level.
    assert config.security_context.run_as_username == ""
    context = kw.windows_container_security_context(deployment, "agent")
    assert context.run_as_username == "NT AUTHORITY\\SYSTEM"


def test_importing_the_library_does_not_import_the_client() -> None:
    code = (
        "import sys, kubelet_winnet as k; "
        "k.windows_sandbox_config({'spec': {'containers': []}}); "
        "print('kubernetes' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "False"
