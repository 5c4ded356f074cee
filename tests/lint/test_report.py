"""``check -o json``: each finding's record is written by hand (_lint/report.py), so its
bytes are compared with what ``json.dumps`` writes for the same record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubelet_winnet.cli import main


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"nodeSelector": {"kubernetes.io/os": "windows"},
                            "containers": [{"name": "c", "image": "i"}], **spec}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "n"},
            "spec": body}


def test_json_findings_are_the_bytes_json_dumps_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    pods = [
        _pod("host-network", hostNetwork=True),
        _pod("名前-é", hostNetwork=True, securityContext={"windowsOptions": {
            "gmsaCredentialSpecName": "gmsa \"quoted\" \\ ü"}}),
        _pod("mixed", hostNetwork=True,
             securityContext={"windowsOptions": {"hostProcess": True}},
             initContainers=[{"name": "init\u2028", "image": "i", "securityContext": {
                 "windowsOptions": {"hostProcess": False}}}]),
    ]
    documents = tmp_path / "pods ü.yaml"
    documents.write_text(yaml.safe_dump_all(pods, allow_unicode=True), encoding="utf-8")
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": pods},
                                 indent=4), encoding="utf-8")
    status = main(["check", str(documents), str(listed), "-o", "json", "-q"])
    out, _ = capsys.readouterr()
    assert status == 1
    report = json.loads(out)
    lines = out.split("\n")
    findings = [line.removesuffix(",") for line in lines[2:2 + len(report["findings"])]]
    records = [json.loads(line) for line in findings]
    assert records == report["findings"] and len(records) >= 8
    assert findings == [json.dumps(record) for record in records]
    assert {r["item"] for r in records} == {None, 0, 1, 2}
    assert {r["object"]["name"] for r in records} == {p["metadata"]["name"] for p in pods}
    assert any(r["container"] == "init\u2028" for r in records)
