"""``kubelet-winnet translate``: each pod's ``WindowsPodSandboxConfig``, in six formats."""

from __future__ import annotations

import argparse
import json
from typing import IO, Any, TextIO

from kubelet_winnet._describe import json_string as _quote
from kubelet_winnet._printable import printable
from kubelet_winnet.cli.notes import InputNotes
from kubelet_winnet.cli.session import (
    EXIT_FINDINGS,
    Command,
    JsonArray,
    Pod,
    Session,
    add_input_arguments,
    add_profile_arguments,
    check_profile,
    exit_text,
    input_paths,
    invalid_pod,
    pods,
    report_skipped,
)
from kubelet_winnet.errors import InvalidPodError, WinnetError

__all__ = ["COMMAND"]


_TRANSLATE_FORMATS = ("text", "json", "yaml", "textproto", "hex", "binary")


def _configure_translate(parser: argparse.ArgumentParser) -> None:
    add_input_arguments(parser)
    add_profile_arguments(parser)
    parser.add_argument(
        "-o", "--output", choices=_TRANSLATE_FORMATS, default="text",
        help="text: a header and the message as JSON with every field shown; json: one "
        "array of records; yaml: one document per pod; textproto: protobuf text format; "
        "hex: the serialized bytes, one line per pod (empty for a refused pod); binary: "
        "length-delimited messages (varint size, then bytes; a refused pod has none)",
    )
    parser.epilog = exit_text(
        (0, "every file read; the kubelet accepts every pod"),
        (1, "the kubelet would refuse a pod (Failed to create pod sandbox)"),
        (2, "bad input (a file, document or field that cannot be read), bad flags or "
         "usage, or output that cannot be written"),
    )


def _run_translate(args: argparse.Namespace, session: Session) -> int:
    from kubelet_winnet._judgement import NodeKnowledge, host_network_effect
    from kubelet_winnet._kubelet.messages import sandbox_config_bytes
    from kubelet_winnet._kubelet.pod import read_pod
    from kubelet_winnet._kubelet.profile import kubelet_profile
    from kubelet_winnet._kubelet.translate import accepted_decision
    from kubelet_winnet.errors import SandboxConfigError

    if not check_profile(args, session):
        return session.status
    # windows_sandbox_config with the profile resolved once for the run, the message
    # kept as its encoding until a format needs the message
    profile = kubelet_profile(args.kubelet_version, args.feature_gates)
    network = profile.sets_namespace_options
    containerd = NodeKnowledge(runtime="containerd")  # translate knows no node: containerd's
    writer = _TranslateWriter(args.output, session.out)
    inputs = InputNotes(session, args.max_bytes, "translate")
    for item in pods(args, session, inputs.document, inputs.bad):
        inputs.document(item.document)
        manifest = item.document.value
        try:
            facts = read_pod(manifest)
            decision = accepted_decision(facts, network)
            config = sandbox_config_bytes(decision)
        except SandboxConfigError as exc:
            session.fail(EXIT_FINDINGS)
            writer.refused(item, f"Failed to create pod sandbox: {exc}")
            if args.output in ("hex", "binary"):
                session.err.write(printable(f"{session.prog}: {item.where}: "
                                            f"{item.pod.identity}: Failed to create pod "
                                            f"sandbox: {exc}") + "\n")
            continue
        except InvalidPodError as exc:
            invalid_pod(session, item.document, exc)
            continue
        except WinnetError as exc:
            session.error(f"{item.where}: document {item.document.document}: {exc}")
            continue
        writer.config(item, config)
        if facts.host_network and host_network_effect(
                profile, containerd, facts=facts, decision=decision) == "ignored":
            # The line of the hostNetwork field, located as check locates a finding's.
            line = item.document.line_of((*item.pod.spec_path, "hostNetwork"))
            session.note(
                f"{item.document.source}:{line}: {item.pod.identity}: hostNetwork: true "
                f"{profile.host_network_outcome}; the pod gets its own network namespace "
                f"({session.prog} check explains)"
            )
    writer.close()
    inputs.note_empty(input_paths(args))
    report_skipped(session)
    return session.status


class _TranslateWriter:
    def __init__(self, output: str, out: TextIO) -> None:
        self._output = output
        self._out = out
        self._array = JsonArray(out) if output == "json" else None
        self._first = True

    def _record(self, item: Pod) -> dict[str, Any]:
        return {
            "source": item.document.label,
            "line": item.document.line,
            "pod": item.pod.identity,
        }

    def _record_text(self, item: Pod, key: str, value: str) -> str:
        """``json.dumps({**self._record(item), key: <value>}, indent=2)``, with ``value``
        the JSON text of the last value as it appears one level in (written by hand:
        ``json.dumps`` with ``indent`` runs its pure-Python encoder, the cost of the
        whole translation; tests/cli/test_translate.py compares the bytes)."""
        quote = _quote
        return (f'{{\n  "source": {quote(item.document.label)},\n  "line": '
                f'{item.document.line},\n  "pod": {quote(item.pod.identity)},\n  '
                f'{quote(key)}: {value}\n}}')

    def config(self, item: Pod, data: bytes) -> None:
        """Write the ``WindowsPodSandboxConfig`` encoded as ``data`` (it has no maps, so
        its encoding is the deterministic one)."""
        output = self._output
        if output == "json" and self._array is not None:
            # The few sandbox configs of a run recur on every pod: each is written once.
            text = _CONFIG_JSON.get(data)
            if text is None:
                from cri_api.runtime.v1 import api_pb2
                from kubelet_winnet._kubelet.messages import message_json

                message = api_pb2.WindowsPodSandboxConfig.FromString(data)
                text = json.dumps(message_json(message), indent=2)
                text = text.replace("\n", "\n  ")
                if len(_CONFIG_JSON) >= 256:
                    _CONFIG_JSON.clear()
                _CONFIG_JSON[data] = text
            self._array.add_text(self._record_text(item, "windowsPodSandboxConfig", text))
            return
        from google.protobuf import text_format

        from cri_api.runtime.v1 import api_pb2
        from kubelet_winnet._kubelet.messages import message_json

        config = api_pb2.WindowsPodSandboxConfig.FromString(data)

        if output == "yaml":
            record = self._record(item)
            record["windowsPodSandboxConfig"] = message_json(config)
            self._yaml(record)
        elif output == "text":
            shown = message_json(config, with_defaults=True)
            self._out.write(f"{self._header(item)}\n{json.dumps(shown, indent=2)}\n\n")
        elif output == "textproto":
            self._out.write(f"{self._header(item)}\n{text_format.MessageToString(config)}\n")
        elif output == "hex":
            self._out.write(config.SerializeToString().hex() + "\n")
        else:
            data = config.SerializeToString()
            self._out.flush()
            binary: IO[bytes] | None = getattr(self._out, "buffer", None)
            if binary is None:  # a text-only stream (tests): show the bytes as hex
                self._out.write((_varint(len(data)) + data).hex() + "\n")
                return
            binary.write(_varint(len(data)) + data)
            binary.flush()

    def refused(self, item: Pod, error: str) -> None:
        output = self._output
        if output == "json" and self._array is not None:
            self._array.add_text(self._record_text(item, "error", _quote(error)))
        elif output == "yaml":
            self._yaml({**self._record(item), "error": error})
        elif output in ("text", "textproto"):
            self._out.write(f"{self._header(item)}\n{printable(f'error: {error}')}\n\n")
        elif output == "hex":  # one line per pod; a config is never empty bytes
            self._out.write("\n")  # (security_context is always present)

    def _header(self, item: Pod) -> str:
        return printable(
            f"# {item.pod.identity} ({item.document.label}, line {item.document.line})"
        )

    def _yaml(self, record: dict[str, Any]) -> None:
        from kubelet_winnet.cli.output.yaml_text import record_document

        self._out.write(record_document(record))

    def close(self) -> None:
        if self._array is not None:
            self._array.close()


# serialized WindowsPodSandboxConfig -> its JSON text as it appears one level in
_CONFIG_JSON: dict[bytes, str] = {}


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


COMMAND = Command("translate", _configure_translate, _run_translate)
