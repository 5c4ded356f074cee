"""Benchmark: ``pod_sandbox_config`` and ``container_config`` per corpus pod against what
the official client pays to deserialize the same pod into a ``V1Pod`` (the budgets: at
most 1x when specs repeat, as a workload's pods do; at most 2.5x for ``container_config``
when every container spec is new), and against their floors (informational).

"Every spec new": each round gives each pod's containers a name and an image no call
has seen (a suffix with the round and the pod's index), so no cache keyed on a
container (its hash, its encoded message) can answer; both sides read the same renamed
pods, which are made before the round is timed.

The budget's reference is ``kubernetes.client.ApiClient``'s own deserializer, as it builds
a ``V1Pod`` from an API response (a workload's template as a Pod): what a Python program
that reads pods from the API server already pays per pod. Without the client installed
those rows are left out, with a note.

The floor builds and serializes the same ``PodSandboxConfig`` from values computed
beforehand (no pod reading, no rules): what any implementation must at least pay to
produce the message. Each round times both, back to back, over every accepted corpus
pod. The verdict uses the ratio of the two best rounds (``min`` over rounds, per pod):
on a shared machine preemption only ever adds time, so the minimum is each side's own
cost; the median of the per-round ratios is printed too. ``container_config`` is measured
the same way for each pod's first container, against building and serializing the same
``ContainerConfig`` from precomputed values. The exit code is non-zero only when
something errors or a floor disagrees on bytes, never for a verdict.

Usage::

    python benchmarks/cri_requests.py            # ~10 s
    python benchmarks/cri_requests.py --quick    # what CI runs: every path, few rounds
    python benchmarks/cri_requests.py --json out.json
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

import kubelet_winnet as kw
from cri_api.runtime.v1 import api_pb2
from kubelet_winnet._kubelet.pod import WORKLOAD_TEMPLATE_PATHS

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"
FALLBACK_CORPUS = REPO / "tests" / "data" / "manifests"  # in every clone
BUDGET = 1.0  # each builder / the client's V1Pod deserialization of the same pod
BUDGET_NEW_SPECS = 2.5  # container_config / V1Pod when every container spec is new

Values = tuple[Any, ...]


def load_pods(corpus: Path) -> list[tuple[str, dict[str, Any]]]:
    """Every Pod document and workload (its template is used) the kubelet accepts."""
    pods = []
    for path in sorted(corpus.glob("*.y*ml")):
        for number, doc in enumerate(yaml.safe_load_all(path.read_text(encoding="utf-8"))):
            if not isinstance(doc, dict):
                continue
            if doc.get("kind") != "Pod" and doc.get("kind") not in WORKLOAD_TEMPLATE_PATHS:
                continue
            try:
                kw.pod_sandbox_config(doc)
            except kw.SandboxConfigError:
                continue  # refused pods produce no message to compare with a floor
            pods.append((f"{path.name}#{number}", doc))
    return pods


def precompute(config: api_pb2.PodSandboxConfig) -> Values:
    """The values the floor needs, as plain Python data."""
    linux = config.linux
    security = linux.security_context
    options = security.namespace_options
    windows = config.windows.security_context
    network = windows.namespace_options.network if windows.HasField("namespace_options") else None
    return (
        config.metadata.name, config.metadata.uid, config.metadata.namespace,
        config.metadata.attempt, config.hostname, config.log_directory,
        list(config.dns_config.servers), list(config.dns_config.searches),
        list(config.dns_config.options),
        [(m.protocol, m.container_port, m.host_port, m.host_ip) for m in config.port_mappings],
        dict(config.labels), dict(config.annotations),
        security.privileged, dict(linux.sysctls), options.network, options.pid, options.ipc,
        list(security.supplemental_groups), security.supplemental_groups_policy,
        windows.run_as_username, windows.credential_spec, windows.host_process, network,
    )


def floor(values: Values) -> bytes:
    """Build and serialize the message from precomputed values."""
    (name, uid, namespace, attempt, hostname, log_directory, servers, searches, dns_options,
     ports, labels, annotations, privileged, sysctls, net, pid, ipc, groups, policy,
     user, credential_spec, host_process, windows_network) = values
    config = api_pb2.PodSandboxConfig()
    metadata = config.metadata
    metadata.name = name
    metadata.uid = uid
    metadata.namespace = namespace
    metadata.attempt = attempt
    config.hostname = hostname
    config.log_directory = log_directory
    dns = config.dns_config
    dns.SetInParent()
    dns.servers.extend(servers)
    dns.searches.extend(searches)
    dns.options.extend(dns_options)
    for protocol, container_port, host_port, host_ip in ports:
        config.port_mappings.add(protocol=protocol, container_port=container_port,
                                 host_port=host_port, host_ip=host_ip)
    config_labels = config.labels  # entry by entry: what upb does fastest
    for key, item in labels.items():
        config_labels[key] = item
    config_annotations = config.annotations
    for key, item in annotations.items():
        config_annotations[key] = item
    linux = config.linux
    security = linux.security_context
    security.privileged = privileged
    security.seccomp.SetInParent()
    linux.sysctls.update(sysctls)
    options = security.namespace_options
    options.SetInParent()
    options.network = net
    options.pid = pid
    options.ipc = ipc
    security.supplemental_groups.extend(groups)
    security.supplemental_groups_policy = policy
    windows = config.windows.security_context
    windows.SetInParent()
    windows.run_as_username = user
    windows.credential_spec = credential_spec
    windows.host_process = host_process
    if windows_network is not None:
        windows.namespace_options.SetInParent()
        windows.namespace_options.network = windows_network
    return config.SerializeToString(deterministic=True)


def first_container(doc: dict[str, Any]) -> str | None:
    """The name of the pod's (or the template's) first regular container."""
    spec = doc.get("spec") or {}
    for _ in range(3):  # Pod, workload template, CronJob's job template
        if "containers" in spec:
            break
        spec = ((spec.get("jobTemplate") or {}).get("spec") or spec).get("template", {})
        spec = spec.get("spec") or {}
    containers = spec.get("containers") or []
    return containers[0].get("name") if containers else None


def precompute_container(config: api_pb2.ContainerConfig) -> Values:
    """The values the container floor needs, as plain Python data."""
    resources = config.windows.resources
    security = config.windows.security_context
    return (
        config.metadata.name, config.metadata.attempt, config.image.image,
        config.image.user_specified_image, list(config.command), list(config.args),
        config.working_dir, [(e.key, e.value) for e in config.envs], dict(config.labels),
        dict(config.annotations), config.log_path, config.stdin, config.stdin_once,
        config.tty, resources.cpu_maximum, resources.memory_limit_in_bytes,
        security.run_as_username, security.credential_spec, security.host_process,
        [(m.container_path, m.host_path, m.readonly, m.propagation) for m in config.mounts],
    )


def container_floor(values: Values) -> bytes:
    """Build and serialize the ``ContainerConfig`` from precomputed values."""
    (name, attempt, image, user_image, command, arguments, working_dir, envs, labels,
     annotations, log_path, stdin, stdin_once, tty, cpu_maximum, memory, user,
     credential_spec, host_process, mounts) = values
    config = api_pb2.ContainerConfig()
    config.metadata.name = name
    config.metadata.attempt = attempt
    config.image.image = image
    config.image.user_specified_image = user_image
    config.command.extend(command)
    config.args.extend(arguments)
    config.working_dir = working_dir
    # The cheapest ways upb offers (the library uses the same): a repeated message's
    # add() then its fields, a map's entries one by one (update() walks in Python).
    config_envs = config.envs
    for key, item in envs:
        pair = config_envs.add()
        pair.key = key
        pair.value = item
    config_labels = config.labels
    for key, item in labels.items():
        config_labels[key] = item
    config_annotations = config.annotations
    for key, item in annotations.items():
        config_annotations[key] = item
    config_mounts = config.mounts
    for container_path, host_path, readonly, propagation in mounts:
        mount = config_mounts.add()
        mount.container_path = container_path
        mount.host_path = host_path
        mount.readonly = readonly
        mount.propagation = propagation
    config.log_path = log_path
    config.stdin = stdin
    config.stdin_once = stdin_once
    config.tty = tty
    windows = config.windows
    windows.resources.SetInParent()
    windows.resources.cpu_maximum = cpu_maximum
    windows.resources.memory_limit_in_bytes = memory
    security = windows.security_context
    security.SetInParent()
    security.run_as_username = user
    security.credential_spec = credential_spec
    security.host_process = host_process
    return config.SerializeToString(deterministic=True)


def container_library(case: tuple[dict[str, Any], str]) -> bytes:
    return kw.container_config(case[0], case[1]).SerializeToString(deterministic=True)


def library(doc: dict[str, Any]) -> bytes:
    return kw.pod_sandbox_config(doc).SerializeToString(deterministic=True)


# The client's private deserializer, as it builds a V1Pod from an API response (the name is
# mangled; held in a variable so the lookup reads the same with typed and untyped clients).
_CLIENT_DESERIALIZE = "_ApiClient__deserialize"


def client_deserializer() -> Callable[[Any], Any] | None:
    """The official client's ``V1Pod`` deserializer (None without the client)."""
    try:
        from kubernetes.client import ApiClient
    except ImportError:
        return None
    deserialize: Callable[[object, str], Any] = getattr(ApiClient(), _CLIENT_DESERIALIZE)
    return lambda manifest: deserialize(manifest, "V1Pod")


def client_rows(
    deserialize: Callable[[Any], Any], docs: list[dict[str, Any]],
    cases: list[tuple[dict[str, Any], str]], rounds: int, repeat: int,
) -> dict[str, tuple[list[float], list[float], list[float]]]:
    """Each builder against the client's deserialization of the same pods, over the pods
    the client can read (one corpus pod has an integer extended-resource limit, which the
    client 37 refuses): both sides of a row see the same pods."""
    def readable(doc: dict[str, Any]) -> bool:
        try:
            deserialize(as_pod(doc))
        except (ValueError, TypeError):  # pydantic's ValidationError is a ValueError
            return False
        return True

    kept_docs = [doc for doc in docs if readable(doc)]
    kept_cases = [case for case in cases if readable(case[0])]
    for doc, name in kept_cases:  # the renamed pods must still be read by both sides
        kw.container_config(renamed(doc, "check"), f"{name}-check"[:63])
    return {
        "pod_sandbox_config / V1Pod deserialization": _pair(
            library, kept_docs, deserialize, [as_pod(d) for d in kept_docs], rounds, repeat),
        "container_config / V1Pod deserialization": _pair(
            container_library, kept_cases, deserialize, [as_pod(d) for d, _ in kept_cases],
            rounds, repeat),
        "pod_sandbox_config / V1Pod deserialization, every spec new": new_spec_row(
            deserialize, kept_cases, rounds, sandbox=True),
        "container_config / V1Pod deserialization, every spec new": new_spec_row(
            deserialize, kept_cases, rounds),
    }


def renamed(doc: dict[str, Any], tag: str) -> dict[str, Any]:
    """``doc`` with every container's name and image made new by ``tag`` (a deep copy)."""
    copy: dict[str, Any] = json.loads(json.dumps(doc))
    spec = as_pod(copy)["spec"]
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or ():
            container["name"] = f"{container['name']}-{tag}"[:63]
            container["image"] = f"{container.get('image') or 'image'}-{tag}"
    return copy


def new_spec_row(
    deserialize: Callable[[Any], Any], cases: list[tuple[dict[str, Any], str]], rounds: int,
    *, sandbox: bool = False,
) -> tuple[list[float], list[float], list[float]]:
    """``container_config`` (``sandbox``: ``pod_sandbox_config``) against the client's
    deserialization when no container spec repeats: each round reads pods renamed for
    that round only."""
    lib_times, ref_times, ratios = [], [], []
    for index in range(rounds):
        tag = f"r{index}"
        fresh = [(renamed(doc, f"{tag}p{n}"), f"{name}-{tag}p{n}"[:63])
                 for n, (doc, name) in enumerate(cases)]
        pods = [as_pod(doc) for doc, _ in fresh]
        operation: Callable[[Any], bytes] = container_library
        inputs: list[Any] = fresh
        if sandbox:
            operation, inputs = library, [doc for doc, _ in fresh]
        if index % 2:
            ref = _time_batch(deserialize, pods, 1)
            lib = _time_batch(operation, inputs, 1)
        else:
            lib = _time_batch(operation, inputs, 1)
            ref = _time_batch(deserialize, pods, 1)
        lib_times.append(lib)
        ref_times.append(ref)
        ratios.append(lib / ref)
    return lib_times, ref_times, ratios


def as_pod(doc: dict[str, Any]) -> dict[str, Any]:
    """The pod a document stands for: a Pod as it is, a workload's template as a Pod."""
    if doc.get("kind") == "Pod":
        return doc
    template: Any = doc
    for key in WORKLOAD_TEMPLATE_PATHS[doc["kind"]]:
        template = template[key]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": template.get("metadata") or {},
            "spec": template["spec"]}


# Wall time by default; --clock cpu counts only this process's CPU time, which a machine
# shared with other jobs disturbs less (preemption is not counted, cache pollution is).
_CLOCK: list[Callable[[], float]] = [time.perf_counter]


def _time_batch(operation: Callable[[Any], bytes], inputs: Sequence[Any], repeat: int) -> float:
    clock = _CLOCK[0]
    gc.disable()
    try:
        start = clock()
        for _ in range(repeat):
            for item in inputs:
                operation(item)
        elapsed = clock() - start
    finally:
        gc.enable()
    return elapsed / (repeat * len(inputs))


def _pair(
    operation: Callable[[Any], bytes], inputs: Sequence[Any],
    reference: Callable[[Any], bytes], reference_inputs: Sequence[Any],
    rounds: int, repeat: int,
) -> tuple[list[float], list[float], list[float]]:
    """Per-input times of ``operation`` and its floor, back to back in each round (the
    order alternating), and the ratio within each round."""
    lib_times, floor_times, ratios = [], [], []
    for index in range(rounds):
        if index % 2:
            f = _time_batch(reference, reference_inputs, repeat)
            lib = _time_batch(operation, inputs, repeat)
        else:
            lib = _time_batch(operation, inputs, repeat)
            f = _time_batch(reference, reference_inputs, repeat)
        lib_times.append(lib)
        floor_times.append(f)
        ratios.append(lib / f)
    return lib_times, floor_times, ratios


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few rounds (CI)")
    parser.add_argument("--corpus", type=Path, default=None,
                        help="default: ../shared/corpus, else tests/data/manifests")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall time (default) or this process's CPU time")
    args = parser.parse_args(argv)
    _CLOCK[0] = time.process_time if args.clock == "cpu" else time.perf_counter
    corpus = args.corpus or (DEFAULT_CORPUS if DEFAULT_CORPUS.is_dir() else FALLBACK_CORPUS)
    pods = load_pods(corpus)
    if not pods:
        print(f"no accepted pods in {corpus}", file=sys.stderr)
        return 1
    docs = [doc for _, doc in pods]
    values = [precompute(kw.pod_sandbox_config(doc)) for doc in docs]
    mismatched = [label for (label, doc), vals in zip(pods, values, strict=True)
                  if library(doc) != floor(vals)]
    if mismatched:
        print("floor and library disagree on: " + ", ".join(mismatched), file=sys.stderr)
        return 1
    cases = []
    for doc in docs:
        name = first_container(doc)
        try:
            if name is not None:
                kw.container_config(doc, name)
                cases.append((doc, name))
        except (kw.SandboxConfigError, kw.InvalidPodError):
            continue  # needs a ConfigMap, Secret or volume path the benchmark does not supply
    container_values = [precompute_container(kw.container_config(*case)) for case in cases]
    if any(container_library(case) != container_floor(vals)
           for case, vals in zip(cases, container_values, strict=True)):
        print("the container floor and the library disagree", file=sys.stderr)
        return 1
    rounds, repeat = (3, 1) if args.quick else (80, 2)
    rows = {
        "pod_sandbox_config / floor": _pair(library, docs, floor, values, rounds, repeat),
        "container_config / floor": _pair(container_library, cases, container_floor,
                                          container_values, rounds, repeat),
    }
    deserialize = client_deserializer()
    if deserialize is not None:
        rows.update(client_rows(deserialize, docs, cases, rounds, repeat))
    print(f"pods measured: {len(docs)} ({len(cases)} first containers), rounds: {rounds}")
    print("| ratio | builder, median per pod (us) | reference, median per pod (us) "
          "| best rounds | median of per-round ratios | budget | verdict |")
    print("|---|---|---|---|---|---|---|")
    results: dict[str, Any] = {"pods": len(docs), "containers": len(cases), "rounds": rounds}
    for name, (lib_times, reference_times, ratios) in rows.items():
        paired = statistics.median(ratios)
        ratio = min(lib_times) / min(reference_times)
        budgeted = "V1Pod" in name
        budget = BUDGET_NEW_SPECS if "spec new" in name else BUDGET
        verdict = ("met" if ratio <= budget else "missed") if budgeted else "-"
        print(f"| {name} | {statistics.median(lib_times) * 1e6:.1f} | "
              f"{statistics.median(reference_times) * 1e6:.1f} | {ratio:.2f}x | {paired:.2f}x "
              f"| {f'<= {budget}x' if budgeted else 'informational'} | {verdict} |")
        results[name] = {"builder_us": statistics.median(lib_times) * 1e6,
                         "reference_us": statistics.median(reference_times) * 1e6,
                         "ratio": ratio, "paired_median_ratio": paired, "verdict": verdict}
    if deserialize is None:
        print("\nThe kubernetes client is not installed, so the budget rows (against its V1Pod "
              "deserializer) are left out; pip install -e '.[ci]' adds them.")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
