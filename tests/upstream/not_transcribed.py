"""Upstream test files chosen for transcription whose rows are not transcribed yet, with the
reason (listed on the conformance page, so the gap is data, not silence)."""

from __future__ import annotations

from tests.upstream.rows import Row, Source

FILE = "(files not transcribed)"

FILES: tuple[tuple[str, str], ...] = (
    ("pkg/kubelet/kuberuntime/kuberuntime_container_test.go",
     "the version the index returns by commit (37dc74fa) is from CRI v1alpha1, years "
     "before 1.26, and holds only TestRemoveContainer (the fake runtime's removals); no "
     "1.26+ version was located before the deadline. Its later tests drive the fake "
     "runtime (start, kill, lifecycle hooks); the ContainerConfig is checked here through "
     "kuberuntime_container_windows_test.go, labels_test.go and helpers_test.go"),
)
ROWS: tuple[Row, ...] = ()
SOURCES: tuple[Source, ...] = ()
NOT_TRANSCRIBED = FILES
