"""How a user opts a pod out of a ``check`` rule: the ignore annotation on the object or
its pod template (kube-linter's convention), and the ignore comment in a YAML file (for
files that cannot be annotated); a misspelt rule id is told with the nearest real one.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from kubelet_winnet._lint.rules import RULES_BY_ID
from kubelet_winnet._lint.targeting import PodObject

__all__ = [
    "IGNORE_COMMENT",
    "IGNORE_PREFIX",
    "ignore_comment",
    "ignored_rules",
    "nearest_rule",
    "unknown_ignores",
]

# kube-linter's convention: ignore-check.kube-linter.io/<check>: "<reason>".
IGNORE_PREFIX = "ignore-check.kubelet-winnet.io/"
# The same in a YAML comment, for files that cannot be annotated (vendored manifests):
# "# kubelet-winnet:ignore <rule-id> <reason>" (checkov's "# checkov:skip=<id>:<reason>").
IGNORE_COMMENT = "kubelet-winnet:ignore"


_COMMENT = re.compile(r"#\s*" + re.escape(IGNORE_COMMENT) + r"(?:\s+(\S+))?(?:\s+(.*?))?\s*$")


def ignore_comment(line: str) -> tuple[str, str] | None:
    """``(rule id, reason)`` of a ``# kubelet-winnet:ignore RULE reason`` comment on
    ``line`` (either may be empty: the caller says what is missing), or None."""
    found = _COMMENT.search(line)
    if found is None:
        return None
    return found.group(1) or "", found.group(2) or ""


def nearest_rule(name: str) -> str | None:
    """The rule id closest to a misspelt one, if any is close."""
    close = difflib.get_close_matches(name, RULES_BY_ID, n=1, cutoff=0.6)
    return close[0] if close else None


def unknown_ignores(ignored: Mapping[str, str]) -> list[tuple[str, str | None]]:
    """The ids of :func:`ignored_rules` that name no rule, each with the nearest rule
    id."""
    return [(name, nearest_rule(name)) for name in ignored if name not in RULES_BY_ID]


def ignored_rules(pod: PodObject) -> dict[str, str]:
    """Rule ids the object or its pod template opts out of, with the reasons given."""
    ignored: dict[str, str] = {}
    for metadata in (pod.manifest.get("metadata"), pod.template_metadata):
        annotations = metadata.get("annotations") if type(metadata) is dict else None
        if type(annotations) is not dict:
            continue
        for key, value in annotations.items():
            if isinstance(key, str) and key.startswith(IGNORE_PREFIX):
                ignored[key[len(IGNORE_PREFIX):]] = value if isinstance(value, str) else ""
    return ignored
