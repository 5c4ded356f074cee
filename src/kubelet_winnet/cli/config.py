"""``.kubelet-winnet.yaml``: the linter's settings for a repository (kube-linter's
``.kube-linter.yaml`` convention), found from the working directory upward or named with
``--config FILE``.

::

    rules:
      include: [host-network-ignored]      # only these (default, or []: every rule)
      exclude: [gmsa-spec-missing]         # never these
      severity: {host-port-mismatch: warning}
    kubeletVersion: "1.34"
    featureGates: WindowsHostNetwork=false
    windowsOnly: false
    assumeWindows: true
    skip: ["charts/**", "vendor/*"]        # paths (globs) not checked
    failOn: error                          # as --fail-on, which wins over it
    allowEmpty: false                      # as --allow-empty
    docsUrl: https://docs.example/rules/   # where the rule pages are published (helpUri)
    allowRemote: false                     # as --allow-remote

The file is read by the same input layer as manifests (encodings, duplicate keys, size and
alias limits). Every mistake in it, an unknown rule id included, is collected and
reported together as :class:`ConfigError` lines naming ``file:line``.

The upward search stops where git's discovery stops (setup.c,
``setup_git_directory_gently``): at the first directory holding ``.git`` and at a file
system boundary (``GIT_DISCOVERY_ACROSS_FILESYSTEM`` unset). A file found so, or a
directory on the way, that another user owns is refused, as git's ``safe.directory``
refuses a repository another user owns (CVE-2022-24765).
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import os
import re
import stat
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubelet_winnet._describe import yaml_kind
from kubelet_winnet._printable import cut, printable
from kubelet_winnet.sources.manifests import (
    SETTINGS_FILE,
    BadInput,
    Document,
    Limits,
    paths,
    read_source,
)

__all__ = ["CONFIG_NAME", "FAIL_ON", "Config", "ConfigError", "docs_url_error",
           "find_config", "load_config", "settings_keys"]

CONFIG_NAME = SETTINGS_FILE
_KEYS = ("rules", "kubeletVersion", "featureGates", "windowsOnly", "assumeWindows", "skip",
         "failOn", "allowEmpty", "docsUrl", "allowRemote")
_RULE_KEYS = ("include", "exclude", "severity")
_SEVERITIES = ("error", "warning", "info")
FAIL_ON = (*_SEVERITIES, "never")  # check's --fail-on choices


def settings_keys() -> str:
    """The settings file's keys as --config's help lists them: from the reader's own list,
    so a key added to the file cannot be missing from the help."""
    return ", ".join(f"{key} ({', '.join(_RULE_KEYS)})" if key == "rules" else key
                     for key in _KEYS)


class ConfigError(Exception):
    """A configuration file that cannot be used: ``messages`` holds one line per
    mistake, each naming file:line (the text is the lines joined)."""

    def __init__(self, *messages: str, source: str | None = None) -> None:
        lines = tuple(printable(m) for m in messages)  # a key may hold a line break
        super().__init__("\n".join(lines))
        self.messages = lines
        self.source = source  # the settings file the messages name


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
    allow_empty: bool = False
    docs_url: str | None = None
    allow_remote: bool = False  # kustomizations may fetch remote resources
    base: str = "."  # the directory holding the file: skip patterns are relative to it

    def checks(self, rule: str) -> bool:
        """Whether findings of ``rule`` are reported."""
        return (self.include is None or rule in self.include) and rule not in self.exclude

    def skips(self, path: str) -> bool:
        """Whether ``path`` (a file of the input) matches a skip pattern: as written, or
        relative to the settings file's directory."""
        if not self.skip or path == "-":
            return False
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(self.base))
        candidates = {path.replace(os.sep, "/"), relative.replace(os.sep, "/")}
        return any(fnmatch.fnmatchcase(candidate, glob) for candidate in candidates
                   for pattern in self.skip for glob in _skip_globs(pattern))


def _skip_globs(pattern: str) -> tuple[str, str]:
    """The globs a skip pattern stands for (fnmatch's, where ``*`` crosses ``/``): the
    pattern itself, and everything below it as a directory (``vendor`` skips
    ``vendor/x.yaml``)."""
    return pattern, pattern.rstrip("/") + "/*"


# --- a skip pattern that matches every file ------------------------------------------
# Decided by what the pattern matches, not by its spelling: over every path of a manifest
# a directory search reads (a name ending .yaml, .yml or .json, any case) written in the
# POSIX portable filename characters (XBD 3.282: letters, digits, ".", "_", "-") and "/",
# in each form a path reaches skips(): relative ("deploy/a.yaml"), "./deploy/a.yaml" and
# absolute. A pattern whose globs match every path of one form would leave nothing to
# check when the input is named that way. The glob automata are walked together with
# the form's: a path none of them accepts proves the pattern leaves something.

_PORTABLE = "".join(map(chr, [*range(65, 91), *range(97, 123), *range(48, 58)])) + "._-"
_SUFFIXES = (".yaml", ".yml", ".json")
_SUFFIX_PREFIXES = frozenset(s[:n] for s in _SUFFIXES for n in range(len(s) + 1))
_FORMS = ("", "./", "/")
_STATES_TRIED = 20_000  # beyond this the pattern is let be (never seen: a few dozen)


def _glob_tokens(pattern: str) -> list[str | None]:
    """``pattern`` cut as fnmatch.translate cuts it: None for ``*``, else the text of one
    character's token (a character, ``?`` or a ``[...]`` class)."""
    tokens: list[str | None] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        i += 1
        if char == "*":
            if not tokens or tokens[-1] is not None:
                tokens.append(None)
        elif char == "[":
            j = i
            if j < len(pattern) and pattern[j] == "!":
                j += 1
            if j < len(pattern) and pattern[j] == "]":
                j += 1
            while j < len(pattern) and pattern[j] != "]":
                j += 1
            if j >= len(pattern):
                tokens.append("[")  # no closing bracket: a literal "[", as fnmatch reads it
            else:
                tokens.append(pattern[i - 1:j + 1])
                i = j + 1
        else:
            tokens.append(char)
    return tokens


class _Glob:
    """A glob as an automaton over ``alphabet``: states are token positions; each
    token's characters are those fnmatch itself matches with it."""

    def __init__(self, pattern: str, alphabet: str) -> None:
        self.tokens = _glob_tokens(pattern)
        self.sets = [frozenset() if t is None else _token_set(t, alphabet)
                     for t in self.tokens]
        self._steps: dict[tuple[frozenset[int], str], frozenset[int]] = {}

    def closure(self, states: frozenset[int]) -> frozenset[int]:
        found = set(states)
        for state in sorted(states):
            while state < len(self.tokens) and self.tokens[state] is None:
                state += 1
                found.add(state)
        return frozenset(found)

    def step(self, states: frozenset[int], char: str) -> frozenset[int]:
        known = self._steps.get((states, char))
        if known is not None:
            return known
        after = set()
        for state in states:
            if state < len(self.tokens):
                if self.tokens[state] is None:
                    after.add(state)
                elif char in self.sets[state]:
                    after.add(state + 1)
        found = self._steps[states, char] = self.closure(frozenset(after))
        return found

    def accepts(self, states: frozenset[int]) -> bool:
        return len(self.tokens) in states


@functools.lru_cache(maxsize=256)
def _token_set(token: str, alphabet: str) -> frozenset[str]:
    """The characters of ``alphabet`` that fnmatch matches with one token."""
    if len(token) == 1 and token != "?":
        return frozenset(token) & frozenset(alphabet)  # a character matches itself only
    return frozenset(c for c in alphabet if fnmatch.fnmatchcase(c, token))


def _suffix_step(state: str, char: str) -> str:
    text = state + char.lower()
    while text not in _SUFFIX_PREFIXES:
        text = text[1:]
    return text


def matches_every_file(pattern: str) -> bool:
    """Whether the skip ``pattern`` matches every manifest path of one form (above)."""
    alphabet = _PORTABLE + "/"
    globs = [_Glob(glob, alphabet) for glob in _skip_globs(pattern)]
    # Characters that no glob and no suffix tells apart are walked once.
    seen: dict[tuple[object, ...], str] = {}
    for char in alphabet:
        key = (char if char in "/." or char.lower() in "yamljson" else "",
               *(char in token for glob in globs for token in glob.sets))
        seen.setdefault(key, char)
    letters = list(seen.values())
    for form in _FORMS:
        start: list[frozenset[int]] = []
        for glob in globs:
            states = glob.closure(frozenset({0}))
            for char in form:
                states = glob.step(states, char)
            start.append(states)
        if not _leaves_a_path(globs, tuple(start), letters):
            return True
    return False


def _leaves_a_path(globs: list[_Glob], start: tuple[frozenset[int], ...],
                   letters: list[str]) -> bool:
    """Whether some manifest path (a relative path of portable names) takes no glob from
    ``start`` to a match; True too when the search is cut off."""
    # A path's state: within a name (or at its start) and how its end meets a suffix.
    first = (False, "", start)
    todo = [first]
    visited = {first}
    while todo:
        in_name, suffix, states = todo.pop()
        if in_name and suffix in _SUFFIXES and not any(
                glob.accepts(s) for glob, s in zip(globs, states, strict=True)):
            return True
        for char in letters:
            if char == "/":
                if not in_name:
                    continue  # no leading "/" and no empty name
                after = (False, "", tuple(g.step(s, char)
                                          for g, s in zip(globs, states, strict=True)))
            else:
                after = (True, _suffix_step(suffix, char),
                         tuple(g.step(s, char) for g, s in zip(globs, states, strict=True)))
            if after not in visited:
                if len(visited) >= _STATES_TRIED:
                    return True
                visited.add(after)
                todo.append(after)
    return False


# --- finding the file ----------------------------------------------------------------

def _foreign(path: str, status: os.stat_result, me: int | None, what: str) -> ConfigError | None:
    if me is None or status.st_uid == me:
        return None
    return ConfigError(
        f"configuration {path}: {what} is owned by {paths.owner_name(status.st_uid)}, not by "
        f"{paths.owner_name(me)}, so it is not read (another user could have planted it); "
        "name a settings file you trust with --config", source=path)


def find_config(start: str = ".") -> str | None:
    """``.kubelet-winnet.yaml`` in ``start`` or the nearest directory above it, up to the
    git repository's root or a file system boundary, whichever comes first. A candidate
    that is not a regular file, or that (or a directory on the way) another user owns,
    is a :class:`ConfigError`: never passed over for a parent's file."""
    me = paths.current_user()
    visited: list[str] = []
    for directory in paths.upward(os.path.abspath(start)):
        visited.append(directory)
        candidate = os.path.join(directory, CONFIG_NAME)
        try:
            link = os.lstat(candidate)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise ConfigError(f"configuration {candidate}: cannot read: "
                              f"{exc.strerror or type(exc).__name__}", source=candidate) from None
        return _checked(candidate, link, visited, me)
    return None


def _checked(candidate: str, link: os.stat_result, visited: list[str],
             me: int | None) -> str:
    """``candidate`` (its lstat ``link``) when it is a regular file that the user owns,
    in directories the user owns; else the one-line error."""
    status = link
    if stat.S_ISLNK(link.st_mode):
        refused = _foreign(candidate, link, me, "the symbolic link")
        if refused is not None:
            raise refused
        try:
            status = os.stat(candidate)
        except FileNotFoundError:
            raise ConfigError(f"configuration {candidate}: a symbolic link to "
                              f"{_target(candidate)}, which does not exist",
                              source=candidate) from None
        except OSError as exc:
            raise ConfigError(f"configuration {candidate}: cannot read: "
                              f"{exc.strerror or type(exc).__name__}", source=candidate) from None
    if not stat.S_ISREG(status.st_mode):
        kind = ("a directory" if stat.S_ISDIR(status.st_mode)
                else "a FIFO" if stat.S_ISFIFO(status.st_mode)
                else "a socket" if stat.S_ISSOCK(status.st_mode)
                else "a device" if stat.S_ISCHR(status.st_mode) or stat.S_ISBLK(status.st_mode)
                else "not a regular file")
        raise ConfigError(f"configuration {candidate}: {kind}, not a regular file, so no "
                          "settings can be read from it (remove it, or name a settings file "
                          "with --config)", source=candidate)
    refused = _foreign(candidate, status, me, "the file")
    if refused is not None:
        raise refused
    for directory in visited:
        try:
            owner = os.stat(directory)
        except OSError:
            continue
        refused = _foreign(candidate, owner, me, f"its directory {directory}"
                           if directory == visited[-1] else f"the directory {directory}")
        if refused is not None:
            raise refused
    return candidate


def _target(path: str) -> str:
    try:
        return repr(os.readlink(path))
    except OSError:
        return "a missing file"


# --- reading it ------------------------------------------------------------------------

def load_config(path: str, limits: Limits, rules: Mapping[str, object]) -> Config:
    """The settings in ``path``; ``rules`` are the known rule ids. Every mistake is
    collected into one :class:`ConfigError`."""
    documents: list[Document] = []
    errors: list[str] = []
    for found in read_source(path, limits):
        if isinstance(found, BadInput):
            errors.append(f"configuration {found}")
        else:
            documents.append(found)
    if errors:
        raise ConfigError(*errors, source=path)
    if len(documents) != 1 or documents[0].item is not None:
        raise ConfigError(f"configuration {path}: expected one mapping of settings, found "
                          f"{len(documents)} documents", source=path)
    (document,) = documents
    reader = _Reader(document, rules, path, limits)
    config = reader.config(os.path.dirname(os.path.abspath(path)))
    if reader.errors:
        raise ConfigError(*reader.errors, source=document.source)
    return config


# What RFC 3986 keeps out of a URI: anything but unreserved and reserved characters, and a
# "%" that starts no percent-encoding. A helpUri goes into SARIF and HTML views as written.
_NOT_URI = re.compile(r"%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]")


def docs_url_error(url: str) -> str | None:
    """Why ``url`` cannot be the documentation base (None: it can)."""
    parts = urllib.parse.urlsplit(url) if len(url) <= 2000 else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc \
            or any(c.isspace() for c in url):
        return "expected an absolute http or https address, such as " \
               "https://docs.example/kubelet-winnet/rules/"
    bad = _NOT_URI.search(url.replace("{rule}", ""))  # {rule} is replaced before use
    if bad is None:
        return None
    if bad[0] == "%":
        return "not a valid URI: a '%' must start a percent-encoding such as %20 (RFC 3986)"
    encoded = "".join(f"%{byte:02X}" for byte in bad[0].encode("utf-8", "surrogatepass"))
    return (f"not a valid URI: {bad[0]!r} is not allowed in an address (RFC 3986); "
            f"write it as {encoded}")


def _shown(path: tuple[str | int, ...]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else part
    return text or "the file"


class _Reader:
    def __init__(self, document: Document, rules: Mapping[str, object], path: str,
                 limits: Limits) -> None:
        self._document = document
        self._rules = rules
        self._path = path
        self._limits = limits
        self._errors: list[tuple[int, str]] = []  # (line, message), found in check order

    @property
    def errors(self) -> list[str]:
        """Every mistake, in the order of the file's lines."""
        return [text for _, text in sorted(self._errors, key=lambda error: error[0])]

    def _fail(self, path: tuple[str | int, ...], text: str) -> None:
        line = self._document.line_of(path)
        self._errors.append((line, f"configuration {self._document.source}:{line}: "
                             f"{_shown(path)}: {text}"))

    def _keys(self, node: Mapping[str, Any], allowed: tuple[str, ...],
              path: tuple[str, ...]) -> None:
        for key in node:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                self._fail((*path, str(key)), f"not a setting{hint}; the settings are "
                           + ", ".join(allowed))

    def _string(self, value: object, path: tuple[str | int, ...]) -> str | None:
        if not isinstance(value, str):
            self._fail(path, f"expected a string, got {yaml_kind(value)}")
            return None
        return value

    def _bool(self, value: object, path: tuple[str, ...]) -> bool:
        if value is not True and value is not False:
            self._fail(path, f"expected true or false, got {yaml_kind(value)}")
            return False
        return value

    def _rule_ids(self, value: object, path: tuple[str, ...]) -> frozenset[str]:
        if not isinstance(value, list):
            self._fail(path, f"expected a list of rule ids, got {yaml_kind(value)}")
            return frozenset()
        ids = []
        for index, item in enumerate(value):
            rule = self._string(item, (*path, index))
            if rule is not None and self._known(rule, (*path, index)):
                ids.append(rule)
        return frozenset(ids)

    def _known(self, rule: str, path: tuple[str | int, ...]) -> bool:
        if rule in self._rules:
            return True
        close = difflib.get_close_matches(rule, list(self._rules), n=1, cutoff=0.6)
        self._fail(path, f"{cut(rule, 60)} names no rule"
                   + (f" (did you mean {close[0]}?)" if close else "")
                   + "; --list-rules lists the rules")
        return False

    def config(self, base: str) -> Config:
        value: object = self._document.value
        if not isinstance(value, dict):
            self._fail((), f"expected a mapping of settings, got {yaml_kind(value)}")
            return Config()
        self._keys(value, _KEYS, ())
        rules = value.get("rules", {})
        include: frozenset[str] | None = None
        exclude: frozenset[str] = frozenset()
        severity: dict[str, str] = {}
        if not isinstance(rules, dict):
            self._fail(("rules",), f"expected a mapping, got {yaml_kind(rules)}")
            rules = {}
        self._keys(rules, _RULE_KEYS, ("rules",))
        if "include" in rules:
            # kube-linter's reading: an empty include adds nothing to the defaults, so
            # every rule is checked, as without the key; never "no rule".
            include = self._rule_ids(rules["include"], ("rules", "include")) or None
        if "exclude" in rules:
            exclude = self._rule_ids(rules["exclude"], ("rules", "exclude"))
        levels = rules.get("severity", {})
        if not isinstance(levels, dict):
            self._fail(("rules", "severity"), "expected a mapping of rule id to severity, "
                       f"got {yaml_kind(levels)}")
            levels = {}
        for rule, level in levels.items():
            path = ("rules", "severity", str(rule))
            known = self._known(str(rule), path)
            text = self._string(level, path)
            if text is None:
                continue
            if text not in _SEVERITIES:
                self._fail(path, f"expected error, warning or info, got {text[:40]!r}")
            elif known:
                severity[str(rule)] = text
        return Config(
            source=self._document.source,
            include=include,
            exclude=exclude,
            severity=severity,
            kubelet_version=self._kubelet_version(value.get("kubeletVersion")),
            feature_gates=None if value.get("featureGates") is None
            else self._string(value["featureGates"], ("featureGates",)),
            windows_only=self._bool(value.get("windowsOnly", False), ("windowsOnly",)),
            assume_windows=self._bool(value.get("assumeWindows", False), ("assumeWindows",)),
            skip=self._skip(value.get("skip", [])),
            fail_on=self._fail_on(value.get("failOn")),
            allow_empty=self._bool(value.get("allowEmpty", False), ("allowEmpty",)),
            docs_url=self._docs_url(value.get("docsUrl")),
            allow_remote=self._bool(value.get("allowRemote", False), ("allowRemote",)),
            base=base,
        )

    def _kubelet_version(self, kubelet: object) -> str | None:
        if kubelet is None:
            return None
        if isinstance(kubelet, (int, float)) and not isinstance(kubelet, bool):
            written = self._source_text("kubeletVersion")
            self._fail(("kubeletVersion",), f"expected a string: YAML reads {written} as a "
                       f"number; write \"{written}\"" if written is not None else
                       f"expected a string: YAML reads the value as the number {kubelet}; "
                       "write the version in quotes, as \"1.30\"")
            return None
        return self._string(kubelet, ("kubeletVersion",))

    def _source_text(self, key: str) -> str | None:
        """The scalar of ``key`` as written in the file (1.30, not the float 1.3)."""
        line = self._document.line_of((key,))
        try:  # a second read, so of a regular file only (--config may name <(...))
            with paths.open_input(self._path) as file:
                lines = file.read(min(self._limits.max_bytes, 1 << 20)).splitlines()
        except OSError:
            return None
        if not 0 < line <= len(lines):
            return None
        found = re.search(rb"""["']?%s["']?\s*:\s*([^\s,}\]#]{1,40})""" % key.encode(),
                          lines[line - 1])
        return found.group(1).decode("ascii", "replace") if found else None

    def _skip(self, skip: object) -> tuple[str, ...]:
        if not isinstance(skip, list):
            self._fail(("skip",), f"expected a list of paths, got {yaml_kind(skip)}")
            return ()
        patterns = []
        for index, item in enumerate(skip):
            pattern = self._string(item, ("skip", index))
            if pattern is None:
                continue
            if matches_every_file(pattern):
                self._fail(("skip", index), f"{pattern!r} matches every file, so nothing "
                           "would be checked; name the paths to skip (\"vendor/*\")")
                continue
            patterns.append(pattern)
        return tuple(patterns)

    def _fail_on(self, fail_on: object) -> str | None:
        if fail_on is None:
            return None
        if isinstance(fail_on, str) and fail_on in FAIL_ON:
            return fail_on
        # YAML 1.1 reads a bare no/off as false: say what it read.
        got = repr(fail_on[:40]) if isinstance(fail_on, str) else yaml_kind(fail_on)
        if fail_on is False:
            got += " (YAML reads a bare no or off as false; write never)"
        self._fail(("failOn",), f"expected error, warning, info or never, got {got}")
        return None

    def _docs_url(self, url: object) -> str | None:
        if url is None:
            return None
        text = self._string(url, ("docsUrl",))
        if text is None:
            return None
        why = docs_url_error(text)
        if why is not None:
            self._fail(("docsUrl",), why)
            return None
        return text
