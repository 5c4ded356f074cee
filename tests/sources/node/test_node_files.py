"""sources/node: a node's files read as its components read them.

Fixtures are under tests/data/node (sources in its README). Expected values come from the
files themselves (the types and capabilities they declare, the lines they are on) and from
upstream rules: containerd's per-version plugin ids (config.go v1MigratePluginName,
plugins/cri/runtime/plugin.go migrateConfig), libcni's capability rule, netsh's layout.
"""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kubelet_winnet.errors import NodeConfigError
from kubelet_winnet.sources.node import read_node
from kubelet_winnet.sources.node.cni import read_cni
from kubelet_winnet.sources.node.containerd import parse_containerd, read_containerd
from kubelet_winnet.sources.node.kube import parse_flags
from kubelet_winnet.sources.node.netsh import parse_netsh

DATA = Path(__file__).resolve().parents[2] / "data" / "node"
CNI = DATA / "cni"
NODES = DATA / "nodes"

# (file, {plugin type: declared capabilities}, flannel delegate) as each file declares them.
CNI_FILES = [
    ("win-bridge-flannel.conf", {"flannel": set()}, "win-bridge"),
    ("win-overlay.conf", {"win-overlay": {"portMappings", "dns"}}, None),
    ("sdnbridge.conf", {"sdnbridge": {"portMappings", "dnsCapabilities"}}, None),
    ("flannel-sdnoverlay.conf", {"flannel": {"portMappings", "dnsCapabilities"}}, "sdnoverlay"),
    ("nat.conf", {"nat": set()}, None),
    ("calico.conf", {"calico": {"dns"}}, None),
    ("antrea.conflist", {"antrea": {"dns"}}, None),
    ("azure-windows.conflist", {"azure-vnet": {"portMappings", "dns"}}, None),
    ("nerdctl-nat.conflist", {"nat": set()}, None),
]


@pytest.mark.parametrize(("name", "declared", "delegate"), CNI_FILES)
def test_cni_files(name: str, declared: dict[str, set[str]], delegate: str | None) -> None:
    network = read_cni(str(CNI / name))
    assert {p.type: set(p.capabilities) for p in network.plugins} == declared
    assert network.plugins[0].delegate == delegate


def test_cni_in_utf16_is_refused_as_libcni_refuses_it(tmp_path: Path) -> None:
    # libcni hands the bytes to Go's json.Unmarshal (libcni/conf.go): UTF-16 is not JSON.
    text = (CNI / "azure-windows.conflist").read_text(encoding="utf-8")
    path = tmp_path / "10-azure.conflist"
    path.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    with pytest.raises(NodeConfigError) as caught:
        read_cni(str(path))
    assert caught.value.where == f"{path}:1"
    assert (caught.value.file, caught.value.line) == (str(path), 1)
    assert caught.value.reason.startswith("UTF-16 text (PowerShell 5.1's Out-File and > write "
                                          "it): containerd's CNI loader (libcni")
    assert "loads no network" in caught.value.reason
    assert "copy the node's file with Copy-Item" in caught.value.reason


@pytest.mark.parametrize(("text", "message"), [
    ('{"name": "n", "plugins": []}', "plugins must be a non-empty list"),
    ('{"name": "n", "plugins": [{"capabilities": {}}]}', "needs a type"),
    ('{"type": "nat"}', "needs a name"),
    ('{"name": "n", "type": "nat", "capabilities": [1]}', "capabilities must be an object"),
    ('{"name": "n", "type": "nat",\n "x": }', ":2:"),
])
def test_bad_cni_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.conflist"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(NodeConfigError) as caught:
        read_cni(str(path))
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert str(caught.value).startswith(str(path))


def test_containerd_version_1_aks_shape() -> None:
    config = read_containerd(str(NODES / "akswin000001" / "containerd.toml"))
    assert config.version == 1  # no version key
    tables = {t.name: (t.isolation, t.read) for t in config.runtimes}
    assert tables == {"runhcs-wcow-process": ("process", True),
                      "runhcs-wcow-hypervisor-20348": ("hyperv", True)}
    assert config.bin_dir is not None and config.bin_dir.value == "c:\\k\\azurecni\\bin"
    lines = (NODES / "akswin000001" / "containerd.toml").read_text().splitlines()
    assert lines[config.bin_dir.line - 1].strip().startswith("bin_dir")
    assert config.default_handler == "runhcs-wcow-process"


def test_containerd_version_3_reads_only_its_own_path() -> None:
    path = NODES / "win-2025-a" / "config.toml"
    config = read_containerd(str(path))
    lines = path.read_text().splitlines()
    assert config.version == 3
    read = {t.name: t.isolation for t in config.runtimes if t.read}
    unread = [t for t in config.runtimes if not t.read]
    assert read == {"runhcs-wcow-process": "process", "runhcs-wcow-hypervisor": "hyperv"}
    assert [t.name for t in unread] == ["runhcs-wcow-hypervisor-26100"]
    assert '"io.containerd.grpc.v1.cri"' in lines[unread[0].line - 1]
    assert config.default_handler == "runhcs-wcow-hypervisor"
    assert config.enable_cdi is not None and config.enable_cdi.value is False
    assert "enable_cdi" in lines[config.enable_cdi.line - 1]
    assert config.sandbox_image is not None
    assert config.sandbox_image.value == "registry.k8s.io/pause:3.10.1"
    assert config.handlers()["runhcs-wcow-hypervisor"] == "hyperv"


@pytest.mark.parametrize(("version", "plugin", "read"), [
    (None, "cri", True), (1, "io.containerd.grpc.v1.cri", True),
    (2, "io.containerd.grpc.v1.cri", True), (2, "cri", False),
    (2, "io.containerd.cri.v1.runtime", False), (3, "io.containerd.cri.v1.runtime", True),
    (3, "io.containerd.grpc.v1.cri", False), (4, "io.containerd.cri.v1.runtime", True),
])
def test_where_each_version_reads_runtimes(version: int | None, plugin: str, read: bool) -> None:
    head = "" if version is None else f"version = {version}\n"
    text = (f'{head}[plugins."{plugin}".containerd.runtimes.hv]\n'
            f'[plugins."{plugin}".containerd.runtimes.hv.options]\nSandboxIsolation = 1\n')
    (table,) = parse_containerd(text, "c.toml").runtimes
    assert (table.name, table.isolation, table.read) == ("hv", "hyperv", read)
    assert table.line == (2 if version is not None else 1)


@pytest.mark.parametrize(("text", "where", "message"), [
    ("version = 3\n[plugins\n", "c.toml:2", "not TOML"),
    ('version = "3"\n', "c.toml:1", "version must be an integer"),
    ("version = 3\n[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.x.options]\n"
     "SandboxIsolation = 'yes'\n", "c.toml:3", "SandboxIsolation must be an integer"),
])
def test_bad_containerd_config(text: str, where: str, message: str) -> None:
    with pytest.raises(NodeConfigError) as caught:
        parse_containerd(text, "c.toml")
    assert caught.value.where == where and message in caught.value.reason


def test_netsh_english_and_localized() -> None:
    english = read_node([str(NODES / "akswin000001")])
    assert english.excluded is not None and english.dynamic is not None
    assert [(str(r), r.administered) for r, _ in english.excluded.ranges] == [
        ("5985-5985", False), ("30100-30163", False), ("33300-33363", False),
        ("47001-47001", False), ("50000-50059", True)]
    assert str(english.dynamic.ranges[0][0]) == "33000-65535"  # 33000 + 32536 - 1
    german = read_node([str(NODES / "win-2025-a")])  # UTF-16 LE, German and Chinese
    assert german.excluded is not None and german.dynamic is not None
    assert [str(r) for r, _ in german.excluded.ranges] == ["5985-5985", "8080-8080",
                                                           "47001-47001"]
    assert str(german.dynamic.ranges[0][0]) == "1025-65534"


@given(st.lists(st.tuples(st.integers(1, 65535), st.integers(0, 2000), st.booleans()),
                max_size=20),
       st.sampled_from(["Protocol tcp Port Exclusion Ranges\n\nStart Port    End Port",
                        "Portausschlussbereiche für das Protokoll tcp\n\nStartport   Endport",
                        "协议 tcp 端口排除范围\n\n开始端口    结束端口"]))
def test_excluded_ranges_any_heading(rows: list[tuple[int, int, bool]], heading: str) -> None:
    """netsh prints right-aligned `start end` rows, `*` after an administered one."""
    rows = [(s, min(s + n, 65535), star) for s, n, star in rows]
    body = "\n".join(f"{s:>10}  {e:>10}" + ("     *" if star else "") for s, e, star in rows)
    text = f"\n{heading}\n----------    --------\n{body}\n\n* - Administered port exclusions.\n"
    outputs = parse_netsh(text, "x.txt")
    assert outputs is not None
    (parsed,) = outputs
    assert (parsed.kind, parsed.protocol, parsed.protocol_named) == ("excluded", "tcp", True)
    assert [(r.start, r.end, r.administered) for r, _ in parsed.ranges] == rows


def test_netsh_errors() -> None:
    with pytest.raises(NodeConfigError, match="ends before it starts"):
        parse_netsh("Start Port    End Port\n----------    --------\n  900   800\n", "x.txt")
    with pytest.raises(NodeConfigError, match="run past port 65535"):
        parse_netsh("Protocol tcp Dynamic Port Range\n-----\nStart : 60000\nCount : 9000\n",
                    "d.txt")
    assert parse_netsh("hello\n", "x.txt") is None


def test_flags() -> None:
    flags = parse_flags((NODES / "akswin000001" / "kubeproxy.args").read_text(), "p")
    assert flags.component == "kube-proxy"
    assert flags.gates == {"WinDSR": (True, 2), "WinOverlay": (False, 2)}
    assert flags.mode == ("kernelspace", 2) and flags.enable_dsr == (True, 2)
    kubelet = parse_flags("--feature-gates WindowsHostNetwork=false `\n  --v 2\n", "k")
    assert kubelet.component == "kubelet"
    assert kubelet.gates == {"WindowsHostNetwork": (False, 1)}
    assert parse_flags("--feature-gates=WinDSR=maybe", "k").refused == (
        ('invalid value of WinDSR=maybe, err: strconv.ParseBool: parsing "maybe": invalid '
         "syntax", 1),)


def test_read_node_reports_bad_files_and_reads_the_rest(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("version = 3\n[plugins\n")
    (tmp_path / "x.conflist").write_bytes(b"\xff\xfe\x00\x00")
    (tmp_path / "kp.yaml").write_text("kind: KubeProxyConfiguration\nmode: ipvs\n")
    (tmp_path / "notes.txt").write_text("nothing here\n")
    found = read_node([str(tmp_path)])
    assert sorted(e.where.rsplit("/", 1)[1] for e in found.errors) == [
        "config.toml:2", "x.conflist:1"]
    assert found.proxy is not None and found.proxy.mode == ("ipvs", 2)
    assert found.skipped and "neither netsh output nor command-line flags" in found.skipped[0]


def test_facts_of_a_node_directory() -> None:
    facts = read_node([str(NODES / "win-2025-a")]).facts
    assert facts.runtime == "containerd://2.4.0"
    assert facts.default_handler == "runhcs-wcow-hypervisor"
    assert "runhcs-wcow-hypervisor-26100" not in facts.handlers  # at an unread path
    assert facts.cni is not None and facts.cni.plugins[0].delegate == "win-overlay"


_NAMES = st.sampled_from(["config.toml", "10-net.conflist", "0.conf", "kubelet.yaml",
                          "node.json", "ports.txt", "flags.args"])
_TEXTS = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda t: t.encode("utf-8")),
    st.text(max_size=200).map(lambda t: codecs.BOM_UTF16_LE + t.encode("utf-16-le",
                                                                      "surrogatepass")),
    st.sampled_from([b"version = 3\n[plugins]\n", b'{"name": "n", "plugins": [{}]}',
                     b"kind: KubeProxyConfiguration\nmode: [1]\n", b"--feature-gates=,=",
                     b"Start Port : 70000\nNumber : 1\n", b"  1  2  *\n  3  1\n"]),
)


@given(st.lists(st.tuples(_NAMES, _TEXTS), max_size=4, unique_by=lambda f: f[0]))
def test_any_files_are_read_or_refused_in_one_line(files: list[tuple[str, bytes]]) -> None:
    """The input layer's promise for node files: whatever the bytes, each file is read,
    skipped with a note, or one NodeConfigError naming it; nothing else escapes."""
    import tempfile

    for name, data in files:  # the input layer's own bug, pinned below
        assume(not (name.endswith((".conflist", ".conf", ".yaml", ".json"))
                    and _whitespace_then_bad_utf8(data)))
    with tempfile.TemporaryDirectory() as directory:
        for name, data in files:
            (Path(directory) / name).write_bytes(data)
        found = read_node([directory])
        for problem in found.errors:
            assert isinstance(problem, NodeConfigError)
            assert problem.where.startswith(directory) and "\n" not in str(problem)
        # whatever was read makes planner facts (a contradiction is a finding)
        assert found.facts is not None


def _whitespace_then_bad_utf8(data: bytes) -> bool:
    head = data[: len(data) - len(data.lstrip(b" \t\r\n"))]
    if not head or data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def test_input_layer_whitespace_then_bad_utf8(tmp_path: Path) -> None:
    (tmp_path / "10-net.conflist").write_bytes(b" \x80")
    found = read_node([str(tmp_path)])
    assert [e.where for e in found.errors] == [f"{tmp_path}/10-net.conflist:1"]


def test_powershell_argument_array() -> None:
    """sig-windows-tools' start.ps1 passes kube-proxy's flags as a PowerShell array."""
    path = NODES / "sigwin-1" / "kube-proxy-args.ps1"
    text = path.read_text(encoding="utf-8")
    flags = parse_flags(text, str(path))

    def line(needle: str) -> int:
        return next(n for n, row in enumerate(text.splitlines(), 1) if needle in row)

    assert flags.component == "kube-proxy"
    assert flags.mode == ("kernelspace", line("--proxy-mode"))
    assert flags.gates == {"WinOverlay": (True, line("--feature-gates"))}


def test_a_fifo_in_a_node_directory_is_skipped_not_waited_on(tmp_path: Path) -> None:
    # Opening a FIFO blocks until a writer comes: a directory search must pass it by, as
    # the input layer's search does (sources/manifests/paths.py expand_paths).
    import os

    (tmp_path / "kp.yaml").write_text("kind: KubeProxyConfiguration\nmode: ipvs\n")
    os.mkfifo(tmp_path / "excluded.txt")
    found = read_node([str(tmp_path)])
    assert found.proxy is not None and found.proxy.mode == ("ipvs", 2)
    assert not found.errors
    assert [s for s in found.skipped if "excluded.txt" in s and "not a regular file" in s]


@pytest.mark.parametrize("text", [
    "a = " + "[" * 100_000 + "]" * 100_000 + "\n",
    "version = 2\nb = " + "{x = " * 5_000 + "1" + "}" * 5_000 + "\n",
])
def test_deeply_nested_toml_is_one_line_not_a_recursion_error(text: str) -> None:
    # tomllib decodes arrays and inline tables recursively: without a bound the reader
    # dies with RecursionError. --max-depth (default 100) bounds TOML as it does YAML/JSON.
    with pytest.raises(NodeConfigError) as caught:
        parse_containerd(text, "c.toml")
    assert caught.value.where == f"c.toml:{text.count(chr(10))}"
    assert "nested deeper than 100 levels" in caught.value.reason


def test_toml_nesting_inside_strings_and_comments_does_not_count() -> None:
    brackets = "[" * 300
    text = (f'version = 2\n# {brackets}\nb = "{brackets}"\nc = \'{brackets}\'\n'
            f'd = """\n{brackets}\n"""\nf = "\\"{brackets}"\ne = [[[1]]]\n')
    assert parse_containerd(text, "c.toml").version == 2


_EXCLUDED_HEAD = ("Protocol tcp Port Exclusion Ranges\n\nStart Port    End Port\n"
                  "----------    --------\n")


@pytest.mark.parametrize("number", ["123456", "9" * 22, "9" * 5_000])
def test_netsh_row_with_a_number_past_65535_is_refused_not_dropped(number: str) -> None:
    # A row of two numbers is a range whatever their size: read as a heading it was
    # dropped, and the node passed with one excluded range fewer.
    with pytest.raises(NodeConfigError) as caught:
        parse_netsh(f"{_EXCLUDED_HEAD}     30000       {number}\n", "ex.txt")
    assert caught.value.where == "ex.txt:5"
    assert "is outside 1 to 65535" in caught.value.reason
    assert len(caught.value.reason) < 200


def test_netsh_dynamic_count_past_65535_names_the_count() -> None:
    text = ("Protocol tcp Dynamic Port Range\n---------------------------------\n"
            "Start Port      : 49152\nNumber of Ports : 99999999999999999999999\n")
    with pytest.raises(NodeConfigError) as caught:
        parse_netsh(text, "dy.txt")
    assert caught.value.where == "dy.txt:4"
    assert "run past port 65535" in caught.value.reason


@pytest.mark.parametrize("value", ['"true"', "1", "{}"])
def test_cni_capability_that_is_not_a_boolean_is_refused(tmp_path: Path, value: str) -> None:
    # libcni decodes capabilities into map[string]bool (pkg/types/types.go NetConf): any
    # other value fails the whole file ("error parsing configuration"), so the network does
    # not load. Reading it as "not declared" blamed a dropped hostPort instead.
    path = tmp_path / "10-net.conflist"
    path.write_text('{"cniVersion": "1.0.0", "name": "n", "plugins": [\n'
                    f' {{"type": "win-bridge", "capabilities": {{"portMappings": {value}}}}}]}}\n')
    with pytest.raises(NodeConfigError) as caught:
        read_cni(str(path))
    assert caught.value.where == f"{path}:2"
    assert "capabilities.portMappings must be true or false" in caught.value.reason


def test_cni_capability_null_is_not_declared(tmp_path: Path) -> None:
    # JSON null into a Go bool leaves it false, without an error (encoding/json).
    path = tmp_path / "10-net.conflist"
    path.write_text('{"cniVersion": "1.0.0", "name": "n", "plugins": '
                    '[{"type": "win-bridge", "capabilities": {"portMappings": null}}]}\n')
    assert read_cni(str(path)).plugins[0].capabilities == frozenset()


# (file, the dns block of the plugin that makes the endpoint) as each file spells it: the
# keys in any case, since Go's encoding/json matches field names without regard to case.
STATIC_DNS = [
    ("azure-windows.conflist", "dns",
     (("10.0.0.10", "168.63.129.16"), "", ("svc.cluster.local",), ())),
    ("calico.conf", "dns", (("10.96.0.10",), "", ("svc.cluster.local",), ())),
    ("sdnbridge.conf", "dns", (("10.96.0.10",), "", ("svc.cluster.local",), ())),
    ("win-bridge-flannel.conf", "delegate_dns", (("10.96.0.10",), "", ("svc.cluster.local",), ())),
    ("win-overlay.conf", "dns", ((), "", (), ())),
    ("nat.conf", "dns", ((), "", (), ())),
]


@pytest.mark.parametrize(("name", "where", "block"), STATIC_DNS)
def test_each_cni_file_keeps_its_own_dns_block(
        name: str, where: str, block: tuple[tuple[str, ...], str, tuple[str, ...],
                                            tuple[str, ...]]) -> None:
    """CNI pkg/types DNS (nameservers, domain, search, options), decoded case-blind:
    calico's "DNS" and azure-vnet's "Nameservers" are the fields; flannel's block is its
    delegate's."""
    dns = getattr(read_cni(str(CNI / name)).plugins[0], where)
    assert (dns.nameservers, dns.domain, dns.search, dns.options) == block


def test_a_later_dns_key_merges_into_the_earlier_as_go_decodes_it(tmp_path: Path) -> None:
    """encoding/json decodes each key that folds to a field in turn into the same struct:
    "DNS" after "dns" replaces the fields it sets and keeps the others; null leaves a
    struct as it is and empties a list."""
    path = tmp_path / "10-net.conf"
    path.write_text('{"name": "n", "type": "win-bridge",\n'
                    ' "dns": {"nameservers": ["10.0.0.10"], "search": ["a.example"],'
                    ' "domain": "d.example", "options": ["ndots:2"]},\n'
                    ' "DNS": {"Search": ["b.example"], "OPTIONS": null, "Domain": null},\n'
                    ' "Dns": null}\n', encoding="utf-8")
    dns = read_cni(str(path)).plugins[0].dns
    assert (dns.nameservers, dns.domain, dns.search, dns.options) == (
        ("10.0.0.10",), "d.example", ("b.example",), ())


@pytest.mark.parametrize(("body", "line", "message"), [
    ('"dns": ["10.0.0.10"]', 3, "dns must be an object"),
    ('"dns": {"nameservers": "10.0.0.10"}', 3, "dns.nameservers must be a list of strings"),
    ('"DNS": {"Search": ["a", 1]}', 3, "DNS.Search must be a list of strings"),
    ('"dns": {"domain": ["a"]}', 3, "dns.domain must be a string"),
])
def test_a_dns_block_go_cannot_decode_is_refused_at_its_line(
        tmp_path: Path, body: str, line: int, message: str) -> None:
    """libcni decodes each plugin's configuration into types.PluginConf, dns included
    (libcni/conf.go NetworkPluginConfFromBytes): a value of another type fails the file."""
    path = tmp_path / "10-net.conflist"
    path.write_text('{"cniVersion": "1.0.0", "name": "n", "plugins": [\n'
                    ' {"type": "win-bridge",\n'
                    f'  {body}}}]}}\n', encoding="utf-8")
    with pytest.raises(NodeConfigError) as caught:
        read_cni(str(path))
    assert caught.value.where == f"{path}:{line}"
    assert caught.value.reason.startswith(f"{message}: containerd's CNI loader")
    assert "loads no network" in caught.value.reason


def test_a_delegates_dns_block_go_cannot_decode_fails_every_pod(tmp_path: Path) -> None:
    """flannel hands the delegate object on as written; the delegate decodes it at each
    pod's ADD (types.NetConf), so the file loads and no sandbox starts."""
    path = tmp_path / "10-flannel.conf"
    path.write_text('{"name": "cbr0", "type": "flannel", "delegate": {\n'
                    ' "type": "win-bridge",\n "dns": {"nameservers": [1]}}}\n',
                    encoding="utf-8")
    with pytest.raises(NodeConfigError) as caught:
        read_cni(str(path))
    assert caught.value.where == f"{path}:3"
    assert caught.value.reason == (
        "dns.nameservers must be a list of strings: flannel's delegate decodes it (CNI's "
        "types.DNS) when each pod's network is set up, and fails, so no pod sandbox of the "
        "node starts")


def test_two_of_a_kind_name_what_they_are_and_where(tmp_path: Path) -> None:
    # "a second node file for one node (the first was n.json)" for two Node objects in
    # one List said neither that they are Node objects nor that both are in that file.
    both = tmp_path / "nodes.json"
    both.write_text('{"kind": "List", "items": [\n'
                    '{"kind": "Node", "metadata": {"name": "a"}},\n'
                    '{"kind": "Node", "metadata": {"name": "b"}}]}\n', encoding="utf-8")
    (tmp_path / "a.toml").write_text("version = 2\n", encoding="utf-8")
    (tmp_path / "b.toml").write_text("version = 3\n", encoding="utf-8")
    found = read_node([str(tmp_path)])
    assert sorted(str(e) for e in found.errors) == [
        f"{tmp_path / 'b.toml'}: a second containerd config.toml for one node (the first "
        f"is {tmp_path / 'a.toml'}); give one node's files",
        f"{tmp_path / 'nodes.json'}: a second Node object for one node (the first is "
        "earlier in this file); give one node's files",
    ]


@pytest.mark.slow  # a bound checked at scale: time over a large generated file
def test_a_flags_file_of_one_long_word_is_read_in_bounded_time(tmp_path: Path) -> None:
    # shlex builds each word a character at a time by string concatenation: one 1.3 MB
    # --feature-gates word took 29 s, a 16 MiB file (under the node limit) about an hour.
    # In a child process with a timeout: a hang fails the test instead of the suite.
    import subprocess
    import sys

    gates = ",".join(f"Gate{i}=true" for i in range(250_000))  # 3.4 MB
    path = tmp_path / "kubelet.args"
    path.write_text(f"--feature-gates={gates} --v=2\n", encoding="utf-8")
    code = ("import sys\n"
            "from kubelet_winnet.sources.node.kube import read_flags\n"
            "flags = read_flags(sys.argv[1])\n"
            "print(len(flags.gates), flags.gates['Gate249999'])\n")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.stdout.split() == ["250000", "(True,", "1)"], done.stderr


@given(st.text(alphabet=" \t'\"\\=-,abc:", max_size=40))
def test_flag_words_split_as_posix_shlex_does(line: str) -> None:
    """POSIX sh quoting (shlex.split(posix=True), the reference on short lines): quotes,
    backslash pairs, whitespace; the same words, or the same refusal."""
    import shlex

    from kubelet_winnet.sources.node.kube import _split

    try:
        expected: list[str] | None = shlex.split(line, posix=True)
    except ValueError:
        expected = None
    try:
        got: list[str] | None = _split(line)
    except ValueError:
        got = None
    assert got == expected


def test_documents_that_are_not_node_files_are_one_note_per_file(tmp_path: Path) -> None:
    # A cluster dump given by mistake made one note per object: 20,000 lines for 20,000
    # pods. One per file, with the count and the kinds.
    dump = tmp_path / "dump.yaml"
    dump.write_text("".join(f"---\nkind: Pod\nmetadata: {{name: p{i}}}\n" for i in range(500))
                    + "---\nkind: Service\nmetadata: {name: s}\n", encoding="utf-8")
    (tmp_path / "kp.yaml").write_text("kind: KubeProxyConfiguration\nmode: ipvs\n---\n"
                                      "kind: ConfigMap\n", encoding="utf-8")
    found = read_node([str(tmp_path)])
    assert found.skipped == [
        f"{dump}: 501 documents are not node files (kinds 'Pod', 'Service')",
        f"{tmp_path / 'kp.yaml'}#2: not a node file (kind 'ConfigMap')",
    ]


def test_a_directory_search_stops_at_the_file_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `node /` listed the whole tree before refusing it: the search must stop as soon as
    # the bound is passed, without listing the folders after it.
    import os

    from kubelet_winnet.sources import node as nodefiles

    for folder, count in (("a", 600), ("b", 600), ("c", 1)):
        (tmp_path / folder).mkdir()
        for index in range(count):
            (tmp_path / folder / f"{index}.txt").write_bytes(b"")
    listed: list[str] = []
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        listed.append(os.path.basename(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    found = read_node([str(tmp_path)])
    assert "c" not in listed
    (error,) = found.errors
    assert error.where == str(tmp_path)
    assert f"more than {nodefiles.MAX_FILES} files" in str(error)
    assert "nothing under it was read" in str(error)
    assert found.files == 0 and found.skipped == []


def test_a_tree_of_empty_folders_is_refused_at_the_entry_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kubelet_winnet.sources import node as nodefiles

    monkeypatch.setattr(nodefiles, "MAX_ENTRIES", 50)
    for index in range(60):
        (tmp_path / f"d{index}").mkdir()
    found = read_node([str(tmp_path)])
    (error,) = found.errors
    assert "more than 1000 files or 50 entries" in str(error)


def test_a_folder_that_cannot_be_listed_is_named(tmp_path: Path) -> None:
    import os

    if os.geteuid() == 0:
        pytest.skip("root lists every folder: the unreadable folder cannot be made")
    (tmp_path / "kp.yaml").write_text("kind: KubeProxyConfiguration\nmode: ipvs\n")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        found = read_node([str(tmp_path)])
    finally:
        locked.chmod(0o700)
    assert found.proxy is not None
    assert [str(e) for e in found.errors] == [f"{locked}: cannot read: Permission denied"]


@pytest.mark.parametrize(("text", "line"), [
    ("version = 2\n" + ".".join(["a"] * 25_000) + " = 1\n", 2),  # 50 KB: gigabytes before
    ("version = 2\n\n[" + ".".join(["p"] * 25_000) + "]\n", 3),
    ("version = 2\nx = {" + ".".join(['"q"'] * 25_000) + " = 1}\n", 2),
    ('s = """\n\n\n"""\nx = {' + ".".join(["r"] * 200) + " = 1}\n", 5),
])
def test_a_dotted_key_of_many_parts_is_refused_before_tomllib(text: str, line: int) -> None:
    # tomllib checks every prefix of a dotted key (quadratic in its parts), and the key
    # lines kept every prefix (25,000 parts: gigabytes). Each part nests one table.
    with pytest.raises(NodeConfigError) as caught:
        parse_containerd(text, "c.toml")
    assert caught.value.where == f"c.toml:{line}"
    assert caught.value.reason == "nested deeper than 100 levels (raise the limit with --max-depth)"


def test_dots_in_values_strings_and_comments_are_not_key_parts() -> None:
    dotted = ".".join(["x"] * 300)
    text = (f"version = 2\n# {dotted}\nfloats = [{', '.join(['1.5'] * 300)}]\n"
            f"name = '{dotted}'\nwhen = 1979-05-27T07:32:00.999\n"
            f"[plugins.'io.containerd.grpc.v1.cri'.cni]\nconf_dir = \"{dotted}\"\n")
    config = parse_containerd(text, "c.toml")
    assert config.conf_dir is not None and config.conf_dir.value == dotted
    assert config.conf_dir.line == 7


def test_key_lines_of_quoted_and_dotted_keys() -> None:
    text = ("version = 2\n"
            "[plugins]\n"
            "  'io.containerd.grpc.v1.cri'.containerd.default_runtime_name = \"hv\"\n"
            "  [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.hv]\n"
            "    options = { SandboxIsolation = 1 }\n")
    config = parse_containerd(text, "c.toml")
    assert config.default_runtime_name is not None and config.default_runtime_name.line == 3
    (table,) = config.runtimes
    assert (table.name, table.isolation, table.line) == ("hv", "hyperv", 4)


def test_a_memory_error_while_reading_is_one_line_not_a_traceback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from kubelet_winnet.cli import main
    from kubelet_winnet.sources import node as nodefiles

    def exhausted(*_: object) -> None:
        raise MemoryError

    monkeypatch.setattr(nodefiles, "parse_containerd", exhausted)
    (tmp_path / "config.toml").write_text("version = 2\n", encoding="utf-8")
    status = main(["node", str(tmp_path / "config.toml")])
    _, err = capsys.readouterr()
    assert status == 2 and "Traceback" not in err
    assert err.splitlines()[0] == (
        f"kubelet-winnet: error: {tmp_path / 'config.toml'}: too large to read in this "
        "process's memory; give the node's own file")


def test_a_node_file_past_the_node_limit_is_refused_with_the_limit(tmp_path: Path) -> None:
    from kubelet_winnet.sources.node import NODE_LIMITS

    path = tmp_path / "config.toml"
    path.write_bytes(b"version = 2\n" + b"# padding\n" * (NODE_LIMITS.max_bytes // 10))
    found = read_node([str(path)])
    (error,) = found.errors
    assert f"larger than {NODE_LIMITS.max_bytes} bytes" in str(error)
    assert NODE_LIMITS.max_bytes == 1024 * 1024


# --- CNI files as libcni reads them ---------------------------------------------------------


_CNI = '{\n  "cniVersion": "0.3.0",\n  "name": "azure",\n  "type": "azure-vnet"\n}\n'


def _refusal(path: Path) -> NodeConfigError:
    with pytest.raises(NodeConfigError) as caught:
        read_cni(str(path))
    reason = caught.value.reason
    assert "containerd's CNI loader (libcni, Go's encoding/json) refuses the file" in reason
    assert "loads no network" in reason
    return caught.value


def test_a_cni_file_after_a_utf8_byte_order_mark_does_not_load(tmp_path: Path) -> None:
    path = tmp_path / "10-azure.conf"
    path.write_bytes(codecs.BOM_UTF8 + _CNI.encode())
    refused = _refusal(path)
    assert refused.where == f"{path}:1"
    assert refused.reason.startswith("starts with a UTF-8 byte order mark (Go: \"invalid "
                                     "character 'ï' looking for beginning of value\")")
    assert refused.reason.endswith("save it as UTF-8 without the mark")


@pytest.mark.parametrize("name", ["10-azure.conf", "10-azure.conflist", "10-azure.json"])
def test_a_cni_file_written_in_yaml_does_not_load(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("cniVersion: 0.3.0\nname: azure\ntype: azure-vnet\n", encoding="utf-8")
    found = read_node([str(path)])
    assert found.cni == []
    (error,) = found.errors
    assert error.where == str(path)
    assert error.reason.startswith("written in YAML, not JSON: containerd's CNI loader")
    assert error.reason.endswith("write it as JSON")


def test_a_cni_network_in_a_yaml_file_is_never_loaded(tmp_path: Path) -> None:
    path = tmp_path / "cni.yaml"
    path.write_text(_CNI, encoding="utf-8")
    found = read_node([str(path)])
    assert found.cni == []
    (error,) = found.errors
    assert "its CNI loader lists only .conf, .conflist and .json files" in str(error)


def test_a_cni_conf_indented_with_no_break_spaces_names_the_character(tmp_path: Path) -> None:
    path = tmp_path / "10-azure.conf"
    path.write_text(_CNI.replace('  "name"', '\u00a0\u00a0"name"'), encoding="utf-8")
    refused = _refusal(path)
    assert refused.where == f"{path}:3"
    assert refused.reason.startswith("a no-break space (U+00A0) at column 1, where JSON allows "
                                     "only spaces, tabs and line breaks")
    assert "YAML" not in refused.reason


@pytest.mark.parametrize(("text", "reason"), [
    ('{"cniVersion": "0.3.0", "name": "n", "type": "nat", "mtu": NaN}',
     "not JSON (NaN is not a JSON value)"),
    ('{"cniVersion": "0.3.0", "name": "n", "type": "nat",}', "not JSON (Expecting property"),
])
def test_what_go_json_refuses_is_refused(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "n.conf"
    path.write_text(text, encoding="utf-8")
    assert _refusal(path).reason.startswith(reason)


def test_a_deeply_nested_cni_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "n.conf"
    path.write_text('{"name": "n", "type": "nat", "x": ' + "[" * 200_000 + "]" * 200_000 + "}",
                    encoding="utf-8")
    with pytest.raises(NodeConfigError) as caught:
        read_cni(str(path))
    assert "nested deeper than" in caught.value.reason


@pytest.mark.parametrize(("name", "text", "line"), [
    ("10-flannel.conf", '{\n  "name": "{{ .Values.network }}",\n  "type": "flannel"\n}\n', 2),
    ("config.toml", "version = 2\n[plugins]\n  sandbox = \"{{ .PauseImage }}\"\n", 3),
    ("kubelet.yaml", "kind: KubeletConfiguration\nfeatureGates:\n{{- range .Gates }}\n", 3),
    ("flags.txt", "--feature-gates={{ join .Gates \",\" }}\n", 1),
])
def test_a_template_is_said_to_be_one_not_read_as_a_configuration(
        tmp_path: Path, name: str, text: str, line: int) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    found = read_node([str(path)])
    (error,) = found.errors
    assert error.where == f"{path}:{line}"
    assert error.reason.endswith("is a placeholder), not a configuration: give the file as "
                                 "the node has it, rendered")
    assert found.read_as == [(str(path), f"not read: {error.reason}")]


def test_braces_in_a_value_are_not_a_template(tmp_path: Path) -> None:
    path = tmp_path / "node.json"
    path.write_text('{"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n", '
                    '"annotations": {"a": "{{}} and {x}"}}}', encoding="utf-8")
    found = read_node([str(path)])
    assert found.errors == [] and found.node is not None


# --- netsh outputs ---------------------------------------------------------------------------


def test_netsh_outputs_are_split_by_protocol_heading() -> None:
    text = (_EXCLUDED_HEAD + "      5985        5985\n\n* - Administered port exclusions.\n\n"
            + _EXCLUDED_HEAD.replace("tcp", "udp") + "     50000       50059     *\n"
            + "\nProtocol udp Dynamic Port Range\n---------------------------------\n"
            "Start Port      : 49152\nNumber of Ports : 16384\n")
    outputs = parse_netsh(text, "x.txt")
    assert outputs is not None
    assert [(o.kind, o.protocol, o.line, [str(r) for r, _ in o.ranges]) for o in outputs] == [
        ("excluded", "tcp", 1, ["5985-5985"]),
        ("excluded", "udp", 9, ["50000-50059"]),
        ("dynamic", "udp", 15, ["49152-65535"])]
    assert all(r.protocol == o.protocol for o in outputs for r, _ in o.ranges)


def test_an_empty_excluded_output_is_read_and_its_protocol_kept() -> None:
    outputs = parse_netsh(_EXCLUDED_HEAD.replace("tcp", "udp") + "\n", "x.txt")
    assert outputs is not None
    ((kind, protocol, ranges),) = [(o.kind, o.protocol, o.ranges) for o in outputs]
    assert (kind, protocol, ranges) == ("excluded", "udp", ())


def test_rows_without_a_protocol_heading_are_taken_as_tcp_and_said_so() -> None:
    outputs = parse_netsh("Start Port    End Port\n----------    --------\n  900   901\n", "x.txt")
    assert outputs is not None
    (output,) = outputs
    assert (output.protocol, output.protocol_named) == ("tcp", False)
    assert output.describe() == ("netsh TCP (no heading names the protocol: taken as TCP) "
                                 "excluded port ranges (1 range)")


def test_a_netsh_file_of_more_rows_than_ports_is_refused_at_the_bound() -> None:
    from kubelet_winnet.sources.node.netsh import MAX_ROWS

    text = _EXCLUDED_HEAD + "  5985  5985\n" * (MAX_ROWS + 1)
    with pytest.raises(NodeConfigError) as caught:
        parse_netsh(text, "x.txt")
    assert caught.value.where == f"x.txt:{MAX_ROWS + 5}"
    assert caught.value.reason == (f"more than {MAX_ROWS} port ranges in one file: netsh "
                                   "lists at most one per port")


def test_a_cni_json_file_with_a_no_break_space_is_refused_as_cni(tmp_path: Path) -> None:
    # YAML reads U+00A0 into the key (" cniVersion"): the file was "not a node file".
    path = tmp_path / "10-azure.json"
    path.write_text(_CNI.replace('  "cniVersion"', '\u00a0"cniVersion"'), encoding="utf-8")
    found = read_node([str(path)])
    (error,) = found.errors
    assert error.where == f"{path}:2"
    assert error.reason.startswith("a no-break space (U+00A0) at column 1")


def test_a_refused_cni_file_first_in_name_order_leaves_the_node_without_a_network(
        tmp_path: Path) -> None:
    # go-cni loadFromConfDir returns at the first file it cannot load.
    good = tmp_path / "20-azure.conflist"
    good.write_text((CNI / "azure-windows.conflist").read_text(encoding="utf-8"),
                    encoding="utf-8")
    (tmp_path / "10-azure.conf").write_bytes(codecs.BOM_UTF8 + _CNI.encode())
    found = read_node([str(tmp_path)])
    assert len(found.errors) == 1 and found.network is None
    (tmp_path / "10-azure.conf").rename(tmp_path / "30-azure.conf")
    found = read_node([str(tmp_path)])
    assert len(found.errors) == 1
    assert found.network is not None and found.network.source == str(good)


# --- lines as editors count them (LF, CRLF and a bare CR each end one) -------------------

_BREAKS = {"LF": "\n", "CRLF": "\r\n", "CR": "\r"}


@pytest.mark.parametrize("brk", sorted(_BREAKS))
def test_node_file_lines_are_the_lines_editors_show(tmp_path: Path, brk: str) -> None:
    """The node readers counted LF only: a file saved with bare CR breaks put every
    mistake on line 1, where an editor shows it on line 3 (and CRLF after a CR read as
    two). Each mistake below is on line 3."""
    def written(name: str, text: str) -> str:
        path = tmp_path / f"{brk}-{name}"
        path.write_bytes(text.replace("\n", _BREAKS[brk]).encode("utf-8"))
        return str(path)

    cni = written("10-net.conflist", '{"name": "n",\n "type": "nat",\n "x": }\n')
    with pytest.raises(NodeConfigError) as caught:
        read_cni(cni)
    assert caught.value.where == f"{cni}:3"
    template = written("config.toml", 'version = 2\n# rendered by the node image\n'
                       'sandbox_image = "{{ .Values.pause }}"\n')
    (refused,) = read_node([template]).errors
    assert refused.where == f"{template}:3"
    assert refused.reason.startswith("a template ({{ .Values.pause }} is a placeholder)")
    with pytest.raises(NodeConfigError) as caught:
        parse_netsh((_EXCLUDED_HEAD.replace("\n\n", "\n") + "     30000       123456\n")
                    .replace("\n", _BREAKS[brk]), "ex.txt")
    assert caught.value.where == "ex.txt:4"
    flags = parse_flags("kube-proxy.exe\n--v=2\n--feature-gates=WinDSR=true\n".replace(
        "\n", _BREAKS[brk]), "p")
    assert flags.gates == {"WinDSR": (True, 3)}
    with pytest.raises(NodeConfigError) as caught:
        parse_flags("kube-proxy.exe\n--proxy-mode=kernelspace\n--enable-dsr=maybe\n"
                    .replace("\n", _BREAKS[brk]), "kp.args")
    assert caught.value.where == "kp.args:3"
    assert caught.value.reason == "--enable-dsr='maybe': expected true or false"


def test_a_deep_toml_nesting_after_bare_cr_breaks_is_at_the_line_editors_show() -> None:
    # TOML refuses a bare CR, but the nesting bound is counted before tomllib reads it
    text = "version = 2\r# x\ra = " + "[" * 200 + "]" * 200 + "\n"
    with pytest.raises(NodeConfigError) as caught:
        parse_containerd(text, "c.toml")
    assert caught.value.where == "c.toml:3"


def test_a_node_file_replaced_by_a_fifo_after_the_search_is_an_error_not_a_hang(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder's search listed excluded.txt as a regular file; a FIFO in its place when
    it was read blocked `node` (and `audit --node-config`) for ever."""
    import os

    from kubelet_winnet import sources
    from tests.strategies import without_waiting_on

    (tmp_path / "kp.yaml").write_text("kind: KubeProxyConfiguration\nmode: ipvs\n")
    fifo = tmp_path / "excluded.txt"
    fifo.write_text(_EXCLUDED_HEAD + "     30000       30099\n")
    walk = sources.node._walk

    def walk_then_swap(*args: object) -> object:
        listed = walk(*args)  # type: ignore[arg-type]
        fifo.unlink()
        os.mkfifo(fifo)
        return listed

    monkeypatch.setattr(sources.node, "_walk", walk_then_swap)
    found = without_waiting_on([fifo], lambda: read_node([str(tmp_path)]))
    assert found.proxy is not None and found.proxy.mode == ("ipvs", 2)
    assert [str(e) for e in found.errors] == [
        f"{fifo}: cannot read: a FIFO, not a regular file, when opened"]


@pytest.mark.parametrize("name", ["kp.yaml", "10-net.conflist"])
def test_a_fifo_named_as_a_node_file_is_read_once_not_waited_on_again(
        tmp_path: Path, name: str) -> None:
    """A FIFO named as a node file (`node <(...)` under a .yaml or CNI name) was read
    twice: the second open waited for a writer that had gone, for ever."""
    import os
    import threading

    from tests.strategies import without_waiting_on

    fifo = tmp_path / name
    os.mkfifo(fifo)
    text = ("kind: KubeProxyConfiguration\nmode: ipvs\n" if name.endswith(".yaml") else
            '{"cniVersion": "1.0.0", "name": "n", "plugins": [{"type": "nat"}]}\n')

    def feed() -> None:
        with fifo.open("w", encoding="utf-8") as out:
            out.write(text)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    found = without_waiting_on([fifo], lambda: read_node([str(fifo)]))
    writer.join(10)
    assert not found.errors, found.errors
    if name.endswith(".yaml"):
        assert found.proxy is not None and found.proxy.mode == ("ipvs", 2)
    else:
        assert [network.name for network in found.cni] == ["n"]


@pytest.mark.parametrize(("where", "file", "line"), [
    ("C:/k/config.toml:12", "C:/k/config.toml", 12),  # a drive's colon is not the line's
    ("excluded_ports[2]", None, None),  # a field of NodeFacts names no file
    ("handlers['a:b']", None, None),
    ("C:/k/cni.conf", None, None),
])
def test_a_node_config_error_gives_its_file_and_line_apart(where: str, file: str | None,
                                                          line: int | None) -> None:
    error = NodeConfigError(where, "why")
    assert (error.file, error.line) == (file, line)
