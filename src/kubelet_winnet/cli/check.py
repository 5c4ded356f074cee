"""``kubelet-winnet check``: the linter over manifests (the rules are
:mod:`kubelet_winnet._lint.rules`)."""

from __future__ import annotations

import argparse
import dataclasses
import io
import itertools
import os
import re
import stat
from collections.abc import Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any, TextIO

from kubelet_winnet._printable import printable
from kubelet_winnet.cli.config import (
    CONFIG_NAME,
    FAIL_ON,
    Config,
    ConfigError,
    docs_url_error,
    find_config,
    load_config,
    settings_keys,
)
from kubelet_winnet.cli.input import BadInput, Document, Limits, expand_paths, read_source
from kubelet_winnet.cli.notes import InputNotes
from kubelet_winnet.cli.session import (
    EXIT_FINDINGS,
    Command,
    Session,
    add_input_arguments,
    add_profile_arguments,
    check_profile,
    input_paths,
    invalid_pod,
    pods,
)
from kubelet_winnet.errors import InvalidPodError, WinnetError

if TYPE_CHECKING:
    from kubelet_winnet._lint.report import Notification
    from kubelet_winnet._lint.rules import Finding
    from kubelet_winnet._lint.targeting import PodObject

__all__ = ["COMMAND"]

_FAIL_ON_DEFAULT = "warning"

EXIT_TEXT = """\
exit status:
  0    every file read; no finding at or above --fail-on (always with --fail-on never)
  1    a finding at or above --fail-on that no ignore annotation, ignore comment or
       baseline entry silences
  2    bad input (a file, document or field that cannot be read), a mistake in the
       settings file, bad flags or usage, nothing given that holds Kubernetes
       manifests (unless --allow-empty), or output that cannot be written
  141  stdout was closed early (| head): stopped quietly, not a success
"""


def _configure_check(parser: argparse.ArgumentParser) -> None:
    from kubelet_winnet._lint.report import FORMATS
    from kubelet_winnet._lint.rules import RULES

    add_input_arguments(parser)
    add_profile_arguments(parser, without=(
        "default: none, and the hostNetwork finding speaks of every release, unless the "
        "settings file sets kubeletVersion"))
    parser.set_defaults(kubelet_version=None)  # unset: findings name every release
    parser.add_argument(
        "-o", "--output", choices=FORMATS, default="text",
        help="text: file:line: severity rule-id: message [field] (-v adds the detail); "
        "json: findings and a summary; sarif: SARIF 2.1.0; junit: JUnit XML",
    )
    parser.add_argument(
        "--fail-on", choices=FAIL_ON, default=None,
        help="exit 1 when a finding has this severity or higher; never: report only "
        f"(default {_FAIL_ON_DEFAULT}, or failOn in the settings file)",
    )
    parser.add_argument(
        "--assume-windows", action="store_true",
        help="check pods that no OS field, node selector or affinity pins as Windows pods "
        "(by default their findings are conditional and one severity level lower)",
    )
    parser.add_argument(
        "--config", metavar="FILE",
        help=f"settings file (default: {CONFIG_NAME} in the working directory or the "
        f"nearest one above it); its keys: {settings_keys()}",
    )
    parser.add_argument(
        "--allow-empty", action="store_true",
        help="exit 0 when no file given holds Kubernetes manifests (by default such a run, "
        "e.g. only unrendered Helm templates, is status 2; allowEmpty in the settings file)",
    )
    parser.add_argument(
        "--baseline", metavar="FILE",
        help="findings recorded in FILE (JSON) do not fail the run, new ones do; an entry "
        "that matches no finding any more is a note",
    )
    parser.add_argument(
        "--create-baseline", action="store_true",
        help="write every finding of this run to the --baseline FILE (accepting them all)",
    )
    parser.add_argument(
        "--docs-url", metavar="URL",
        help="where the rule pages are published: SARIF and JSON give each rule's helpUri "
        "as URL/<rule-id>.md ({rule} in URL is replaced by the id instead); default "
        "docsUrl in the settings file, else no helpUri",
    )
    parser.add_argument("--list-rules", action="store_true",
                        help="list the rules (-o json: as JSON) and exit")
    parser.add_argument("--explain", metavar="RULE",
                        help="print the documentation of one rule and exit")
    parser.epilog = (
        "rules: " + ", ".join(f"{r.id} ({r.severity_text})" for r in RULES)
        + ". Ignore one for an object with the annotation "
        "ignore-check.kubelet-winnet.io/<rule-id>: \"<reason>\" on the object or its pod "
        "template, or with a comment # kubelet-winnet:ignore <rule-id> <reason> on the "
        "finding's line or the object's kind: or metadata: line.\n\n" + EXIT_TEXT
    )


def colour_wanted(stream: TextIO, environ: Mapping[str, str] = os.environ) -> bool:
    """Colours on a terminal only; NO_COLOR (any value) turns them off, FORCE_COLOR on
    (no-color.org; NO_COLOR wins, as in CPython's own colouring)."""
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _run_check(args: argparse.Namespace, session: Session) -> int:
    from kubelet_winnet._kubelet.profile import DEFAULT_KUBELET_VERSION
    from kubelet_winnet._lint.report import Options, report_writer
    from kubelet_winnet._lint.rules import (
        RULES_BY_ID,
        Severity,
        check_pod,
        host_network_reach,
        ignored_rules,
        unknown_ignores,
    )
    from kubelet_winnet._lint.targeting import Target
    from kubelet_winnet.cli.session import limits_of

    if args.list_rules or args.explain is not None:
        return _rules_help(args, session)
    record = _Record(session)
    config = Config()
    try:
        path = args.config if args.config is not None else find_config()
        if path is not None:
            config = load_config(path, limits_of(args), RULES_BY_ID)
    except ConfigError as exc:
        for message in exc.messages:  # every mistake of the file, then stop
            session.error(message)
        return _failed_early(args, session, record, exc.source)
    if args.create_baseline and args.baseline is None:
        session.error("--create-baseline needs --baseline FILE: the file to write")
        return _failed_early(args, session, record)
    docs_url = args.docs_url if args.docs_url is not None else config.docs_url
    if args.docs_url is not None:
        why = docs_url_error(args.docs_url)
        if why is not None:
            session.error(f"--docs-url {_clip(args.docs_url)!r}: {why}")
            return _failed_early(args, session, record)
    baseline = None
    if args.baseline is not None:
        baseline = _Baseline(args.baseline)
        if _is_an_input(args.baseline, input_paths(args)):
            # Left out of the input, it would leave nothing to check; created, it would
            # overwrite a manifest.
            session.error(f"--baseline {args.baseline} is also an input: name another file "
                          "for the baseline")
            return _failed_early(args, session, record)
        if args.create_baseline:
            refusal = baseline.refuses_to_replace(limits_of(args))
            if refusal is not None:
                session.error(refusal)
                return _failed_early(args, session, record)
        elif not baseline.load(session, limits_of(args)):
            return _failed_early(args, session, record)
    if args.kubelet_version is None:
        args.kubelet_version = config.kubelet_version
    if args.feature_gates is None and config.feature_gates is not None:
        args.feature_gates = config.feature_gates
        args.feature_gates_from = f"featureGates of {config.source}"
    if args.fail_on is None:
        args.fail_on = config.fail_on or _FAIL_ON_DEFAULT
    args.windows_only = args.windows_only or config.windows_only
    args.assume_windows = args.assume_windows or config.assume_windows
    args.allow_remote = args.allow_remote or config.allow_remote
    allow_empty = args.allow_empty or config.allow_empty
    given = args.kubelet_version is not None
    if not given:
        args.kubelet_version = DEFAULT_KUBELET_VERSION
    arguments = input_paths(args)  # as given, before a filter expands them to files
    left_out = _filter_inputs(args, session, config, baseline) \
        if config.skip or baseline is not None else ""
    if not check_profile(args, session):
        return _failed_early(args, session, record)
    from kubelet_winnet._judgement import judge
    from kubelet_winnet._kubelet.profile import kubelet_profile

    reach = host_network_reach(args.kubelet_version, args.feature_gates, given)
    profile = kubelet_profile(args.kubelet_version, args.feature_gates)
    threshold = None if args.fail_on == "never" else Severity[args.fail_on.upper()]
    colour = args.output == "text" and colour_wanted(session.out)
    writer = report_writer(args.output, session.out,
                           Options(threshold, args.verbose, colour, docs_url))
    inputs = InputNotes(session, args.max_bytes, "check")
    comments = _Comments(session, args.max_bytes)
    # rules or severities chosen by a config file
    configured = config.include is not None or bool(config.exclude or config.severity)
    for item in pods(args, session, inputs.document, inputs.bad):
        inputs.document(item.document)
        try:  # the library's reading: "true" is not true, wrong types are bad input
            verdict = judge(item.document.value, profile, inputs.node)
        except InvalidPodError as exc:
            session.pods -= 1  # read, but not checked: an input error instead
            invalid_pod(session, item.document, exc)
            continue
        except WinnetError as exc:
            session.error(f"{item.where}: document {item.document.document}: {exc}")
            continue
        writer.pod(item.document, item.pod)
        target = item.target
        if args.assume_windows and target is Target.UNTARGETED:
            target = Target.WINDOWS
        ignored = ignored_rules(item.pod)
        if ignored:
            for name, nearest in unknown_ignores(ignored):
                session.note(
                    f"{item.where}: {item.pod.identity}: ignore-check.kubelet-winnet.io/"
                    f"{_clip(name)} names no rule, so it silences nothing"
                    + (f" (did you mean {nearest}?)" if nearest else "")
                )
        findings = check_pod(item.pod, target, reach, verdict=verdict)
        if not findings:
            continue
        if configured:
            findings = [_configured(f, config) for f in findings if config.checks(f.rule.id)]
            if not findings:
                continue
        # In line order within the object, as a reader of the file meets them.
        line_of = item.document.line_of
        located = sorted(
            ((line_of(f.field), i, f) for i, f in enumerate(findings)),
            key=lambda entry: entry[:2],
        ) if len(findings) > 1 else [(line_of(f.field), 0, f) for f in findings]
        skips = comments.of(item.document)
        for line, _, finding in located:
            place = item.document.place(finding.field, line)
            how = "annotation"
            reason = ignored.get(finding.rule.id)
            if reason is None and skips is not None:
                reason = skips.reason(finding.rule.id, line)
                how = "comment"
            if reason is None and baseline is not None:
                reason = baseline.accepts(item.document, item.pod, finding,
                                          args.create_baseline)
                how = "baseline"
            if reason is None and threshold is not None and finding.severity >= threshold:
                session.fail(EXIT_FINDINGS)
            writer.finding(item.document, item.pod, finding, reason, place.line, how,
                           place.remark, place.also)
    inputs.note_empty(_still_read(arguments, input_paths(args)) if left_out else arguments)
    if not inputs.with_objects and not session.errors:
        if not allow_empty:
            session.error(_nothing_checked(session.files, len(inputs.explained), left_out)
                          + "; an empty run fails so that CI does not pass unchecked "
                          "(--allow-empty, or allowEmpty: true in the settings file, "
                          "accepts it)")
        elif left_out and not session.files:
            session.note(f"every file of the input was left out ({left_out})")
    if baseline is not None:
        if args.create_baseline:
            baseline.write(session)
        else:
            baseline.note_stale(session, inputs.files)
    writer.close(session, record.notifications(args, config, inputs.files, baseline))
    if args.verbose or not args.quiet:  # it counts the skipped pods too (-v lists them)
        session.err.write(f"{session.prog}: {writer.summary(session, session.files)}\n")
    return session.status


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _nothing_checked(files: int, templates: int, left_out: str) -> str:
    """Why a run checked nothing: what was read held no manifests, or every file was
    left out (``left_out``: which, as :func:`_filter_inputs` says it)."""
    if not files and left_out:
        return f"nothing was checked: every file of the input was left out ({left_out})"
    return (f"nothing was checked: no file of the input ({_count(files, 'file')}"
            + (f"; {left_out} left out" if left_out else "") + ") held Kubernetes manifests"
            + (f" ({templates} Helm template{'s' * (templates != 1)} or "
               f"kustomization{'s' * (templates != 1)} left unrendered)" if templates else ""))


def _failed_early(args: argparse.Namespace, session: Session, record: _Record,
                  source: str | None = None) -> int:
    """A run stopped before reading any manifest (bad settings or flags): the report
    formats still get a report, with the errors as its notifications."""
    if args.output != "text":
        from kubelet_winnet._lint.report import report_writer

        report_writer(args.output, session.out).close(
            session, record.notifications(args, Config(source=source or ""), set(), None))
    return session.status


class _Record:
    """Every note and error of the run in order (bounded), for the reports: the
    session's methods, wrapped."""

    def __init__(self, session: Session) -> None:
        self.said: list[tuple[str, str]] = []
        note, error = session.note, session.error

        def noted(text: str) -> None:
            if len(self.said) < 2000:
                self.said.append(("note", printable(text)))
            note(text)

        def failed(text: str) -> None:
            if len(self.said) < 2000:
                self.said.append(("error", printable(text)))
            error(text)

        session.note = noted  # type: ignore[method-assign]
        session.error = failed  # type: ignore[method-assign]

    def notifications(self, args: argparse.Namespace, config: Config, files: set[str],
                      baseline: _Baseline | None) -> list[Notification]:
        from kubelet_winnet._lint.report import Notification

        known = {printable(f) for f in (*files, *input_paths(args))}
        for extra in (args.config, config.source or None,
                      baseline.path if baseline is not None else None):
            if extra:
                known.add(printable(extra))
        out = []
        for level, text in self.said:
            source, line = _place(text, known)
            out.append(Notification(level, text, source, line))
        return out


def _place(text: str, known: set[str]) -> tuple[str | None, int]:
    """The file (one of ``known``) and line a diagnostic starts with, as every
    diagnostic names them: ``FILE:LINE: ...`` or ``FILE: ...`` (after "configuration ")."""
    rest = text.removeprefix("configuration ")
    at = rest.find(":")
    while at > 0:
        if rest[:at] in known:
            line = ""
            for char in rest[at + 1:at + 12]:
                if not char.isdigit():
                    break
                line += char
            return rest[:at], int(line) if line else 0
        at = rest.find(":", at + 1)
    return None, 0


class _Comments:
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
        from kubelet_winnet._lint.rules import (
            IGNORE_COMMENT,
            RULES_BY_ID,
            ignore_comment,
            nearest_rule,
        )

        marked: dict[int, tuple[int, str]] = {}  # line: column of its "#", text
        for line, text in _marked_lines(file, IGNORE_COMMENT, self._max_bytes):
            if ignore_comment(text) is not None:
                at = text.index(IGNORE_COMMENT)
                marked[line] = (text.rfind("#", 0, at), text)
        if not marked:
            return {}
        real, shared = _comment_lines(
            file, {n: column for n, (column, _) in marked.items()}, self._max_bytes)
        found: dict[int, tuple[str, str, bool]] = {}
        for line, (_, text) in marked.items():
            parsed = ignore_comment(text)
            if parsed is None or line not in real:
                continue
            rule, reason = parsed
            where = f"{document.source}:{document.place((), line).line}: # {IGNORE_COMMENT}"
            if line in shared:
                self._session.note(
                    f"{where} {_clip(rule)}: more than one object starts on this line, so "
                    "the comment silences nothing; write it on a line of its object's own")
                continue
            if rule not in RULES_BY_ID:
                nearest = nearest_rule(rule) if rule else None
                self._session.note(
                    f"{where} {_clip(rule)} names no rule, so it silences nothing"
                    + (f" (did you mean {nearest}?)" if nearest else "") if rule else
                    f"{where} names no rule, so it silences nothing; write "
                    f"# {IGNORE_COMMENT} RULE-ID REASON")
                continue
            if not reason:
                self._session.note(
                    f"{where} {rule} gives no reason, so it silences nothing; write the "
                    "reason after the rule id")
                continue
            found[line] = (rule, reason, text.lstrip().startswith("#"))
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


def _comment_lines(source: str, columns: Mapping[int, int],
                   max_bytes: int) -> tuple[set[int], set[int]]:
    """The lines of ``columns`` (line: the column of a ``#`` on it) where that ``#``
    starts a YAML comment: outside every scalar of the file, as libyaml reads it; and
    the lines where more than one object starts (a document, or an item of a List), whose
    comment belongs to none of them. A JSON file has no comment (a ``#`` in it is inside
    a string), and after a YAML error nothing is one: the input layer said what is wrong
    there."""
    import bisect
    from collections import Counter

    import yaml

    text = _decoded(source, max_bytes)
    if text is None:
        return set(), set()
    marks = sorted((line - 1, column) for line, column in columns.items())
    inside: set[tuple[int, int]] = set()
    starts: Counter[int] = Counter()  # line: objects starting on it
    end: tuple[int, int] = (1 << 62, 0)
    # Open collections: [is a mapping, expects a key, its last key] (a List's items).
    stack: list[list[Any]] = []
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        for event in yaml.parse(text, Loader=loader):
            start, stop = event.start_mark, event.end_mark
            if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                stack.pop()
                continue
            if not isinstance(event, yaml.NodeEvent) or start is None or stop is None:
                continue
            parent = stack[-1] if stack else None
            if parent is not None and parent[0]:
                if parent[1] and isinstance(event, yaml.ScalarEvent):
                    parent[2] = event.value
                parent[1] = not parent[1]
            if isinstance(event, yaml.MappingStartEvent) and (not stack or (
                    len(stack) == 2 and stack[0][2] == "items" and not stack[1][0])):
                starts[start.line] += 1
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                stack.append([isinstance(event, yaml.MappingStartEvent), True, None])
            elif isinstance(event, yaml.ScalarEvent):
                first, last = (start.line, start.column), (stop.line, stop.column)
                at = bisect.bisect_left(marks, first)
                while at < len(marks) and marks[at] < last:
                    inside.add(marks[at])
                    at += 1
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        end = (mark.line, mark.column) if mark is not None else (0, 0)
    real = {line + 1 for line, column in marks
            if (line, column) not in inside and (line, column) < end}
    return real, {line + 1 for line, count in starts.items() if count > 1}


def _decoded(source: str, max_bytes: int) -> str | None:
    """The text of ``source`` (stdin: the part of it kept) as the input layer decodes
    it: UTF-8, or UTF-16/UTF-32 by their byte order mark."""
    import codecs

    from kubelet_winnet.cli.input import stdin_head

    if source == "<stdin>":
        data = stdin_head()
    else:
        try:
            with open(source, "rb") as raw:
                data = raw.read(max_bytes)
        except OSError:
            return None
    for bom, name in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                      (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
                      (codecs.BOM_UTF8, "utf-8-sig")):
        if data.startswith(bom):
            return data.decode(name, "replace")
    return data.decode("utf-8", "replace")


def _marked_lines(source: str, marker: str, max_bytes: int) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of ``source`` holding ``marker``, reading at most
    ``max_bytes`` in 1 MiB chunks (UTF-16 and UTF-32 files, found by their BOM or zero
    bytes as the input layer finds them, are decoded first)."""
    import codecs

    from kubelet_winnet.cli.input import replayable, stdin_head

    if source != "<stdin>" and not replayable(source):
        return  # a FIFO or device named as an argument: read once, by the input layer
    try:
        raw: IO[bytes] = (io.BytesIO(stdin_head()) if source == "<stdin>"
                          else open(source, "rb"))  # noqa: SIM115  (closed by the with below)
    except OSError:
        return
    with raw:
        head = raw.read(4)
        wide = next((name for bom, name in (
            (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
            (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
        ) if head.startswith(bom)), None)
        if wide is None and len(head) == 4 and 0 in head:
            wide = ("utf-32-be" if head[:3] == b"\0\0\0" else "utf-32-le"
                    if head[1:] == b"\0\0\0" else "utf-16-be" if head[0] == 0
                    else "utf-16-le")
        if wide is not None:
            text = (head + raw.read(max_bytes - 4)).decode(wide, "replace")
            for number, line in enumerate(text.splitlines(), 1):
                if marker in line:
                    yield number, line
            return
        needle = marker.encode()
        at = 1
        carry = head
        read = len(head)
        while True:
            chunk = raw.read(min(1 << 20, max_bytes - read)) if read < max_bytes else b""
            read += len(chunk)
            data = carry + chunk
            cut = len(data) if not chunk else data.rfind(b"\n") + 1
            whole, carry = data[:cut], data[cut:]
            if len(carry) > 1 << 20:  # one line longer than 1 MiB: no comment is read
                whole, carry = b"", b""  # in it (its line number is lost: skip it)
            if needle in whole:
                for offset, row in enumerate(whole.split(b"\n")):
                    if needle in row:
                        yield at + offset, row.decode("utf-8", "replace")
            at += whole.count(b"\n")
            if not chunk:
                return


_STALE_SHOWN = 20  # stale baseline entries noted one by one; the rest are counted
# A baseline's bounds, on reading and on writing alike (a baseline this command writes can
# always be read): 100,000 accepted findings, 32 MiB (about 260 bytes an entry as
# --create-baseline writes them; a file at the bound is read in about 4 s and 200 MB).
BASELINE_MAX_FINDINGS = 100_000
BASELINE_MAX_BYTES = 32 * 1024 * 1024
_BAD_SHOWN = 20  # malformed baseline entries said one by one; the rest are counted
_BASELINE_START = re.compile(rb'(?:\xef\xbb\xbf)?\s*\{\s*"failed_checks"\s*:\s*\[')


class _Baseline:
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
            with open(self.path, "rb") as file:
                if _BASELINE_START.match(file.read(1 << 16)):
                    return None
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


def _configured(finding: Finding, config: Config) -> Finding:
    """The finding at the severity the configuration gives its rule: the level the user
    wrote, never lowered again for a pod pinned to no OS or without spec.os.name (a
    setting that could not raise a finding above info would be ignored silently)."""
    from kubelet_winnet._lint.rules import Severity

    level = config.severity.get(finding.rule.id)
    if level is None:
        return finding
    return dataclasses.replace(finding, severity=Severity[level.upper()])


def _is_an_input(path: str, arguments: list[str]) -> bool:
    """Whether ``path`` is one of the file arguments (a directory's files are not)."""
    target = os.path.realpath(path)
    return any(argument != "-" and os.path.realpath(argument) == target
               for argument in arguments)


def _still_read(arguments: list[str], kept: list[str]) -> list[str]:
    """The arguments that some file of the filtered input lies under: a filter that left
    an argument nothing to read left it out, which the summary says; it is not empty."""
    def under(argument: str, path: str) -> bool:
        return path == argument or path.startswith(argument.rstrip(os.sep) + os.sep)

    return [a for a in arguments if any(under(a, path) for path in kept)]


def _filter_inputs(args: argparse.Namespace, session: Session, config: Config,
                   baseline: _Baseline | None) -> str:
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


def _rules_help(args: argparse.Namespace, session: Session) -> int:
    """``--list-rules`` and ``--explain RULE``."""
    import difflib
    import json

    from kubelet_winnet._lint.rules import (
        REASONS_BY_ID,
        RULES,
        RULES_BY_ID,
        help_url,
        nearest_rule,
        rule_page,
    )

    if args.explain is not None:
        rule = RULES_BY_ID.get(args.explain)
        reason = REASONS_BY_ID.get(args.explain)
        if rule is None and reason is not None:
            # An id `explain` prints: say what it is, then the rule it is a case of.
            if reason.rule is None:
                session.out.write(f"{reason.id}: a note of `explain` about the flags, not a "
                                  f"check rule: {reason.summary}.\n")
                return session.status
            session.out.write(f"{reason.id}: a reason `explain` gives for rule "
                              f"{reason.rule}: {reason.summary}.\n\n")
            rule = RULES_BY_ID[reason.rule]
        if rule is None:
            # The nearest of the rule ids and the ids explain prints, which it also takes.
            close = difflib.get_close_matches(
                args.explain, [*RULES_BY_ID, *REASONS_BY_ID], n=1, cutoff=0.6)
            nearest = close[0] if close else nearest_rule(args.explain)
            session.error(f"--explain: {_clip(args.explain)} is not a rule nor an id "
                          "explain prints" + (f" (did you mean {nearest}?)" if nearest else "")
                          + "; --list-rules lists the rules")
            return session.status
        session.out.write(rule_page(rule.id))
        return session.status
    docs_url = args.docs_url
    if docs_url is not None and docs_url_error(docs_url) is not None:
        session.error(f"--docs-url {_clip(docs_url)!r}: {docs_url_error(docs_url)}")
        return session.status
    if args.output == "json":
        session.out.write(json.dumps([
            {"id": r.id, "severity": r.severity.label, "severityText": r.severity_text,
             "summary": r.summary,
             "severityWithoutOsName": r.severity_without_os.label
             if r.severity_without_os else None,
             "lowerWhenPinnedToNoOs": r.windows_nodes_only, "page": r.help_uri,
             **({"helpUri": help_url(r.id, docs_url)} if docs_url else {})}
            for r in RULES
        ], indent=2) + "\n")
        return session.status
    width = max(len(r.id) for r in RULES)
    column = max(len(r.severity_text) for r in RULES)
    for r in RULES:
        session.out.write(f"{r.id.ljust(width)}  {r.severity_text.ljust(column)}  "
                          f"{r.summary}\n")
    return session.status


def _clip(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


COMMAND = Command("check", _configure_check, _run_check)
