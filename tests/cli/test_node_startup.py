"""``kubelet-winnet node``: what stops the kubelet and kube-proxy at start-up, as a user
sees it (text and JSON, the file and line, the exit status).

The fixtures (tests/data/node/nodes, sources in its README) are start scripts and
configurations in the shapes users have. Expected findings follow from each file's content
and the sources of ``_kubelet/startup.py``: a gate outside its releases or a removed flag
is an error on a known release; on an unknown release it is an error only when no release
takes it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubelet_winnet.cli import main

NODES = Path(__file__).resolve().parent.parent / "data" / "node" / "nodes"


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if text in line)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["node", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def report(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    status, out, err = run(capsys, *argv, "-o", "json")
    return status, json.loads(out), err


def found(document: dict[str, Any], *rules: str) -> set[tuple[str, str, int, str]]:
    return {(f["rule"], Path(f["file"]).name, f["line"], f["severity"])
            for f in document["findings"] if f["rule"] in rules}


STARTUP = ("node-gate-stops-kubelet", "node-gate-stops-kube-proxy", "node-flag-removed")


def test_a_kubeadm_node_on_kubelet_130_is_stopped_by_its_old_gates_and_flags(
    capsys: pytest.CaptureFixture[str]
) -> None:
    node = NODES / "kubeadm-win-1"
    script, config = node / "StartKubelet.ps1", node / "config.yaml"
    status, document, err = report(capsys, str(node), "--kubelet-version", "1.30")
    assert status == 1 and err == ""
    assert found(document, *STARTUP) == {
        # kubeadm-flags.env, which the script reads, is the kubelet's command line too
        ("node-flag-removed", "kubeadm-flags.env", 1, "error"),
        # the start script is read past its variables and its here-string of JSON
        ("node-flag-removed", "StartKubelet.ps1", line_of(script, "--network-plugin"), "error"),
        ("node-flag-removed", "StartKubelet.ps1", line_of(script, "--log-dir"), "error"),
        ("node-flag-removed", "StartKubelet.ps1", line_of(script, "--logtostderr"), "error"),
        ("node-flag-removed", "StartKubelet.ps1",
         line_of(script, "--image-pull-progress-deadline"), "error"),
        ("node-gate-stops-kubelet", "StartKubelet.ps1",
         line_of(script, "--feature-gates '$featuresStr'"), "info"),
        # the configuration file beside it is read too, each gate at its own line
        ("node-gate-stops-kubelet", "config.yaml", line_of(config, "HyperVContainer"), "error"),
        ("node-gate-stops-kubelet", "config.yaml",
         line_of(config, "WindowsHostProcessContainers"), "error"),
        ("node-gate-stops-kubelet", "config.yaml", line_of(config, '"": true'), "error"),
        ("node-gate-stops-kubelet", "config.yaml", line_of(config, '"a b"'), "error"),
        ("node-gate-stops-kubelet", "config.yaml", line_of(config, "WindowsHostNetwrok"),
         "error"),
    }
    messages = {f["line"]: f["message"] for f in document["findings"]
                if f["file"].endswith("config.yaml")}
    assert messages[line_of(config, "HyperVContainer")] == (
        "kubelet 1.30 exits at start-up: unrecognized feature gate: HyperVContainer (it was "
        "removed after Kubernetes 1.20; remove it).")
    assert messages[line_of(config, "WindowsHostProcessContainers")] == (
        "kubelet 1.30 exits at start-up: unrecognized feature gate: "
        "WindowsHostProcessContainers (it was removed after Kubernetes 1.27; remove it).")
    assert messages[line_of(config, '"": true')] == (
        'kubelet 1.30 exits at start-up: unrecognized feature gate: "" (an empty gate name; '
        "remove the entry).")
    assert messages[line_of(config, '"a b"')] == (
        'kubelet 1.30 exits at start-up: unrecognized feature gate: "a b" (no Kubernetes '
        "release from 1.26 to 1.36 has it; remove it or fix its name).")
    assert messages[line_of(config, "WindowsHostNetwrok")].endswith(
        "did you mean WindowsHostNetwork?).")
    details = {f["line"]: f["detail"] for f in document["findings"]
               if f["file"].endswith("config.yaml")}
    assert details[line_of(config, "WindowsHostProcessContainers")] == (  # its own page
        "kubernetes/website content/en/docs/reference/command-line-tools-reference/"
        "feature-gates/WindowsHostProcessContainers.md")
    variable = next(f for f in document["findings"] if f["severity"] == "info"
                    and f["rule"] == "node-gate-stops-kubelet")
    assert variable["message"] == (
        "--feature-gates is set from $featuresStr, a script variable: its gates are not known "
        "here and were not checked; a gate kubelet 1.30 does not have stops it at start-up.")


def test_the_same_node_in_text_names_each_file_and_line(
    capsys: pytest.CaptureFixture[str]
) -> None:
    node = NODES / "kubeadm-win-1"
    status, out, _ = run(capsys, str(node), "--kubelet-version", "1.30")
    assert status == 1
    script = node / "StartKubelet.ps1"
    assert (f"{script}:{line_of(script, '--logtostderr')}: error node-flag-removed: kubelet "
            "1.30 exits at start-up: unknown flag: --logtostderr (removed in 1.26; redirect "
            "the output instead, with kube-log-runner on Windows).\n") in out


def test_without_a_release_a_gate_some_releases_take_is_a_conditional_warning(
    capsys: pytest.CaptureFixture[str]
) -> None:
    node = NODES / "kubeadm-win-1"
    config = node / "config.yaml"
    status, document, err = report(capsys, str(node))
    assert status == 1
    assert "no Node object and no --kubelet-version" in err
    by_line = {f["line"]: f for f in document["findings"] if f["file"].endswith("config.yaml")}
    conditional = by_line[line_of(config, "WindowsHostProcessContainers")]
    assert conditional["severity"] == "warning"
    assert conditional["message"].startswith(
        "kubelet 1.26 to 1.27 accepts this gate; any other release exits at start-up: "
        "unrecognized feature gate: WindowsHostProcessContainers")
    assert "--kubelet-version" in conditional["message"]
    certain = by_line[line_of(config, "HyperVContainer")]  # no release from 1.26 has it
    assert certain["severity"] == "error"
    assert certain["message"].startswith("no kubelet from 1.26 to 1.38 starts with this gate")
    # an empty name is no gate of any release, listed or not (featuregate's Set refuses it)
    empty = by_line[line_of(config, '"":')]
    assert empty["message"].startswith("no kubelet from 1.26 to 1.38 starts with this gate: "
                                       'unrecognized feature gate: ""')
    # RotateKubeletServerCertificate: beta since 1.12, in every release (no finding)
    assert line_of(config, "RotateKubeletServerCertificate") not in by_line


def test_a_script_starting_both_components_gives_each_its_own_flags(
    capsys: pytest.CaptureFixture[str]
) -> None:
    script = NODES / "aks-win-2" / "start-node.ps1"
    status, document, _ = report(capsys, str(script), "--kubelet-version", "1.28")
    assert status == 1
    assert found(document, *STARTUP) == {
        # the kubelet's: --container-runtime (removed in 1.27), WindowsHostProcessContainers
        # (removed after 1.27); kube-proxy's: IPv6DualStack, --logtostderr
        ("node-flag-removed", "start-node.ps1", line_of(script, "--container-runtime=remote"),
         "error"),
        ("node-gate-stops-kubelet", "start-node.ps1",
         line_of(script, "WindowsHostProcessContainers=true"), "error"),
        ("node-gate-stops-kube-proxy", "start-node.ps1", line_of(script, "IPv6DualStack"),
         "error"),
        ("node-flag-removed", "start-node.ps1", line_of(script, "--logtostderr"), "error"),
    }
    proxy = next(f for f in document["findings"] if f["rule"] == "node-gate-stops-kube-proxy")
    assert proxy["message"] == (
        "kube-proxy 1.28 exits at start-up: unrecognized feature gate: IPv6DualStack (it was "
        "removed after Kubernetes 1.24; remove it).")
    # The kube-proxy flags are not read as the kubelet's, nor the other way round.
    assert not found(document, "node-proxy-mode")


def test_on_kubelet_126_the_same_script_keeps_only_what_126_refuses(
    capsys: pytest.CaptureFixture[str]
) -> None:
    script = NODES / "aks-win-2" / "start-node.ps1"
    _, document, _ = report(capsys, str(script), "--kubelet-version", "1.26")
    # 1.26 still has --container-runtime and WindowsHostProcessContainers
    assert found(document, *STARTUP) == {
        ("node-gate-stops-kube-proxy", "start-node.ps1", line_of(script, "IPv6DualStack"),
         "error"),
        ("node-flag-removed", "start-node.ps1", line_of(script, "--logtostderr"), "error"),
    }


def test_kube_proxy_with_klog_flags_does_not_start(capsys: pytest.CaptureFixture[str]) -> None:
    flags = NODES / "proxy-win-3" / "kube-proxy.args"
    status, document, _ = report(capsys, str(flags), "--kubelet-version", "1.33")
    assert status == 1
    line = line_of(flags, "--log-dir")
    assert found(document, *STARTUP) == {
        ("node-flag-removed", "kube-proxy.args", line, "error")}
    messages = sorted(f["message"] for f in document["findings"])
    assert messages == [
        "kube-proxy 1.33 exits at start-up: unknown flag: --log-dir (removed in 1.26; "
        "redirect the output instead, with kube-log-runner on Windows).",
        "kube-proxy 1.33 exits at start-up: unknown flag: --logtostderr (removed in 1.26; "
        "redirect the output instead, with kube-log-runner on Windows).",
    ]


def test_a_node_without_startup_problems_passes(capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path) -> None:
    (tmp_path / "kubelet.yaml").write_text(
        "kind: KubeletConfiguration\nfeatureGates:\n  WindowsGracefulNodeShutdown: true\n"
        "  AllAlpha: false\n", encoding="utf-8")
    (tmp_path / "kube-proxy.ps1").write_text(
        '& "C:\\k\\kube-proxy.exe" --v=2 --proxy-mode=kernelspace --feature-gates=WinDSR=true '
        "--enable-dsr=true\n", encoding="utf-8")
    status, document, err = report(capsys, str(tmp_path), "--kubelet-version", "1.34")
    assert (status, err) == (0, "")
    assert document["findings"] == []
    # WindowsGracefulNodeShutdown is alpha from 1.32: kubelet 1.31 does not know it
    status, document, _ = report(capsys, str(tmp_path), "--kubelet-version", "1.31")
    assert status == 1
    assert [f["message"] for f in document["findings"]] == [
        "kubelet 1.31 exits at start-up: unrecognized feature gate: WindowsGracefulNodeShutdown "
        "(it first appears in Kubernetes 1.32; remove it or upgrade)."]


def test_a_name_in_no_list_on_a_release_after_the_lists_is_a_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "kubelet.yaml").write_text(
        "kind: KubeletConfiguration\nfeatureGates:\n  BrandNewGate: true\n", encoding="utf-8")
    status, document, _ = report(capsys, str(tmp_path), "--kubelet-version", "1.38")
    assert status == 1  # --fail-on warning, the default
    (finding,) = document["findings"]
    assert finding["severity"] == "warning"
    assert finding["message"] == (
        "kubelet 1.38 exits at start-up (unrecognized feature gate: BrandNewGate) unless "
        "BrandNewGate is a gate added after 1.36: no Kubernetes release from 1.26 to 1.36 "
        "has it; remove it or fix its name.")


def test_a_gate_value_the_kubelet_cannot_parse_stops_it_and_the_file_is_still_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    flags = tmp_path / "kubelet.ps1"
    flags.write_text("& C:\\k\\kubelet.exe --feature-gates=WinDSR=maybe,HyperVContainer=true "
                     "--logtostderr\n", encoding="utf-8")
    status, document, err = report(capsys, str(flags), "--kubelet-version", "1.33")
    assert (status, err) == (1, "")
    assert sorted(f["message"] for f in document["findings"]) == [
        'kubelet 1.33 exits at start-up: invalid value of WinDSR=maybe, err: '
        'strconv.ParseBool: parsing "maybe": invalid syntax.',
        "kubelet 1.33 exits at start-up: unknown flag: --logtostderr (removed in 1.26; "
        "redirect the output instead, with kube-log-runner on Windows).",
        "kubelet 1.33 exits at start-up: unrecognized feature gate: HyperVContainer (it was "
        "removed after Kubernetes 1.20; remove it).",
    ]
    assert {f["line"] for f in document["findings"]} == {1}


def test_without_a_release_a_flag_only_later_releases_removed_is_a_warning(
    capsys: pytest.CaptureFixture[str]
) -> None:
    script = NODES / "aks-win-2" / "start-node.ps1"
    _, document, _ = report(capsys, str(script))
    flags = {f["line"]: (f["severity"], f["message"]) for f in document["findings"]
             if f["rule"] == "node-flag-removed"}
    assert flags == {
        line_of(script, "--container-runtime=remote"): (
            "warning", "if this node's kubelet is 1.27 or later, it exits at start-up: unknown "
            "flag: --container-runtime (removed in 1.27; the runtime is always remote: keep "
            "--container-runtime-endpoint)."),
        line_of(script, "--logtostderr"): (  # removed in 1.26: no supported release has it
            "error", "this node's kube-proxy exits at start-up: unknown flag: --logtostderr "
            "(removed in 1.26; redirect the output instead, with kube-log-runner on Windows)."),
    }


def test_a_kube_proxy_configuration_with_removed_gates_stops_kube_proxy(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "kube-proxy-config.yaml"
    config.write_text("apiVersion: kubeproxy.config.k8s.io/v1alpha1\n"
                      "kind: KubeProxyConfiguration\nmode: kernelspace\nfeatureGates:\n"
                      "  WinDSR: true\n  IPv6DualStack: true\n"
                      "  WindowsEndpointSliceProxying: true\n", encoding="utf-8")
    status, document, _ = report(capsys, str(config), "--kubelet-version", "1.31")
    assert status == 1
    # both removed after 1.24 (feature-gates-removed.md); WinDSR is in every release
    assert found(document, *STARTUP) == {
        ("node-gate-stops-kube-proxy", "kube-proxy-config.yaml", 6, "error"),
        ("node-gate-stops-kube-proxy", "kube-proxy-config.yaml", 7, "error"),
    }


def test_thousands_of_refused_gates_are_fifty_findings_and_one_total(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # One refused gate already stops the kubelet: a finding per gate of a 16 MiB file was
    # hundreds of MB of output. The first 50 are named, the rest counted at the first's line.
    flags = tmp_path / "kubelet.args"
    flags.write_text("--v=2\n--feature-gates=WinDSR=true\n--feature-gates="
                     + ",".join(f"Gate{i}=true" for i in range(3000)) + "\n", encoding="utf-8")
    status, document, _ = report(capsys, str(flags), "--kubelet-version", "1.30")
    assert status == 1
    messages = [f["message"] for f in document["findings"]]
    assert len(messages) == 51
    assert messages[49].startswith("kubelet 1.30 exits at start-up: unrecognized feature "
                                   "gate: Gate49 ")
    assert messages[50] == ("2,950 more gates of this file, from line 3 on, are not gates of "
                            "kubelet 1.30 either.")


def test_a_generic_api_server_gate_is_accepted_until_its_removal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # RemoveSelfLink.md: stable to 1.29, removed: true. Once missing from the table, a 1.28
    # node that set it was told its kubelet would not start.
    (tmp_path / "kubelet.yaml").write_text(
        "kind: KubeletConfiguration\nfeatureGates:\n  RemoveSelfLink: true\n", encoding="utf-8")
    status, document, err = report(capsys, str(tmp_path), "--kubelet-version", "1.28")
    assert (status, err, document["findings"]) == (0, "", [])
    status, document, _ = report(capsys, str(tmp_path), "--kubelet-version", "1.30")
    assert status == 1
    (finding,) = document["findings"]
    assert (finding["severity"], finding["line"]) == ("error", 3)
    assert finding["message"] == (
        "kubelet 1.30 exits at start-up: unrecognized feature gate: RemoveSelfLink (it was "
        "removed after Kubernetes 1.29; remove it).")


def test_a_gate_added_in_137_is_accepted_there_and_refused_on_136(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # KubeProxyNFTablesLocalhostNodePorts.md: alpha from 1.37
    config = tmp_path / "kube-proxy-config.yaml"
    config.write_text("apiVersion: kubeproxy.config.k8s.io/v1alpha1\n"
                      "kind: KubeProxyConfiguration\nmode: kernelspace\nfeatureGates:\n"
                      "  KubeProxyNFTablesLocalhostNodePorts: false\n", encoding="utf-8")
    status, document, err = report(capsys, str(config), "--kubelet-version", "1.37")
    assert (status, err, document["findings"]) == (0, "", [])
    status, document, _ = report(capsys, str(config), "--kubelet-version", "1.36")
    assert status == 1
    (finding,) = document["findings"]
    assert (finding["rule"], finding["severity"], finding["line"]) == (
        "node-gate-stops-kube-proxy", "error", 5)
    assert finding["message"] == (
        "kube-proxy 1.36 exits at start-up: unrecognized feature gate: "
        "KubeProxyNFTablesLocalhostNodePorts (it first appears in Kubernetes 1.37; remove it "
        "or upgrade).")


def test_a_gate_the_137_changelog_removed_stops_kubelet_137(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # CHANGELOG-1.37.md (v1.37.0-alpha.1): "Removed the generally available feature gate
    # AnyVolumeDataSource"; 1.36 still has it
    (tmp_path / "kubelet.yaml").write_text(
        "kind: KubeletConfiguration\nfeatureGates:\n  AnyVolumeDataSource: true\n",
        encoding="utf-8")
    status, document, _ = report(capsys, str(tmp_path), "--kubelet-version", "1.36")
    assert (status, document["findings"]) == (0, [])
    status, document, _ = report(capsys, str(tmp_path), "--kubelet-version", "1.37")
    assert status == 1
    (finding,) = document["findings"]
    assert finding["severity"] == "error"
    assert finding["message"] == (
        "kubelet 1.37 exits at start-up: unrecognized feature gate: AnyVolumeDataSource (it "
        "was removed after Kubernetes 1.36; remove it).")
    assert "CHANGELOG-1.37.md" in json.dumps(finding)


def test_kubelet_135_does_not_start_with_the_pod_infra_container_image_flag(
    capsys: pytest.CaptureFixture[str]
) -> None:
    # CHANGELOG-1.35.md, v1.35.0 Urgent Upgrade Notes: "Removed the
    # `--pod-infra-container-image` flag from `kubelet` command line" (PR #133779)
    node = NODES / "kubeadm-win-1"
    script = node / "StartKubelet.ps1"
    flagged = {("kubeadm-flags.env", 1), ("StartKubelet.ps1",
                                          line_of(script, "--pod-infra-container-image"))}

    def pod_infra(document: dict[str, Any]) -> dict[tuple[str, int], tuple[str, str]]:
        return {(Path(f["file"]).name, f["line"]): (f["severity"], f["message"])
                for f in document["findings"] if f["rule"] == "node-flag-removed"
                and "--pod-infra-container-image" in f["message"]}

    _, document, _ = report(capsys, str(node), "--kubelet-version", "1.34")
    assert pod_infra(document) == {}
    _, document, _ = report(capsys, str(node), "--kubelet-version", "1.35")
    found_135 = pod_infra(document)
    assert set(found_135) == flagged
    assert set(found_135.values()) == {(
        "error", "kubelet 1.35 exits at start-up: unknown flag: --pod-infra-container-image "
        "(removed in 1.35; the pause image is the runtime's setting: containerd's sandbox "
        "image).")}
    assert any("#133779" in f["detail"] for f in document["findings"])
    # without a release: only 1.35 and later refuse it
    _, document, _ = report(capsys, str(node))
    assert set(pod_infra(document).values()) == {(
        "warning", "if this node's kubelet is 1.35 or later, it exits at start-up: unknown "
        "flag: --pod-infra-container-image (removed in 1.35; the pause image is the "
        "runtime's setting: containerd's sandbox image).")}


def test_a_kubelet_gate_set_against_its_lock_stops_the_kubelet_of_that_release(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # feature_list.md: SidecarContainers locked 1.33+ (GA), removed by CHANGELOG-1.37
    (tmp_path / "kubelet.yaml").write_text(
        "kind: KubeletConfiguration\nfeatureGates:\n  SidecarContainers: false\n"
        "  NodeSwap: true\n", encoding="utf-8")
    status, document, _ = report(capsys, str(tmp_path), "--kubelet-version", "1.32")
    assert (status, document["findings"]) == (0, [])
    status, document, _ = report(capsys, str(tmp_path), "--kubelet-version", "1.33")
    assert status == 1
    (finding,) = document["findings"]  # NodeSwap=true is its locked value: accepted
    assert (finding["rule"], finding["severity"], finding["line"]) == (
        "node-gate-locked", "error", 3)
    assert finding["message"] == (
        "kubelet 1.33 exits at start-up: cannot set feature gate SidecarContainers to false, "
        "feature is locked to true (locked since Kubernetes 1.33; remove it).")
    assert "feature_list.md" in finding["detail"]
    # 1.37 no longer has the gate: that is the unrecognized name, not the lock
    _, document, _ = report(capsys, str(tmp_path), "--kubelet-version", "1.37")
    assert [f["rule"] for f in document["findings"]] == ["node-gate-stops-kubelet"]


def test_a_gate_the_137_specs_lock_is_refused_from_137(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # kube-scheduler's 1.37 versioned specs: DRAExtendedResource GA, LockToDefault: true in
    # 1.37; DRADeviceTaints GA in 1.37 with LockToDefault: false
    (tmp_path / "kubelet.yaml").write_text(
        "kind: KubeletConfiguration\nfeatureGates:\n  DRAExtendedResource: false\n"
        "  DRADeviceTaints: false\n", encoding="utf-8")
    status, document, _ = report(capsys, str(tmp_path), "--kubelet-version", "1.36")
    assert (status, document["findings"]) == (0, [])
    _, document, _ = report(capsys, str(tmp_path), "--kubelet-version", "1.37")
    assert [(f["rule"], f["line"], f["message"]) for f in document["findings"]] == [(
        "node-gate-locked", 3, "kubelet 1.37 exits at start-up: cannot set feature gate "
        "DRAExtendedResource to false, feature is locked to true (locked since Kubernetes "
        "1.37; remove it).")]
    # CHANGELOG-1.38.md (alpha.1, PR #140256): DRADeviceTaints "now locked to true (GA)"
    _, document, _ = report(capsys, str(tmp_path), "--kubelet-version", "1.38")
    assert [(f["line"], f["message"]) for f in document["findings"]] == [
        (3, "kubelet 1.38 exits at start-up: cannot set feature gate DRAExtendedResource to "
            "false, feature is locked to true (locked since Kubernetes 1.37; remove it)."),
        (4, "kubelet 1.38 exits at start-up: cannot set feature gate DRADeviceTaints to "
            "false, feature is locked to true (locked since Kubernetes 1.38; remove it)."),
    ]


def test_win_overlay_false_without_a_release_is_a_warning_for_the_locking_releases(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Azure/aks-engine PR #4104's flags; WinDSR and WinOverlay locked 1.34+ (feature_list.md)
    args = tmp_path / "kubeproxy.args"
    args.write_text('--v=3 --proxy-mode=kernelspace --feature-gates="WinDSR=true,'
                    'WinOverlay=false"\n', encoding="utf-8")
    status, document, _ = report(capsys, str(args))
    assert status == 1
    (finding,) = document["findings"]
    assert (finding["rule"], finding["severity"], finding["line"]) == (
        "node-gate-locked", "warning", 1)
    assert finding["message"] == (
        "if this node's kube-proxy is 1.34 to 1.38, it exits at start-up: cannot set feature "
        "gate WinOverlay to false, feature is locked to true (locked since Kubernetes 1.34; "
        "remove it). Say this node's release with --kubelet-version or a Node object.")
    _, document, _ = report(capsys, str(args), "--kubelet-version", "1.33")
    assert document["findings"] == []
    _, document, _ = report(capsys, str(args), "--kubelet-version", "1.34")
    assert [f["message"] for f in document["findings"]] == [
        "kube-proxy 1.34 exits at start-up: cannot set feature gate WinOverlay to false, "
        "feature is locked to true (locked since Kubernetes 1.34; remove it)."]


def test_a_gate_locked_to_false_refuses_true(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # CHANGELOG-1.37.md (PR #139212): the deprecated DeclarativeValidationTakeover (off by
    # default, feature_list.md) is locked to its default from 1.37
    config = tmp_path / "kubelet.yaml"
    config.write_text("kind: KubeletConfiguration\nfeatureGates:\n"
                      "  DeclarativeValidationTakeover: true\n", encoding="utf-8")
    _, document, _ = report(capsys, str(config), "--kubelet-version", "1.36")
    assert document["findings"] == []
    _, document, _ = report(capsys, str(config), "--kubelet-version", "1.37")
    assert [f["message"] for f in document["findings"]] == [
        "kubelet 1.37 exits at start-up: cannot set feature gate DeclarativeValidationTakeover "
        "to true, feature is locked to false (locked since Kubernetes 1.37; remove it)."]
    config.write_text("kind: KubeletConfiguration\nfeatureGates:\n"
                      "  DeclarativeValidationTakeover: false\n", encoding="utf-8")
    _, document, _ = report(capsys, str(config), "--kubelet-version", "1.37")
    assert document["findings"] == []


def test_a_gate_new_in_138_is_accepted_there_and_refused_on_137(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # kubernetes/website feature-gates/ContainerUlimits.md: alpha, fromVersion "1.38"
    (tmp_path / "kubelet.yaml").write_text(
        "kind: KubeletConfiguration\nfeatureGates:\n  ContainerUlimits: true\n",
        encoding="utf-8")
    status, document, _ = report(capsys, str(tmp_path), "--kubelet-version", "1.38")
    assert (status, document["findings"]) == (0, [])
    _, document, _ = report(capsys, str(tmp_path), "--kubelet-version", "1.37")
    assert [f["message"] for f in document["findings"]] == [
        "kubelet 1.37 exits at start-up: unrecognized feature gate: ContainerUlimits (it "
        "first appears in Kubernetes 1.38; remove it or upgrade)."]
