"""Import cost and public surface (style-anchors.md).

``import kubelet_winnet`` loads only what translation needs: never ``kubernetes``, pydantic,
YAML, ctypes, the HCN adapter or the CLI. ``__all__`` matches the public names, every error
hangs off ``WinnetError`` and mixes in the stdlib type a caller would catch, errors survive
pickling with their fields, and ``py.typed`` ships.
"""

from __future__ import annotations
import __future__

import importlib
import importlib.resources
import inspect
import json
import pickle
import pkgutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

import kubelet_winnet
from kubelet_winnet import errors

NOT_LOADED_BY_IMPORT = (
    "kubernetes",
    "pydantic",
    "pydantic_core",
    "yaml",
    "ctypes",
    "kubelet_winnet.runtime.hcn",
    "kubelet_winnet.cli",
    "kubelet_winnet._kubelet.model",
    "kubelet_winnet.runtime",
    "grpc",
    "kubelet_winnet.cri",
)


def run_fresh(code: str) -> object:
    """Run ``code`` in a fresh interpreter; it prints one JSON value as its last line."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


# --- what `import kubelet_winnet` loads --------------------------------------------------


def test_import_loads_only_what_translation_needs() -> None:
    loaded = run_fresh(
        "import sys, json\n"
        "import kubelet_winnet\n"
        f"watched = {NOT_LOADED_BY_IMPORT!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules for w in watched"
        " if m == w or m.startswith(w + '.'))))\n"
    )
    assert loaded == []


def test_translation_does_not_load_more() -> None:
    """Translating a manifest dict needs neither pydantic nor the kubernetes client."""
    loaded = run_fresh(
        "import sys, json\n"
        "import kubelet_winnet\n"
        "pod = {'spec': {'hostNetwork': True, 'containers': [{'name': 'c'}]}}\n"
        "kubelet_winnet.windows_sandbox_config(pod)\n"
        "kubelet_winnet.explain(pod, feature_gates='Foo=true')\n"
        "print(json.dumps(sorted(m for m in ('kubernetes', 'pydantic', 'yaml', 'ctypes',"
        " 'kubelet_winnet.runtime.hcn', 'kubelet_winnet.cli') if m in sys.modules)))\n"
    )
    assert loaded == []


def test_pod_model_loads_lazily() -> None:
    result = run_fresh(
        "import sys, json\n"
        "import kubelet_winnet\n"
        "before = ['Pod' in vars(kubelet_winnet), 'pydantic' in sys.modules,"
        " 'kubelet_winnet._kubelet.model' in sys.modules]\n"
        "from kubelet_winnet import Pod\n"
        "import kubelet_winnet._kubelet.model\n"
        "after = ['pydantic' in sys.modules, Pod is kubelet_winnet._kubelet.model.Pod,"
        " kubelet_winnet.Pod is Pod, 'kubernetes' in sys.modules]\n"
        "print(json.dumps([before, after]))\n"
    )
    assert result == [[False, False, False], [True, True, True, False]]


def test_star_import_gives_every_name_in_all() -> None:
    names = run_fresh(
        "import json\n"
        "namespace = {}\n"
        "exec('from kubelet_winnet import *', namespace)\n"
        "print(json.dumps(sorted(n for n in namespace if n != '__builtins__')))\n"
    )
    assert names == sorted(kubelet_winnet.__all__)


def test_unknown_attribute() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        kubelet_winnet.no_such_name  # noqa: B018


# --- __all__ ----------------------------------------------------------------------------


def test_all_has_no_duplicates() -> None:
    assert len(set(kubelet_winnet.__all__)) == len(kubelet_winnet.__all__)


def test_every_name_in_all_exists() -> None:
    for name in kubelet_winnet.__all__:
        assert getattr(kubelet_winnet, name) is not None, name


def test_every_public_attribute_is_in_all() -> None:
    """Modules (submodules once imported) and ``from __future__`` directives are not API."""
    public = {
        name
        for name, value in vars(kubelet_winnet).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and not isinstance(value, __future__._Feature)
    }
    assert public - set(kubelet_winnet.__all__) == set()


def test_documented_api_is_exported() -> None:
    for name in (
        "WinnetError", "InvalidPodError", "SandboxConfigError", "FeatureGateError",
        "UnsupportedVersionError", "windows_sandbox_config",
        "windows_container_security_context", "explain", "FeatureGates", "Pod",
    ):
        assert name in kubelet_winnet.__all__, name


def all_modules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.walk_packages(kubelet_winnet.__path__, "kubelet_winnet.")
    )


def test_module_list_is_not_empty() -> None:
    modules = all_modules()
    for name in ("errors", "_kubelet.profile", "_kubelet.pod", "_kubelet.rules",
                 "_kubelet.translate", "_kubelet.explain", "_lint.rules", "cli", "cli.session"):
        assert f"kubelet_winnet.{name}" in modules


@pytest.mark.parametrize("module_name", all_modules())
def test_module_all_entries_exist(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{module_name} has no __all__"
    assert len(set(exported)) == len(exported)
    for name in exported:
        assert hasattr(module, name), f"{module_name}.__all__ names missing {name!r}"


def test_package_reexports_are_the_same_objects() -> None:
    for name in errors.__all__:
        assert getattr(kubelet_winnet, name) is getattr(errors, name)


# --- the error hierarchy -----------------------------------------------------------------


def error_classes() -> list[type[BaseException]]:
    return [
        value
        for value in vars(errors).values()
        if inspect.isclass(value)
        and issubclass(value, BaseException)
        and value.__module__ == errors.__name__
    ]


def test_every_error_is_exported() -> None:
    assert {cls.__name__ for cls in error_classes()} == set(errors.__all__)


@pytest.mark.parametrize("cls", error_classes(), ids=lambda c: c.__name__)
def test_every_error_is_a_winnet_error(cls: type[BaseException]) -> None:
    assert issubclass(cls, kubelet_winnet.WinnetError)
    assert issubclass(cls, Exception)


@pytest.mark.parametrize(
    "cls",
    [
        kubelet_winnet.InvalidPodError,
        kubelet_winnet.SandboxConfigError,
        kubelet_winnet.FeatureGateError,
        kubelet_winnet.UnsupportedVersionError,
        kubelet_winnet.InvalidRequestError,
        kubelet_winnet.InvalidUtf8Error,
    ],
    ids=lambda c: c.__name__,
)
def test_value_errors(cls: type[BaseException]) -> None:
    assert issubclass(cls, ValueError)
    assert not issubclass(cls, OSError)


def test_hcn_errors_are_os_errors() -> None:
    assert issubclass(kubelet_winnet.HcnError, OSError)
    assert issubclass(kubelet_winnet.HcnNotFoundError, kubelet_winnet.HcnError)
    assert not issubclass(kubelet_winnet.HcnError, ValueError)


def test_winnet_error_is_not_a_value_error() -> None:
    assert not issubclass(kubelet_winnet.WinnetError, ValueError)


# --- pickling ------------------------------------------------------------------------


ERROR_SAMPLES: list[tuple[BaseException, dict[str, object]]] = [
    (
        errors.InvalidPodError(
            "spec.containers[1].securityContext.windowsOptions.hostProcess",
            'expected a boolean, got string "true"',
        ),
        {
            "field": "spec.containers[1].securityContext.windowsOptions.hostProcess",
            "reason": 'expected a boolean, got string "true"',
        },
    ),
    (
        errors.InvalidPodError("", "expected a mapping"),
        {"field": "", "reason": "expected a mapping"},
    ),
    (
        errors.SandboxConfigError(
            "pod must not contain both HostProcess and non-HostProcess containers", "3a"
        ),
        {
            "message": "pod must not contain both HostProcess and non-HostProcess containers",
            "rule": "3a",
        },
    ),
    (
        errors.FeatureGateError(
            "unrecognized feature gate: WindowsHostNetwork", "WindowsHostNetwork"
        ),
        {"message": "unrecognized feature gate: WindowsHostNetwork",
         "gate": "WindowsHostNetwork"},
    ),
    (
        errors.UnsupportedVersionError("1.25", "supported kubelet versions are 1.26 to 1.38"),
        {"version": "1.25", "reason": "supported kubelet versions are 1.26 to 1.38"},
    ),
    (
        errors.UnsupportedVersionError(1.32, "expected a string, got float"),
        {"version": 1.32, "reason": "expected a string, got float"},
    ),
    (
        errors.InvalidArgumentError("policy", "'kep' or 'containerd'", "int"),
        {"argument": "policy", "expected": "'kep' or 'containerd'", "got": "int"},
    ),
    (
        errors.StateFileError("/var/lib/winnet/a.json", "truncated JSON"),
        {"path": "/var/lib/winnet/a.json", "reason": "truncated JSON"},
    ),
    (
        errors.InvalidRequestError(
            "config.windows.security_context.namespace_options.network", "TARGET"
        ),
        {"field": "config.windows.security_context.namespace_options.network",
         "reason": "TARGET"},
    ),
    (
        errors.NodeConfigError("config.toml:3", "version = 7, containerd reads 1 to 4"),
        {"where": "config.toml:3", "reason": "version = 7, containerd reads 1 to 4"},
    ),
    (
        errors.HcnError(
            "HcnCreateNamespace", 0x80070005, "Access is denied.", {"Success": False}
        ),
        {"operation": "HcnCreateNamespace", "hresult": 0x80070005,
         "message": "Access is denied.", "error_record": {"Success": False}},
    ),
    (
        errors.HcnError("HcnOpenNamespace", -2147023728),  # signed HRESULT in, unsigned kept
        {"operation": "HcnOpenNamespace", "hresult": 0x80070490, "message": "",
         "error_record": None},
    ),
    (
        errors.ClusterAccessError(
            "forbidden", "forbidden (403): the kubeconfig's user may not list pods",
            status=403, permission="list pods",
        ),
        {"kind": "forbidden", "message": "forbidden (403): the kubeconfig's user may not "
         "list pods", "status": 403, "permission": "list pods"},
    ),
    (
        errors.HcnNotFoundError("HcnOpenNamespace", 0x80070490, "Element not found."),
        {"operation": "HcnOpenNamespace", "hresult": 0x80070490,
         "message": "Element not found.", "error_record": None},
    ),
    (
        errors.CriError("/runtime.v1.RuntimeService/RunPodSandbox", "UNAVAILABLE", "no socket"),
        {"method": "/runtime.v1.RuntimeService/RunPodSandbox", "code": "UNAVAILABLE",
         "details": "no socket"},
    ),
    (
        errors.InvalidUtf8Error(
            "spec.containers[0].env[0].value", "not UTF-8", b"$\xc3\x83\xa9"
        ),
        {"field": "spec.containers[0].env[0].value", "reason": "not UTF-8",
         "value": b"$\xc3\x83\xa9"},
    ),
    (
        errors.CriEndpointError("tcp://x", "unsupported scheme 'tcp'"),
        {"endpoint": "tcp://x", "reason": "unsupported scheme 'tcp'"},
    ),
]


@pytest.mark.parametrize(
    ("error", "fields"), ERROR_SAMPLES, ids=[type(e).__name__ for e, _ in ERROR_SAMPLES]
)
def test_errors_pickle_round_trip(error: BaseException, fields: dict[str, object]) -> None:
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        copy = pickle.loads(pickle.dumps(error, protocol=protocol))
        assert type(copy) is type(error)
        assert str(copy) == str(error)
        for name, value in fields.items():
            assert getattr(error, name) == value, name
            assert getattr(copy, name) == value, name


def test_every_error_class_has_a_pickle_sample() -> None:
    sampled = {type(error) for error, _ in ERROR_SAMPLES}
    assert sampled >= set(error_classes()) - {errors.WinnetError}


def test_root_error_pickles() -> None:
    copy = pickle.loads(pickle.dumps(errors.WinnetError("boom")))
    assert type(copy) is errors.WinnetError
    assert str(copy) == "boom"


def test_kubelet_text_is_str_of_the_error() -> None:
    text = "hostNetwork is required if Pod contains HostProcess containers"
    assert str(errors.SandboxConfigError(text, "3b")) == text
    assert str(errors.FeatureGateError("missing bool value for X", "X")) == (
        "missing bool value for X"
    )


# --- packaging ------------------------------------------------------------------------


def test_py_typed_is_shipped() -> None:
    marker = importlib.resources.files("kubelet_winnet").joinpath("py.typed")
    assert marker.is_file()
    assert importlib.resources.files("cri_api").joinpath("py.typed").is_file()


def test_version_is_a_string() -> None:
    assert isinstance(kubelet_winnet.__version__, str)
    assert kubelet_winnet.__version__.count(".") >= 2


def test_version_has_one_source() -> None:
    """pyproject.toml reads the version from _version.py; the installed metadata agrees."""
    import importlib.metadata

    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text("utf-8")
    assert 'dynamic = ["version"]' in pyproject
    assert "kubelet_winnet._version.__version__" in pyproject
    assert importlib.metadata.version("kubelet-winnet") == kubelet_winnet.__version__


def test_installed_package_is_under_test() -> None:
    """Under tox (env TOX_ENV_NAME) the wheel is tested, not the checkout: both packages
    come from site-packages. Elsewhere the editable install points into the checkout."""
    import os

    import cri_api

    for module in (kubelet_winnet, cri_api):
        where = Path(module.__file__ or "").resolve()
        if os.environ.get("TOX_ENV_NAME"):
            assert "site-packages" in where.parts, where
        else:
            assert where.exists()


def test_license_is_shipped() -> None:
    """LICENSE (Apache-2.0, full text) is in the installed distribution's metadata."""
    import importlib.metadata

    files = importlib.metadata.files("kubelet-winnet") or []
    (license_file,) = [f for f in files if f.name == "LICENSE"]
    text = license_file.read_text(encoding="utf-8")
    assert text.lstrip().startswith("Apache License")
    assert "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert importlib.metadata.metadata("kubelet-winnet")["License-Expression"] == "Apache-2.0"
