"""Ways to install and run the linter where people work, each run for
real: the pre-commit hook through ``pre-commit try-repo`` against a fixture repository,
the ``kubectl-winnet`` plugin script, and the GitHub Action and its documented workflow
against GitHub's schemas (check-jsonschema's vendored ones: offline).

pre-commit and check-jsonschema are the ``ci`` extra: without them the tests skip with
the reason, except under CI (``.ci/run`` installs the extra), where they must run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubelet_winnet.cli import COMMAND_MODULES
from tests.strategies import MUST_RUN

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def need(module: str) -> None:
    """The ``ci`` extra's ``module``: a skip outside CI, a failure under CI."""
    if importlib.util.find_spec(module) is not None:
        return
    if MUST_RUN:
        pytest.fail(f"{module} is missing under CI: .ci/run installs the ci extra")
    pytest.skip(f"{module} (the ci extra) is not installed: "
                "pip install -e '.[test,ci]' to run these")


def git(cwd: Path, *argv: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com",
                    "-c", "commit.gpgsign=false", *argv], cwd=cwd, check=True,
                   capture_output=True, timeout=60)


WINDOWS_HOST_NETWORK = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "iis"},
    "spec": {"os": {"name": "windows"}, "hostNetwork": True,
             "containers": [{"name": "iis", "image": "mcr.microsoft.com/windows/servercore/iis"}]},
}
FINE = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "fine"},
    "spec": {"os": {"name": "windows"}, "containers": [{"name": "c", "image": "i"}]},
}


@pytest.mark.slow  # about 90 s: pre-commit builds the hook's environment from a clone
def test_pre_commit_hook_through_try_repo(tmp_path: Path) -> None:
    need("pre_commit")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    # The hook repository: this checkout's package and hook file, committed (try-repo
    # clones it; the package is pip-installed from the clone, as pre-commit users get it).
    tool = tmp_path / "tool"
    for name in ("src", "cri_api"):
        shutil.copytree(REPO / name, tool / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml"):
        shutil.copy2(REPO / name, tool / name)
    git(tool, "init", "-q")
    git(tool, "add", "-A")
    git(tool, "commit", "-q", "-m", "hook")
    fixture = tmp_path / "fixture"
    (fixture / "deploy").mkdir(parents=True)
    (fixture / "deploy" / "iis.yaml").write_text(yaml.safe_dump(WINDOWS_HOST_NETWORK),
                                                 encoding="utf-8")
    (fixture / "deploy" / "fine.json").write_text(yaml.safe_dump(FINE), encoding="utf-8")
    (fixture / "README.md").write_text("not a manifest\n", encoding="utf-8")
    git(fixture, "init", "-q")
    git(fixture, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}

    def try_repo(*files: str) -> subprocess.CompletedProcess[str]:
        chosen = ["--files", *files] if files else ["--all-files"]
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(tool), "kubelet-winnet-check",
             *chosen],
            cwd=fixture, env=env, capture_output=True, text=True, timeout=600, check=False,
        )

    failed = try_repo("deploy/iis.yaml", "deploy/fine.json", "README.md")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "kubelet-winnet check" in failed.stdout and "Failed" in failed.stdout
    assert "deploy/iis.yaml:" in failed.stdout
    assert "warning host-network-ignored: Pod/iis: hostNetwork: true is ignored" in failed.stdout
    assert "README.md" not in failed.stdout.split("kubelet-winnet check")[-1]  # types_or
    passed = try_repo("deploy/fine.json")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout
    # A commit of YAML that is no manifest (a CI workflow) passes: the hook allows an
    # empty run.
    (fixture / "ci.yml").write_text("on: push\n", encoding="utf-8")
    git(fixture, "add", "-A")
    passed = try_repo("ci.yml")
    assert passed.returncode == 0, passed.stdout + passed.stderr

    # File names are paths, never flags. A committed --config=evil.yaml
    # is not loaded as settings (it would silence everything), and -q.yaml is checked.
    (fixture / "--config=evil.yaml").write_text("failOn: never\n", encoding="utf-8")
    (fixture / "-q.yaml").write_text(yaml.safe_dump(WINDOWS_HOST_NETWORK), encoding="utf-8")
    git(fixture, "add", "-A")
    # (--all-files: pre-commit's own command line would take the names as its flags;
    # from git it gives them to the hook as they are.)
    failed = try_repo()
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "-q.yaml:" in failed.stdout and "deploy/iis.yaml:" in failed.stdout
    assert "no Kubernetes objects in --config=evil.yaml" in failed.stdout

    # Through the hook: a baseline named in args (ending with "--") and
    # an ignore comment in a vendored file.
    subprocess.run([str(BIN / "kubelet-winnet"), "check", "--baseline", "baseline.json",
                    "--create-baseline", "deploy/iis.yaml"], cwd=fixture, check=True,
                   capture_output=True, timeout=60)
    vendored = yaml.safe_dump(WINDOWS_HOST_NETWORK).replace(
        "hostNetwork: true", "hostNetwork: true  # kubelet-winnet:ignore host-network-ignored "
        "vendored chart, tracked upstream")
    (fixture / "vendor.yaml").write_text(vendored, encoding="utf-8")
    (fixture / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{
        "repo": str(tool), "rev": git_head(tool),
        "hooks": [{"id": "kubelet-winnet-check", "args": ["--baseline", "baseline.json", "--"]}],
    }]}), encoding="utf-8")
    git(fixture, "add", "-A")
    ran = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "kubelet-winnet-check", "--files",
         "deploy/iis.yaml", "vendor.yaml"],
        cwd=fixture, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "Passed" in ran.stdout
    (fixture / "deploy" / "new.yaml").write_text(
        yaml.safe_dump({**WINDOWS_HOST_NETWORK, "metadata": {"name": "new"}}), encoding="utf-8")
    git(fixture, "add", "-A")
    ran = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "kubelet-winnet-check", "--files",
         "deploy/iis.yaml", "deploy/new.yaml", "vendor.yaml"],
        cwd=fixture, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "deploy/new.yaml:" in ran.stdout and "deploy/iis.yaml:" not in ran.stdout
    assert "vendor.yaml:" not in ran.stdout


def git_head(repo: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True,
                          capture_output=True, text=True, timeout=60).stdout.strip()


def test_kubectl_plugin_script_dispatches_every_command(tmp_path: Path) -> None:
    script = BIN / "kubectl-winnet"
    if not script.exists():
        if MUST_RUN:
            pytest.fail(f"{script} is missing: the package is not installed with its scripts")
        pytest.skip(f"{script} is not installed (pip install the package)")
    for name in COMMAND_MODULES:
        done = subprocess.run([str(script), name, "--help"], capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 0, (name, done.stderr)
        assert done.stdout.startswith(f"usage: kubectl winnet {name} "), name
    manifest = tmp_path / "iis.yaml"
    manifest.write_text(yaml.safe_dump(WINDOWS_HOST_NETWORK), encoding="utf-8")
    done = subprocess.run([str(script), "check", str(manifest)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 1
    assert f"{manifest}:" in done.stdout and "host-network-ignored" in done.stdout
    done = subprocess.run([str(script), "translate", str(manifest), "-o", "json"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and '"windowsPodSandboxConfig"' in done.stdout


@pytest.mark.parametrize(("path", "schema"), [
    ("action.yml", "vendor.github-actions"),
    ("examples/github/kubelet-winnet.yml", "vendor.github-workflows"),
])
def test_action_and_workflow_match_githubs_schemas(path: str, schema: str) -> None:
    need("check_jsonschema")
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(REPO / path)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok -- validation done" in done.stdout


def test_schema_check_is_not_vacuous(tmp_path: Path) -> None:
    """The same check rejects an action missing its runs.steps' shell."""
    need("check_jsonschema")
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    del action["runs"]["steps"][0]["shell"]
    broken = tmp_path / "action.yml"
    broken.write_text(yaml.safe_dump(action), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-actions",
         str(broken)], capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 1


def test_action_runs_check_with_sarif_and_the_workflow_uploads_it() -> None:
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    steps = action["runs"]["steps"]
    assert action["runs"]["using"] == "composite"
    assert "--output sarif" in steps[-1]["run"]
    assert "${{" not in steps[-1]["run"]  # inputs reach the script as variables only
    workflow = yaml.safe_load(
        (REPO / "examples/github/kubelet-winnet.yml").read_text(encoding="utf-8"))
    uses = [s.get("uses", "") for s in workflow["jobs"]["check"]["steps"]]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    assert workflow["permissions"]["security-events"] == "write"
    docs = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    assert (REPO / "examples/github/kubelet-winnet.yml").read_text(encoding="utf-8") in docs


@pytest.mark.parametrize("layout", ["bin", "Scripts"])  # Linux/macOS runners; Windows
@pytest.mark.parametrize(("fail_on", "baseline", "flag"), [
    ("", "", []),
    ("error", "", ["--fail-on", "error"]),
    ("", "accepted.json", ["--baseline", "accepted.json"]),
])
def test_action_check_step_finds_the_venv_and_passes_only_the_inputs_set(
    tmp_path: Path, layout: str, fail_on: str, baseline: str, flag: list[str]
) -> None:
    """The check step's script, run by bash as the runner runs it, against a venv whose
    programs are in ``layout`` (a stand-in program prints what it was given): an empty
    fail-on leaves the settings file's failOn in force."""
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    script = action["runs"]["steps"][-1]["run"]
    programs = tmp_path / "kubelet-winnet" / layout
    programs.mkdir(parents=True)
    stand_in = programs / "kubelet-winnet"
    stand_in.write_text('#!/bin/sh\nfor a in "$0" "$@"; do echo "$a"; done\n', encoding="utf-8")
    stand_in.chmod(0o755)
    output = tmp_path / "github-output"
    env = {"PATH": os.environ["PATH"], "RUNNER_TEMP": str(tmp_path),
           "GITHUB_OUTPUT": str(output), "PATHS": "deploy -odd.yaml",
           "KUBELET_VERSION": "1.34", "FAIL_ON": fail_on, "BASELINE": baseline,
           "SARIF_FILE": str(tmp_path / "out.sarif")}
    done = subprocess.run(["bash", "-e", "-c", script], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    given = (tmp_path / "out.sarif").read_text(encoding="utf-8").splitlines()
    fail_flag, baseline_flag = flag[:2] if fail_on else [], flag if baseline else []
    assert given == [str(stand_in), "check", "--output", "sarif", *fail_flag,
                     "--kubelet-version", "1.34", *baseline_flag, "--", "deploy", "-odd.yaml"]
    assert output.read_text(encoding="utf-8") == f"sarif-file={tmp_path / 'out.sarif'}\n"


def test_action_check_step_with_a_baseline_end_to_end(tmp_path: Path) -> None:
    """The step's script with the real kubelet-winnet as the venv's program: the baseline
    input keeps an accepted finding from failing the step, and a new one fails it, with
    the SARIF written either way."""
    program = BIN / "kubelet-winnet"
    if not program.exists():
        if MUST_RUN:
            pytest.fail(f"{program} is missing: the package is not installed with its scripts")
        pytest.skip(f"{program} is not installed (pip install the package)")
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    script = action["runs"]["steps"][-1]["run"]
    (tmp_path / "kubelet-winnet" / "bin").mkdir(parents=True)
    (tmp_path / "kubelet-winnet" / "bin" / "kubelet-winnet").symlink_to(program)
    work = tmp_path / "repo"
    (work / ".git").mkdir(parents=True)
    (work / "deploy").mkdir()
    (work / "deploy" / "iis.yaml").write_text(yaml.safe_dump(WINDOWS_HOST_NETWORK),
                                              encoding="utf-8")
    subprocess.run([str(program), "check", "--baseline", "accepted.json", "--create-baseline",
                    "deploy"], cwd=work, check=True, capture_output=True, timeout=60)
    sarif = tmp_path / "out.sarif"
    env = {"PATH": os.environ["PATH"], "RUNNER_TEMP": str(tmp_path),
           "GITHUB_OUTPUT": str(tmp_path / "github-output"), "PATHS": "deploy",
           "KUBELET_VERSION": "", "FAIL_ON": "", "BASELINE": "accepted.json",
           "SARIF_FILE": str(sarif)}
    done = subprocess.run(["bash", "-e", "-c", script], cwd=work, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["results"]
    assert result["suppressions"][0]["kind"] == "external"
    (work / "deploy" / "new.yaml").write_text(
        yaml.safe_dump({**WINDOWS_HOST_NETWORK, "metadata": {"name": "new"}}), encoding="utf-8")
    done = subprocess.run(["bash", "-e", "-c", script], cwd=work, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1, done.stderr
    results = json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["results"]
    assert [r.get("suppressions") is None for r in results] == [False, True]
