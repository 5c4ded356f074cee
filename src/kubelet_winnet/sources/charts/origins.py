"""Where a rendered object was written: the line a person edits, not the line of the
renderer's output (docs/check.md, "Where findings point").

A Helm template's rendered text is aligned, line by line, with the template itself
(:class:`HelmTemplate`): a line the template writes is found by its key (or its whole
text), a line a ``{{ }}`` action wrote (an ``include``, a ``toYaml``) is the action's
line when one action lies between the lines around it, and anything else the object's
first line, saying so. A kustomization's built objects are found, by kind, namespace and
name, among the files it lists (:class:`Kustomization`): each is read from its resource
file, and a patch that sets a field is named with the finding.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kubelet_winnet._describe import describe_path
from kubelet_winnet.sources.manifests import BadInput, Document, Limits, Place, read_source
from kubelet_winnet.sources.manifests.documents import FieldPath

if TYPE_CHECKING:
    from kubelet_winnet.sources.charts.render import Root

__all__ = ["HelmTemplate", "Kustomization", "Origins"]

# A YAML block key (after any "- " of list items): its indentation and name are what a
# template and its rendered text share, whatever value a template action gives it.
_KEY = re.compile(r"""(\s*(?:-\s+)*)("[^"]*"|'[^']*'|[^\s#'"{\[][^#]*?):(?:\s|$)""")
# Template actions that write nothing: control structure, definitions, comments and
# variable assignments (text/template's own syntax).
_SILENT = re.compile(
    r"\{\{-?\s*(?:/\*|(?:if|else|end|range|with|define|break|continue)\b|\$[\w.]*\s*:?=)")
_ACTION = re.compile(r"\{\{.*?\}\}", re.DOTALL)
# Lines times lines one run may align (difflib is quadratic at worst: 4 million take
# half a second on repetitive lines); past it, findings keep the rendered line.
ALIGN_BUDGET = 16_000_000


def _token(line: str) -> tuple[str, str]:
    found = _KEY.match(line)
    if found is not None:
        return ("key", found.group(1) + found.group(2))
    return ("text", line.rstrip())


@dataclass
class _Template:
    """A template's lines as the alignment sees them: ``tokens`` (one per line that
    writes text, with its 1-based line in ``lines``) and the lines whose actions write
    text (``writers``)."""

    tokens: list[Any] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    writers: list[int] = field(default_factory=list)


def _template(text: str) -> _Template:
    """Each line of a template: literal text is a token (an action inside a key's
    value leaves the key), a line whose actions write text is a writer, and a line of
    control actions only, or inside a multi-line action, is left out."""
    out = _Template()
    spans = [(m.start(), m.end()) for m in _ACTION.finditer(text)]
    span = 0
    offset = 0
    for number, line in enumerate(text.split("\n"), 1):
        end = offset + len(line)
        literal: list[str] = []
        pos = offset
        acted = writes = False
        inside = span < len(spans) and spans[span][0] < offset  # an action from above
        first: int | None = None
        while span < len(spans) and spans[span][0] < end:
            start, stop = spans[span]
            acted = True
            if first is None and start >= offset:
                first = start
            if start > pos:
                literal.append(text[pos:start])
            if start >= offset and not _SILENT.match(text, start):
                writes = True
            pos = max(pos, stop)
            if stop > end:  # it goes on past this line
                break
            span += 1
        if pos < end:
            literal.append(text[pos:end])
        head = "" if inside or first is None else text[offset:first]
        offset = end + 1
        if not "".join(literal).strip():
            if writes:
                out.writers.append(number)
            continue
        if not acted:
            out.tokens.append(_token(line))
        else:
            key = _KEY.match(head) if head else None
            out.tokens.append(("key", key.group(1) + key.group(2)) if key is not None
                              else ("action", number))
            if writes:
                out.writers.append(number)
        out.lines.append(number)
    return out


class HelmTemplate:
    """One template and the file holding what it rendered: :meth:`place` gives the
    template's line for a line of the rendered file. Both files are read on the first
    question, each within ``max_bytes``."""

    def __init__(self, template: str, rendered: str, max_bytes: int,
                 budget: list[int] | None = None) -> None:
        self.template = template
        self._budget = [ALIGN_BUDGET] if budget is None else budget  # shared by a run
        self.rendered = rendered
        self._max_bytes = max_bytes
        self._parts: _Template | None = None
        self._segments: list[tuple[int, list[str]]] | None = None  # (first line, lines)
        self._aligned: dict[int, dict[int, int]] = {}  # segment -> rendered -> template
        self._missing = False

    def _read(self, path: str) -> str | None:
        try:
            with open(path, "rb") as file:
                data = file.read(self._max_bytes + 1)
        except OSError:
            return None
        if len(data) > self._max_bytes:
            return None
        return data.decode("utf-8", "replace").replace("\r\n", "\n")

    def _load(self) -> bool:
        if self._segments is not None:
            return not self._missing
        template = self._read(self.template)
        rendered = self._read(self.rendered)
        self._segments = []
        if template is None or rendered is None:
            self._missing = True
            return False
        self._parts = _template(template)
        first = 1
        lines: list[str] = []
        for number, line in enumerate(rendered.split("\n"), 1):
            if line.rstrip() == "---":
                self._segments.append((first, lines))
                first, lines = number + 1, []
            else:
                lines.append(line)
        self._segments.append((first, lines))
        return True

    def _segment(self, line: int) -> int:
        import bisect

        assert self._segments is not None
        index = bisect.bisect_right(self._segments, line, key=lambda s: s[0]) - 1
        if index >= 0:
            first, lines = self._segments[index]
            if line < first + len(lines):
                return index
        return -1

    def _alignment(self, index: int) -> dict[int, int]:
        """The template line of each rendered line of segment ``index`` that the
        template wrote itself."""
        found = self._aligned.get(index)
        if found is not None:
            return found
        import difflib

        assert self._segments is not None and self._parts is not None
        first, lines = self._segments[index]
        rendered = [(first + n, _token(line)) for n, line in enumerate(lines)
                    if line.strip()]
        parts = self._parts
        found = {}
        cost = len(rendered) * max(1, len(parts.tokens))
        if cost <= self._budget[0]:
            self._budget[0] -= cost
            matcher = difflib.SequenceMatcher(
                None, [token for _, token in rendered], parts.tokens, autojunk=False)
            for a, b, size in matcher.get_matching_blocks():
                for k in range(size):
                    found[rendered[a + k][0]] = parts.lines[b + k]
        self._aligned[index] = found
        return found

    def place(self, path: FieldPath, line: int, start: int = 0) -> Place:
        """The template line of rendered ``line`` (the field at ``path``, of the object
        whose first key is on rendered line ``start``)."""
        if not self._load():
            return Place(line, f"{self.template} cannot be read here (a packaged "
                         "subchart?), so the line is the line of its rendered text")
        index = self._segment(line)
        if index < 0:
            return Place(line)
        aligned = self._alignment(index)
        if line in aligned:
            return Place(aligned[line])
        if not aligned:
            return Place(line, "the rendered object could not be matched with the "
                         "template's lines (none alike, or more than one run aligns), so "
                         "the line is the line of its rendered text")
        before = max((n for n in aligned if n < line), default=None)
        after = min((n for n in aligned if n > line), default=None)
        low = aligned[before] if before is not None else 0
        high = aligned[after] if after is not None else 1 << 62
        assert self._parts is not None
        writers = [n for n in self._parts.writers if low < n < high]
        if len(writers) == 1:  # the one action between the lines around it wrote it
            return Place(writers[0])
        if not writers and low in self._parts.writers:  # `key: {{ toYaml ... }}`
            return Place(low)
        first = aligned[min((n for n in aligned if n >= start), default=min(aligned))]
        what = describe_path(path) if path else "this line"
        return Place(first, f"the template writes {what} through its actions, not on a "
                     "line of its own, so the line is the object's first in the template")


# --- kustomize -------------------------------------------------------------------------

_MAX_FILES = 1000  # files one kustomization may list, its bases' included
_MAX_DEPTH = 20  # kustomizations within kustomizations


def _is_remote(entry: str) -> bool:
    return "://" in entry or entry.startswith(("github.com/", "git@", "gitlab.com/"))


def _identity(value: dict[str, Any]) -> tuple[str, str, str] | None:
    kind = value.get("kind")
    metadata = value.get("metadata")
    if not isinstance(kind, str) or not isinstance(metadata, dict):
        return None
    name = metadata.get("name")
    namespace = metadata.get("namespace")
    if not isinstance(name, str):
        return None
    return kind, namespace if isinstance(namespace, str) else "", name


@dataclass
class _Patch:
    """One patch of a kustomization: where it is written (``file``; ``line`` when it is
    written inline in the kustomization), its target (kind and name, empty when the
    patch names its own) and its YAML documents as nodes, for their lines."""

    file: str
    line: int
    kind: str
    name: str
    nodes: list[Any]


@dataclass
class _Resource:
    """An object of a resource file: its document, the identities it has had (from the
    file's own to the outermost kustomization's prefix, suffix and namespace) and the
    patches that target it, innermost first."""

    document: Document
    names: list[tuple[str, str, str]]
    patches: list[_Patch] = field(default_factory=list)


class Kustomization:
    """The files a kustomization lists, read through the input layer: :meth:`locate`
    gives a built object as its resource file's document; :attr:`listed` holds every
    file it read (read again as they are, their objects would be reported twice, and a
    patch is no object at all)."""

    def __init__(self, directory: str, manifest: str, limits: Limits) -> None:
        self._limits = limits
        self.listed: set[str] = set()  # absolute paths
        self._files = 0
        self._resources: dict[tuple[str, str], list[_Resource]] = {}
        self._patches_of: dict[str, list[_Patch]] = {}  # a kustomization's own patches
        for resource in self._load(directory, manifest, 0, frozenset()):
            kind, _, name = resource.names[-1]
            self._resources.setdefault((kind, name), []).append(resource)

    def _take(self, path: str) -> bool:
        """Count ``path`` as read; False past the bound on files."""
        if self._files >= _MAX_FILES:
            return False
        self._files += 1
        self.listed.add(os.path.abspath(path))
        return True

    def _documents(self, path: str) -> list[Document]:
        if not self._take(path):
            return []
        return [d for d in read_source(path, self._limits) if not isinstance(d, BadInput)]

    def _load(self, directory: str, manifest: str, depth: int,
              seen: frozenset[str]) -> list[_Resource]:
        from kubelet_winnet.sources.charts.render import KUSTOMIZATION_NAMES

        path = os.path.join(directory, manifest)
        key = os.path.realpath(path)
        if depth > _MAX_DEPTH or key in seen:
            return []
        seen = seen | {key}
        documents = self._documents(path)
        if len(documents) != 1:
            return []
        kustomization = documents[0]
        spec = kustomization.value
        resources: list[_Resource] = []
        # A component's patches act on its parent's resources too (kustomize applies a
        # Component to everything accumulated where it is named).
        borrowed: list[_Patch] = []
        for group in ("resources", "bases", "components"):
            entries = spec.get(group)
            for entry in entries if isinstance(entries, list) else ():
                if not isinstance(entry, str) or _is_remote(entry):
                    continue
                target = os.path.normpath(os.path.join(directory, entry))
                if os.path.isdir(target):
                    name = next((n for n in KUSTOMIZATION_NAMES
                                 if os.path.isfile(os.path.join(target, n))), None)
                    if name is not None:
                        resources += self._load(target, name, depth + 1, seen)
                        if group == "components":
                            borrowed += self._patches_of.get(
                                os.path.realpath(os.path.join(target, name)), [])
                elif os.path.isfile(target):
                    for document in self._documents(target):
                        identity = _identity(document.value)
                        if identity is not None:
                            resources.append(_Resource(document, [identity]))
        patches = list(self._patches(directory, kustomization))
        self._patches_of[key] = patches
        patches = borrowed + patches
        prefix, suffix, namespace = (
            value if isinstance(value, str) else ""
            for value in (spec.get(k) for k in ("namePrefix", "nameSuffix", "namespace")))
        for resource in resources:
            kind, space, name = resource.names[-1]
            names = {(k, n) for k, _, n in resource.names}
            resource.patches += [p for p in patches
                                 if _targets(p, names) and p not in resource.patches]
            resource.names.append((kind, namespace or space, prefix + name + suffix))
        return resources

    def _patches(self, directory: str, kustomization: Document) -> Iterator[_Patch]:
        """Each patch a kustomization applies (``patches``, ``patchesStrategicMerge``,
        ``patchesJson6902``), from a file or written inline."""
        spec = kustomization.value
        for group in ("patches", "patchesStrategicMerge", "patchesJson6902"):
            entries = spec.get(group)
            for index, entry in enumerate(entries if isinstance(entries, list) else ()):
                text: str | None = None
                fields = entry if isinstance(entry, dict) else {}
                file = entry if isinstance(entry, str) else fields.get("path")
                target = fields.get("target")
                kind, name = (target.get(k) if isinstance(target, dict) else None
                              for k in ("kind", "name"))
                where, line = kustomization.source, kustomization.line_of((group, index))
                if isinstance(file, str) and "\n" not in file and not _is_remote(file):
                    where, line = os.path.normpath(os.path.join(directory, file)), 0
                    text = self._text(where)
                elif isinstance(fields.get("patch"), str):
                    text = fields["patch"]
                elif isinstance(file, str):  # a strategic merge patch written inline
                    text = file
                if text is not None:
                    yield _Patch(where, line, kind if isinstance(kind, str) else "",
                                 name if isinstance(name, str) else "", _nodes(text))

    def _text(self, path: str) -> str | None:
        if not os.path.isfile(path) or not self._take(path):
            return None
        try:
            with open(path, "rb") as file:
                data = file.read(self._limits.max_bytes + 1)
        except OSError:
            return None
        if len(data) > self._limits.max_bytes:
            return None
        return data.decode("utf-8", "replace")

    def locate(self, built: Document) -> Document:
        """``built`` as its resource file's document (its value the built one, its
        lines the file's, a patch that sets a field named by :meth:`Document.place`),
        or as it is when no listed file holds it."""
        identity = _identity(built.value)
        if identity is None:
            return built
        kind, namespace, name = identity
        found = [r for r in self._resources.get((kind, name), ())
                 if r.names[-1][1] == namespace]
        if len(found) != 1:
            return built
        resource = found[0]
        origin = resource.document
        return Document(origin.source, origin.document, origin.item, origin.line,
                        built.value, origin.locator, None,
                        _PatchPlace(resource.patches, built.value))


def _targets(patch: _Patch, names: set[tuple[str, str]]) -> bool:
    """Whether ``patch`` targets an object that has had one of ``names``: its target,
    or the kind and name its own documents give (a strategic merge patch)."""
    if patch.kind:  # a target: its kind, and its name when it gives one
        return any(kind == patch.kind and patch.name in ("", name) for kind, name in names)
    for node in patch.nodes:
        kind, name = (_scalar(_child(node, "kind")),
                      _scalar(_child(_child(node, "metadata"), "name")))
        if (kind, name) in names:
            return True
    return False


def _nodes(text: str) -> list[Any]:
    """The YAML documents of a patch as nodes (for their lines); none when it cannot be
    read (kustomize then fails the build, and says why)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return [node for node in yaml.compose_all(text, Loader=loader) if node is not None]
    except yaml.YAMLError:
        return []


def _child(node: Any, key: str | int) -> Any:
    return _entry(node, key)[1]


def _entry(node: Any, key: str | int) -> tuple[Any, Any]:
    """(the key node, the value node) of ``key`` in a mapping node, (the item, the item)
    of an index in a sequence node; (None, None) when there is none."""
    import yaml

    if isinstance(node, yaml.MappingNode) and isinstance(key, str):
        for name, value in node.value:
            if isinstance(name, yaml.ScalarNode) and name.value == key:
                return name, value
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) \
            and 0 <= key < len(node.value):
        return node.value[key], node.value[key]
    return None, None
def _scalar(node: Any) -> str | None:
    import yaml

    return node.value if isinstance(node, yaml.ScalarNode) else None


def _pointer(path: FieldPath) -> str:
    """RFC 6901: the JSON pointer of a field path."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


class _PatchPlace:
    """Names the last patch that sets a field of one object (as kustomize applies
    them: a base's before its overlay's, each kustomization's in order)."""

    def __init__(self, patches: list[_Patch], built: dict[str, Any]) -> None:
        self._patches = patches
        self._built = built

    def __call__(self, path: FieldPath, line: int) -> Place:
        found: tuple[str, int] | None = None
        for patch in self._patches if path else ():  # () asks for a line alone
            for node in patch.nodes:
                at = _sets(node, path, self._built)
                if at:
                    found = (patch.file, patch.line or at)
        if found is None:
            return Place(line)
        return Place(line, f"set by the patch {found[0]}:{found[1]}", found)


def _sets(node: Any, path: FieldPath, built: Any) -> int:
    """The line where a patch document sets the field at ``path``: a JSON 6902 list of
    operations (an add or replace at the field or above it), or a strategic merge patch
    (the field itself; a list item by its ``name`` where the built list has names, as
    the merge keys of containers, ports and volumes do); 0 when it does not."""
    import yaml

    if isinstance(node, yaml.SequenceNode):
        pointer = _pointer(path)
        line = 0
        for operation in node.value:
            op, target = _child(operation, "op"), _child(operation, "path")
            where = _scalar(target)
            if _scalar(op) in ("add", "replace") and where is not None and (
                    pointer == where or pointer.startswith(where + "/")):
                line = target.start_mark.line + 1
        return line
    value = built
    key = None
    for part in path:
        item = value[part] if isinstance(value, list) and isinstance(part, int) \
            and 0 <= part < len(value) else None
        name = item.get("name") if isinstance(item, dict) else None
        if isinstance(name, str) and isinstance(node, yaml.SequenceNode):
            key = node = next((n for n in node.value
                               if _scalar(_child(n, "name")) == name), None)
        else:
            key, node = _entry(node, part)
        value = item if isinstance(value, list) else (
            value.get(part) if isinstance(value, dict) else None)
        if node is None:
            return 0
    return int(key.start_mark.line) + 1 if key is not None else 0


class Origins:
    """Where the rendered names of one run were written: :meth:`adapter` turns a
    rendered document into one that places its lines in the user's files, :meth:`hides`
    says which files a rendered kustomization lists (read through its build only)."""

    def __init__(self, roots: Mapping[str, Root], copies: Mapping[str, str],
                 limits: Limits) -> None:
        self._roots = roots
        self._copies = copies
        self._limits = limits
        self._builds: dict[str, Kustomization] = {}
        self._budget = [ALIGN_BUDGET]
        for name, root in roots.items():
            if root.kind == "kustomize" and name not in self._builds:
                self._builds[name] = Kustomization(root.path, root.manifest, limits)
        # What a build lists is read through it; so is a base that another build of the
        # run builds on (its objects are in that build), but never a build by itself.
        self.listed: set[str] = set()
        for name, build in self._builds.items():
            self.listed |= build.listed - {os.path.abspath(name)}

    def hides(self, path: str) -> bool:
        return path != "-" and os.path.abspath(path) in self.listed

    def adapter(self, name: str) -> Callable[[Document], Document] | None:
        build = self._builds.get(name)
        if build is not None:
            return build.locate
        copy = self._copies.get(name)
        if name not in self._roots or copy is None:
            return None
        template = HelmTemplate(name, copy, self._limits.max_bytes, self._budget)

        def placed(document: Document) -> Document:
            start = document.line
            return replace(document, text=copy,
                           placer=lambda path, line: template.place(path, line, start))

        return placed
