"""The live source of ``audit`` (:mod:`kubelet_winnet.sources.cluster.source`) against a hostile API
server: the real ``kubernetes`` client talks to an HTTP server on 127.0.0.1 that this
module starts, which sends what no API server should: a body that
never ends, a gzip bomb, the same ``continue`` token again, a list that never ends, one
byte at a time. Each must end the run with one line on stderr and exit status 2, within
bounded time and memory.
"""

from __future__ import annotations

import gzip
import http.server
import json
import re
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubelet_winnet.cli import main
from kubelet_winnet.sources.cluster.source import MAX_PAGES, parse_timeout
from tests.strategies import cli_child, require

_SERVER_SECONDS = 150.0  # no handler loop of this server runs longer than this


def require_kubernetes() -> None:
    """The live path needs the ``kubernetes`` client (the ci extra): tests/strategies.py
    ``require`` skips with the reason outside CI and fails under it."""
    require("kubernetes")


@dataclass
class Page:
    """One response to a pod list request."""

    status: int = 200
    items: list[Any] = field(default_factory=list)
    token: str = ""  # "", "same" (the token just sent back), or any literal token
    framing: str = "length"  # length, chunked, endless, gzipbomb, trickle, short, junk
    delay: float = 0.0  # seconds between the bytes of a trickle


class _QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up on a hostile answer is what the tests want


class HostileApiServer:
    """Serves one Windows node, then ``script`` for the pod list requests in order (the
    last page repeats). Every loop is bounded by ``_SERVER_SECONDS`` and stops when the
    client goes away."""

    def __init__(self) -> None:
        self.script: list[Page] = [Page()]
        self.pod_requests = 0
        self.lock = threading.Lock()
        self.server = _QuietServer(("127.0.0.1", 0), self._handler())
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def play(self, *pages: Page) -> None:
        with self.lock:
            self.script = list(pages)
            self.pod_requests = 0

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _next(self) -> tuple[Page, int]:
        with self.lock:
            number = self.pod_requests
            self.pod_requests += 1
            return self.script[min(number, len(self.script) - 1)], number

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                query = urllib.parse.parse_qs(url.query)
                try:
                    if url.path == "/api/v1/nodes":
                        self._plain(200, json.dumps({"kind": "NodeList", "metadata": {},
                                                     "items": [WINDOWS_NODE]}).encode())
                    else:
                        page, number = api._next()
                        self._page(page, number, query.get("continue", [""])[0])
                except OSError:  # the client went away: what it does is under test
                    self.close_connection = True

            def _plain(self, status: int, body: bytes, *headers: tuple[str, str]) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _page(self, page: Page, number: int, sent: str) -> None:
                token = sent if page.token == "same" else page.token
                if page.token == "next":
                    token = f"t{number + 1}"
                body = json.dumps({"kind": "PodList", "apiVersion": "v1",
                                   "metadata": {"continue": token} if token else {},
                                   "items": page.items}).encode()
                if page.status != 200:  # a Status whose message forges lines
                    body = json.dumps({"kind": "Status", "status": "Failure", "message":
                                       FORGED_MESSAGE, "code": page.status}).encode()
                start = time.monotonic()
                if page.framing == "length":
                    self._plain(page.status, body)
                elif page.framing == "junk":
                    self._plain(page.status, body[: len(body) // 2] + b"\xff\x00{[")
                elif page.framing == "short":  # promises more than it sends, then closes
                    self.send_response(page.status)
                    self.send_header("Content-Length", str(len(body) + 100))
                    self.end_headers()
                    self.wfile.write(body)
                    self.close_connection = True
                elif page.framing == "gzipbomb":
                    self._plain(page.status, _BOMB, ("Content-Encoding", "gzip"))
                elif page.framing == "slowheaders":  # the status line one byte at a time
                    head = (f"HTTP/1.1 {page.status} OK\r\nContent-Length: {len(body)}\r\n"
                            "X-Padding: " + "p" * 200 + "\r\n\r\n").encode()
                    for byte in head:
                        if time.monotonic() - start > _SERVER_SECONDS:
                            break
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(page.delay)
                    self.close_connection = True
                elif page.framing == "trickle":
                    self.send_response(page.status)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    for byte in body:
                        if time.monotonic() - start > _SERVER_SECONDS:
                            break
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(page.delay)
                    self.close_connection = True
                else:  # chunked; "endless" never sends the last chunk
                    self.send_response(page.status)
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    head = body[:-2] + b","
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(head), head))
                    filler = b'{"metadata":{"name":"x","namespace":"y"}},' * 1500
                    while page.framing == "endless":
                        if time.monotonic() - start > _SERVER_SECONDS:
                            break
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(filler), filler))
                    self.wfile.write(b"2\r\n{}\r\n2\r\n]}\r\n0\r\n\r\n")
                    self.close_connection = page.framing == "endless"

        return Handler


# 64 MiB of spaces inside a JSON list, 64 KiB compressed (made once).
_BOMB = gzip.compress(b'{"kind":"PodList","items":[' + b" " * (64 * 1024 * 1024) + b"]}", 9)

FORGED_MESSAGE = "boom\x1b]0;retitled\x07\r\nkubelet-winnet: error: forged\u2028\x85x"

WINDOWS_NODE = {
    "metadata": {"name": "win-1", "labels": {"kubernetes.io/os": "windows"}},
    "status": {"nodeInfo": {"operatingSystem": "windows", "kubeletVersion": "v1.32.2",
                            "containerRuntimeVersion": "containerd://1.7.20"}},
}


def windows_pod(name: str, host_network: bool = False) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "apps"},
            "spec": {"nodeName": "win-1", "hostNetwork": host_network,
                     "containers": [{"name": "c", "image": "i"}]}}


@pytest.fixture(scope="module")
def hostile() -> Iterator[HostileApiServer]:
    require_kubernetes()
    server = HostileApiServer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def kubeconfig(hostile: HostileApiServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: hostile\n"
        f"clusters:\n- name: local\n  cluster:\n    server: http://127.0.0.1:{hostile.port}\n"
        "users:\n- name: u\n  user:\n    token: t\n"
        "contexts:\n- name: hostile\n  context:\n    cluster: local\n    user: u\n"
        "    namespace: apps\n",
        encoding="utf-8",
    )
    return path


def audit(kubeconfig: Path, capsys: pytest.CaptureFixture[str], *flags: str,
          ) -> tuple[int, str, list[str]]:
    status = main(["audit", "--kubeconfig", str(kubeconfig), "-o", "json", *flags])
    out, err = capsys.readouterr()
    return status, out, err.splitlines()


# --- regressions: each reproducer, its exit status, one line on stderr ---------------------


def test_a_good_list_still_pages(hostile: HostileApiServer, kubeconfig: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    hostile.play(Page(items=[windows_pod("a")], token="next"),
                 Page(items=[windows_pod("b", True)], framing="chunked", token="next"),
                 Page(items=[windows_pod("c")]))
    status, out, err = audit(kubeconfig, capsys, "--page-size", "1")
    assert err == [] and status == 1  # b's hostNetwork is ignored: a warning
    assert [p["name"] for p in json.loads(out)["pods"]] == ["a", "b", "c"]
    assert hostile.pod_requests == 3


def test_endless_body_is_one_line_at_the_byte_bound(
    hostile: HostileApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile.play(Page(framing="endless"))
    status, out, err = audit(kubeconfig, capsys, "--max-bytes", "2000000")
    assert status == 2 and len(err) == 1, err
    assert "sent more than 2000000 bytes for one page" in err[0]
    assert "lower --page-size, or raise --max-bytes" in err[0]
    assert json.loads(out)["summary"]["error"] in err[0]


def test_gzip_bomb_counts_the_bytes_it_inflates_to(
    hostile: HostileApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile.play(Page(framing="gzipbomb"))
    status, _, err = audit(kubeconfig, capsys, "--max-bytes", "1000000")
    assert status == 2 and len(err) == 1, err
    assert "sent more than 1000000 bytes for one page" in err[0]


@pytest.mark.parametrize("pages", [
    (Page(items=[windows_pod("a")], token="same"),),  # the token it was just sent
    (Page(token="A"), Page(token="B"), Page(token="A")),  # a cycle
])
def test_repeated_continue_token_is_one_line(
    hostile: HostileApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str],
    pages: tuple[Page, ...],
) -> None:
    hostile.play(Page(token="first"), *pages)
    status, _, err = audit(kubeconfig, capsys)
    assert status == 2 and len(err) == 1, err
    assert "sent a continue token it had sent before" in err[0]
    assert "the list would never end" in err[0]
    assert hostile.pod_requests == len(pages) + 1


def test_a_list_that_never_ends_stops_at_the_page_cap(
    hostile: HostileApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kubelet_winnet.sources.cluster import source as cluster

    monkeypatch.setattr(cluster, "MAX_PAGES", 30)
    hostile.play(Page(token="next"))  # a fresh token and no items, forever
    status, _, err = audit(kubeconfig, capsys, "--page-size", "7")
    assert status == 2 and len(err) == 1, err
    assert "did not end the list after 30 pages" in err[0]
    assert "raise --page-size if the cluster holds more than 210 pods" in err[0]
    assert hostile.pod_requests == 30


def test_a_server_message_cannot_forge_a_line(
    hostile: HostileApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile.play(Page(status=500))
    status, out, err = audit(kubeconfig, capsys)
    assert status == 2 and len(err) == 1, err
    assert err[0].isprintable() and "HTTP 500" in err[0]
    assert "boom\\x1b]0;retitled\\x07" in err[0] and "forged\\u2028\\x85x" in err[0]
    status, out, err = audit(kubeconfig, capsys, "-o", "text")
    assert all(line.isprintable() for line in out.splitlines()), out


def test_error_status_with_an_endless_body_is_one_line(
    hostile: HostileApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The kubernetes client reads an error status's whole body before it raises; the
    body it may read is bounded (64 KiB), so this ends at once, not when memory does."""
    hostile.play(Page(status=500, framing="endless"))
    start = time.monotonic()
    status, _, err = audit(kubeconfig, capsys)
    assert time.monotonic() - start < 30
    assert status == 2 and len(err) == 1, err
    assert "answered HTTP 500" in err[0] and err[0].isprintable()


def test_page_cap_is_far_above_what_kubernetes_is_tested_with() -> None:
    # sig-scalability: 150,000 pods per cluster; at kubectl's chunk size of 500.
    assert MAX_PAGES * 500 >= 30 * 150_000


@pytest.mark.parametrize("framing", ["trickle", "slowheaders"])
def test_trickle_ends_at_the_request_timeout(
    hostile: HostileApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str],
    framing: str,
) -> None:
    hostile.play(Page(items=[windows_pod("a")], framing=framing, delay=0.2))
    start = time.monotonic()
    status, out, err = audit(kubeconfig, capsys, "--request-timeout", "1500ms")
    assert time.monotonic() - start < 20
    assert status == 2 and len(err) == 1, err
    assert re.search(r"did not send the whole response within --request-timeout 1\.5s "
                     r"\(listing pods in namespace \"apps\", page 1\)", err[0]), err
    assert json.loads(out)["summary"]["error"] in err[0]


def test_endless_body_child_bounds(hostile: HostileApiServer, kubeconfig: Path) -> None:
    """With the default bounds (128 MiB a page): ends with one line and exit 2, memory
    bounded by the page bound, not by what the server sends."""
    hostile.play(Page(framing="endless"))
    run = cli_child(["audit", "--kubeconfig", str(kubeconfig)], timeout=120)
    assert run.status == 2 and len(run.err_lines) == 1, run.err_lines
    assert "sent more than 134217728 bytes for one page" in run.err_lines[0]
    assert run.seconds < 100
    assert run.peak_mb < 450  # the page (128 MiB, grown) and the interpreter


@pytest.mark.parametrize("page", [Page(token="same"),
                                  Page(items=[windows_pod("a")], framing="trickle",
                                       delay=1.0),
                                  Page(status=500, framing="endless")])
def test_repeat_and_trickle_child_bounds(hostile: HostileApiServer, kubeconfig: Path,
                                         page: Page) -> None:
    hostile.play(Page(token="first"), page)
    run = cli_child(["audit", "--kubeconfig", str(kubeconfig), "--request-timeout", "2s"],
                    timeout=120)
    assert run.status == 2 and len(run.err_lines) == 1, run.err_lines
    assert run.seconds < 60
    assert run.peak_mb < 250


# --- --request-timeout as kubectl reads it --------------------------------------------------


@pytest.mark.parametrize(("text", "seconds"), [
    ("0", 0.0), ("30", 30.0), ("1s", 1.0), ("2m", 120.0), ("3h", 10800.0),
    ("1m30s", 90.0), ("1.5h", 5400.0), ("500ms", 0.5), (".5s", 0.5), ("+2s", 2.0),
    ("10us", 1e-5), ("7\u00b5s", 7e-6),
])
def test_request_timeout_is_read_as_kubectl_reads_it(text: str, seconds: float) -> None:
    assert parse_timeout(text) == pytest.approx(seconds)


@pytest.mark.parametrize(("text", "needle"), [
    ("", "whole seconds, or a number with a unit"), ("1.5", "a number with a unit"),
    ("1x", "a number with a unit"), ("s", "a number with a unit"),
    ("1e3s", "a number with a unit"), ("-1s", "must not be negative"),
    ("99999999999999999999", "longer than a Go duration"),
])
def test_bad_request_timeout_is_one_line(text: str, needle: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["audit", f"--request-timeout={text}"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and needle in err[0] and "--request-timeout" in err[0], err


# --- fuzz: what a hostile server may send, the run ends typed, bounded, one line -------------

_ITEMS = st.lists(
    st.one_of(
        st.builds(windows_pod, st.text("abc", min_size=1, max_size=3), st.booleans()),
        st.dictionaries(st.sampled_from(["metadata", "spec", "kind"]),
                        st.one_of(st.none(), st.integers(), st.text(max_size=3),
                                  st.lists(st.integers(), max_size=2)), max_size=3),
    ),
    max_size=3,
)
_PAGES = st.builds(
    Page,
    status=st.sampled_from([200, 200, 200, 410, 500, 403, 302]),
    items=_ITEMS,
    token=st.sampled_from(["", "", "same", "next", "A", "\u2028\x1b]0;t\x07"]),
    framing=st.sampled_from(["length", "chunked", "short", "junk", "endless", "trickle",
                             "slowheaders", "gzipbomb"]),
    delay=st.just(0.3),
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(pages=st.lists(_PAGES, min_size=1, max_size=4))
def test_fuzz_hostile_server_ends_typed_and_bounded(
    hostile: HostileApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, pages: list[Page],
) -> None:
    from kubelet_winnet.sources.cluster import source as cluster

    monkeypatch.setattr(cluster, "MAX_PAGES", 12)
    hostile.play(*pages)
    start = time.monotonic()
    status, out, err = audit(kubeconfig, capsys, "--request-timeout", "1s",
                             "--max-bytes", "300000", "--page-size", "2")
    # 13 requests of at most 1s each; generous for a loaded machine, far below what a
    # client without bounds spends here (the server holds on for _SERVER_SECONDS).
    assert time.monotonic() - start < 75
    assert status in (0, 1, 2)
    document = json.loads(out)  # stdout is one JSON document, whatever happened
    live_errors = [line for line in err if "API server" in line or "continue" in line]
    assert len(live_errors) <= 1, err
    for line in err:
        assert line.startswith("kubelet-winnet: "), err
        assert line.isprintable(), line  # one line each: nothing the server sent splits it
    if "error" in document["summary"]:
        assert status == 2 and document["summary"]["error"] in "\n".join(err)


# --- the kubeconfig through the bounded input layer -----------------------------------------


def _alias_bomb() -> str:
    """A kubeconfig whose one cluster holds nested YAML aliases: 9 levels of 9
    references, 9**9 strings when written out, in about 600 bytes.
    The client wrote each entry into a name (``"{}/{}".format(path, entry)``)."""
    lines = ["apiVersion: v1", "kind: Config", "current-context: c", "clusters:",
             "- name: k", "  cluster:", "    server: http://127.0.0.1:9",
             '    l0: &l0 ["x","x","x","x","x","x","x","x","x"]']
    for level in range(1, 9):
        refs = ",".join([f"*l{level - 1}"] * 9)
        lines.append(f"    l{level}: &l{level} [{refs}]")
    return "\n".join(lines) + "\n"


def test_a_kubeconfig_of_nested_aliases_is_one_line_naming_file_and_line(
    tmp_path: Path,
) -> None:
    """The client parsed the file itself and ran to a MemoryError traceback at 2.3 GB
    after 28 s. Now the input layer reads it first and refuses it at its alias bound."""
    require_kubernetes()
    bomb = tmp_path / "kubeconfig"
    bomb.write_text(_alias_bomb(), encoding="utf-8")
    assert len(bomb.read_bytes()) < 800
    run = cli_child(["audit", "--kubeconfig", str(bomb)], timeout=120)
    assert run.status == 2 and len(run.err_lines) == 1, run.err_lines
    assert run.err_lines[0].startswith(f"kubelet-winnet: error: cannot use the kubeconfig {bomb}:")
    assert re.search(rf"{re.escape(str(bomb))}:\d+: ", run.err_lines[0]), run.err_lines[0]
    assert "alias" in run.err_lines[0]
    assert run.peak_mb < 250


@pytest.mark.parametrize("env", [True, False])
def test_an_alias_bomb_in_kubeconfig_env_is_refused_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    env: bool,
) -> None:
    require_kubernetes()
    bomb = tmp_path / "config"
    bomb.write_text(_alias_bomb(), encoding="utf-8")
    if env:
        monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'absent'}:{bomb}")
    else:
        monkeypatch.delenv("KUBECONFIG", raising=False)
        monkeypatch.setenv("HOME", str(tmp_path))
        (tmp_path / ".kube").mkdir()
        bomb = bomb.rename(tmp_path / ".kube" / "config")
    status = main(["audit"])
    out, err = capsys.readouterr()
    assert (status, out) == (2, "")
    assert err.startswith(f"kubelet-winnet: error: cannot use the kubeconfig {bomb}:")
    assert len(err.splitlines()) == 1


def test_kubeconfig_files_merge_as_kubectl_merges_them(
    hostile: HostileApiServer, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """client-go's loading rules: the first file to set current-context wins, and the
    first to name a cluster, user or context; the others fill in the rest."""
    first = tmp_path / "first"
    first.write_text("apiVersion: v1\nkind: Config\ncurrent-context: hostile\n"
                     "clusters:\n- name: local\n  cluster:\n"
                     f"    server: http://127.0.0.1:{hostile.port}\n", encoding="utf-8")
    second = tmp_path / "second"
    second.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: elsewhere\n"
        "clusters:\n- name: local\n  cluster:\n    server: http://127.0.0.1:9\n"
        "users:\n- name: u\n  user:\n    token: t\n"
        "contexts:\n- name: hostile\n  context:\n    cluster: local\n    user: u\n"
        "    namespace: apps\n", encoding="utf-8")
    monkeypatch.setenv("KUBECONFIG", f"{first}:{tmp_path / 'absent'}:{second}")
    hostile.play(Page(items=[windows_pod("merged")]))
    status = main(["audit", "-o", "json"])
    out, err = capsys.readouterr()
    assert (status, err) == (0, ""), err
    assert [p["name"] for p in json.loads(out)["pods"]] == ["merged"]
