"""Which JSON decoder should the streaming reader stand on?

Usage (after ``pip install -e .[test]``; the candidates are optional)::

    pip install msgspec orjson ijson      # a missing candidate is skipped
    python benchmarks/readers.py          # a 20,000-pod List, ~1 minute
    python benchmarks/readers.py --quick  # 500 pods, one round (CI: it must run)

The List is ``benchmarks/gen_manifests.py``'s, in a temporary directory. Each round times,
in one process and alternating order (process time, so other jobs on the machine count
less), every way of reading its items:

* ``json.load`` of the whole file: the reference of ``benchmarks/check.py``;
* ``read_source``: the project's reader (duplicate keys refused with their line, each
  item's line, depth and size limits, bounded memory);
* per item, what a reader built on each candidate would pay at least: the stdlib decoder
  with the reader's hooks (``object_pairs_hook`` for duplicate keys, ``parse_int`` for
  the digit limit), without them, msgspec (finding the item's end by skipping it as
  ``Raw``, decoding it, and the cheapest sound duplicate-key check: a repeated key
  drops one ``:`` from the value's encoding), orjson (no way to find where an item
  ends: decoded whole, no duplicate check); ijson's C backend streams items, but
  without lines or duplicate keys; msgspec decoding into typed structs only the fields
  targeting and the rules read (the rest skipped unseen, so no duplicate check);
* what ``check``'s own rules cost on top: targeting and ``check_pod`` on values decoded
  beforehand, and after the msgspec row's decode and duplicate check (no item end, no
  lines, no output: less than any ``check`` built on these rules can pay).

The table gives each row's median time over rounds as a ratio to ``json.load``. The exit
code is non-zero only when a candidate reads other values than ``json.load``.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
gen_manifests = importlib.import_module("gen_manifests")  # a sibling script, not a package

from kubelet_winnet.sources import manifests as reader  # noqa: E402
from kubelet_winnet.sources.manifests.json_reader import DECODER  # noqa: E402


def _optional(name: str) -> Any:
    """An optional candidate's module, or None when it is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _items(path: Path) -> list[str]:
    """Each item's text, as the reader hands it to a decoder."""
    value = json.loads(path.read_text(encoding="utf-8"))
    return [json.dumps(item, indent=4) for item in value["items"]]


def _load(path: Path) -> Callable[[], int]:
    def run() -> int:
        with path.open("rb") as handle:
            return len(json.load(handle)["items"])
    return run


def _read_source(path: Path) -> Callable[[], int]:
    return lambda: sum(1 for _ in reader.read_source(str(path)))


def _stdlib(texts: list[str], hooks: bool) -> Callable[[], int]:
    decoder = DECODER if hooks else json.JSONDecoder()
    return lambda: sum(1 for text in texts if decoder.raw_decode(text)[0])


def _msgspec(texts: list[str]) -> Callable[[], int] | None:
    msgspec = _optional("msgspec")
    if msgspec is None:
        return None
    skip = msgspec.json.Decoder(msgspec.Raw).decode
    decode = msgspec.json.Decoder().decode
    encode = msgspec.json.Encoder().encode
    # Each item followed by what follows it in a List, so the skip finds its end.
    windows = [text + ",\n{" for text in texts]

    def run() -> int:
        count = 0
        for text, window in zip(texts, windows, strict=True):
            end = len(window)
            try:
                skip(window)
            except msgspec.DecodeError as exc:  # "trailing characters (byte N)"
                end = int(str(exc).rsplit(" ", 1)[1][:-1]) - 1
            value = decode(window[:end])
            if text.count(":") == encode(value).count(b":"):
                count += 1
        return count
    return run


def _rules(values: list[Any], decoder: Callable[[str], Any] | None = None,
           texts: list[str] | None = None) -> Callable[[], int]:
    """Targeting and ``check_pod`` per item: on values decoded beforehand (the rules'
    own cost), or (``decoder``) after the msgspec row's decode and duplicate check, the
    least a ``check`` on these rules pays before it finds a line or writes a finding."""
    from kubelet_winnet._lint.checks import check_pod
    from kubelet_winnet._lint.reach import host_network_reach
    from kubelet_winnet._lint.targeting import Target, pod_object, target_of

    reach = host_network_reach("1.34", {}, True)

    def lint(value: Any) -> int:
        pod = pod_object(value)
        if pod is None:
            return 0
        target = target_of(pod)[0]
        if target is Target.WINDOWS:
            check_pod(pod, target, reach)
        return 1

    if decoder is None:
        return lambda: sum(lint(value) for value in values)
    msgspec = _optional("msgspec")
    assert texts is not None and msgspec is not None
    encode = msgspec.json.Encoder().encode

    def run() -> int:
        count = 0
        for text in texts:
            value = decoder(text)
            if text.count(":") == encode(value).count(b":"):
                count += lint(value)
        return count
    return run


def _typed(texts: list[str]) -> Callable[[], int] | None:
    """msgspec decoding only what targeting and the rules read into typed structs; the
    rest is skipped unseen, so a repeated key there cannot be found."""
    msgspec = _optional("msgspec")
    if msgspec is None:
        return None

    def struct(name: str, fields: str, **typed: Any) -> Any:
        return msgspec.defstruct(name, [(field, Any, None) for field in fields.split()]
                                 + [(field, kind, None) for field, kind in typed.items()])

    containers: Any = list[struct("Container", "name securityContext ports")] | None  # type: ignore[misc]
    spec = struct(
        "Spec", "os nodeSelector affinity tolerations runtimeClassName hostNetwork hostPID "
        "hostIPC shareProcessNamespace hostUsers securityContext",
        containers=containers, initContainers=containers, ephemeralContainers=containers,
    )
    item = struct("Item", "kind", metadata=struct("Metadata", "name namespace annotations")
                  | None, spec=spec | None)
    decode = msgspec.json.Decoder(item).decode
    return lambda: sum(1 for text in texts if decode(text))


def _orjson(texts: list[str]) -> Callable[[], int] | None:
    orjson = _optional("orjson")
    if orjson is None:
        return None
    return lambda: sum(1 for text in texts if orjson.loads(text))


def _ijson(path: Path) -> Callable[[], int] | None:
    ijson = _optional("ijson")
    if ijson is None:
        return None

    def run() -> int:
        with path.open("rb") as handle:
            return sum(1 for _ in ijson.items(handle, "items.item", use_float=True))
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="500 pods, one round (CI)")
    parser.add_argument("--pods", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    pods, rounds = (500, 1) if args.quick else (args.pods, args.rounds)
    with tempfile.TemporaryDirectory(prefix="winnet-readers-") as tmp:
        path = Path(tmp) / "list.json"
        gen_manifests.write_list(path, pods)
        texts = _items(path)
        want = json.loads(path.read_text(encoding="utf-8"))["items"]
        msgspec = _optional("msgspec")
        decoder = msgspec.json.Decoder().decode if msgspec is not None else None
        rows: dict[str, Callable[[], int] | None] = {
            "json.load of the whole List (reference)": _load(path),
            "read_source (the project's reader)": _read_source(path),
            "stdlib decoder, the reader's hooks, per item": _stdlib(texts, hooks=True),
            "stdlib decoder, no hooks, per item": _stdlib(texts, hooks=False),
            "msgspec: skip to the end, decode, duplicate check, per item": _msgspec(texts),
            "orjson, per item (no end, no duplicate check)": _orjson(texts),
            "msgspec, typed: only the fields the rules read (no duplicate check possible)":
                _typed(texts),
            "targeting and the rules alone, per item decoded beforehand": _rules(want),
            "msgspec decode and duplicate check, then targeting and the rules "
            "(no end, lines or output)": _rules(want, decoder, texts) if decoder else None,
            "ijson yajl2_c items (no lines, no duplicate check)": _ijson(path),
        }
        for name, run in rows.items():  # every candidate reads all items
            if run is not None and run() != len(want):
                print(f"{name} read other items than json.load", file=sys.stderr)
                return 1
        times: dict[str, list[float]] = {name: [] for name, run in rows.items() if run}
        order = list(times)
        for index in range(rounds):
            for name in order if index % 2 else order[::-1]:
                run = rows[name]
                assert run is not None
                gc.collect()
                start = time.process_time()
                run()
                times[name].append(time.process_time() - start)
    reference = statistics.median(times[order[0]])
    print(f"{pods:,} pods, {rounds} rounds, process time\n")
    print("| reader | median s | × json.load |")
    print("|---|---:|---:|")
    for name, run in rows.items():
        if run is None:
            print(f"| {name} | not installed | - |")
            continue
        median = statistics.median(times[name])
        print(f"| {name} | {median:.3f} | {median / reference:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
