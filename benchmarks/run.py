"""Benchmarks for kubelet-winnet: is translation cheap enough to run on every pod event,
and is ``import kubelet_winnet`` cheap enough for a node agent?

Usage (after ``pip install -e .[test]``)::

    python benchmarks/run.py                 # full run, ~20 s on 2 cores
    python benchmarks/run.py --quick         # what CI runs: every path, few iterations
    python benchmarks/run.py --json out.json # also write the results

Measured in one process, over several rounds, on the pods of the corpus
(``--corpus``, default ``../shared/corpus`` next to the repository, else ``examples/``):
every Pod document, and every workload's pod template turned into a Pod. Each round times
every operation once over all measured pods (operations interleaved, garbage collector off
during a batch); the table shows the per-pod median over rounds and the spread (min-max
and interquartile range). A target's verdict uses the paired ratio: the median over rounds
of the ratio within a round (both sides measured back to back).

Operations:

* ``dict``: ``windows_sandbox_config(manifest)``, full validation.
* ``V1Pod``: the same from a ``kubernetes.client.V1Pod`` (client 37), built beforehand.
* ``model``: the same from ``kubelet_winnet.Pod.from_manifest(...)``, built beforehand.
* ``naive``: reference 1, :func:`naive_sandbox_config` below: what a user would write
  instead, reading the same dict fields without any validation.
* ``floor``: reference 2, building the resulting message from precomputed values (and,
  in a second row, serializing it too).
* ``import``: ``import kubelet_winnet`` in a fresh interpreter against ``import yaml,
  google.protobuf`` in one (only the import is timed, not interpreter start-up): the
  budget, at most 1x. Informational: the import and the first use of a translator
  (which loads the generated messages) against importing pydantic, ``google.protobuf``
  and ``cri_api.runtime.v1.api_pb2``.

Ratios (they never change the exit code): import <= 1 x ``import yaml, google.protobuf``
(the budget); dict <= 2 x naive and V1Pod <= 2 x dict (informational). The exit code is
non-zero only if something errors, including the library disagreeing with the naive
translator on an accepted pod.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

import kubelet_winnet
from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._kubelet.pod import WORKLOAD_TEMPLATE_PATHS

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
FALLBACK_CORPUS = REPO / "examples"

# Modules `import kubelet_winnet` must not load: the import stays cheap.
FORBIDDEN_AT_IMPORT = ("kubernetes", "pydantic", "yaml", "ctypes")

Manifest = dict[str, Any]


# --- corpus ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CorpusPod:
    label: str  # file:document-index kind/name
    manifest: Manifest  # a Pod manifest (workload templates turned into Pods)
    source: Manifest  # the document as written (a Pod or a workload)


def _corpus_files(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.iterdir() if p.suffix in (".yaml", ".yml", ".json"))


def load_corpus(corpus: Path) -> list[CorpusPod]:
    """Every Pod and every workload pod template in ``corpus``, as Pod manifests."""
    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    pods: list[CorpusPod] = []
    for path in _corpus_files(corpus):
        with path.open(encoding="utf-8") as stream:
            documents = list(yaml.load_all(stream, Loader=loader))
        for index, document in enumerate(documents):
            if not isinstance(document, dict):
                continue
            kind = document.get("kind")
            if kind == "Pod":
                manifest = document
            elif isinstance(kind, str) and kind in WORKLOAD_TEMPLATE_PATHS:
                template: Any = document
                for key in WORKLOAD_TEMPLATE_PATHS[kind]:
                    template = template.get(key) if isinstance(template, dict) else None
                if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
                    continue
                manifest = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": template.get("metadata") or {},
                    "spec": template["spec"],
                }
            else:
                continue
            name = (document.get("metadata") or {}).get("name", "")
            pods.append(CorpusPod(f"{path.name}:{index} {kind}/{name}", manifest, document))
    return pods


def to_v1pod(manifest: Manifest) -> Any:
    """A client-37 ``V1Pod`` from a manifest, as the client builds it from an API response."""
    from kubernetes.client import ApiClient

    deserialize: Callable[[object, str], Any] = getattr(ApiClient(), _CLIENT_DESERIALIZE)
    return deserialize(manifest, "V1Pod")


# The client's private deserializer, as it builds a V1Pod from an API response (the name is
# mangled; held in a variable so the lookup reads the same with typed and untyped clients).
_CLIENT_DESERIALIZE = "_ApiClient__deserialize"


# --- reference 1: the naive translator --------------------------------------------------


def naive_sandbox_config(pod: Mapping[str, Any]) -> api_pb2.WindowsPodSandboxConfig:
    """What a user would write instead of the library, for kubelet 1.32 with its default
    gates: read the fields, build the message, validate nothing.

    Only what changes the sandbox message is read: ``hostNetwork``, the pod-level
    ``windowsOptions`` (``hostProcess``, ``runAsUserName``, ``gmsaCredentialSpec``) and
    every container's ``windowsOptions.hostProcess``.
    """
    spec = pod.get("spec") or {}
    host_network = bool(spec.get("hostNetwork"))
    pod_options = (spec.get("securityContext") or {}).get("windowsOptions") or {}
    pod_host_process = pod_options.get("hostProcess")
    host_process = False
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(kind) or ():
            options = (container.get("securityContext") or {}).get("windowsOptions") or {}
            flag = options.get("hostProcess")
            if flag is None:
                flag = pod_host_process
            if flag:
                host_process = True
    return api_pb2.WindowsPodSandboxConfig(
        security_context=api_pb2.WindowsSandboxSecurityContext(
            run_as_username=pod_options.get("runAsUserName") or "",
            credential_spec=pod_options.get("gmsaCredentialSpec") or "",
            host_process=host_process,
            namespace_options=api_pb2.WindowsNamespaceOption(
                network=api_pb2.NODE if host_network else api_pb2.POD
            ),
        )
    )


# --- reference 2: the floor --------------------------------------------------------------


def floor_values(config: api_pb2.WindowsPodSandboxConfig) -> tuple[str, str, bool, int | None]:
    """The values a message is built from, taken from the library's result."""
    context = config.security_context
    network = (
        context.namespace_options.network if context.HasField("namespace_options") else None
    )
    return (context.run_as_username, context.credential_spec, context.host_process, network)


def floor_build(values: tuple[str, str, bool, int | None]) -> api_pb2.WindowsPodSandboxConfig:
    """Build the message from precomputed values, nothing else."""
    user, credential_spec, host_process, network = values
    return api_pb2.WindowsPodSandboxConfig(
        security_context=api_pb2.WindowsSandboxSecurityContext(
            run_as_username=user,
            credential_spec=credential_spec,
            host_process=host_process,
            namespace_options=(
                None if network is None else api_pb2.WindowsNamespaceOption(network=network)  # type: ignore[arg-type]
            ),
        )
    )


# --- timing --------------------------------------------------------------------------------


@dataclass
class Result:
    name: str
    description: str
    pods: int
    loops: int  # passes over all pods per round
    samples_us: list[float] = field(default_factory=list)  # per pod (or per import)

    @property
    def median(self) -> float:
        return statistics.median(self.samples_us)

    @property
    def minimum(self) -> float:
        return min(self.samples_us)

    @property
    def maximum(self) -> float:
        return max(self.samples_us)

    @property
    def iqr(self) -> float:
        if len(self.samples_us) < 4:
            return self.maximum - self.minimum
        quartiles = statistics.quantiles(self.samples_us, n=4, method="inclusive")
        return quartiles[2] - quartiles[0]


def _batch(function: Callable[[Any], object], inputs: Sequence[Any], loops: int) -> float:
    """Seconds for ``loops`` passes of ``function`` over ``inputs``, gc off."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(loops):
            for item in inputs:
                function(item)
        return time.perf_counter() - start
    finally:
        gc.enable()


def _calibrate(function: Callable[[Any], object], inputs: Sequence[Any], target: float) -> int:
    """Passes over ``inputs`` that take about ``target`` seconds (at least one)."""
    loops = 1
    while True:
        elapsed = _batch(function, inputs, loops)
        if elapsed >= target / 4 or loops >= 1 << 20:
            return max(1, round(loops * target / max(elapsed, 1e-9)))
        loops *= 4


@dataclass(frozen=True)
class Operation:
    name: str
    description: str
    function: Callable[[Any], object]
    inputs: Sequence[Any]


def measure(operations: Sequence[Operation], rounds: int, target: float) -> list[Result]:
    results = []
    for op in operations:
        loops = 1 if target <= 0 else _calibrate(op.function, op.inputs, target)
        results.append(Result(op.name, op.description, len(op.inputs), loops))
    for round_index in range(rounds):
        # Rotate the order so no operation always runs right after the same one.
        shift = round_index % len(operations)
        for op, result in list(zip(operations, results, strict=True))[shift:] + list(
            zip(operations, results, strict=True)
        )[:shift]:
            elapsed = _batch(op.function, op.inputs, result.loops)
            result.samples_us.append(elapsed * 1e6 / (result.loops * len(op.inputs)))
    return results


_IMPORT_PROBE = (
    "import sys, time\n"
    "t = time.perf_counter()\n"
    "{statement}\n"
    "e = time.perf_counter() - t\n"
    "print(e, ' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))\n"
)


def _time_import(statement: str) -> tuple[float, set[str]]:
    env = dict(os.environ)
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE.format(statement=statement)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tempfile.gettempdir(),  # not the checkout: import what is installed
        env=env,
    )
    seconds, _, modules = done.stdout.strip().partition(" ")
    return float(seconds), set(modules.split())


IMPORT_LIBRARY = "import kubelet_winnet"
IMPORT_BASELINE = "import yaml, google.protobuf"
# The package loads each name's module on first use: the import and that first use.
IMPORT_FIRST_USE = "import kubelet_winnet; kubelet_winnet.windows_sandbox_config"
IMPORT_FIRST_USE_BASELINE = (
    "import pydantic, google.protobuf; from cri_api.runtime.v1 import api_pb2")


def measure_imports(rounds: int) -> tuple[list[Result], list[str]]:
    """The four import statements, each in a fresh interpreter, in turn each round."""
    results = [Result("import", IMPORT_LIBRARY, 1, 1),
               Result("import baseline", IMPORT_BASELINE, 1, 1),
               Result("import and first use", IMPORT_FIRST_USE, 1, 1),
               Result("first-use baseline", IMPORT_FIRST_USE_BASELINE, 1, 1)]
    for result in results:
        _time_import(result.description)  # warm the bytecode caches once
    loaded: set[str] = set()
    for _ in range(rounds):
        for result in results:
            seconds, modules = _time_import(result.description)
            result.samples_us.append(seconds * 1e6)
            if result.name == "import and first use":
                loaded = modules
    forbidden = sorted(m for m in FORBIDDEN_AT_IMPORT if m in loaded)
    return results, forbidden


# --- the run ---------------------------------------------------------------------------------


@dataclass
class Ratio:
    """``numerator / denominator`` three ways; the verdict uses the paired one.

    ``paired``: the median over rounds of the ratio within a round. Both operations of a
    round run back to back, so a slow spell of a shared machine (common on a 2-core VM)
    hits both; the ratio of medians and of minima are shown as checks.
    """

    name: str
    numerator: str
    denominator: str
    target: float
    budget: bool = False  # a budget of docs/performance.md; the others are informational
    paired: float = 0.0
    of_medians: float = 0.0
    of_minima: float = 0.0

    def compute(self, numerator: Result, denominator: Result) -> None:
        self.paired = statistics.median(
            a / b for a, b in zip(numerator.samples_us, denominator.samples_us, strict=True)
        )
        self.of_medians = numerator.median / denominator.median
        self.of_minima = numerator.minimum / denominator.minimum

    @property
    def verdict(self) -> str:
        within = self.paired <= self.target
        if self.budget:
            return "met" if within else "missed"
        return "informational: " + ("within" if within else "over")


def _serialized(config: api_pb2.WindowsPodSandboxConfig) -> bytes:
    return config.SerializeToString(deterministic=True)


def prepare(pods: Sequence[CorpusPod]) -> tuple[list[Operation], dict[str, Any]]:
    """Build every input outside timing; check the library against the naive translator."""
    translate = kubelet_winnet.windows_sandbox_config
    accepted: list[CorpusPod] = []
    refused: list[CorpusPod] = []
    for pod in pods:
        try:
            translate(pod.manifest)
        except kubelet_winnet.SandboxConfigError:
            refused.append(pod)
            continue
        accepted.append(pod)
    if not accepted:
        raise SystemExit("no pod in the corpus is accepted by the kubelet: nothing to measure")

    # The client's own validation rejects some real manifests (e.g. an integer resource
    # limit); those pods are left out of every measured row, so all rows see the same pods.
    measured: list[CorpusPod] = []
    v1pods: list[Any] = []
    client_rejected: list[str] = []
    for pod in accepted:
        try:
            v1pod = to_v1pod(pod.manifest)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            client_rejected.append(f"{pod.label}: {type(exc).__name__}")
            continue
        measured.append(pod)
        v1pods.append(v1pod)

    manifests = [pod.manifest for pod in measured]
    models = [kubelet_winnet.Pod.from_manifest(m) for m in manifests]
    expected = [_serialized(translate(m)) for m in manifests]
    for pod, v1pod, model, want in zip(measured, v1pods, models, expected, strict=True):
        for form, got in (
            ("naive", naive_sandbox_config(pod.manifest)),
            ("V1Pod", translate(v1pod)),
            ("model", translate(model)),
            ("workload document", translate(pod.source)),
        ):
            if _serialized(got) != want:
                raise AssertionError(f"{pod.label}: {form} gives other bytes than the dict path")
    floors = [floor_values(translate(m)) for m in manifests]
    for values, want in zip(floors, expected, strict=True):
        if _serialized(floor_build(values)) != want:
            raise AssertionError("the floor builds other bytes than the library")
    sources = [pod.source for pod in measured]
    built = [floor_build(values) for values in floors]

    def refuse(manifest: Manifest) -> None:
        try:
            translate(manifest)
        except kubelet_winnet.SandboxConfigError:
            return
        raise AssertionError("expected SandboxConfigError")

    operations = [
        Operation("dict", "windows_sandbox_config(manifest dict)", translate, manifests),
        Operation("V1Pod", "windows_sandbox_config(kubernetes V1Pod, client 37)", translate,
                  v1pods),
        Operation("model", "windows_sandbox_config(kubelet_winnet.Pod)", translate, models),
        Operation("naive", "reference 1: naive translator, no validation",
                  naive_sandbox_config, manifests),
        Operation("floor", "reference 2: build the message from precomputed values",
                  floor_build, floors),
        Operation("floor+serialize", "reference 2: build and SerializeToString",
                  lambda v: floor_build(v).SerializeToString(), floors),
        Operation("serialize", "SerializeToString of a built message alone",
                  api_pb2.WindowsPodSandboxConfig.SerializeToString, built),
        Operation("workload dict", "windows_sandbox_config(workload document as written)",
                  translate, sources),
    ]
    if refused:
        operations.append(
            Operation("dict refused", "windows_sandbox_config raising SandboxConfigError",
                      refuse, [pod.manifest for pod in refused])
        )
    facts = {
        "corpus_pods": len(pods),
        "measured_pods": len(measured),
        "refused_by_kubelet": [pod.label for pod in refused],
        "rejected_by_kubernetes_client": client_rejected,
    }
    return operations, facts


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {"python": platform.python_version()}
    for package in ("protobuf", "pydantic", "kubernetes", "kubelet-winnet"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "not installed"
    from google.protobuf.internal import api_implementation

    found["protobuf implementation"] = api_implementation.Type()
    return found


def _fmt(value: float) -> str:
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def render(
    results: Sequence[Result],
    ratios: Sequence[Ratio],
    facts: Mapping[str, Any],
    versions: Mapping[str, str],
    rounds: int,
) -> str:
    lines = [
        f"kubelet-winnet benchmark, {facts['date']}, {facts['machine']}",
        ", ".join(f"{k} {v}" for k, v in versions.items()),
        f"{facts['measured_pods']} measured pods of {facts['corpus_pods']} in {facts['corpus']}"
        f" ({len(facts['refused_by_kubelet'])} refused by the kubelet, "
        f"{len(facts['rejected_by_kubernetes_client'])} rejected by the kubernetes client); "
        f"{rounds} rounds",
        "",
        "| operation | what | µs median | min–max | IQR | loops×pods per round |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in results:
        unit = "per import" if r.name.startswith(("import", "first-use")) else "per pod"
        lines.append(
            f"| {r.name} | {r.description} ({unit}) | {_fmt(r.median)} | "
            f"{_fmt(r.minimum)}–{_fmt(r.maximum)} | {_fmt(r.iqr)} | {r.loops}×{r.pods} |"
        )
    lines += [
        "",
        "| ratio | paired (median of per-round ratios) | of medians | of minima "
        "| target | verdict |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for ratio in ratios:
        lines.append(
            f"| {ratio.name} ({ratio.numerator} / {ratio.denominator}) | "
            f"{ratio.paired:.2f} | {ratio.of_medians:.2f} | {ratio.of_minima:.2f} "
            f"| ≤ {ratio.target} | {ratio.verdict} |"
        )
    forbidden = facts["forbidden_modules_at_import"]
    lines += [
        "",
        "`import kubelet_winnet` loads "
        + (", ".join(forbidden) if forbidden else "none of " + ", ".join(FORBIDDEN_AT_IMPORT)),
    ]
    return "\n".join(lines)


def profile(op: Operation, passes: int, top: int = 15) -> str:
    """cProfile's view of ``passes`` passes of ``op``: functions by own time, with shares."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(passes):
        for item in op.inputs:
            op.function(item)
    profiler.disable()
    stats: Any = pstats.Stats(profiler)
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)
    total = sum(row[1][2] for row in rows) or 1.0
    lines = [
        f"cProfile, {op.name}: {passes} passes over {len(op.inputs)} pods "
        f"(profiler overhead inflates every call; read the shares, not the times)",
        "",
        "| function | calls per pod | own time share | cumulative share |",
        "|---|---:|---:|---:|",
    ]
    calls_total = passes * len(op.inputs)
    for (filename, line, name), (_cc, calls, own, cumulative, _callers) in rows[:top]:
        where = name if filename == "~" else f"{Path(filename).name}:{line}({name})"
        lines.append(
            f"| `{where}` | {calls / calls_total:.1f} | {100 * own / total:.0f}% "
            f"| {100 * cumulative / total:.0f}% |"
        )
    return "\n".join(lines)


def _resolve_corpus(option: str | None) -> Path:
    if option is not None:
        corpus = Path(option)
        if not corpus.is_dir():
            raise SystemExit(f"--corpus {option}: not a directory")
        return corpus
    if DEFAULT_CORPUS.is_dir() and _corpus_files(DEFAULT_CORPUS):
        return DEFAULT_CORPUS
    return FALLBACK_CORPUS


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--corpus", help=f"directory of YAML manifests (default {DEFAULT_CORPUS},"
                        f" else {FALLBACK_CORPUS})")
    parser.add_argument("--quick", action="store_true",
                        help="few iterations, for CI: checks every path runs, times nothing")
    parser.add_argument("--rounds", type=int, help="rounds (default 40, quick 2)")
    parser.add_argument("--batch-seconds", type=float, default=0.01,
                        help="target duration of one timed batch (default 0.01)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--profile", metavar="OPERATION",
                        help="instead of timing, print where OPERATION (e.g. dict, V1Pod) "
                        "spends its time, from cProfile")
    args = parser.parse_args(argv)

    rounds = args.rounds if args.rounds is not None else (2 if args.quick else 40)
    if rounds < 1:
        parser.error("--rounds must be at least 1")
    target = 0.0 if args.quick else args.batch_seconds
    corpus = _resolve_corpus(args.corpus)
    pods = load_corpus(corpus)
    if not pods:
        raise SystemExit(f"no Pod or workload documents in {corpus}")

    operations, facts = prepare(pods)
    if args.profile is not None:
        chosen = [op for op in operations if op.name == args.profile]
        if not chosen:
            parser.error(f"--profile: one of {', '.join(op.name for op in operations)}")
        print(profile(chosen[0], passes=3 if args.quick else 300))
        return 0
    results = measure(operations, rounds, target)
    import_rounds = 2 if args.quick else min(rounds, 20)
    imports, forbidden = measure_imports(import_rounds)
    results += imports

    by_name = {r.name: r for r in results}
    ratios = [
        Ratio("import vs import yaml, google.protobuf (budget)", "import",
              "import baseline", 1.0, budget=True),
        Ratio("dict path vs naive translator", "dict", "naive", 2.0),
        Ratio("V1Pod path vs dict path", "V1Pod", "dict", 2.0),
        Ratio("import and first use vs pydantic+protobuf+api_pb2", "import and first use",
              "first-use baseline", 1.3),
    ]
    for ratio in ratios:
        ratio.compute(by_name[ratio.numerator], by_name[ratio.denominator])

    facts.update(
        corpus=os.path.relpath(corpus, REPO),  # as README names it, not this machine's path
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        machine=f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()}",
        forbidden_modules_at_import=forbidden,
        quick=args.quick,
        rounds=rounds,
    )
    versions = _versions()
    print(render(results, ratios, facts, versions, rounds))
    if args.quick:
        print("\n(--quick: too few iterations for the numbers to mean anything)")
    if args.json:
        payload = {
            "facts": facts,
            "versions": versions,
            "results": [
                asdict(r) | {"median_us": r.median, "min_us": r.minimum, "max_us": r.maximum,
                             "iqr_us": r.iqr}
                for r in results
            ],
            "ratios": [asdict(r) | {"verdict": r.verdict} for r in ratios],
        }
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
