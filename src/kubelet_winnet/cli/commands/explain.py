"""``kubelet-winnet explain``: each kubelet step, the result and the warnings of each pod."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

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



def _configure_explain(parser: argparse.ArgumentParser) -> None:
    add_input_arguments(parser)
    add_profile_arguments(parser)
    parser.add_argument(
        "-o", "--output", choices=("text", "json", "yaml"), default="text",
        help="text: each step, the result and warnings; json: one array; yaml: one "
        "document per pod",
    )
    parser.epilog = exit_text(
        (0, "every file read; the kubelet accepts every pod (warnings do not change it)"),
        (1, "the kubelet would refuse a pod (Failed to create pod sandbox)"),
        (2, "bad input (a file, document or field that cannot be read), bad flags or "
         "usage, or output that cannot be written"),
    )


def _run_explain(args: argparse.Namespace, session: Session) -> int:
    import kubelet_winnet as api

    if not check_profile(args, session):
        return session.status
    array = JsonArray(session.out) if args.output == "json" else None
    inputs = InputNotes(session, args.max_bytes, "explain")
    for item in pods(args, session, inputs.document, inputs.bad):
        inputs.document(item.document)
        try:
            explanation = api.explain(
                item.document.value, kubelet_version=args.kubelet_version,
                feature_gates=args.feature_gates,
            )
        except InvalidPodError as exc:
            invalid_pod(session, item.document, exc)
            continue
        except WinnetError as exc:
            session.error(f"{item.where}: document {item.document.document}: {exc}")
            continue
        if explanation.error is not None:
            session.fail(EXIT_FINDINGS)
        record = _explain_record(item, explanation, args)
        if array is not None:
            array.add(record)
        elif args.output == "yaml":
            from kubelet_winnet.cli.output.yaml_text import record_document

            session.out.write(record_document(record))
        else:
            _explain_text(record, item.document.source, session.out)
    if array is not None:
        array.close()
    inputs.note_empty(input_paths(args))
    report_skipped(session)
    return session.status


def _explain_record(item: Pod, explanation: Any, args: argparse.Namespace) -> dict[str, Any]:
    # Read by attribute only (steps: .rule/.text; warnings: .code/.field/.message): the
    # classes behind them are the library's to rename.
    import kubelet_winnet as api
    from kubelet_winnet._kubelet.messages import message_json

    config = explanation.config
    error = explanation.error
    return {
        "source": item.document.label,
        "line": item.document.line,
        "pod": item.pod.identity,
        "target": item.target.value,
        "kubeletVersion": str(api.kubelet_profile(args.kubelet_version,
                                                  args.feature_gates).version),
        "windowsPodSandboxConfig": (
            None if config is None else message_json(config)
        ),
        "error": None if error is None else str(error),
        "steps": [{"rule": step.rule, "text": step.text} for step in explanation.steps],
        "warnings": [
            {"code": str(w.code), **_rule_of(str(w.code), item), "field": w.field,
             "line": _line_of(w.field, item), "message": w.message}
            for w in explanation.warnings
        ],
    }


def _line_of(field: str, item: Pod) -> int | None:
    """The line of the pod field a warning is about, located as check locates a
    finding's; ``None`` for a note about the flags (``--feature-gates``)."""
    if not field or field.startswith("-"):
        return None
    return item.document.line_of(field)


def _rule_of(code: str, item: Pod) -> dict[str, str | None]:
    """The check rule a code is a case of and the severity check gives it for this pod
    (one id, one severity everywhere); a note about the flags has no rule."""
    from kubelet_winnet._lint.rules import REASONS_BY_ID, RULES_BY_ID

    reason = REASONS_BY_ID.get(code)
    if reason is None or reason.rule is None:
        return {"rule": None, "severity": "note"}
    rule = RULES_BY_ID[reason.rule]
    return {"rule": rule.id, "severity": rule.severity_for(item.target).label}


def _explain_text(record: dict[str, Any], source: str, out: TextIO) -> None:
    def line(text: str) -> None:
        out.write(printable(text) + "\n")

    line(f"# {record['pod']} ({record['source']}, line {record['line']}; "
         f"{record['target']})")
    for step in record["steps"]:
        line(f"  step {step['rule']}: {step['text']}")
    config = record.get("windowsPodSandboxConfig")
    if config is not None:
        out.write(json.dumps(config, indent=2) + "\n")  # JSON escapes what it must
    if record.get("error"):
        line(f"error: Failed to create pod sandbox: {record['error']}")
    for warning in record["warnings"]:
        # As check prints a finding: severity, then the rule id (`check --explain` takes
        # it), then explain's more precise reason when it is not the rule itself.
        # A warning about a field starts with its file:line, as check's findings do.
        rule, code = warning["rule"], warning["code"]
        name = code if rule in (None, code) else f"{rule} [{code}]"
        where = "" if warning["line"] is None else f"{source}:{warning['line']}: "
        line(f"{where}{warning['severity']} {name} {warning['field']}: {warning['message']}")
    out.write("\n")


COMMAND = Command("explain", _configure_explain, _run_explain)
