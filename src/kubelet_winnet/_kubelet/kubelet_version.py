"""The kubelet version grammar: ``"1.32"``, ``"v1.32.4"``, ``"v1.32.4-eks-1"`` parsed into
a :class:`KubeletVersion` of a minor on :data:`~kubelet_winnet._kubelet.timeline.TIMELINE`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubelet_winnet._describe import describe, type_name
from kubelet_winnet._kubelet.timeline import _BY_MINOR, _RANGE, release
from kubelet_winnet.errors import InvalidArgumentError, UnsupportedVersionError

if TYPE_CHECKING:
    from typing import TypeAlias

    # What the public functions take for a kubelet version; any other value is still an
    # InvalidArgumentError at run time.
    KubeletVersionInput: TypeAlias = "str | KubeletVersion"

__all__ = ["KubeletVersion", "parse_kubelet_version"]


@dataclass(frozen=True, order=True)
class KubeletVersion:
    """A kubelet release, 1.MINOR[.PATCH] (Kubernetes 1.x only); ``str()`` gives it back,
    ordered by minor then patch. Build with
    [`parse_kubelet_version`][kubelet_winnet.parse_kubelet_version]."""

    minor: int
    """The minor version: 32 for 1.32."""
    patch: int | None = None
    """The patch release, or ``None`` when only 1.MINOR was given."""

    def __str__(self) -> str:
        return f"1.{self.minor}" + ("" if self.patch is None else f".{self.patch}")


# The grammar: v?MAJOR.MINOR[.PATCH][-pre][+build]. ASCII digits only ([0-9], not \d,
# which also matches fullwidth digits int() accepts), no leading zeros, nothing around
# it; pre-release and build identifiers as in SemVer (`kubelet --version` prints
# "v1.32.4-eks-1" or "v1.32.4+k3s1"); both are accepted and ignored.
_NUMBER = r"(0|[1-9][0-9]*)"
_IDENTS = r"[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*"
_VERSION = re.compile(rf"v?{_NUMBER}\.{_NUMBER}(?:\.{_NUMBER})?(?:-{_IDENTS})?(?:\+{_IDENTS})?")
_MAX_VERSION_LENGTH = 128
_MAX_DIGITS = 9  # more cannot be a supported minor; int() of 5,000 digits raises


def _parse_version(text: str) -> KubeletVersion:
    if len(text) > _MAX_VERSION_LENGTH:
        raise UnsupportedVersionError(text, f"longer than {_MAX_VERSION_LENGTH} characters")
    match = _VERSION.fullmatch(text)
    if match is None:
        raise UnsupportedVersionError(
            text, 'not a version like "1.32" or "v1.32.4" (v?MAJOR.MINOR[.PATCH][-pre][+build])'
        )
    major, minor, patch = match[1], match[2], match[3]
    if major != "1" or len(minor) > _MAX_DIGITS or int(minor) not in _BY_MINOR:
        raise UnsupportedVersionError(text, _RANGE)
    if patch is not None and len(patch) > _MAX_DIGITS:
        raise UnsupportedVersionError(text, f"patch number longer than {_MAX_DIGITS} digits")
    return KubeletVersion(int(minor), None if patch is None else int(patch))


def parse_kubelet_version(value: KubeletVersionInput) -> KubeletVersion:
    """Parse ``"1.32"``, ``"v1.32.4"``, ``"1.32.0"`` or ``"v1.32.4-eks-1"``.

    Raises ``UnsupportedVersionError`` for any other string and for minors outside
    ``TIMELINE``, ``InvalidArgumentError`` for anything but a string or ``KubeletVersion``.
    """
    if type(value) is KubeletVersion:
        release(value.minor)
        patch = value.patch
        if patch is not None and (type(patch) is not int or not 0 <= patch < 10**_MAX_DIGITS):
            raise UnsupportedVersionError(
                f"1.{value.minor}.<{describe(patch)}>", "the patch must be a small integer"
            )
        return value
    if type(value) is not str:
        raise InvalidArgumentError(
            "kubelet_version", 'a string like "1.32" or a KubeletVersion', type_name(value)
        )
    return _parse_version(value)

