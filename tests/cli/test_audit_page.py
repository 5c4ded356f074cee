"""``audit -o html`` and ``node -o html`` (cli/output/audit_page.py): one self-contained page,
loaded in a real browser (Debian's ``chromium``, headless).

The cluster below is written for these tests; what each pod gets is restated from the
rules (docs/audit.md): containerd applies hostNetwork only with host_process, so a
hostNetwork pod that is not HostProcess is IGNORED (rule host-network-ignored); a
HostProcess pod whose RuntimeClass's handler is runhcs-wcow-hypervisor on containerd 2.3.3+
(hcsshim PR #2531) has NO-NETWORK (rule host-process-hyperv-no-network); a pod mixing
HostProcess and other containers is refused (host-process-mixed); a pod without a node
has an unknown outcome.
"""

from __future__ import annotations

import html.parser
import json
import os
import re
import struct
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubelet_winnet.cli import main
from tests.strategies import REPO_ROOT, require_tool, running_node

SCRIPT_NAME = "<script>alert(1)</script>"
NODE_DATA = REPO_ROOT / "tests" / "data" / "node" / "nodes"


def node(name: str, os_name: str, kubelet: str, runtime: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"nodeInfo": {"operatingSystem": os_name, "kubeletVersion": kubelet,
                                    "containerRuntimeVersion": runtime}}}


def pod(namespace: str, name: str, node_name: str | None, *, host_network: bool = False,
        host_process: list[bool] | None = None, runtime_class: str | None = None,
        ) -> dict[str, Any]:
    flags = host_process or [False]
    spec: dict[str, Any] = {"containers": [
        {"name": f"c{i}", "image": "mcr.microsoft.com/x",
         **({"securityContext": {"windowsOptions": {"hostProcess": True}}} if hp else {})}
        for i, hp in enumerate(flags)]}
    if node_name:
        spec["nodeName"] = node_name
    else:
        spec["nodeSelector"] = {"kubernetes.io/os": "windows"}
    if host_network:
        spec["hostNetwork"] = True
    if runtime_class:
        spec["runtimeClassName"] = runtime_class
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


ITEMS = [
    {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "isolated"},
     "handler": "runhcs-wcow-hypervisor"},
    node("win-a", "windows", "v1.32.6", "containerd://1.7.27"),
    node("win-h", "windows", "v1.34.1", "containerd://2.3.3"),
    node("lin-1", "linux", "v1.34.1", "containerd://2.1.0"),
    pod("web", "iis-host", "win-a", host_network=True),
    pod("kube-system", "cni", "win-a", host_network=True, host_process=[True]),
    pod("web", "plain", "win-a"),
    pod("infra", "hp-hyperv", "win-h", host_network=True, host_process=[True],
        runtime_class="isolated"),
    pod("web", SCRIPT_NAME, "win-h", host_network=True),
    pod("infra", "mixed", "win-a", host_network=True, host_process=[True, False]),
    pod("web", "pending", None, host_network=True),
    pod("web", "linux-app", "lin-1", host_network=True),
]
# What each listed pod shows (from the rules above); cni and plain have nothing to say.
LISTED = {
    "iis-host": ("IGNORED", "host-network-ignored"),
    "hp-hyperv": ("NO-NETWORK", "host-process-hyperv-no-network"),
    SCRIPT_NAME: ("IGNORED", "host-network-ignored"),
    "mixed": ("refused", "host-process-mixed"),
    "pending": ("unknown", "host-network-ignored"),
}
QUIET = ("cni", "plain")


def write_dump(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}),
                    encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


@pytest.fixture
def dump(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "cluster.json", ITEMS)


@pytest.fixture
def page(dump: Path, capsys: pytest.CaptureFixture[str]) -> str:
    status, out, err = run(capsys, "audit", "-f", str(dump), "-o", "html")
    assert status == 1, err  # host-network-ignored is a warning: --fail-on warning
    return out


class _Text(html.parser.HTMLParser):
    """The page's text, each element's text, and every URL attribute."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.urls: list[str] = []
        self.tags: set[str] = set()
        self.rows: list[str] = []
        self._row: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.urls += [v or "" for k, v in attrs if k in ("src", "href", "action", "srcset",
                                                          "poster", "data")]
        if tag == "tr":
            self._row = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr" and self._row is not None:
            self.rows.append(" ".join(self._row))
            self._row = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._row is not None:
            self._row.append(data)


def parsed(document: str) -> _Text:
    parser = _Text()
    parser.feed(document)
    parser.close()
    return parser


# --- the page, as written --------------------------------------------------------------------


def test_page_names_every_listed_pod_with_its_verdict_and_rule(page: str) -> None:
    parser = parsed(page)
    text = " ".join(parser.text)
    for name, (verdict, rule) in LISTED.items():
        row = next(r for r in parser.rows if name in r)
        assert f"hostNetwork {verdict}" in row, (name, row)
        assert rule in row, (name, row)
    for name in QUIET:  # counted, not listed
        assert not any(name in r for r in parser.rows)
    assert "2 pods with nothing to say" in text
    assert "linux-app" not in text


def test_pods_are_grouped_by_node_then_rule(page: str) -> None:
    order = [m.group(1) for m in re.finditer(r'<h3 id="pods-[^"]+">([^<]+)', page)]
    assert [o.strip() for o in order] == ["win-a", "win-h", "pods without a node"]
    win_a = page[page.index('>win-a <a'):page.index('>win-h <a')]
    # The error rule (host-process-mixed) comes before the warning one.
    assert win_a.index("host-process-mixed") < win_a.index("host-network-ignored")


def test_summary_counts_and_node_cards(page: str) -> None:
    text = " ".join(" ".join(parsed(page).text).split())
    # 7 Windows pods (linux-app is on a Linux node); 3 not what they ask for
    # (iis-host and the script pod ignored, hp-hyperv without network, mixed refused: 4).
    assert "7 Windows pods" in text
    assert "4 pods whose networking is not what they ask for" in text
    assert "1 pod whose outcome is not known" in text
    assert "1 pod on Linux nodes" in text
    for card in ("win-a", "win-h"):
        assert re.search(rf'<article class="card" id="node-\d+"><h3>{card}</h3>', page)
    assert "containerd://2.3.3" in text and "v1.34.1" in text
    assert "runhcs-wcow-hypervisor (hyperv)" in text


def test_names_from_the_cluster_are_text(page: str) -> None:
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert SCRIPT_NAME in " ".join(parsed(page).text)


def test_page_loads_nothing(page: str) -> None:
    parser = parsed(page)
    assert all(url.startswith("#") for url in parser.urls), parser.urls
    assert not parser.tags & {"script", "link", "img", "iframe", "object", "embed", "video",
                              "audio", "source", "base", "form"}
    assert "url(" not in page and "@import" not in page
    assert ('<meta http-equiv="Content-Security-Policy" '
            "content=\"default-src 'none'; style-src 'unsafe-inline'\">") in page


def test_rule_pages_are_embedded_without_docs_url(page: str) -> None:
    from importlib import resources

    for rule in {r for _, r in LISTED.values()}:
        assert f'href="#rule-{rule}"' in page
        source = (resources.files("kubelet_winnet._lint") / "pages" / f"{rule}.md").read_text(
            encoding="utf-8")
        section = page[page.index(f'<details id="rule-{rule}">'):]
        first_line = source.splitlines()[0]
        assert html_escape(first_line) in section[:section.index("</details>")]


def html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def test_docs_url_links_each_rule(dump: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = "https://docs.example/winnet/rules/"
    status, out, _ = run(capsys, "audit", "-f", str(dump), "-o", "html", "--docs-url", base)
    urls = parsed(out).urls
    external = {u for u in urls if not u.startswith("#")}
    assert external == {f"{base}{rule}.md" for _, rule in LISTED.values()}
    assert '<details id="rule-' not in out
    status, out, err = run(capsys, "audit", "-f", str(dump), "-o", "html", "--docs-url",
                           "ftp://x")
    assert (status, out) == (2, "")
    assert err.startswith("kubelet-winnet: error: --docs-url 'ftp://x': expected an absolute "
                          "http or https address")


def test_colours_meet_wcag_aa_contrast() -> None:
    """WCAG 2.2, "contrast ratio" and "relative luminance" (sRGB, 0.03928 threshold)."""
    from kubelet_winnet.cli.output.audit_page import PALETTE

    def luminance(colour: str) -> float:
        channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
                   for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    for name, (fg, bg) in PALETTE.items():
        high, low = sorted((luminance(fg), luminance(bg)), reverse=True)
        assert (high + 0.05) / (low + 0.05) >= 4.5, name


# --- exit status, --fail-on, --output-file ------------------------------------------------


@pytest.mark.parametrize("fail_on", ["warning", "error", "info", "never"])
def test_exit_status_is_the_other_outputs(dump: Path, capsys: pytest.CaptureFixture[str],
                                          fail_on: str) -> None:
    statuses = {run(capsys, "audit", "-f", str(dump), "-o", output, "--fail-on", fail_on)[0]
                for output in ("json", "html")}
    # mixed is an error finding: every threshold but never fails the run.
    assert statuses == {0 if fail_on == "never" else 1}


def test_nothing_read_is_one_line_and_no_page(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.json"
    status, out, err = run(capsys, "audit", "-f", str(missing), "-o", "html")
    assert (status, out) == (2, "")
    assert err == f"kubelet-winnet: error: {missing}: cannot read: No such file or directory\n"


def test_output_file_holds_the_page(dump: Path, tmp_path: Path, page: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "audit.html"
    status, out, _ = run(capsys, "audit", "-f", str(dump), "-o", "html",
                         "--output-file", str(target))
    assert (status, out) == (1, "")
    assert target.read_text(encoding="utf-8") == page
    status, out, err = run(capsys, "audit", "-f", str(dump), "-o", "html", "--output-file",
                           str(tmp_path / "no-such-dir" / "a.html"))
    assert (status, out) == (2, "")
    assert err == (f"kubelet-winnet: error: --output-file {tmp_path}/no-such-dir/a.html: "
                   "cannot write: No such file or directory\n")


# --- node files: audit --node-config and node -o html -------------------------------------

# tests/data/node/README.md: win-2025-a's files and the rules test_node.py restates for them.
WIN_2025_RULES = {"node-gate-stops-kubelet", "node-gate-locked", "node-option-removed",
                  "node-runtime-table-unread", "node-hyperv-host-process",
                  "node-host-port-dropped", "node-port-range", "node-pause-image"}


def test_node_config_fills_the_card(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    node_object = json.loads((NODE_DATA / "win-2025-a" / "node.json").read_text("utf-8"))
    path = write_dump(tmp_path / "c.json", [node_object, pod("web", "p", "win-2025-a",
                                                             host_network=True)])
    # Only this node's folder: a folder named after no node of the input is an input error.
    nodes = tmp_path / "nodes"
    nodes.mkdir()
    (nodes / "win-2025-a").symlink_to(NODE_DATA / "win-2025-a", target_is_directory=True)
    status, out, err = run(capsys, "audit", "-f", str(path), "-o", "html",
                           "--node-config", str(nodes))
    assert status == 1, err
    card = out[out.index("<h3>win-2025-a</h3>"):]
    card = card[:card.index("</article>")]
    for rule in WIN_2025_RULES:
        assert f'href="#rule-{rule}"' in card, rule
    assert "<s>" in card and "node-proxy-mode" in card  # ignored by the Node's annotation
    assert "its containerd config.toml" in card
    assert "hyperv, default" in card  # Hyper-V is its default runtime
    assert '<span class="b bad">dropped</span>' in card  # 0-flannel.conf: node-host-port-dropped


def test_a_host_port_the_node_drops_is_listed_under_its_node_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """With --node-config, a dropped hostPort is a finding of its row (the node rule
    node-host-port-dropped): the page lists the pod under that rule, as -o json counts it."""
    node_object = json.loads((NODE_DATA / "win-2025-a" / "node.json").read_text("utf-8"))
    web = pod("web", "ported", "win-2025-a")
    web["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8081}]
    path = write_dump(tmp_path / "c.json", [node_object, web])
    nodes = tmp_path / "nodes"
    nodes.mkdir()
    running_node(nodes)  # its kubelet and CNI plugins start
    status, page, err = run(capsys, "audit", "-f", str(path), "-o", "html",
                            "--node-config", str(nodes))
    json_status, out, _ = run(capsys, "audit", "-f", str(path), "-o", "json",
                              "--node-config", str(nodes))
    assert status == json_status == 1, err
    [row] = json.loads(out)["pods"]
    assert "node-host-port-dropped" in {f["rule"] for f in row["findings"]}
    text = parsed(page).text
    assert "ported" in text and "node-host-port-dropped" in text


def test_the_verdict_names_the_host_port_a_pod_does_not_get(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """A pod that asks for no hostNetwork but whose hostPort the node drops: its verdict
    is the port it does not get (a red badge), not a grey "hostNetwork not requested"."""
    node_object = json.loads((NODE_DATA / "win-2025-a" / "node.json").read_text("utf-8"))
    web = pod("web", "ported", "win-2025-a")
    web["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8081}]
    nodes = tmp_path / "nodes"
    nodes.mkdir()
    running_node(nodes)  # its kubelet and CNI plugins start
    _, page, _ = run(capsys, "audit", "-f", str(write_dump(tmp_path / "c.json",
                                                            [node_object, web])),
                     "-o", "html", "--node-config", str(nodes))
    row = row_text(parsed(page), "ported")
    assert "hostPort 8081 not mapped" in row and "not requested" not in row
    assert '<span class="b bad">hostPort 8081 not mapped</span>' in page


def test_node_uses_the_same_renderer(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "node", str(NODE_DATA / "win-2025-a"), "-o", "html")
    assert status == 1
    assert '<article class="card" id="node-0"><h3>win-2025-a</h3>' in out
    for rule in WIN_2025_RULES:
        assert f'<details id="rule-{rule}">' in out
    assert "HostProcess pod" in out  # the pod classes table
    assert all(u.startswith("#") for u in parsed(out).urls)


# --- in a real browser ---------------------------------------------------------------------


def chromium(*argv: str) -> subprocess.CompletedProcess[bytes]:
    """Debian's chromium, headless, as root in a container: no sandbox, no GPU, nothing
    that calls home, a profile of its own."""
    binary = require_tool("chromium", "apt-get install chromium")
    with tempfile.TemporaryDirectory(prefix="winnet-chromium-") as profile:
        return subprocess.run(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
             *argv], capture_output=True, timeout=180, check=False)


def test_the_browser_shows_every_node_pod_rule_and_verdict(page: str, tmp_path: Path) -> None:
    path = tmp_path / "audit.html"
    path.write_text(page, encoding="utf-8")
    done = chromium("--dump-dom", path.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout.decode("utf-8")
    parser = parsed(dom)
    text = " ".join(parser.text)
    for name in ("win-a", "win-h"):
        assert f">{name}</h3>" in dom
    for name, (verdict, rule) in LISTED.items():
        row = next(r for r in parser.rows if name in r)
        assert f"hostNetwork {verdict}" in row and rule in row, row
    assert "under the Hyper-V handler" in row_text(parser, "hp-hyperv")
    assert SCRIPT_NAME in text
    assert "<script" not in dom.lower()


def row_text(parser: _Text, name: str) -> str:
    return next(r for r in parser.rows if name in r)


def test_the_browser_takes_a_screenshot(page: str, tmp_path: Path) -> None:
    path = tmp_path / "audit.html"
    path.write_text(page, encoding="utf-8")
    shot = tmp_path / "audit.png"
    done = chromium("--window-size=1280,1600", f"--screenshot={shot}", path.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
    assert (width, height) == (1280, 1600)
    assert len(data) > 30_000  # a page of text and colour, not a blank one
    assert os.path.getsize(shot) == len(data)


def test_rows_past_the_bound_are_counted_in_their_group(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from kubelet_winnet.cli.output import audit_page

    monkeypatch.setattr(audit_page, "_GROUP_ROWS", 2)
    items = [ITEMS[1], *(pod("web", f"iis-{i}", "win-a", host_network=True) for i in range(5))]
    status, out, _ = run(capsys, "audit", "-f", str(write_dump(tmp_path / "d.json", items)),
                         "-o", "html")
    assert status == 1
    assert "(5 pods; the first 2 shown, -o json lists every one)" in out
    assert [n for n in (f"iis-{i}" for i in range(5)) if f"<b>{n}</b>" in out] == [
        "iis-0", "iis-1"]
    assert "5 pods whose networking is not what they ask for" in " ".join(
        " ".join(parsed(out).text).split())


@pytest.mark.parametrize("output", ["json", "csv", "text"])
def test_output_file_serves_every_format(dump: Path, tmp_path: Path, output: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    _, stdout, _ = run(capsys, "audit", "-f", str(dump), "-o", output)
    target = tmp_path / f"audit.{output}"
    status, out, _ = run(capsys, "audit", "-f", str(dump), "-o", output,
                         "--output-file", str(target))
    assert (status, out) == (1, "")
    assert target.read_text(encoding="utf-8") == stdout


_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "h4", "p", "div",
         "b", "dl", "dt", "dd", "article", "a", "span", "ul", "li", "table", "tr", "th", "td",
         "br", "small", "s", "details", "summary", "pre"}


@given(name=st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1,
                    max_size=60),
       node_name=st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1,
                         max_size=60))
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None,
          max_examples=25)
def test_any_printable_name_is_text_on_the_page(
    name: str, node_name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = [node(node_name, "windows", "v1.32.6", "containerd://1.7.27"),
             pod(name, name, node_name, host_network=True)]
    _, out, _ = run(capsys, "audit", "-f", str(write_dump(tmp_path / "d.json", items)),
                    "-o", "html")
    parser = parsed(out)
    assert parser.tags <= _TAGS
    (row,) = [r for r in parser.rows if "hostNetwork IGNORED" in r]
    assert row.startswith(f"{name}/ {name} ")
    assert f"<h3>{html_escape(node_name)}</h3>" in out.replace("&#x27;", "'").replace(
        "&quot;", '"')


def test_a_node_the_pods_name_but_the_input_lacks_gets_a_card(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lost = pod("web", "lost", "win-gone", host_network=True)
    lost["spec"]["nodeSelector"] = {"kubernetes.io/os": "windows"}  # audited without its node
    items = [node("win-bare", "windows", "", "containerd://1.7.27"), lost,
             pod("web", "bare", "win-bare", host_network=True)]
    status, out, _ = run(capsys, "audit", "-f", str(write_dump(tmp_path / "d.json", items)),
                         "-o", "html", "--kubelet-version", "1.31")
    assert status == 1
    gone = out[out.index("<h3>win-gone</h3>"):]
    assert "not in the input: its pods are judged as --kubelet-version" in \
        gone[:gone.index("</article>")]
    bare = out[out.index("<h3>win-bare</h3>"):]
    assert "reports no kubelet version: judged as --kubelet-version 1.31" in \
        bare[:bare.index("</article>")]


def test_the_browser_shows_what_becomes_of_each_pods_own_dns(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With --node-config each listed pod's verdict says what becomes of its own DNS
    settings in the text table's words, and the summary counts them. sigwin-1 here holds
    win-bridge-flannel.conf (no dns capability: its delegate's own block for every pod),
    win-2025-a its flannel to win-overlay (servers and searches, never options)."""
    nodes = tmp_path / "nodes"
    (nodes / "sigwin-1").mkdir(parents=True)
    running_node(nodes)  # its kubelet and CNI plugins start
    (nodes / "sigwin-1" / "cni.conf").symlink_to(
        NODE_DATA.parent / "cni" / "win-bridge-flannel.conf")
    objects = [json.loads((NODE_DATA / n / "node.json").read_text("utf-8"))
               for n in ("win-2025-a", "sigwin-1")]
    own = {"dnsPolicy": "None", "dnsConfig": {"nameservers": ["10.0.0.53"],
                                              "options": [{"name": "edns0"}]}}
    for name, node_name in (("dns-partly", "win-2025-a"), ("dns-ignored", "sigwin-1")):
        manifest = pod("web", name, node_name)
        manifest["spec"].update(own)
        objects.append(manifest)
    path = write_dump(tmp_path / "c.json", objects)
    _, out, err = run(capsys, "audit", "-f", str(path), "-o", "html", "--node-config",
                      str(nodes), "--fail-on", "never")
    assert "Traceback" not in err
    shown = tmp_path / "audit.html"
    shown.write_text(out, encoding="utf-8")
    done = chromium("--dump-dom", shown.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    parser = parsed(done.stdout.decode("utf-8"))
    assert "DNS settings partly applied" in row_text(parser, "dns-partly")
    ignored = row_text(parser, "dns-ignored")
    assert "DNS settings ignored" in ignored and "node-dns-dropped" in ignored
    assert "(nameservers 10.96.0.10; search svc.cluster.local)" in ignored
    text = " ".join(parser.text)
    assert "own DNS settings partly applied 1, ignored 1" in text
