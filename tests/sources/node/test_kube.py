"""Start scripts and flag files as ``sources/node/kube.py`` reads them: the literal flags
of each command, past script variables, here-strings and embedded JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubelet_winnet.sources.node.kube import Flag, parse_commands


def by_component(text: str) -> dict[str, dict[str, tuple[bool, int]]]:
    return {c.component: dict(c.gates) for c in parse_commands(text, "s.ps1")}


def test_a_variable_value_is_unknown_and_the_rest_is_read() -> None:
    text = ("$featuresStr = 'A=true'\n"
            "c:\\k\\kubelet.exe --feature-gates '$featuresStr' --v=2 `\n"
            "  --feature-gates=B=false,$extra --hostname-override=$(hostname) --x=%NODE%\n")
    (config,) = parse_commands(text, "s.ps1")
    assert config.component == "kubelet"
    assert dict(config.gates) == {"B": (False, 3)}  # $extra is not known; B is
    assert [(f.name, f.unknown) for f in config.flags] == [
        ("feature-gates", True), ("v", False), ("feature-gates", True),
        ("hostname-override", True), ("x", True)]
    assert config.flags[0] == Flag("feature-gates", "$featuresStr", 2, True)


def test_a_here_string_of_json_does_not_stop_the_reading() -> None:
    text = ('$conf = @"\n{ "cniVersion": "0.2.0", "name": "don\'t" }\n"@\n'
            "& C:\\k\\kubelet.exe --feature-gates=WindowsHostNetwork=false\n")
    assert by_component(text) == {"kubelet": {"WindowsHostNetwork": (False, 4)}}


def test_each_command_of_a_script_gets_its_own_flags() -> None:
    text = ("# starts both\n"
            "$KubeletArgList = @(\"--feature-gates=A=true\", \"--v=2\")\n"
            "Start-Process C:\\k\\kubelet.exe -ArgumentList $KubeletArgList\n"
            "$KubeproxyArgList = @(\"--proxy-mode=kernelspace\", \"--feature-gates=B=true\")\n"
            "Write-Host \"waiting for kubelet\"  # a bare name in a message names no command\n"
            "& \"C:\\k\\kube-proxy.exe\" $KubeproxyArgList --feature-gates=C=true\n")
    assert by_component(text) == {"kubelet": {"A": (True, 2)},
                                  "kube-proxy": {"B": (True, 4), "C": (True, 6)}}


def test_flags_in_an_array_before_a_command_are_that_commands() -> None:
    # No kube-proxy-only flag among them: the command that takes the array says whose
    # they are; an assignment to a $kubelet... variable holds for its own statement only.
    text = ('$kubeletVersion = "1.30"\n'
            '$args = @("--v=4", "--kubeconfig=c:\\k\\config",\n'
            '          "--feature-gates=IPv6DualStack=true")\n'
            "& C:\\k\\kube-proxy.exe $args\n")
    assert by_component(text) == {"kube-proxy": {"IPv6DualStack": (True, 3)}}


def test_a_quoted_command_line_is_read_as_its_own_words() -> None:
    text = ('New-Service -Name kubelet -BinaryPathName "C:\\k\\kubelet.exe --v=2 '
            '--feature-gates=A=true"\n'
            "kube-proxy --proxy-mode=userspace \\\n  --feature-gates=B=false\n")
    configs = {c.component: c for c in parse_commands(text, "s")}
    assert dict(configs["kubelet"].gates) == {"A": (True, 1)}
    assert configs["kube-proxy"].mode == ("userspace", 2)
    assert dict(configs["kube-proxy"].gates) == {"B": (False, 3)}


def test_flags_before_any_command_go_to_the_one_they_fit() -> None:
    # aks-engine's kube-proxy flags (no command named): --proxy-mode is kube-proxy's alone
    text = '--v=3 --proxy-mode=kernelspace --feature-gates="WinDSR=true,WinOverlay=false"\n'
    (config,) = parse_commands(text, "p")
    assert config.component == "kube-proxy"
    assert dict(config.gates) == {"WinDSR": (True, 1), "WinOverlay": (False, 1)}
    assert parse_commands("no flags here\n", "p") == []


def test_a_gate_the_kubelet_cannot_parse_is_kept_with_its_text_and_the_rest_is_read() -> None:
    # component-base featuregate.Set: "missing bool value", strconv.ParseBool's syntax error
    configs = parse_commands("kubelet.exe --v=2 --feature-gates=A=true,B,C=yes\n"
                             "kube-proxy.exe --feature-gates=D=TRUE,E=tRuE\n", "s.ps1")
    kubelet, proxy = configs
    assert dict(kubelet.gates) == {"A": (True, 1)}
    assert kubelet.refused == (
        ("missing bool value for B", 1),
        ('invalid value of C=yes, err: strconv.ParseBool: parsing "yes": invalid syntax', 1))
    assert dict(proxy.gates) == {"D": (True, 2)}  # TRUE is ParseBool's; tRuE is not
    assert proxy.refused == (
        ('invalid value of E=tRuE, err: strconv.ParseBool: parsing "tRuE": invalid syntax', 2),)


def test_process_command_lines_of_both_components_in_one_file() -> None:
    # Get-CimInstance Win32_Process | ForEach-Object { $_.CommandLine } (docs/node.md)
    text = ('"C:\\k\\kubelet.exe" --v=2 --feature-gates=A=true\r\n'
            '"C:\\k\\kube-proxy.exe" --v=2 --feature-gates=B=true --enable-dsr=false\r\n')
    assert by_component(text) == {"kubelet": {"A": (True, 1)}, "kube-proxy": {"B": (True, 2)}}


@pytest.mark.slow  # a bound checked at scale: time over lines of megabytes
@pytest.mark.parametrize("line", ["kubelet " * 400_000, "c:\\k\\kube-proxy.exe " * 160_000,
                                  "$" + "kubelet" * 300_000, "kubelet --v=1 " * 200_000])
def test_a_line_of_many_command_names_is_read_in_linear_time(line: str, tmp_path: Path) -> None:
    # Each command name used to copy and strip the line before it: 3.2 MB of "kubelet "
    # took about three minutes. In a child process with a timeout: a hang fails the test.
    import subprocess
    import sys

    path = tmp_path / "start.ps1"
    path.write_text(line + "\n--feature-gates=A=true\n", encoding="utf-8")
    code = ("import sys\n"
            "from kubelet_winnet.sources.node.kube import parse_commands\n"
            "from kubelet_winnet.sources.node._text import read_text\n"
            "configs = parse_commands(read_text(sys.argv[1]), sys.argv[1])\n"
            "print(sorted((c.component, dict(c.gates)['A'][1]) for c in configs))\n")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, timeout=60, check=False)
    component = "kube-proxy" if "proxy" in line else "kubelet"
    assert done.stdout.strip() == f"[('{component}', 2)]", done.stderr


def test_kubeadm_flags_env_is_read_as_the_kubelets_flags() -> None:
    # /var/lib/kubelet/kubeadm-flags.env as kubeadm join writes it on a Windows node
    text = ('KUBELET_KUBEADM_ARGS="--container-runtime=remote '
            "--container-runtime-endpoint=npipe:////./pipe/containerd-containerd "
            '--pod-infra-container-image=registry.k8s.io/pause:3.9"\n')
    (config,) = parse_commands(text, "kubeadm-flags.env")
    assert config.component == "kubelet"
    assert [flag.name for flag in config.flags] == [
        "container-runtime", "container-runtime-endpoint", "pod-infra-container-image"]


def test_flags_added_to_an_argument_list_belong_to_its_component() -> None:
    # AgentBaker kubeletstart.ps1 builds the list with +=
    text = ('$KubeletArgList += "--feature-gates=A=true"\n'
            '$KubeproxyArgList += "--feature-gates=B=true"\n')
    assert by_component(text) == {"kubelet": {"A": (True, 1)}, "kube-proxy": {"B": (True, 2)}}
