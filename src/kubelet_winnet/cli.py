"""``kubelet-winnet``: translate and explain Windows pod manifests from the shell.

Exit status: 0 every pod translated; 1 the kubelet would refuse at least one pod
(``FailedCreatePodSandbox``); 2 bad input, flags or usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from kubelet_winnet._pod import WORKLOAD_TEMPLATE_PATHS, pod_identity
from kubelet_winnet._profile import DEFAULT_KUBELET_VERSION
from kubelet_winnet.errors import SandboxConfigError, WinnetError

__all__ = ["main"]

_POD_KINDS = frozenset(WORKLOAD_TEMPLATE_PATHS) | {"Pod"}


@dataclass(frozen=True)
class Document:
    source: str  # "file.yaml#3" (1-based document number; items of a List as "#3.items[0]")
    manifest: Any


class InputError(Exception):
    """A file that cannot be read or parsed."""


def _load(path: str) -> list[Any]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        return list(yaml.load_all(text, Loader=loader))
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not valid YAML or JSON: {exc}") from None


def _pods(path: str) -> Iterator[Document]:
    """Pods and workloads in file order; a ``List``'s items in place; other kinds skipped."""
    label = "<stdin>" if path == "-" else path
    for number, doc in enumerate(_load(path), start=1):
        items = doc.get("items") if isinstance(doc, dict) and doc.get("kind") == "List" else None
        if isinstance(items, list):
            for index, item in enumerate(items):
                if _is_pod(item):
                    yield Document(f"{label}#{number}.items[{index}]", item)
        elif _is_pod(doc):
            yield Document(f"{label}#{number}", doc)


def _is_pod(doc: object) -> bool:
    if not isinstance(doc, dict):
        return False
    kind = doc.get("kind")
    return kind in _POD_KINDS or (kind is None and "spec" in doc)


def _profile_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="YAML or JSON manifests; - for stdin"
    )
    parser.add_argument(
        "--kubelet-version",
        default=DEFAULT_KUBELET_VERSION,
        help=f"kubelet release, 1.26 to 1.38 (default {DEFAULT_KUBELET_VERSION}, the last "
        "that implements KEP-3503)",
    )
    parser.add_argument(
        "--feature-gates",
        default=None,
        help="the kubelet's --feature-gates value, e.g. WindowsHostNetwork=false",
    )
    parser.add_argument(
        "-o", "--output", choices=("text", "json"), default="text",
        help="text: a header and proto3 JSON per pod; json: one JSON array",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kubelet-winnet",
        description="What the kubelet tells the container runtime about networking for "
        "Windows pods (CRI runtime.v1), by kubelet version and feature gates.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    translate = commands.add_parser(
        "translate", help="print each pod's WindowsPodSandboxConfig as proto3 JSON"
    )
    _profile_args(translate)
    explain = commands.add_parser(
        "explain", help="each kubelet decision, the result and warnings for each pod"
    )
    _profile_args(explain)
    from kubelet_winnet._cli_run import add_run_parser

    add_run_parser(commands)
    return parser


def _message_dict(message: Any) -> dict[str, Any]:
    from google.protobuf import json_format

    result: dict[str, Any] = json_format.MessageToDict(message)
    return result


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import kubelet_winnet as api

    # A kubelet version or --feature-gates value the kubelet cannot have is a flag error:
    # report it once, even for files that hold no pod.
    try:
        api.kubelet_profile(args.kubelet_version, args.feature_gates)
    except WinnetError as exc:
        print(f"kubelet-winnet: {exc}", file=err)
        return 2
    status = 0
    records: list[dict[str, Any]] = []
    for path in args.files:
        try:
            documents = list(_pods(path))
        except InputError as exc:
            print(f"kubelet-winnet: {exc}", file=err)
            status = 2
            continue
        for document in documents:
            record: dict[str, Any] = {
                "source": document.source,
                "pod": str(pod_identity(document.manifest)),
            }
            try:
                if args.command == "translate":
                    config = api.windows_sandbox_config(
                        document.manifest,
                        kubelet_version=args.kubelet_version,
                        feature_gates=args.feature_gates,
                    )
                    record["windowsPodSandboxConfig"] = _message_dict(config)
                else:
                    explanation = api.explain(
                        document.manifest,
                        kubelet_version=args.kubelet_version,
                        feature_gates=args.feature_gates,
                    )
                    record.update(explanation.to_dict())
                    if explanation.error is not None:
                        status = max(status, 1)
            except SandboxConfigError as exc:
                record["error"] = f"Failed to create pod sandbox: {exc}"
                status = max(status, 1)
            except WinnetError as exc:
                record["invalid"] = str(exc)
                status = 2
            records.append(record)
            if args.output == "text":
                _print_text(record, out)
    if args.output == "json":
        json.dump(records, out, indent=2)
        out.write("\n")
    return status


def _print_text(record: dict[str, Any], out: TextIO) -> None:
    out.write(f"# {record['pod']} ({record['source']})\n")
    if "invalid" in record:
        out.write(f"invalid: {record['invalid']}\n\n")
        return
    for step in record.get("steps", ()):
        out.write(f"  step {step['rule']}: {step['text']}\n")
    config = record.get("windowsPodSandboxConfig")
    if config is not None:
        out.write(json.dumps(config, indent=2) + "\n")
    if record.get("error"):
        error = record["error"]
        prefix = "" if error.startswith("Failed") else "Failed to create pod sandbox: "
        out.write(f"error: {prefix}{error}\n")
    for warning in record.get("warnings", ()):
        out.write(f"warning [{warning['code']}] {warning['field']}: {warning['message']}\n")
    out.write("\n")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            from kubelet_winnet._cli_run import run_command

            return run_command(args, sys.stdout, sys.stderr)
        return _run(args, sys.stdout, sys.stderr)
    except BrokenPipeError:  # `kubelet-winnet translate x | head`
        return 0


if __name__ == "__main__":
    sys.exit(main())
