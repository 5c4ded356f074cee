"""The readers every command stands on: manifests (files, directories, stdin), the files
copied off a node, charts and kustomizations rendered by their own tools, and a cluster
(a live API server or a dump). Everything here reads; nothing judges."""

__all__: list[str] = []
