"""What the input of a command held, and the notes a user pointed at the wrong files
needs: a Helm template or a kustomization instead of manifests, or a path that holds no
Kubernetes objects at all (a CI step aimed at the wrong directory must not pass quietly)."""

from __future__ import annotations

import functools
import os

from kubelet_winnet._judgement import NodeKnowledge
from kubelet_winnet._kubelet.pod import WORKLOAD_TEMPLATE_PATHS
from kubelet_winnet._printable import cut
from kubelet_winnet.cli.session import Session
from kubelet_winnet.sources.charts.render import KUSTOMIZATION_NAMES
from kubelet_winnet.sources.manifests import BadInput, Document, head_of
from kubelet_winnet.sources.runtime_classes import add_runtime_class

__all__ = ["InputNotes"]


class InputNotes:
    """What the input held, for the notes at the end: which files held Kubernetes
    objects, which were Helm templates or kustomizations."""

    def __init__(self, session: Session, max_bytes: int, command: str) -> None:
        self._session = session
        self._max_bytes = max_bytes
        self._command = command  # the command the notes suggest piping into
        self.files: set[str] = set()
        self.with_objects: set[str] = set()
        self.explained: set[str] = set()  # templates and kustomizations: said already
        self.unexplained: set[str] = set()  # files with bad input that are no template
        self.runtime_classes: dict[str, str] = {}  # RuntimeClass name -> handler
        # What check knows of a node: containerd (its release not known) and the classes.
        self.node = NodeKnowledge(runtime="containerd", runtime_classes=self.runtime_classes)
        self._source: str | None = None  # the file of the last document seen
        self._kustomization_name = False  # ... and whether it is named as a kustomization

    def document(self, document: Document) -> None:
        source = document.source
        if source is not self._source:  # what depends on the file alone, once per file
            self._source = source
            self.files.add(source)
            self._kustomization_name = source not in self._session.rendered and (
                os.path.basename(source) in KUSTOMIZATION_NAMES)
        value = document.value
        if not isinstance(value, dict):
            return
        kind = value.get("kind")
        if type(kind) is not str:
            kind = None
        elif source not in self.with_objects and (
            isinstance(value.get("apiVersion"), str) or kind in _POD_KINDS
        ):  # a pod without apiVersion is still read, translated and checked
            self.with_objects.add(source)
        if kind == "RuntimeClass":
            add_runtime_class(self.runtime_classes, value)
        if kind is not None and kind not in _POD_KINDS:
            self._other_kind(document, kind)
        kustomization = self._kustomization_name or (
            kind == "Kustomization" and source not in self._session.rendered)
        if kustomization and source not in self.explained:
            self.explained.add(source)
            directory = os.path.dirname(source) or "."
            self._session.note(
                f"{source} is a kustomization: check what it builds with "
                f"kubectl kustomize {directory} | {self._session.prog} {self._command} -"
            )

    def _other_kind(self, document: Document, kind: str) -> None:
        """A kind that holds no pod is skipped; say so when it looks like a misspelt
        built-in one, and under -v when it has a pod template all the same (a custom
        resource such as Argo's Rollout)."""
        near = _near_kind(kind)
        where = f"{document.source}:{document.line}"
        if near is not None:
            self._session.note(
                f"{where}: kind {cut(kind, 60)} is no kind that holds a pod, so it was not "
                f"checked; did you mean {near}?"
            )
            return
        if not self._session.verbose:
            return
        spec = document.value.get("spec")
        template = spec.get("template") if type(spec) is dict else None
        if type(template) is dict and type(template.get("spec")) is dict:
            metadata = document.value.get("metadata")
            name = metadata.get("name") if type(metadata) is dict else None
            self._session.note(
                f"{where}: {cut(kind, 60)}/{cut(name, 60) if type(name) is str else '<unnamed>'}"
                " has a pod template (spec.template.spec) but was not "
                "checked: it is not a built-in kind, and only Pods and the built-in "
                "workloads are read"
            )

    def bad(self, found: BadInput) -> bool:
        """A file that fails to parse because it is a Helm template: one note instead."""
        source = found.source
        self.files.add(source)
        if source in self.explained:
            return True
        if source in self.unexplained or source in self._session.rendered:
            return False  # each of its errors is reported (a rendered one: no template)
        line = _template_line(source, self._max_bytes)
        if line is None:
            self.unexplained.add(source)
            return False
        self.explained.add(source)  # the note below says enough
        self._session.note(
            f"{found.source}:{line}: a Helm template ({{{{ ... }}}}), not a manifest: check "
            f"what it renders with helm template CHART | {self._session.prog} {self._command} -"
        )
        return True

    def empty_paths(self, paths: list[str]) -> list[str]:
        """Arguments under which no file held a Kubernetes object (or was explained)."""
        found = self.with_objects | self.explained | self.unexplained
        empty = []
        for path in paths:
            if path == "-":
                path = "<stdin>"
            prefix = path.rstrip(os.sep) + os.sep
            if not any(f == path or f.startswith(prefix) for f in found):
                empty.append(path)
        return empty

    def note_empty(self, paths: list[str]) -> None:
        """``no Kubernetes objects in PATH`` for each argument that held none."""
        for path in self.empty_paths(paths):
            self._session.note(f"no Kubernetes objects in {path}")


def _template_line(source: str, max_bytes: int) -> int | None:
    """The first line holding ``{{`` (Go template syntax) of a file, if any; of stdin,
    in the part of it that was kept (:func:`head_of`)."""
    head = head_of(source, max_bytes)
    if head is None:
        return None
    at = head.find(b"{{")
    if at < 0 or head.find(b"}}", at) < 0:
        return None
    return head.count(b"\n", 0, at) + 1


_POD_KINDS = frozenset({"Pod", *WORKLOAD_TEMPLATE_PATHS})
_FOLDED = {name.lower(): name for name in _POD_KINDS}


@functools.lru_cache(maxsize=256)  # a few kinds recur in every file of a repository
def _near_kind(kind: str) -> str | None:
    """The built-in kind that holds a pod which ``kind`` misspells: the same but for case,
    or one edit away (two for kinds longer than four letters: "Node" is not "Pod")."""
    if len(kind) > 40:
        return None
    folded = kind.lower()
    if folded in _FOLDED:
        return _FOLDED[folded]
    for name in sorted(_POD_KINDS):
        limit = 1 if min(len(name), len(kind)) <= 4 else 2
        if abs(len(name) - len(kind)) <= limit and _edits(folded, name.lower()) <= limit:
            return name
    return None


def _edits(a: str, b: str) -> int:
    """Edit distance with adjacent transpositions (optimal string alignment)."""
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        before, row = row, current
    return row[len(b)]


