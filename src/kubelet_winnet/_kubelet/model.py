"""Typed pydantic models of the pod fields the kubelet rules read.

Strict (no coercion: ``"true"`` is not ``true``), camelCase aliases as in the API with
snake_case attributes as in the ``kubernetes`` client, unknown keys ignored. Build one
from a manifest with :meth:`Pod.from_manifest` to get ``InvalidPodError`` with a JSON path
instead of pydantic's ``ValidationError``. Any translation function accepts a ``Pod``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from kubelet_winnet._describe import type_name
from kubelet_winnet._kubelet.objectview import is_mapping, unreadable
from kubelet_winnet.errors import InvalidArgumentError, InvalidPodError

__all__ = [
    "Container",
    "ContainerPort",
    "ObjectMeta",
    "Pod",
    "PodSecurityContext",
    "PodSpec",
    "SecurityContext",
    "WindowsSecurityContextOptions",
]


class _Model(BaseModel):
    model_config = ConfigDict(
        strict=True,
        frozen=True,
        extra="ignore",
        alias_generator=to_camel,
        populate_by_name=True,
    )


class WindowsSecurityContextOptions(_Model):
    gmsa_credential_spec_name: str | None = None
    gmsa_credential_spec: str | None = None
    run_as_user_name: str | None = None
    host_process: bool | None = None


class SecurityContext(_Model):
    windows_options: WindowsSecurityContextOptions | None = None


class PodSecurityContext(_Model):
    windows_options: WindowsSecurityContextOptions | None = None


class ContainerPort(_Model):
    """One of a container's ``ports``: the request builder's port mappings, the
    judgement's hostPort outcomes."""

    name: str | None = None
    host_port: int | None = None
    container_port: int | None = None
    protocol: str | None = None
    host_ip: str | None = Field(default=None, alias="hostIP")  # to_camel would say hostIp


class Container(_Model):
    name: str | None = None  # null = unset, as in the API
    security_context: SecurityContext | None = None
    ports: list[ContainerPort] | None = None


class PodSpec(_Model):
    host_network: bool | None = None
    security_context: PodSecurityContext | None = None
    init_containers: list[Container] | None = None
    containers: list[Container] | None = None
    ephemeral_containers: list[Container] | None = None


class ObjectMeta(_Model):
    name: str | None = None
    namespace: str | None = None


class Pod(_Model):
    kind: Literal["Pod"] | None = None
    metadata: ObjectMeta | None = None
    spec: PodSpec

    @classmethod
    def from_manifest(cls, manifest: Mapping[str, Any]) -> Pod:
        """Validate a Pod manifest; raise ``InvalidPodError`` naming the first bad field
        (``InvalidArgumentError`` if ``manifest`` is no mapping at all)."""
        if not is_mapping(manifest):
            raise InvalidArgumentError("manifest", "a Pod manifest mapping", type_name(manifest))
        try:
            data = dict(manifest)
        except Exception as exc:  # a caller's Mapping (keys, items) can raise anything
            raise unreadable("", exc) from None
        try:
            # A manifest is camelCase: snake_case keys are unknown there (as for a dict).
            return cls.model_validate(data, by_alias=True, by_name=False)
        except ValidationError as exc:
            first = exc.errors(include_input=False, include_url=False)[0]
            raise InvalidPodError(_json_path(first["loc"]), str(first["msg"])[:200]) from None


def _json_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            part = str(part)[:100]  # a caller's key, bounded
            path += f".{part}" if path else part
    return path
