"""A directory of node folders (``audit --node-config DIR``): one subdirectory per node,
named after the node, each read as :func:`~kubelet_winnet.sources.node.read_node` reads
one node's files. What could not be read comes back as messages, in the order met, for
the caller to show."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

from kubelet_winnet.sources.node import NodeFiles, read_node

__all__ = ["MAX_NODE_FOLDERS", "NodeFolders", "read_node_folders"]

MAX_NODE_FOLDERS = 10_000  # a cluster's Windows nodes; more is a wrong directory


@dataclass
class NodeFolders:
    """Each readable node folder's files by folder name, and the problems met, in order:
    ``("error", text)`` for what leaves a node unread, ``("note", text)`` for the rest."""

    found: dict[str, NodeFiles] = field(default_factory=dict)
    messages: list[tuple[Literal["error", "note"], str]] = field(default_factory=list)


def read_node_folders(directory: str) -> NodeFolders:
    """Each subdirectory of ``directory`` read as one node's files, keyed by its name."""
    result = NodeFolders()
    say = result.messages.append
    try:
        names = sorted(n for n in os.listdir(directory)
                       if os.path.isdir(os.path.join(directory, n)))
    except OSError as exc:
        say(("error", f"--node-config {directory}: cannot read: "
                      f"{exc.strerror or type(exc).__name__}"))
        return result
    if not names:
        say(("error", f"--node-config {directory}: no directory per node in it"))
    if len(names) > MAX_NODE_FOLDERS:  # cutting them would judge pods without their node
        say(("error", f"--node-config {directory}: more than {MAX_NODE_FOLDERS} folders; "
                      "give one folder per node of the cluster"))
        return result
    for name in names:
        folder = os.path.join(directory, name)
        files = read_node([folder])
        for problem in files.errors:
            say(("error", str(problem)))
        for skipped in files.skipped:
            say(("note", skipped))
        if files.empty:  # its pods would get default plans as if judged: an input error
            if not files.errors:
                count = f"{files.files} file" + ("" if files.files == 1 else "s")
                say(("error", f"--node-config {folder}: no node file in it ({count} read); "
                              "its pods are not judged against it"))
            continue
        if files.node is not None and files.node.name != name:
            say(("note", f"--node-config {name}: its Node object is {files.node.name!r}; "
                         f"the folder name {name!r} is used to join pods"))
        result.found[name] = files
    return result
