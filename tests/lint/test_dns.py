"""_lint/dns.py as ``check`` renders it: a Windows pod's own DNS settings (dnsPolicy None or
Default, dnsConfig; dns.go getPodDNSType) take effect only where the node's CNI plugin
declares the dns capability (containerd sandbox_run.go cniNamespaceOpts, libcni
injectRuntimeConfig), which check cannot know: an info, said with "if" for a pod pinned
to no OS. A HostProcess pod never reaches CNI (sandbox_run.go): its settings never apply.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubelet_winnet._lint.dns import asks_own_dns
from kubelet_winnet.cli import main


def manifest(name: str, *, windows: bool = True, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}], **spec}
    if windows:
        body["nodeSelector"] = {"kubernetes.io/os": "windows"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}


def findings(capsys: pytest.CaptureFixture[str], tmp_path: Path,
             *docs: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    path = tmp_path / "pods.yaml"
    path.write_text(yaml.safe_dump_all(list(docs)), encoding="utf-8")
    main(["check", str(path), "-o", "json", "--fail-on", "never"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    found: dict[str, list[dict[str, Any]]] = {d["metadata"]["name"]: [] for d in docs}
    for finding in json.loads(out)["findings"]:
        if finding["rule"] == "dns-needs-cni-capability":
            found[finding["object"]["name"]].append(finding)
    return found


@pytest.mark.parametrize(("spec", "own"), [
    ({}, False), ({"dnsPolicy": "ClusterFirst"}, False),
    ({"dnsPolicy": "ClusterFirstWithHostNet"}, False),
    ({"dnsPolicy": "None", "dnsConfig": {"nameservers": ["1.1.1.1"]}}, True),
    ({"dnsPolicy": "Default"}, True), ({"dnsConfig": {"searches": ["a.example"]}}, True),
])
def test_which_pods_ask_for_their_own_dns(spec: dict[str, Any], own: bool) -> None:
    assert asks_own_dns(spec) is own


def test_check_says_it_rests_on_the_nodes_cni(capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    found = findings(
        capsys, tmp_path,
        manifest("none", dnsPolicy="None", dnsConfig={"nameservers": ["10.0.0.53"]}),
        manifest("default", windows=False, dnsPolicy="Default"),
        manifest("config", dnsConfig={"options": [{"name": "ndots", "value": "2"}]}),
        manifest("plain"),
        manifest("host", hostNetwork=True, dnsConfig={"searches": ["corp.example"]},
                 securityContext={"windowsOptions": {"hostProcess": True}}),
        manifest("host-default", hostNetwork=True, dnsPolicy="Default",
                 securityContext={"windowsOptions": {"hostProcess": True}}),
    )
    # A HostProcess pod asking for the node's resolver gets just that: nothing to say.
    assert found["host-default"] == []
    assert found["plain"] == []
    (none,) = found["none"]
    assert none["severity"] == "info" and none["field"] == "spec.dnsPolicy"
    assert none["headline"] == ("dnsPolicy: None with dnsConfig: on a Windows node, only a CNI "
                               "plugin declaring the dns capability applies them.")
    assert "the endpoint gets the configuration's own dns block" in none["message"]
    (default,) = found["default"]
    assert default["headline"] == ("dnsPolicy: Default: if it runs on Windows, only a CNI "
                                  "plugin declaring the dns capability applies it.")
    (config,) = found["config"]
    assert config["field"] == "spec.dnsConfig"
    (host,) = found["host"]
    assert host["severity"] == "warning"
    assert host["headline"] == ("dnsConfig: no effect on a HostProcess pod, which resolves "
                               "names as the node does; drop it.")
    assert "never reaches CNI" in host["message"]
    for finding in (none, default, config, host):
        assert len(finding["headline"]) <= 120
