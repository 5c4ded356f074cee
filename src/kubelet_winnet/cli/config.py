"""``.kubelet-winnet.yaml``: the linter's settings for a repository (kube-linter's
``.kube-linter.yaml`` convention), found from the working directory upward or named with
``--config FILE``.

::

    rules:
      include: [host-network-ignored]      # only these (default: every rule)
      exclude: [gmsa-spec-missing]         # never these
      severity: {host-port-mismatch: warning}
    kubeletVersion: "1.34"
    featureGates: WindowsHostNetwork=false
    windowsOnly: false
    assumeWindows: true
    skip: ["charts/**", "vendor/*"]        # paths (globs) not checked
    failOn: error                          # as --fail-on, which wins over it

The file is read by the same input layer as manifests (encodings, duplicate keys, size and
alias limits). Anything wrong in it is :class:`ConfigError` naming ``file:line``; an
unknown rule id is a note naming the nearest one, as in an ignore annotation.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubelet_winnet.cli.input import SETTINGS_FILE, BadInput, Document, Limits, read_source

__all__ = ["CONFIG_NAME", "FAIL_ON", "Config", "ConfigError", "find_config", "load_config"]

CONFIG_NAME = SETTINGS_FILE
_KEYS = ("rules", "kubeletVersion", "featureGates", "windowsOnly", "assumeWindows", "skip",
         "failOn")
_RULE_KEYS = ("include", "exclude", "severity")
_SEVERITIES = ("error", "warning", "info")
FAIL_ON = (*_SEVERITIES, "never")  # check's --fail-on choices


class ConfigError(Exception):
    """A configuration file that cannot be used; the text names file:line."""


@dataclass(frozen=True)
class Config:
    """The settings of one file (empty: the defaults)."""

    source: str = ""
    include: frozenset[str] | None = None  # None: every rule
    exclude: frozenset[str] = frozenset()
    severity: Mapping[str, str] = field(default_factory=dict)
    kubelet_version: str | None = None
    feature_gates: str | None = None
    windows_only: bool = False
    assume_windows: bool = False
    skip: tuple[str, ...] = ()
    fail_on: str | None = None  # None: --fail-on's default
    base: str = "."  # the directory holding the file: skip patterns are relative to it

    def checks(self, rule: str) -> bool:
        """Whether findings of ``rule`` are reported."""
        return (self.include is None or rule in self.include) and rule not in self.exclude

    def skips(self, path: str) -> bool:
        """Whether ``path`` (a file of the input) matches a skip pattern."""
        if not self.skip or path == "-":
            return False
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(self.base))
        candidates = {path.replace(os.sep, "/"), relative.replace(os.sep, "/")}
        return any(
            fnmatch.fnmatchcase(candidate, pattern)
            or candidate.startswith(pattern.rstrip("/") + "/")
            for candidate in candidates for pattern in self.skip
        )


def find_config(start: str = ".") -> str | None:
    """``.kubelet-winnet.yaml`` in ``start`` or the nearest directory above it."""
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, CONFIG_NAME)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def load_config(path: str, limits: Limits, rules: Mapping[str, object],
                note: Callable[[str], None]) -> Config:
    """The settings in ``path``; ``rules`` are the known rule ids, ``note`` gets the
    notes (unknown rule ids)."""
    documents: list[Document] = []
    for found in read_source(path, limits):
        if isinstance(found, BadInput):
            raise ConfigError(f"configuration {found}")
        documents.append(found)
    if len(documents) != 1 or documents[0].item is not None:
        raise ConfigError(f"configuration {path}: expected one mapping of settings, found "
                          f"{len(documents)} documents")
    (document,) = documents
    reader = _Reader(document, rules, note)
    return reader.config(os.path.dirname(os.path.abspath(path)))


class _Reader:
    def __init__(self, document: Document, rules: Mapping[str, object],
                 note: Callable[[str], None]) -> None:
        self._document = document
        self._rules = rules
        self._note = note

    def _where(self, *path: str | int) -> str:
        return f"{self._document.source}:{self._document.line_of(path)}"

    def _fail(self, path: tuple[str | int, ...], text: str) -> ConfigError:
        shown = ".".join(str(p) for p in path) or "the file"
        return ConfigError(f"configuration {self._where(*path)}: {shown}: {text}")

    def _keys(self, node: Mapping[str, Any], allowed: tuple[str, ...],
              path: tuple[str, ...]) -> None:
        for key in node:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                raise self._fail((*path, str(key)), f"not a setting{hint}; the settings are "
                                 + ", ".join(allowed))

    def _string(self, value: object, path: tuple[str | int, ...]) -> str:
        if not isinstance(value, str):
            raise self._fail(path, f"expected a string, got {_type(value)}")
        return value

    def _bool(self, value: object, path: tuple[str, ...]) -> bool:
        if value is not True and value is not False:
            raise self._fail(path, f"expected true or false, got {_type(value)}")
        return value

    def _rule_ids(self, value: object, path: tuple[str, ...]) -> frozenset[str]:
        if not isinstance(value, list):
            raise self._fail(path, f"expected a list of rule ids, got {_type(value)}")
        ids = [self._string(item, (*path, index)) for index, item in enumerate(value)]
        for index, rule in enumerate(ids):
            self._known(rule, (*path, index))
        return frozenset(ids)

    def _known(self, rule: str, path: tuple[str | int, ...]) -> None:
        if rule not in self._rules:
            close = difflib.get_close_matches(rule, list(self._rules), n=1, cutoff=0.6)
            self._note(f"{self._where(*path)}: {rule[:60]} names no rule, so it changes "
                       "nothing" + (f" (did you mean {close[0]}?)" if close else ""))

    def config(self, base: str) -> Config:
        value = self._document.value
        self._keys(value, _KEYS, ())
        rules = value.get("rules", {})
        if not isinstance(rules, dict):
            raise self._fail(("rules",), f"expected a mapping, got {_type(rules)}")
        self._keys(rules, _RULE_KEYS, ("rules",))
        include = (self._rule_ids(rules["include"], ("rules", "include"))
                   if "include" in rules else None)
        exclude = (self._rule_ids(rules["exclude"], ("rules", "exclude"))
                   if "exclude" in rules else frozenset())
        severity: dict[str, str] = {}
        levels = rules.get("severity", {})
        if not isinstance(levels, dict):
            raise self._fail(("rules", "severity"), f"expected a mapping of rule id to "
                             f"severity, got {_type(levels)}")
        for rule, level in levels.items():
            path = ("rules", "severity", str(rule))
            self._known(str(rule), path)
            text = self._string(level, path)
            if text not in _SEVERITIES:
                raise self._fail(path, f"expected error, warning or info, got {text[:40]!r}")
            severity[str(rule)] = text
        skip = value.get("skip", [])
        if not isinstance(skip, list):
            raise self._fail(("skip",), f"expected a list of paths, got {_type(skip)}")
        kubelet = value.get("kubeletVersion")
        if isinstance(kubelet, (int, float)) and not isinstance(kubelet, bool):
            raise self._fail(("kubeletVersion",), f"expected a string: YAML reads {kubelet} "
                             f"as a number; write \"{kubelet}\"")
        gates = value.get("featureGates")
        fail_on = value.get("failOn")
        if fail_on is not None and fail_on not in FAIL_ON:
            # YAML 1.1 reads a bare no/off as false: say what it read.
            got = repr(fail_on[:40]) if isinstance(fail_on, str) else _type(fail_on)
            if fail_on is False:
                got += " (YAML reads a bare no or off as false; write never)"
            raise self._fail(("failOn",), f"expected error, warning, info or never, got {got}")
        return Config(
            source=self._document.source,
            include=include,
            exclude=exclude,
            severity=severity,
            kubelet_version=None if kubelet is None
            else self._string(kubelet, ("kubeletVersion",)),
            feature_gates=None if gates is None else self._string(gates, ("featureGates",)),
            windows_only=self._bool(value.get("windowsOnly", False), ("windowsOnly",)),
            assume_windows=self._bool(value.get("assumeWindows", False), ("assumeWindows",)),
            skip=tuple(self._string(item, ("skip", i)) for i, item in enumerate(skip)),
            fail_on=fail_on,
            base=base,
        )


def _type(value: object) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is True or value is False:
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "null" if value is None else type(value).__name__
