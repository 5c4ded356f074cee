"""The one place the command line writes YAML (``translate``, ``explain`` and ``policy``
with ``-o yaml``); it never reads YAML: that is the readers' job (``sources/``)."""

from __future__ import annotations

from typing import Any

__all__ = ["record_document", "resource_document"]


def record_document(record: dict[str, Any]) -> str:
    """One output record as a YAML document of its own (``---`` first), keys in order."""
    import yaml

    text: str = yaml.safe_dump(record, sort_keys=False, explicit_start=True)
    return text


def resource_document(value: Any) -> str:
    """A Kubernetes object to apply, as a person reads it: multi-line strings and strings
    with a quote (CEL) as block scalars, keys in order, lines never folded."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
        # CEL reads better as a block, without YAML's quoting of its quotes.
        style = "|" if "\n" in data or "'" in data else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)

    Dumper.add_representer(str, text)
    dumped: str = yaml.dump(value, Dumper=Dumper, sort_keys=False, width=1 << 16,
                            allow_unicode=True)
    return dumped
