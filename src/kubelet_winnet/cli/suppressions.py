"""What silences or leaves out a ``check`` finding, in one place: ignore comments
(``# kubelet-winnet: ignore RULE reason``), ``skip`` patterns of the settings file, and the
baseline (a Checkov-style file of accepted findings). The ignore annotation is read by the
linter (``_lint/ignores.py`` ``ignored_rules``): the API server keeps it on the object."""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import os
import re
import stat
from collections.abc import Mapping
from typing import TYPE_CHECKING

from kubelet_winnet._printable import cut
from kubelet_winnet.cli.config import Config
from kubelet_winnet.cli.session import Session, input_paths
from kubelet_winnet.sources.manifests import (
    BadInput,
    Document,
    Limits,
    expand_paths,
    open_input,
    read_source,
)

if TYPE_CHECKING:
    from kubelet_winnet._lint.rules import Finding
    from kubelet_winnet._lint.targeting import PodObject

__all__ = [
    "BASELINE_MAX_BYTES",
    "BASELINE_MAX_FINDINGS",
    "Baseline",
    "Comments",
    "filter_inputs",
    "is_an_input",
    "still_read",
]




def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


class Comments:
    """The ``# kubelet-winnet:ignore RULE reason`` comments of the file being checked:
    read when one of its objects has a finding, the lines with the marker only (the file
    is streamed; most have none), and of those the ones where the marker is a real YAML
    comment (not text inside a string or block scalar; JSON has no comments). A rendered
    object's comments are read in the renderer's output, which keeps a template's
    comments, in the lines its findings are found at. A comment naming no rule or no
    reason is a note."""

    def __init__(self, session: Session, max_bytes: int) -> None:
        self._session = session
        self._max_bytes = max_bytes
        self._file: str | None = None
        self._lines: dict[int, tuple[str, str, bool]] = {}  # line: rule, reason, own line

    def of(self, document: Document) -> _Skips | None:
        if not document.commented:  # JSON has no comments: its file is not read again
            return None
        file = document.text or document.source
        if file != self._file:
            self._file = file
            self._lines = self._read(document, file)
        if not self._lines:
            return None
        lines = {document.line_of(("kind",)), document.line_of(("metadata",))}
        before = self._lines.get(document.line - 1)
        if before is not None and before[2]:  # a comment line just above the object
            lines.add(document.line - 1)
        return _Skips(self._lines, lines)

    def _read(self, document: Document, file: str) -> dict[int, tuple[str, str, bool]]:
        from kubelet_winnet._lint.ignores import IGNORE_COMMENT, ignore_comment, nearest_rule
        from kubelet_winnet._lint.rules import RULES_BY_ID
        from kubelet_winnet.sources.manifests.comments import comment_lines, marked_text
        from kubelet_winnet.sources.manifests.lines import TextLines, yaml_only_break

        text = marked_text(file, IGNORE_COMMENT, self._max_bytes)
        if text is None:
            return {}
        lines = TextLines(text)
        marked: dict[int, tuple[int, str, int]] = {}  # line: offset of its "#", text, end
        at = text.find(IGNORE_COMMENT)
        while at >= 0:
            start, end = lines.bounds(at)
            row = text[start:end]
            if ignore_comment(row) is not None:
                marked.setdefault(lines.line(at), (text.rfind("#", start, at), row, end))
            at = text.find(IGNORE_COMMENT, end)
        if not marked:
            return {}
        real, shared = comment_lines(text, lines, {n: hash_at for n, (hash_at, _, _)
                                                    in marked.items()})
        found: dict[int, tuple[str, str, bool]] = {}
        for line, (_, row, end) in marked.items():
            parsed = ignore_comment(row)
            if parsed is None or line not in real:
                continue
            rule, reason = parsed
            where = f"{document.source}:{document.place((), line).line}: # {IGNORE_COMMENT}"
            own = row.lstrip().startswith("#")
            # A line break only YAML reads puts YAML's lines where editors show none: a
            # comment on either side of one could belong to what the editor does not show.
            odd, which = yaml_only_break(row), "this line"
            if odd is None and own and end < len(text):
                following = text[slice(*lines.bounds(end + 1 + text.startswith("\r\n", end)))]
                odd, which = yaml_only_break(following), "the next line"
            if odd is not None:
                self._session.note(
                    f"{where} {cut(rule, 60)}: {which} holds {odd}, a line break for YAML "
                    "but not for editors, so the comment silences nothing; break lines "
                    "with LF or CRLF")
                continue
            if line in shared:
                self._session.note(
                    f"{where} {cut(rule, 60)}: more than one object starts on this line, so "
                    "the comment silences nothing; write it on a line of its object's own")
                continue
            if rule not in RULES_BY_ID:
                nearest = nearest_rule(rule) if rule else None
                self._session.note(
                    f"{where} {cut(rule, 60)} names no rule, so it silences nothing"
                    + (f" (did you mean {nearest}?)" if nearest else "") if rule else
                    f"{where} names no rule, so it silences nothing; write "
                    f"# {IGNORE_COMMENT} RULE-ID REASON")
                continue
            if not reason:
                self._session.note(
                    f"{where} {rule} gives no reason, so it silences nothing; write the "
                    "reason after the rule id")
                continue
            found[line] = (rule, reason, own)
        return found


class _Skips:
    """The comments that apply to one object: on a finding's own line, or on the
    object's kind: or metadata: line or the comment line above it."""

    def __init__(self, lines: Mapping[int, tuple[str, str, bool]], object_lines: set[int]):
        self._lines = lines
        self._object = [lines[n] for n in object_lines if n in lines]

    def reason(self, rule: str, line: int) -> str | None:
        own = self._lines.get(line)
        if own is not None and own[0] == rule:
            return own[1]
        for named, reason, _ in self._object:
            if named == rule:
                return reason
        return None


_STALE_SHOWN = 20  # stale baseline entries noted one by one; the rest are counted
# A baseline's bounds, on reading and on writing alike (a baseline this command writes can
# always be read): 100,000 accepted findings, 32 MiB (about 260 bytes an entry as
# --create-baseline writes them; a file at the bound is read in about 4 s and 200 MB).
BASELINE_MAX_FINDINGS = 100_000
BASELINE_MAX_BYTES = 32 * 1024 * 1024
_BAD_SHOWN = 20  # malformed baseline entries said one by one; the rest are counted
_BASELINE_START = re.compile(rb'(?:\xef\xbb\xbf)?\s*\{\s*"failed_checks"\s*:\s*\[')


class Baseline:
    """``--baseline FILE``: findings accepted earlier (checkov's ``--baseline`` and
    ``--create-baseline``), keyed by what does not move when lines do: the file relative
    to the baseline's directory, the object (kind, namespace, name), the rule and the
    field path. JSON::

        {"failed_checks": [{"file": "deploy/iis.yaml", "findings": [
            {"object": {"kind": "Pod", "name": "iis"}, "rule": "host-network-ignored",
             "field": "spec.hostNetwork"}]}]}
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._base = os.path.dirname(os.path.abspath(path))
        # key: where the entry is ((group, finding) of failed_checks), its line found
        # from the document only for the few entries a note names
        self._entries: dict[tuple[str, ...], tuple[int, int]] = {}
        self._document: Document | None = None
        self._matched: set[tuple[str, ...]] = set()
        self._created: set[tuple[str, ...]] = set()
        self._too_many = False  # more findings to accept than a baseline holds
        self._stale_shown = 0

    def _relative(self, source: str) -> str:
        if source == "<stdin>":
            return source
        try:
            return os.path.relpath(os.path.abspath(source), self._base).replace(os.sep, "/")
        except ValueError:  # another drive (Windows)
            return os.path.abspath(source).replace(os.sep, "/")

    def _key(self, document: Document, pod: PodObject, finding: Finding) -> tuple[str, ...]:
        from kubelet_winnet._describe import describe_path

        metadata = pod.manifest.get("metadata")
        names = [metadata.get(k) if isinstance(metadata, dict) else None
                 for k in ("namespace", "name")]
        return (self._relative(document.source), pod.kind,
                *(n if isinstance(n, str) else "" for n in names),
                finding.rule.id, describe_path(finding.field))

    def accepts(self, document: Document, pod: PodObject, finding: Finding,
                creating: bool) -> str | None:
        """"baseline" when the finding is in the baseline (or one is being created)."""
        key = self._key(document, pod, finding)
        if creating:
            if len(self._created) < BASELINE_MAX_FINDINGS or key in self._created:
                self._created.add(key)
            else:
                self._too_many = True
            return "accepted in the baseline being created"
        if key in self._entries:
            self._matched.add(key)
            return f"accepted in the baseline {self.path}"
        return None

    def refuses_to_replace(self, limits: Limits) -> str | None:
        """Why ``--create-baseline`` must not replace the file now at the path (None when
        there is none, it is empty, or it is a baseline): a manifest named by mistake,
        say one the directory input holds, would be lost."""
        try:
            mode = os.lstat(self.path).st_mode
        except OSError:
            return None  # no file there (writing will say what else is wrong)
        if stat.S_ISLNK(mode):
            return None  # the link is replaced, never what it points to
        if not stat.S_ISREG(mode):
            # os.replace would put the baseline in place of a FIFO or, as root, a device
            return (f"--create-baseline would replace {self.path}, which is not a regular "
                    "file; name a file for the baseline")
        if os.path.getsize(self.path) == 0:
            return None
        if os.path.getsize(self.path) > BASELINE_MAX_BYTES:
            # Too large to be read as a baseline: one by its first bytes, as written.
            try:
                with open_input(self.path) as file:
                    if _BASELINE_START.match(file.read(1 << 16)):
                        return None
            except OSError:
                return None  # gone or replaced since: writing says what is wrong
        else:
            found = list(itertools.islice(read_source(self.path, limits), 2))
            value = found[0].value if len(found) == 1 and isinstance(found[0], Document) \
                else None
            if isinstance(value, dict) and isinstance(value.get("failed_checks"), list):
                return None
        return (f"--create-baseline would replace {self.path}, which is not a baseline (it "
                "holds no failed_checks list); remove it or name another file")

    def _line(self, at: tuple[int, int]) -> int:
        document = self._document
        return 0 if document is None else document.line_of(
            ("failed_checks", at[0], "findings", at[1]))

    def _too_large(self) -> str | None:
        """Why the file is too large to be a baseline (None: it is not), before reading
        it; a FIFO is read up to the bound instead."""
        try:
            size = os.stat(self.path).st_size if os.path.isfile(self.path) else 0
        except OSError:
            return None  # reading it says what is wrong
        if size <= BASELINE_MAX_BYTES:
            return None
        return (f"baseline {self.path}: {size:,} bytes, more than the "
                f"{BASELINE_MAX_BYTES >> 20} MiB a baseline may be (it holds at most "
                f"{BASELINE_MAX_FINDINGS:,} findings); fix or exclude findings, then write "
                "it again with --create-baseline")

    def load(self, session: Session, limits: Limits) -> bool:
        """Read the file; False (and the errors said) when it cannot be used."""
        refused = self._too_large()
        if refused is not None:
            session.error(refused)
            return False
        documents = []
        bounded = dataclasses.replace(limits, max_bytes=min(limits.max_bytes,
                                                            BASELINE_MAX_BYTES))
        for found in read_source(self.path, bounded):
            if isinstance(found, BadInput):
                if found.reason.startswith("larger than") and \
                        bounded.max_bytes < limits.max_bytes:
                    session.error(f"baseline {self.path}: more than the "
                                  f"{BASELINE_MAX_BYTES >> 20} MiB a baseline may be; fix "
                                  "or exclude findings, then write it again with "
                                  "--create-baseline")
                else:
                    session.error(f"baseline {found}")
                return False
            documents.append(found)
        if len(documents) != 1 or documents[0].item is not None:
            session.error(f"baseline {self.path}: expected one JSON object (written by "
                          "--create-baseline), found "
                          f"{_count(len(documents), 'document')}")
            return False
        document = self._document = documents[0]
        value = document.value
        bad_entries = 0

        def bad(path: tuple[str | int, ...], text: str) -> None:
            nonlocal bad_entries
            bad_entries += 1
            if bad_entries > _BAD_SHOWN:
                return
            shown = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
            session.error(f"baseline {self.path}:{document.line_of(path)}: "
                          f"{shown.lstrip('.') or 'the file'}: {text}")

        groups = value.get("failed_checks") if isinstance(value, dict) else None
        if not isinstance(groups, list):
            bad(("failed_checks",), "expected a list of files and their findings "
                "(--create-baseline writes one)")
            return False
        for g, group in enumerate(groups):
            file = group.get("file") if isinstance(group, dict) else None
            findings = group.get("findings") if isinstance(group, dict) else None
            if not isinstance(file, str) or not isinstance(findings, list):
                bad(("failed_checks", g), "expected {\"file\": PATH, \"findings\": [...]}")
                continue
            for f, entry in enumerate(findings):
                at = ("failed_checks", g, "findings", f)
                thing = entry.get("object") if isinstance(entry, dict) else None
                rule = entry.get("rule") if isinstance(entry, dict) else None
                where = entry.get("field") if isinstance(entry, dict) else None
                parts = [thing.get(k, "") if isinstance(thing, dict) else None
                         for k in ("kind", "namespace", "name")]
                if not all(isinstance(p, str) for p in (*parts, rule, where)) or not parts[0]:
                    bad(at, "expected {\"object\": {\"kind\", \"namespace\", \"name\"}, "
                        "\"rule\": RULE-ID, \"field\": PATH} with strings")
                    continue
                key = (file, *[str(p) for p in parts], str(rule), str(where))
                self._entries.setdefault(key, (g, f))
                if len(self._entries) > BASELINE_MAX_FINDINGS:
                    session.error(
                        f"baseline {self.path}:{document.line_of(at)}: more than "
                        f"{BASELINE_MAX_FINDINGS:,} findings, the most a baseline holds; fix "
                        "or exclude findings, then write it again with --create-baseline")
                    return False
        if bad_entries > _BAD_SHOWN:
            more = bad_entries - _BAD_SHOWN
            session.error(f"baseline {self.path}: {more:,} more "
                          + ("entry is" if more == 1 else "entries are")
                          + " malformed (the first ones are named above)")
        return not bad_entries

    def note_stale(self, session: Session, files: set[str]) -> None:
        """A note for each entry that matched no finding, in a file this run read (or
        one that no longer exists): fixed, or its object was renamed."""
        read = {self._relative(f) for f in files}
        exists: dict[str, bool] = {}
        more = 0
        for key, at in self._entries.items():
            if key in self._matched:
                continue
            file, kind, namespace, name, rule, field = key
            if file not in exists:
                exists[file] = file == "<stdin>" or os.path.exists(
                    os.path.join(self._base, file))
            gone = not exists[file]
            if file not in read and not gone:
                continue  # not checked in this run (pre-commit gives changed files only)
            if self._stale_shown >= _STALE_SHOWN:
                more += 1
                continue
            self._stale_shown += 1
            thing = "/".join(p for p in (kind, namespace, name) if p)
            session.note(f"{self.path}:{self._line(at)}: the baseline entry {rule} on {thing} "
                         f"{field} in {file} matches no finding any more"
                         + (" (the file is gone)" if gone else "")
                         + "; remove it, or write the baseline again with --create-baseline")
        if more:
            session.note(f"{self.path}: {more} more baseline "
                         + ("entry matches" if more == 1 else "entries match")
                         + " no finding any more; write the baseline again with "
                         "--create-baseline")

    def write(self, session: Session) -> None:
        """The accepted findings of this run, as the baseline file (replaced whole)."""
        import json
        import tempfile

        if session.errors:
            session.error(f"baseline {self.path} not written: the input had errors, so "
                          "findings could be missing from it")
            return
        if self._too_many:
            session.error(f"baseline {self.path} not written: this run has more findings to "
                          f"accept than the {BASELINE_MAX_FINDINGS:,} a baseline holds; fix or "
                          "exclude findings (rules.exclude, skip) first")
            return
        groups: dict[str, list[dict[str, object]]] = {}
        for file, kind, namespace, name, rule, field in sorted(self._created):
            thing = {"kind": kind, **({"namespace": namespace} if namespace else {}),
                     **({"name": name} if name else {})}
            groups.setdefault(file, []).append({"object": thing, "rule": rule,
                                                "field": field})
        text = json.dumps({"failed_checks": [
            {"file": file, "findings": findings} for file, findings in groups.items()
        ]}, indent=2) + "\n"
        if len(text.encode("utf-8")) > BASELINE_MAX_BYTES:
            session.error(f"baseline {self.path} not written: its findings take more than "
                          f"the {BASELINE_MAX_BYTES >> 20} MiB a baseline may be; fix or "
                          "exclude findings (rules.exclude, skip) first")
            return
        try:
            handle, temporary = tempfile.mkstemp(dir=self._base, prefix=".baseline-")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    out.write(text)
                os.replace(temporary, self.path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError as exc:
            session.error(f"baseline {self.path}: cannot write: "
                          f"{exc.strerror or type(exc).__name__}")
            return
        session.note(f"{self.path}: wrote {_count(len(self._created), 'finding')} to the "
                     "baseline")


def is_an_input(path: str, arguments: list[str]) -> bool:
    """Whether ``path`` is one of the file arguments (a directory's files are not)."""
    target = os.path.realpath(path)
    return any(argument != "-" and os.path.realpath(argument) == target
               for argument in arguments)


def still_read(arguments: list[str], kept: list[str]) -> list[str]:
    """The arguments that some file of the filtered input lies under: a filter that left
    an argument nothing to read left it out, which the summary says; it is not empty."""
    def under(argument: str, path: str) -> bool:
        return path == argument or path.startswith(argument.rstrip(os.sep) + os.sep)

    return [a for a in arguments if any(under(a, path) for path in kept)]


def filter_inputs(args: argparse.Namespace, session: Session, config: Config,
                   baseline: Baseline | None) -> str:
    """Drop the files that match a skip pattern, and the baseline file, from the input
    (directories expanded here); what was dropped, in words ("" when nothing was). The
    run goes on when nothing is left: its report and summary say so."""
    own = os.path.abspath(baseline.path) if baseline is not None else None
    kept: list[str] = []
    skipped = found_baseline = 0
    for entry in expand_paths(input_paths(args)):
        path = session.source(entry)  # bad input and skipped files reported here
        if path is None:
            continue
        if config.skips(path):
            skipped += 1
        elif own is not None and path != "-" and os.path.abspath(path) == own:
            found_baseline = 1
        else:
            kept.append(path)
    args.inputs = kept
    return " and ".join(
        ([f"{_count(skipped, 'file')} matching a skip pattern of {config.source}"]
         if skipped else [])
        + (["the baseline file, which is never read as a manifest"] if found_baseline else []))
