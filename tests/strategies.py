"""Hypothesis strategies for pod manifests, kubelet profiles and malformed input, plus an
independent oracle that follows ``kubelet-rules.md`` literally.

The oracle never imports the library's rules: it reads the camelCase manifest itself and
hand-encodes the expected ``runtime.v1`` bytes (proto3 wire format), so a test comparing
the library against it checks the rules *and* the message building (presence included).
Workloads, kubelet version spellings and ``--feature-gates`` values come from the
shipped strategies (:mod:`kubelet_winnet.testing.strategies`, their one home); the
oracle's tables (``MINORS``, ``WORKLOAD_KINDS``) stay here, transcribed from upstream, and
tests/testing/test_strategies.py holds the shipped strategies to them.
At the end, :func:`sandbox_stress`: the threaded workload the HCN tests run over both
HCN clients.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import importlib
import json
import os
import re
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
import yaml
from hypothesis import settings
from hypothesis import strategies as st

from kubelet_winnet.testing.strategies import as_workload, feature_gates, kubelet_versions

__all__ = [
    "ADMISSION_ROUTES",
    "CONTAINER_LINUX_FIELDS",
    "CORPUS",
    "ERR_HOST_NETWORK_REQUIRED",
    "ERR_MIXED",
    "ERR_POD_HOST_PROCESS_FALSE",
    "FIXTURES",
    "HOSTILE",
    "MINORS",
    "POD_LINUX_FIELDS",
    "WORKLOAD_KINDS",
    "AdmissionPolicy",
    "ChildRun",
    "Crash",
    "Malformed",
    "Profile",
    "StressReport",
    "admitted_objects",
    "admitted_specs",
    "as_client_object",
    "as_namespace",
    "cli_child",
    "container_context_bytes",
    "corpus_params",
    "crash_at",
    "deep_dict",
    "deep_list",
    "deserialize",
    "fixture_documents",
    "fixture_files",
    "gate_effective",
    "host_process_pods",
    "hostile_values",
    "json_junk",
    "kubelet_profiles",
    "malformed_manifests",
    "oracle_container",
    "oracle_sandbox",
    "pod_manifests",
    "pod_specs",
    "require",
    "require_tool",
    "sandbox_plan",
    "sandbox_stress",
    "spec_of",
    "windows_options",
    "without_nulls",
    "without_summary",
]

JSON = Any

# The 40 real manifests, read-only, beside the clone (common.md) when there is one: tests
# over them are marked `corpus` (tests/conftest.py skips them where it is absent).
REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS = REPO_ROOT.parent / "shared" / "corpus"
# The project's own manifests (tests/data/manifests/README.md), in every clone.
FIXTURES = REPO_ROOT / "tests" / "data" / "manifests"

# Exact kubelet texts, restated from kubelet-rules.md (not imported from the library).
ERR_MIXED = "pod must not contain both HostProcess and non-HostProcess containers"
ERR_HOST_NETWORK_REQUIRED = "hostNetwork is required if Pod contains HostProcess containers"
ERR_POD_HOST_PROCESS_FALSE = (
    "pod must not contain any HostProcess containers if Pod's WindowsOptions.HostProcess "
    "is set to false"
)

CONTAINER_KINDS = ("initContainers", "containers", "ephemeralContainers")

# Where each workload keeps its pod template, from the manifest root.
WORKLOAD_KINDS: dict[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
    "PodTemplate": ("template",),
}


def fixture_files() -> list[Path]:
    return sorted(p for p in FIXTURES.iterdir() if p.suffix in (".yaml", ".json"))


def fixture_documents() -> list[tuple[str, dict[str, JSON]]]:
    """("<file stem>:<name>", manifest) for every Pod and workload in FIXTURES, read with
    PyYAML and json (not our input layer), the items of a ``kind: List`` one by one."""
    found = []
    for path in fixture_files():
        text = path.read_text(encoding="utf-8")
        docs = [json.loads(text)] if path.suffix == ".json" else list(yaml.safe_load_all(text))
        for doc in docs:
            for item in doc.get("items", []) if doc.get("kind") == "List" else [doc]:
                if item.get("kind") == "Pod" or item.get("kind") in WORKLOAD_KINDS:
                    found.append((f"{path.stem}:{item['metadata']['name']}", item))
    return found


# The project's CI (.ci/run, and tox under it) sets KUBELET_WINNET_CI=1: there every
# optional component must be present, so a test that would skip fails instead. CI=true
# alone (GitHub Actions in a fork, any pipeline running README's test command) keeps the
# skips, each with its reason: such a job has no corpus beside it and no ci extra.
MUST_RUN = os.environ.get("KUBELET_WINNET_CI") == "1"


def examples(under_ci: int) -> int:
    """``under_ci`` examples under the ci profile (150 for every other test), scaled like
    the rest under the quick and dev profiles: a test that needs more than the others
    gets more in every profile, and the README's run stays short."""
    profile = settings()  # the loaded profile's values
    return max(profile.max_examples, under_ci * profile.max_examples // 150)


def require(module: str, extra: str = "ci") -> ModuleType:
    """``module``, from the ``extra`` that .ci/run and tox install (``ci``: the slow or
    heavy ones, kept out of ``test``). Outside the project's CI its tests skip with this
    reason; under it (:data:`MUST_RUN`) a missing module fails them."""
    if MUST_RUN:
        return importlib.import_module(module)
    found: ModuleType = pytest.importorskip(
        module, reason=f"{module} is not installed: pip install -e '.[test,{extra}]' to run these"
    )
    return found


def require_tool(name: str, install: str) -> str:
    """The full path of the program ``name`` on PATH. Outside the project's CI its tests
    skip saying how to install it (``install``); under it (:data:`MUST_RUN`, where
    .ci/install-system-packages put it there) a missing program fails them."""
    import shutil

    found = shutil.which(name)
    if found is None:
        if MUST_RUN:
            pytest.fail(f"{name} is not on PATH under KUBELET_WINNET_CI=1: {install}")
        pytest.skip(f"{name} is not on PATH: {install} to run these")
    return found


# --- the input layer's tests (tests/cli/test_input*.py) -----------------------------------

# Peak RSS of a child, from inside it: VmHWM belongs to the process image, while
# ru_maxrss also counts the parent's memory at the fork before exec (Linux keeps the max).
PEAK_KB = (
    "import resource\n"
    "def peak_kb():\n"
    "    try:\n"
    "        with open('/proc/self/status') as status:\n"
    "            for line in status:\n"
    "                if line.startswith('VmHWM:'):\n"
    "                    return int(line.split()[1])\n"
    "    except OSError:\n"
    "        pass\n"
    "    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
)
POD_YAML = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  hostNetwork: true\n"
POD_VALUE = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
             "spec": {"hostNetwork": True}}


def without_waiting_on(fifos: Iterable[Path], call: Callable[[], Any],
                       seconds: float = 20) -> Any:
    """``call()``'s result; a failure if it is still running after ``seconds``, blocked
    (the bug) on opening or reading one of ``fifos``: each is then opened for writing
    and closed, which ends the reader's wait, so a regression fails instead of hanging."""
    result: list[Any] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            result.append(call())
        except BaseException as exc:  # handed to the test
            failed.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        for fifo in fifos:
            with contextlib.suppress(OSError):  # ENXIO: no reader waits on this one
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(seconds)
        pytest.fail(f"still waiting after {seconds} s on a FIFO (one of {list(fifos)})")
    if failed:
        raise failed[0]
    return result[0]


def error_lines(stderr: str) -> list[str]:
    """A command's error lines (notes and the summary may come around them)."""
    return [line for line in stderr.splitlines() if ": error: " in line]


def read_input(path: Path, limits: Any = None) -> list[Any]:
    """Every Document and BadInput the input layer gives for ``path``."""
    from kubelet_winnet.sources.manifests import Limits, read_source

    return list(read_source(str(path), limits or Limits()))


def read_input_text(text: str) -> list[Any]:
    """:func:`read_input` of ``text`` written to a file (the reader goes by content)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False,
                                     encoding="utf-8") as handle:
        handle.write(text)
    try:
        return read_input(Path(handle.name))
    finally:
        os.unlink(handle.name)


def input_values(found: list[Any]) -> list[Any]:
    """The values of the Documents of :func:`read_input`."""
    from kubelet_winnet.sources.manifests import Document

    return [d.value for d in found if isinstance(d, Document)]


def bad_inputs(found: list[Any]) -> list[Any]:
    """The BadInputs of :func:`read_input`."""
    from kubelet_winnet.sources.manifests import BadInput

    return [d for d in found if isinstance(d, BadInput)]


def write_input(tmp_path: Path, name: str, text: str | bytes) -> Path:
    """``text`` (UTF-8 when a str) written to ``tmp_path / name``."""
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def corpus_params(cases: Callable[[], Iterable[tuple[str, Any]]]) -> list[Any]:
    """Parameters for a test marked ``corpus``: one per (id, case) of ``cases()``, or one
    stand-in where the corpus is absent (the test skips before it runs: tests/conftest.py)."""
    if not CORPUS.is_dir():
        return [pytest.param(None, id="corpus-absent")]
    return [pytest.param(case, id=name) for name, case in cases()]

# --- valid manifests ------------------------------------------------------------------

_chars = st.characters(codec="utf-8")
# Windows account names, incl. non-ASCII (localized "NT-AUTORITÄT\\SYSTEM", CJK, emoji).
user_names = st.one_of(
    st.sampled_from(
        [
            "",
            "ContainerUser",
            "ContainerAdministrator",
            "NT AUTHORITY\\SYSTEM",
            "NT AUTHORITY\\Local service",
            "NT-AUTORITÄT\\SYSTEM",
            "管理者",
            "user\U0001f600",
        ]
    ),
    st.text(_chars, max_size=12),
)
gmsa_specs = st.one_of(
    st.sampled_from(["", '{"CmsPlugins":["ActiveDirectory"]}', "spec-ü"]),
    st.text(_chars, max_size=12),
)
gmsa_names = st.sampled_from(["", "webapp1", "gmsa-credspec-ä"])
# None = explicit null, which the API treats as unset.
host_process_values = st.sampled_from([None, True, False])


def windows_options() -> st.SearchStrategy[dict[str, JSON]]:
    """``windowsOptions`` with every key optional; ``null`` allowed as unset."""
    return st.fixed_dictionaries(
        {},
        optional={
            "runAsUserName": st.none() | user_names,
            "gmsaCredentialSpecName": st.none() | gmsa_names,
            "gmsaCredentialSpec": st.none() | gmsa_specs,
            "hostProcess": host_process_values,
        },
    )


def _security_context(extra: Mapping[str, st.SearchStrategy[JSON]]) -> st.SearchStrategy[JSON]:
    return st.none() | st.fixed_dictionaries(
        {}, optional={"windowsOptions": st.none() | windows_options(), **extra}
    )


pod_security_contexts = _security_context(
    {"runAsNonRoot": st.booleans(), "seccompProfile": st.just({"type": "RuntimeDefault"})}
)
container_security_contexts = _security_context(
    {"privileged": st.booleans(), "capabilities": st.just({"drop": ["ALL"]})}
)

_container = st.fixed_dictionaries(
    {},
    optional={
        "securityContext": container_security_contexts,
        "image": st.sampled_from(["mcr.microsoft.com/windows/nanoserver:ltsc2022", "busybox"]),
        "ports": st.just([{"containerPort": 80}]),
    },
)


def _named(groups: list[list[dict[str, JSON]]]) -> list[list[dict[str, JSON]]]:
    """Give every container a unique name (the API requires it; lookups rely on it)."""
    out = []
    n = 0
    for group in groups:
        named = []
        for c in group:
            named.append({"name": f"c{n}", **c})
            n += 1
        out.append(named)
    return out


@st.composite
def pod_specs(draw: st.DrawFn, max_containers: int = 3) -> dict[str, JSON]:
    """A ``spec`` with optional keys, containers of the three kinds, hostNetwork, options."""
    groups = _named(
        [
            draw(st.lists(_container, max_size=2)),
            draw(st.lists(_container, max_size=max_containers)),
            draw(st.lists(_container, max_size=1)),
        ]
    )
    spec: dict[str, JSON] = {}
    for kind, group in zip(CONTAINER_KINDS, groups, strict=True):
        if group or (kind == "containers" and draw(st.booleans())):
            spec[kind] = group
        elif draw(st.integers(0, 4)) == 0:
            spec[kind] = None
    if draw(st.booleans()):
        spec["hostNetwork"] = draw(st.sampled_from([True, False, None]))
    sc = draw(pod_security_contexts)
    if sc is not None or draw(st.booleans()):
        spec["securityContext"] = sc
    if draw(st.booleans()):
        spec["nodeSelector"] = {"kubernetes.io/os": "windows"}
    return spec


@st.composite
def host_process_pods(draw: st.DrawFn) -> dict[str, JSON]:
    """Specs where HostProcess is declared consistently (pod level, container level or both)
    with hostNetwork true: the case random specs seldom hit."""
    spec = draw(pod_specs())
    spec["hostNetwork"] = True
    pod_level = draw(st.booleans())
    if pod_level:
        sc = spec.get("securityContext") or {}
        wo = dict(sc.get("windowsOptions") or {})
        wo["hostProcess"] = True
        spec["securityContext"] = {**sc, "windowsOptions": wo}
    for kind in CONTAINER_KINDS:
        for c in spec.get(kind) or []:
            sc = c.get("securityContext") or {}
            wo = dict(sc.get("windowsOptions") or {})
            if pod_level and draw(st.booleans()):
                wo.pop("hostProcess", None)
            else:
                wo["hostProcess"] = True
            c["securityContext"] = {**sc, "windowsOptions": wo}
    return spec


def pod_manifests(specs: st.SearchStrategy[dict[str, JSON]] | None = None) -> st.SearchStrategy[
    dict[str, JSON]
]:
    """A Pod manifest (``kind``/``apiVersion``/``metadata`` optional) around a spec."""
    return st.builds(
        lambda spec, head: {**head, "spec": spec},
        specs if specs is not None else (pod_specs() | host_process_pods()),
        st.fixed_dictionaries(
            {},
            optional={
                "apiVersion": st.just("v1"),
                "kind": st.just("Pod"),
                "metadata": st.fixed_dictionaries(
                    {"name": st.just("p")}, optional={"namespace": st.just("default")}
                ),
            },
        ),
    )


def spec_of(manifest: Mapping[str, JSON]) -> Any:
    """The pod spec of a Pod or workload manifest (our own reading of the workload kinds)."""
    kind = manifest.get("kind")
    node: Any = manifest
    if kind not in (None, "Pod"):
        for key in WORKLOAD_KINDS[kind]:
            node = node[key]
    return node["spec"]


# --- kubelet profiles -------------------------------------------------------------------

MINORS = range(26, 39)  # 1.26 .. 1.38 (kubelet-rules.md): every test's version axis


@dataclass(frozen=True)
class Profile:
    version: str
    gates: Any
    minor: int
    gate: bool | None  # WindowsHostNetwork as set on the command line; None = unset


def gate_effective(minor: int, gate: bool | None) -> bool:
    """Step 2 runs: kubelet 1.26-1.32 (alpha, default true) with the gate not turned off."""
    return 26 <= minor <= 32 and gate is not False


@st.composite
def kubelet_profiles(draw: st.DrawFn) -> Profile:
    """A kubelet version 1.26..1.38 and gates it accepts (1.38 rejects WindowsHostNetwork)."""
    minor = draw(st.sampled_from(MINORS))
    gate = None if minor >= 38 else draw(st.sampled_from([None, True, False]))
    return Profile(draw(kubelet_versions([minor])),
                   draw(feature_gates(windows_host_network=gate)), minor, gate)


# --- the oracle ---------------------------------------------------------------------------


def _set(d: Any) -> dict[str, JSON]:
    """A windowsOptions mapping without its null (= unset) keys."""
    return {k: v for k, v in (d or {}).items() if v is not None}


def _pod_options(spec: Mapping[str, JSON]) -> dict[str, JSON] | None:
    sc = spec.get("securityContext")
    if sc is None or sc.get("windowsOptions") is None:
        return None
    return _set(sc["windowsOptions"])


def _containers(spec: Mapping[str, JSON]) -> list[Mapping[str, JSON]]:
    """initContainers, then containers, then ephemeralContainers: all count."""
    return [c for kind in CONTAINER_KINDS for c in (spec.get(kind) or [])]


def _effective(spec: Mapping[str, JSON], container: Mapping[str, JSON]) -> dict[str, JSON]:
    """A copy of the pod-level options; container fields that are set override one by one;
    the two GMSA fields are overridden together if either is set."""
    eff = dict(_pod_options(spec) or {})
    own = _set((container.get("securityContext") or {}).get("windowsOptions"))
    for key in ("runAsUserName", "hostProcess"):
        if key in own:
            eff[key] = own[key]
    if "gmsaCredentialSpecName" in own or "gmsaCredentialSpec" in own:
        for key in ("gmsaCredentialSpecName", "gmsaCredentialSpec"):
            eff.pop(key, None)
            if key in own:
                eff[key] = own[key]
    return eff


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _string(number: int, text: str) -> bytes:
    return _field(number, text.encode()) if text else b""


def _security_context_bytes(
    run_as: str, cred: str, host_process: bool, network: int | None
) -> bytes:
    body = _string(1, run_as) + _string(2, cred)
    if host_process:
        body += b"\x18\x01"
    if network is not None:  # present even when POD: "22 00"
        body += _field(4, b"\x08" + _varint(network) if network else b"")
    return body


def oracle_sandbox(spec: Mapping[str, JSON], effective_gate: bool) -> bytes | str:
    """``generatePodSandboxWindowsConfig`` per kubelet-rules.md: the serialized
    ``WindowsPodSandboxConfig``, or the kubelet's error text."""
    host_network = spec.get("hostNetwork") is True
    network = (2 if host_network else 0) if effective_gate else None  # step 2: NODE=2 POD=0
    flags = [_effective(spec, c).get("hostProcess") is True for c in _containers(spec)]
    host_process = False
    if any(flags):  # step 3
        if not all(flags):
            return ERR_MIXED
        if not host_network:
            return ERR_HOST_NETWORK_REQUIRED
        host_process = True
    options = _pod_options(spec)
    if options is None:  # step 4
        return _field(1, _security_context_bytes("", "", host_process, network))
    run_as = options.get("runAsUserName", "")  # step 5
    cred = options.get("gmsaCredentialSpec", "")
    if any(flags) and options.get("hostProcess") is False:  # step 6
        return ERR_POD_HOST_PROCESS_FALSE
    return _field(1, _security_context_bytes(run_as, cred, host_process, network))


def container_context_bytes(run_as: str, cred: str, host_process: bool) -> bytes:
    return _string(1, run_as) + _string(2, cred) + (b"\x18\x01" if host_process else b"")


def oracle_container(
    spec: Mapping[str, JSON], container: Mapping[str, JSON], image_username: str = ""
) -> bytes:
    """``WindowsContainerSecurityContext``: image user, overridden by the effective
    ``runAsUserName`` when set; effective GMSA spec; effective hostProcess."""
    eff = _effective(spec, container)
    return container_context_bytes(
        eff.get("runAsUserName", image_username),
        eff.get("gmsaCredentialSpec", ""),
        eff.get("hostProcess") is True,
    )


# --- malformed input ------------------------------------------------------------------------

WRONG: dict[str, list[JSON]] = {
    "boolean": ["true", "false", "True", 1, 0, "1", 1.0, [], {}, [True]],
    "string": [1, 0, True, False, 1.5, [], ["a"], {}, {"a": "b"}],
    "object": ["x", "", 1, True, 0.5, [], [{}]],
    "array": ["x", 1, True, {}, {"name": "a"}],
}

_OPTION_FIELDS = {
    "runAsUserName": "string",
    "gmsaCredentialSpecName": "string",
    "gmsaCredentialSpec": "string",
    "hostProcess": "boolean",
}


def _targets(spec: Mapping[str, JSON]) -> list[tuple[tuple[str | int, ...], str]]:
    """Every modelled field of ``spec`` (relative path, expected JSON type)."""
    out: list[tuple[tuple[str | int, ...], str]] = [
        ((), "object"),
        (("hostNetwork",), "boolean"),
        (("securityContext",), "object"),
        (("securityContext", "windowsOptions"), "object"),
    ]
    out += [(("securityContext", "windowsOptions", k), t) for k, t in _OPTION_FIELDS.items()]
    for kind in CONTAINER_KINDS:
        out.append(((kind,), "array"))
        for i, _ in enumerate(spec.get(kind) or []):
            base: tuple[str | int, ...] = (kind, i)
            out += [
                (base, "object"),
                ((*base, "name"), "string"),
                ((*base, "securityContext"), "object"),
                ((*base, "securityContext", "windowsOptions"), "object"),
            ]
            out += [
                ((*base, "securityContext", "windowsOptions", k), t)
                for k, t in _OPTION_FIELDS.items()
            ]
    return out


def _json_path(parts: tuple[str | int, ...]) -> str:
    text = ""
    for p in parts:
        text += f"[{p}]" if isinstance(p, int) else (f".{p}" if text else p)
    return text


def _put(root: dict[str, JSON], parts: tuple[str | int, ...], value: JSON) -> None:
    node: Any = root
    for p in parts[:-1]:
        if isinstance(p, str) and not isinstance(node.get(p), (dict, list)):
            node[p] = {}
        node = node[p]
    node[parts[-1]] = value


@dataclass(frozen=True)
class Malformed:
    manifest: dict[str, JSON]
    field: str  # the JSON path the error must name
    value: JSON


@st.composite
def malformed_manifests(draw: st.DrawFn, workloads: bool = True) -> Malformed:
    """A valid Pod (or workload) with exactly one modelled field of the wrong JSON type."""
    spec = draw(pod_specs(max_containers=2))
    rel, expected = draw(st.sampled_from(_targets(spec)))
    value = draw(st.sampled_from(WRONG[expected]))
    kind = draw(st.sampled_from(["Pod", *WORKLOAD_KINDS])) if workloads else "Pod"
    prefix: tuple[str, ...] = ("spec",) if kind == "Pod" else (*WORKLOAD_KINDS[kind], "spec")
    manifest = {"kind": kind, "spec": spec} if kind == "Pod" else as_workload(kind, {"spec": spec})
    if rel:
        _put(manifest, (*prefix, *rel), value)
    else:
        _put(manifest, prefix, value)
    return Malformed(manifest, _json_path((*prefix, *rel)), value)


# --- junk -------------------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5)


def json_junk() -> st.SearchStrategy[JSON]:
    """Arbitrary JSON-like values whose keys are biased towards the modelled ones."""
    keys = st.sampled_from(
        [
            "kind", "spec", "template", "jobTemplate", "hostNetwork", "securityContext",
            "windowsOptions", "hostProcess", "runAsUserName", "gmsaCredentialSpec",
            "gmsaCredentialSpecName", "containers", "initContainers", "ephemeralContainers",
            "name",
        ]
    ) | st.text(max_size=3)
    kinds = st.sampled_from(["Pod", "CronJob", "Deployment", "PodTemplate", "Service"])
    return st.recursive(
        json_scalars | kinds,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=4),
        max_leaves=20,
    )


# --- the same manifest in the other input forms -------------------------------------------
# Written from the API's naming rule (camelCase keys, snake_case attributes), not from the
# library's views.


def _snake(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key).lower()


def _camel(name: str) -> str:
    return re.sub(r"_([a-z0-9])", lambda m: m[1].upper(), name)


def as_namespace(value: JSON) -> Any:
    """``value`` with every JSON object as a ``SimpleNamespace`` of snake_case attributes.

    Keys that are not camelCase (``host_network``, ``a b``) have no attribute spelling and
    are dropped: a manifest reader ignores them too.
    """
    if isinstance(value, dict):
        attributes = {}
        for key, item in value.items():
            if isinstance(key, str) and _camel(_snake(key)) == key and key.isidentifier():
                attributes[_snake(key)] = as_namespace(item)
        return SimpleNamespace(**attributes)
    if isinstance(value, list):
        return [as_namespace(item) for item in value]
    return value


def _client_value(client: Any, value: JSON, openapi_type: str) -> Any:
    listed = re.fullmatch(r"[Ll]ist\[(.+)\]", openapi_type)
    if listed and isinstance(value, list):
        return [_client_value(client, item, listed[1]) for item in value]
    cls = getattr(client, openapi_type, None) if openapi_type.startswith("V1") else None
    if cls is None or not isinstance(value, dict):
        return value  # a scalar, a dict of strings, or junk where an object belongs
    return _construct(client, cls, value)


def _construct(client: Any, cls: Any, value: dict[str, JSON]) -> Any:
    """``cls`` holding ``value``'s fields as they are, without the client's validation
    (so junk reaches the reader, as with ``model_construct``)."""
    fields = {
        snake: _client_value(client, value[camel], cls.openapi_types[snake])
        for snake, camel in cls.attribute_map.items()
        if value.get(camel) is not None
    }
    if hasattr(cls, "model_construct"):  # client 37: pydantic
        return cls.model_construct(**fields)
    obj = cls.__new__(cls)  # client 36: properties over `_name` attributes
    for snake in cls.openapi_types:
        setattr(obj, f"_{snake}", fields.get(snake))
    obj.discriminator = None
    return obj


def deserialize(manifest: Mapping[str, JSON], klass: str) -> Any:
    """The ``kubernetes.client`` object the client's own deserializer builds (what a user
    holds after a list/watch); the manifest is copied first."""
    api: Any = require("kubernetes.client").ApiClient()
    return api._ApiClient__deserialize(copy.deepcopy(dict(manifest)), klass)


def as_client_object(manifest: Mapping[str, JSON]) -> Any:
    """``manifest`` as the ``kubernetes.client`` object of its kind (``V1Pod`` when it has
    none), or None when its kind names no client class."""
    client = require("kubernetes.client")

    kind = manifest.get("kind", "Pod")
    cls = getattr(client, f"V1{kind}", None) if isinstance(kind, str) else None
    if cls is None or not hasattr(cls, "attribute_map"):
        return None
    return _construct(client, cls, dict(manifest))


# --- hostile values ------------------------------------------------------------------------


class RaisingEq:
    """Equality and hashing raise (so do ``bool`` and ``len``)."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__")

    def __hash__(self) -> int:
        raise RuntimeError("__hash__")

    def __bool__(self) -> bool:
        raise RuntimeError("__bool__")


class RaisingRepr:
    def __repr__(self) -> str:
        raise RuntimeError("__repr__")

    def __str__(self) -> str:
        raise RuntimeError("__str__")


class RaisingGetattr:
    """Every attribute lookup raises ``KeyError`` (not ``AttributeError``)."""

    def __getattr__(self, name: str) -> Any:
        raise KeyError(name)


class RaisingMapping(Mapping[str, Any]):
    """A ``Mapping`` whose every access raises."""

    def __getitem__(self, key: str) -> Any:
        raise RuntimeError("__getitem__")

    def __iter__(self) -> Any:
        raise RuntimeError("__iter__")

    def __len__(self) -> int:
        raise RuntimeError("__len__")

    def get(self, key: str, default: Any = None) -> Any:
        raise RuntimeError("get")


class LyingClass:
    """``__class__`` raises, which ``isinstance`` consults."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        raise RuntimeError("__class__")


def deep_list(depth: int = 10_000) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def deep_dict(depth: int = 10_000, key: str = "spec") -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {key: value}
    return value


def _numpy_values() -> list[Any]:
    try:
        import numpy
    except ImportError:  # the test extra installs numpy; a bare checkout may lack it
        return []
    return [numpy.array(["Pod"]), numpy.array([True, False]), numpy.bool_(True),
            numpy.int64(5), numpy.str_("Pod"), numpy.float64("nan")]


# Named so a failing case reads as its name.
HOSTILE: dict[str, Any] = {
    "huge int": 10**5000,
    "negative huge int": -(10**5000),
    "deep list": deep_list(),
    "deep dict": deep_dict(),
    "raising __eq__/__hash__": RaisingEq(),
    "raising __repr__": RaisingRepr(),
    "raising __getattr__": RaisingGetattr(),
    "raising Mapping": RaisingMapping(),
    "raising __class__": LyingClass(),
    "bytes": b"Pod",
    "bytearray": bytearray(b"x"),
    "lone surrogate": "\ud800",
    "nan": float("nan"),
    "huge string": "x" * 1_000_000,
    **{f"numpy {type(v).__name__} {i}": v for i, v in enumerate(_numpy_values())},
}


def hostile_values() -> st.SearchStrategy[Any]:
    return st.sampled_from(list(HOSTILE.values()))


# --- the HCN half: plans, simulated crashes, a threaded workload --------------------------


def sandbox_plan(host_process: bool = False, mode: int | None = None, policy: str = "kep") -> Any:
    """The ``NetworkPlan`` for a ``PodSandboxConfig`` carrying these Windows fields
    (``mode``: ``namespace_options.network``, or ``None`` for no ``namespace_options``)."""
    from cri_api.runtime.v1 import api_pb2
    from kubelet_winnet.runtime import plan_sandbox_config_network

    config = api_pb2.PodSandboxConfig()
    context = config.windows.security_context
    context.host_process = host_process
    if mode is not None:
        context.namespace_options.network = mode  # type: ignore[assignment]
    return plan_sandbox_config_network(config, policy=policy)  # type: ignore[arg-type]


class Crash(BaseException):
    """A process dying at a chosen point (a BaseException: ``except Exception`` cleanup
    code does not run)."""


def crash_at(index: int, phase: str) -> Callable[[str, str], None]:
    """An HCN hook raising :class:`Crash` at the ``index``-th call (1-based), ``phase``
    ``"before"`` or ``"after"`` its effect."""
    seen = [0]

    def hook(function: str, when: str) -> None:
        if when == "before":
            seen[0] += 1
        if seen[0] == index and when == phase:
            raise Crash

    return hook


@dataclass
class StressReport:
    """What :func:`sandbox_stress` did and every violation of the guarantees it saw."""

    operations: int = 0  # setup/teardown/reconcile calls made
    hcn_errors: int = 0  # of those, how many an injected fault made fail
    violations: list[str] = dataclasses.field(default_factory=list)


def sandbox_stress(
    networks: Any,
    *,
    pod_plan: Any,
    host_plan: Any,
    exists: Callable[[uuid.UUID], bool],
    host_default: uuid.UUID,
    workers: int = 32,
    per_worker: int = 7,
    reconcilers: int = 4,
    rounds: int = 2,
    retries: int = 200,
) -> StressReport:
    """``workers`` threads each own ``per_worker`` live sandboxes (set up, set up again,
    torn down, ``rounds`` times) plus one doomed sandbox (set up once, never live), while
    ``reconcilers`` threads call ``reconcile`` with every live id. An operation failing
    with an HcnError (an injected fault) is retried.

    Checked (docs/runtime.md, "Concurrency guarantees"): a namespace setup returns exists
    at that moment (``exists`` looks without an HCN call, so no fault hits it); a repeated
    setup returns the same namespace; a sandbox torn down stays torn down (no record, its
    namespace gone) until its owner sets it up again; reconcile never adopts, never
    deletes an orphan (this workload makes none) and tears down only doomed sandboxes.
    """
    from kubelet_winnet.errors import HcnError

    report = StressReport()
    guard = threading.Lock()
    live_ids = [f"live-{w:02d}-{i}-ü" for w in range(workers) for i in range(per_worker)]
    live = frozenset(live_ids)
    doomed = [f"doomed-{w:02d}" for w in range(workers)]
    done = threading.Event()
    start = threading.Barrier(workers + reconcilers)

    def note(problem: str | None = None, *, failed: bool = False) -> None:
        with guard:
            report.operations += 1
            report.hcn_errors += failed
            if problem is not None:
                report.violations.append(problem)

    def retried(call: Callable[[], Any]) -> Any:
        for _ in range(retries):
            try:
                result = call()
            except HcnError:
                note(failed=True)
                continue
            note()
            return result
        raise AssertionError(f"still failing after {retries} tries")

    def set_up(sandbox: str, plan: Any) -> Any:
        result = retried(lambda: networks.setup(sandbox, plan))
        if plan.host_network and result.namespace_id != host_default:
            note(f"setup({sandbox}) returned {result.namespace_id}, not HostDefault")
        if not exists(result.namespace_id):
            note(f"setup({sandbox}) handed out a dead namespace {result.namespace_id}")
        return result

    def worker(index: int) -> None:
        mine = live_ids[index * per_worker : (index + 1) * per_worker]
        plans = {s: host_plan if i % 5 == 4 else pod_plan for i, s in enumerate(mine)}
        start.wait()
        # Not checked: reconcile may rightly tear it down the moment setup returns.
        retried(lambda: networks.setup(doomed[index], pod_plan))
        for _ in range(rounds):
            first = {s: set_up(s, plans[s]) for s in mine}
            for sandbox in mine:
                again = set_up(sandbox, plans[sandbox])
                if again != first[sandbox]:
                    note(f"repeated setup({sandbox}) changed {first[sandbox]} to {again}")
            for sandbox in mine:
                retried(functools.partial(networks.teardown, sandbox))
            for sandbox in mine:  # later, after the reconcilers had their chance
                came_back = networks.get(sandbox)
                old = first[sandbox].namespace_id
                if came_back is not None:
                    note(f"{sandbox} came back after its teardown: {came_back}")
                if not plans[sandbox].host_network and exists(old):
                    note(f"{sandbox}'s namespace {old} outlived its teardown")

    def reconciler() -> None:
        start.wait()
        while not done.is_set():
            try:
                result = networks.reconcile(live)
            except HcnError:
                note(failed=True)
                continue
            note()
            problems = [f"reconcile adopted {s}" for s in result.adopted]
            problems += [f"reconcile deleted orphan {n}" for n in result.deleted_orphans]
            problems += [f"reconcile tore down live {s}" for s in result.torn_down if s in live]
            problems += [f"reconcile: {e}" for e in result.state_errors]
            for problem in problems:
                note(problem)

    def guarded(target: Callable[..., None], *args: int) -> Callable[[], None]:
        def body() -> None:
            try:
                target(*args)
            except BaseException as error:  # a thread's error must reach the test
                done.set()
                start.abort()
                note(f"{type(error).__name__} in a thread: {error}")

        return body

    threads = [threading.Thread(target=guarded(reconciler)) for _ in range(reconcilers)]
    threads += [threading.Thread(target=guarded(worker, i)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads[reconcilers:]:
        thread.join()
    done.set()
    for thread in threads[:reconcilers]:
        thread.join()
    return report


# --- Mappings that are not dicts -------------------------------------------------------------


class PlainMapping(Mapping[str, Any]):
    """A read-only ``collections.abc.Mapping`` over a dict: what a caller's own mapping
    type looks like to the readers (``get`` is the mixin's, through ``__getitem__``)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


class FlakyMapping(PlainMapping):
    """A :class:`PlainMapping` whose ``method`` ("getitem", "iter" or "len") raises
    ``RuntimeError`` once it has been called ``after`` times."""

    def __init__(self, data: Mapping[str, Any], method: str, after: int) -> None:
        super().__init__(data)
        self._method = method
        self._left = after

    def _tick(self, method: str) -> None:
        if method == self._method:
            if self._left <= 0:
                raise RuntimeError(f"{method} failed")
            self._left -= 1

    def __getitem__(self, key: str) -> Any:
        self._tick("getitem")
        return super().__getitem__(key)

    def __iter__(self) -> Iterator[str]:
        self._tick("iter")
        return super().__iter__()

    def __len__(self) -> int:
        self._tick("len")
        return super().__len__()


# --- objects as an API server admits them (what the admission policy sees) -------------
#
# After decoding, the object a ValidatingAdmissionPolicy sees has the schema's types and
# no nulls (unset pointers are omitted); any optional field may be missing, and a test
# must show the CEL reads every one of them safely.

ADMISSION_ROUTES = ("none", "os", "nodeSelector", "betaNodeSelector", "affinity", "mixed")
# Weighted towards Windows: the rules only speak about Windows-targeted pods.
_OS_VALUES = st.sampled_from(["windows", "windows", "windows", "linux", "", "Windows", "plan9"])
_OS_KEYS = ("kubernetes.io/os", "beta.kubernetes.io/os")
# Linux-only fields a Windows pod cannot use, restated from validateWindows
# (pkg/apis/core/validation/validation.go), with a value each.
POD_LINUX_FIELDS: dict[str, JSON] = {
    "runAsUser": 1000, "runAsGroup": 0, "fsGroup": 2000, "seLinuxOptions": {"level": "s0"},
    "seccompProfile": {"type": "RuntimeDefault"}, "sysctls": [], "supplementalGroups": [1],
    "fsGroupChangePolicy": "Always", "appArmorProfile": {"type": "Unconfined"},
    "supplementalGroupsPolicy": "Merge",
}
CONTAINER_LINUX_FIELDS: dict[str, JSON] = {
    "privileged": False, "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": True,
    "allowPrivilegeEscalation": False, "runAsUser": 1000, "runAsGroup": 0,
    "procMount": "Default", "seLinuxOptions": {"level": "s0"},
    "seccompProfile": {"type": "RuntimeDefault"}, "appArmorProfile": {"type": "Unconfined"},
}
_RULE_IDS = (
    "host-network-ignored", "windows-forbidden-field", "host-process-mixed", "gmsa-spec-missing",
)


def _admitted_windows_options() -> st.SearchStrategy[dict[str, JSON]]:
    return st.fixed_dictionaries({}, optional={
        "hostProcess": st.booleans(), "runAsUserName": st.just("ContainerUser"),
    })


@st.composite
def _admitted_context(
    draw: st.DrawFn, linux: Mapping[str, JSON]
) -> dict[str, JSON]:
    # At most one Linux-only field, mostly none: each must decide the rule on its own.
    context: dict[str, JSON] = draw(st.fixed_dictionaries({}, optional={
        "windowsOptions": _admitted_windows_options(), "runAsNonRoot": st.booleans(),
    }))
    if not draw(st.integers(0, 2)):
        name = draw(st.sampled_from(sorted(linux)))
        context[name] = copy.deepcopy(linux[name])
    return context


_admitted_container = st.fixed_dictionaries({}, optional={
    "securityContext": _admitted_context(CONTAINER_LINUX_FIELDS),
    "image": st.just("mcr.microsoft.com/windows/nanoserver:ltsc2022"),
    "ports": st.just([{"containerPort": 80}]),
})

_match_expression = st.fixed_dictionaries({}, optional={
    "key": st.sampled_from([*_OS_KEYS, *_OS_KEYS, "kubernetes.io/arch"]),
    "operator": st.sampled_from(["In", "In", "NotIn", "NotIn", "Exists"]),
    "values": st.lists(st.sampled_from(["windows", "windows", "linux", "amd64"]), max_size=3),
})
_node_affinity = st.fixed_dictionaries({}, optional={
    "requiredDuringSchedulingIgnoredDuringExecution": st.fixed_dictionaries({}, optional={
        "nodeSelectorTerms": st.lists(st.fixed_dictionaries({}, optional={
            "matchExpressions": st.lists(_match_expression, max_size=3),
            "matchFields": st.just([{"key": "metadata.name", "operator": "In",
                                     "values": ["n1"]}]),
        }), max_size=3),
    }),
    "preferredDuringSchedulingIgnoredDuringExecution": st.just([{"weight": 1, "preference": {
        "matchExpressions": [{"key": "kubernetes.io/os", "operator": "In",
                              "values": ["windows"]}]}}]),
})


def _selector(keys: tuple[str, ...]) -> st.SearchStrategy[dict[str, JSON]]:
    return st.fixed_dictionaries(
        dict.fromkeys(keys, _OS_VALUES), optional={"pool": st.just("win")}
    )


def _targeting(route: str) -> st.SearchStrategy[dict[str, JSON]]:
    os_field = st.fixed_dictionaries({}, optional={"name": _OS_VALUES})
    affinity = st.fixed_dictionaries({}, optional={"nodeAffinity": _node_affinity})
    if route == "none":
        return st.just({})
    if route == "os":
        return st.fixed_dictionaries({"os": os_field})
    if route == "nodeSelector":
        return st.fixed_dictionaries({"nodeSelector": _selector(_OS_KEYS[:1])})
    if route == "betaNodeSelector":
        return st.fixed_dictionaries({"nodeSelector": _selector(_OS_KEYS[1:])})
    if route == "affinity":  # every level there: the terms decide
        terms = st.lists(st.fixed_dictionaries(
            {"matchExpressions": st.lists(_match_expression, min_size=1, max_size=3)}
        ), min_size=1, max_size=3)
        return st.fixed_dictionaries({"affinity": st.fixed_dictionaries({
            "nodeAffinity": st.fixed_dictionaries({
                "requiredDuringSchedulingIgnoredDuringExecution":
                    st.fixed_dictionaries({"nodeSelectorTerms": terms}),
            }),
        })})
    return st.fixed_dictionaries({}, optional={
        "os": os_field, "affinity": affinity,
        "nodeSelector": st.fixed_dictionaries({}, optional=dict.fromkeys(_OS_KEYS, _OS_VALUES)),
    })


def _annotations() -> st.SearchStrategy[dict[str, JSON]]:
    keys = st.sampled_from([
        *(f"ignore-check.kubelet-winnet.io/{rule}" for rule in _RULE_IDS),
        "ignore-check.kube-linter.io/host-network", "example.com/owner",
    ])
    return st.dictionaries(keys, st.sampled_from(["", "the CNI handles it"]), max_size=2)


@st.composite
def admitted_specs(draw: st.DrawFn, route: str = "mixed") -> dict[str, JSON]:
    """A pod spec the API server could admit (or reject for its own reasons): targeting
    by ``route``, containers of the three kinds with HostProcess set anywhere or nowhere."""
    spec: dict[str, JSON] = dict(draw(_targeting(route)))
    for kind, most in zip(CONTAINER_KINDS, (2, 3, 1), strict=True):
        if draw(st.integers(0, 3)):
            spec[kind] = [{"name": f"{kind[0]}{i}", **c}
                          for i, c in enumerate(draw(st.lists(_admitted_container, max_size=most)))]
    if draw(st.integers(0, 3)):
        spec["hostNetwork"] = draw(st.sampled_from([True, True, False]))
    if draw(st.booleans()):
        spec["securityContext"] = draw(_admitted_context(POD_LINUX_FIELDS))
    if draw(st.booleans()):  # a pod-level HostProcess that containers may override
        every = draw(st.booleans())
        context = spec.setdefault("securityContext", {})
        context["windowsOptions"] = {**context.get("windowsOptions", {}), "hostProcess": every}
    if not draw(st.integers(0, 2)):
        for name in draw(st.lists(st.sampled_from(
            ["hostPID", "hostIPC", "shareProcessNamespace", "hostUsers"]), max_size=2)):
            spec[name] = draw(st.booleans())
    return spec


@st.composite
def admitted_objects(draw: st.DrawFn, route: str = "mixed") -> dict[str, JSON]:
    """A Pod or a workload around :func:`admitted_specs`; annotations (ignore ones
    included) on the object and its template, and pieces of the path sometimes missing."""
    kind = draw(st.sampled_from(["Pod", *WORKLOAD_KINDS]))
    spec = draw(admitted_specs(route))
    metadata: dict[str, JSON] = {"name": "x"}
    if draw(st.booleans()):
        metadata["annotations"] = draw(_annotations())
    keep_empty = draw(st.booleans())  # an empty spec, or none at all
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": kind, "metadata": metadata,
                **({"spec": spec} if spec or keep_empty else {})}
    template: dict[str, JSON] = {"spec": spec} if spec or keep_empty else {}
    if draw(st.booleans()):
        template["metadata"] = {"annotations": draw(_annotations())}
    path = WORKLOAD_KINDS[kind]
    if draw(st.integers(0, 9)):
        node = _prefix(path, template)
    else:  # the template is missing from some key of its path on
        node = _prefix(path[: draw(st.integers(0, len(path) - 1))], {})
    return {"apiVersion": "v1", "kind": kind, "metadata": metadata, **node}


def _prefix(path: tuple[str, ...], node: dict[str, JSON]) -> dict[str, JSON]:
    for key in reversed(path):
        node = {key: node}
    return node


# Which kind each (API group, resource) of a resourceRule admits, restated from the API
# reference (not imported from the policy module).
_KIND_OF_RESOURCE = {
    ("", "pods"): "Pod", ("", "replicationcontrollers"): "ReplicationController",
    ("", "podtemplates"): "PodTemplate", ("apps", "deployments"): "Deployment",
    ("apps", "daemonsets"): "DaemonSet", ("apps", "statefulsets"): "StatefulSet",
    ("apps", "replicasets"): "ReplicaSet", ("batch", "jobs"): "Job",
    ("batch", "cronjobs"): "CronJob",
}


class AdmissionPolicy:
    """A ValidatingAdmissionPolicy run as the API server runs it, with a real CEL
    implementation (cel-expr-python, cel-cpp): the CEL environment the API server has from
    1.28 (optional types, ext strings), variables in order, then each validation; a
    failed one yields its message. An evaluation error or a non-boolean result fails the
    test: on an API server it would trip failurePolicy instead of giving a verdict."""

    def __init__(self, policy: Mapping[str, JSON]) -> None:
        import sys

        import pytest

        if sys.version_info < (3, 11):  # even under CI: no wheel for 3.10
            pytest.skip("cel-expr-python needs Python 3.11 or newer")
        cel = require("cel_expr_python.cel", "ci")
        ext_optional = require("cel_expr_python.ext.ext_optional", "ci")
        ext_strings = require("cel_expr_python.ext.ext_strings", "ci")
        self._cel: Any = cel
        env = cel.NewEnv(
            variables={"object": cel.Type.DYN, "variables": cel.Type.DYN},
            extensions=[ext_optional.ExtOptional(), ext_strings.ExtStrings()],
        )
        spec = policy["spec"]
        self.kinds: set[str] = self.kinds_of(policy)
        self.variables: list[tuple[str, Any]] = [
            (v["name"], env.compile(v["expression"])) for v in spec["variables"]
        ]
        self.validations: list[tuple[str, Any]] = [
            (v["message"], env.compile(v["expression"])) for v in spec["validations"]
        ]

    @staticmethod
    def kinds_of(policy: Mapping[str, JSON]) -> set[str]:
        """The kinds whose CREATE and UPDATE at v1 the policy's resourceRules match."""
        return {
            _KIND_OF_RESOURCE[group, resource]
            for rule in policy["spec"]["matchConstraints"]["resourceRules"]
            if set(rule["operations"]) >= {"CREATE", "UPDATE"} and rule["apiVersions"] == ["v1"]
            for group in rule["apiGroups"] for resource in rule["resources"]
        }

    def _value(self, name: str, expression: Any, data: Mapping[str, JSON]) -> Any:
        value = expression.eval(data=data)
        if value.type() == self._cel.Type.ERROR:
            raise AssertionError(f"{name}: evaluation error {value.plain_value()!r}")
        return value

    def failures(self, obj: Mapping[str, JSON]) -> list[str]:
        """The messages of the validations ``obj`` fails (none when not matched)."""
        if obj.get("kind") not in self.kinds:
            return []
        values: dict[str, Any] = {}
        data = {"object": obj, "variables": values}
        for name, expression in self.variables:
            values[name] = self._value(name, expression, data).plain_value()
        failed = []
        for message, expression in self.validations:
            value = self._value(message, expression, data)
            if value.type() != self._cel.Type.BOOL:
                raise AssertionError(f"{message}: not a boolean: {value.plain_value()!r}")
            if not value.value():
                failed.append(message)
        return failed


def without_nulls(value: JSON) -> JSON:
    """``value`` as the API server hands it to admission: explicit nulls are unset."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


# --- the command line in a child process: exit status, stderr lines, time, peak RSS ------


@dataclass(frozen=True)
class ChildRun:
    """One ``kubelet-winnet`` run in a child process, started as the console script is
    (``benchmarks/peak.py``): ``err_lines`` without the child's own peak-RSS line."""

    status: int
    out: bytes
    err_lines: list[str]
    seconds: float
    peak_mb: float


def cli_child(args: list[str], *, stdin: bytes | None = None, timeout: float = 300,
              cwd: Path | None = None) -> ChildRun:
    import importlib.util
    import os
    import subprocess
    import sys
    import tempfile
    import time

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "peak.py"
    spec = importlib.util.spec_from_file_location("_benchmark_peak", path)
    assert spec is not None and spec.loader is not None
    peak = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peak)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        child = subprocess.Popen(
            [sys.executable, "-c", peak.CONSOLE_SCRIPT, *args], cwd=cwd,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=out, stderr=err,
        )
        try:
            if stdin is not None:
                assert child.stdin is not None
                try:
                    child.stdin.write(stdin)
                    child.stdin.close()
                except BrokenPipeError:
                    pass
            usage = None
            if _wait(child, timeout):
                _, status, usage = os.wait4(child.pid, 0)
                child.returncode = os.waitstatus_to_exitcode(status)
        finally:
            if child.returncode is None:
                child.kill()
                child.wait()
        seconds = time.monotonic() - start
        if usage is None:
            raise AssertionError(f"kubelet-winnet {' '.join(args)[:200]} ran past {timeout}s")
        out.seek(0)
        err.seek(0)
        raw_err = err.read()
        lines = [line for line in raw_err.decode("utf-8", "replace").splitlines()
                 if not line.startswith("VmHWM ")]
        return ChildRun(child.returncode, out.read(), lines, seconds,
                        peak.peak_mb(raw_err, usage))


def _wait(child: Any, timeout: float) -> bool:
    """Whether the child ends within ``timeout`` seconds (it is not reaped here)."""
    import os
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        time.sleep(0.02)
    return False


def without_summary(err: str) -> list[str]:
    """stderr's lines without check's summary lines (`N pods in M files checked: ...`)."""
    return [line for line in err.splitlines()
            if not re.match(r"kubelet-winnet: \d+ pods? in \d+ files? checked: ", line)]


# A plain Windows Pod as a user writes it (the command-line tests of what users meet).
WINDOWS_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  nodeSelector:
    kubernetes.io/os: windows
  containers:
  - name: c
    image: mcr.microsoft.com/windows/nanoserver:ltsc2022
"""


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``kubelet-winnet ARGV`` in this process: exit status, stdout, stderr (never a
    traceback)."""
    from kubelet_winnet.cli import main

    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


# A Helm chart template: not a manifest until `helm template` renders it.
HELM_TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Values.name }}
spec:
  template:
    spec:
      {{- if .Values.hostNetwork }}
      hostNetwork: true
      {{- end }}
"""


def running_node(target: Path, name: str = "win-2025-a") -> Path:
    """A copy of the node folder ``name`` at ``target / name`` whose kubelet and CNI
    plugins start: win-2025-a's kubelet-config.yaml sets WindowsHostNetwork, which kubelet
    1.38 refuses at start-up, and its config.toml a bin_dir containerd 2.4 ignores, so no
    CNI plugin is found. With those two fixed, its pods reach flannel (what the tests of
    its hostPorts and DNS are about); test_node.py tests the two stops themselves."""
    import shutil

    folder = target / name
    shutil.copytree(REPO_ROOT / "tests" / "data" / "node" / "nodes" / name, folder)
    kubelet = folder / "kubelet-config.yaml"
    text = kubelet.read_text(encoding="utf-8")
    assert "featureGates:\n  WindowsHostNetwork: false\n" in text
    kubelet.write_text(text.replace("featureGates:\n  WindowsHostNetwork: false\n", ""),
                       encoding="utf-8")
    config = folder / "config.toml"
    text = config.read_text(encoding="utf-8")
    assert 'bin_dir = "C:\\\\k\\\\cni"' in text
    config.write_text(text.replace('bin_dir = "C:\\\\k\\\\cni"', 'bin_dirs = ["C:\\\\k\\\\cni"]'),
                      encoding="utf-8")
    return folder
