"""The linter: which pods target Windows, the `check` rules, and their report formats.
It reads pods through the kubelet model and imports nothing from the command line."""

__all__: list[str] = []
