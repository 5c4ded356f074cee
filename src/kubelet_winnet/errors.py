"""Every exception kubelet-winnet raises on purpose.

One root, [`WinnetError`][kubelet_winnet.errors.WinnetError]; each leaf also subclasses the
stdlib type a caller
would naturally catch (``TypeError`` for a wrong argument type, ``ValueError`` for bad
input, ``OSError`` for HCN and state-file failures) and carries the facts as attributes,
so callers never parse messages. Each class says which upstream text it mirrors. No
public function lets any other exception escape, and no message is unbounded: values
are described by type and a cut rendering, never by an unguarded ``repr()``.
"""

from __future__ import annotations

from kubelet_winnet._describe import quoted, type_name

__all__ = [
    "ClusterAccessError",
    "CriEndpointError",
    "CriError",
    "FeatureGateError",
    "HcnError",
    "HcnNotFoundError",
    "InvalidArgumentError",
    "InvalidPodError",
    "InvalidRequestError",
    "InvalidUtf8Error",
    "NodeConfigError",
    "NotRegularFileError",
    "SandboxConfigError",
    "StateFileError",
    "UnsupportedVersionError",
    "WinnetError",
]


class WinnetError(Exception):
    """Root of every error this library raises (catch this one to catch them all)."""


class InvalidArgumentError(WinnetError, TypeError):
    """A public function was called with an argument of the wrong type (not bad pod
    content: that is [`InvalidPodError`][kubelet_winnet.errors.InvalidPodError]). ``argument``
    names the parameter,
    ``expected`` what it takes, ``got`` the type name that was passed.

    No upstream text: the kubelet takes typed Go values; this is Python's ``TypeError``
    with the parameter named, e.g. ``kubelet_version: expected a string like "1.32" or a
    KubeletVersion, got bytes``."""

    def __init__(self, argument: str, expected: str, got: str) -> None:
        self.argument = argument
        self.expected = expected
        self.got = got
        super().__init__(f"{argument}: expected {expected}, got {got}")

    def __reduce__(self) -> tuple[type[InvalidArgumentError], tuple[str, str, str]]:
        return (type(self), (self.argument, self.expected, self.got))


class InvalidPodError(WinnetError, ValueError):
    """The pod input is malformed at ``field`` (a JSON path such as
    ``spec.containers[1].securityContext.windowsOptions.hostProcess``).

    Mirrors the API server's field errors (k8s.io/apimachinery ``util/validation/field``:
    ``<path>: <reason>``, e.g. ``spec.hostNetwork: expected a boolean, got string
    "true"``): the same paths whichever form (mapping, client object, model) carried
    the value."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}" if field else reason)

    def __reduce__(self) -> tuple[type[InvalidPodError], tuple[str, str]]:
        return (type(self), (self.field, self.reason))


class SandboxConfigError(WinnetError, ValueError):
    """The kubelet refuses to build a sandbox config; ``str()`` is the kubelet's text.

    Mirrors ``generatePodSandboxWindowsConfig`` (pkg/kubelet/kuberuntime/
    kuberuntime_sandbox.go) byte for byte, e.g. ``hostNetwork is required if Pod
    contains HostProcess containers``; the kubelet records it as the event ``Failed to
    create pod sandbox: <text>`` (reason ``FailedCreatePodSandBox``). ``rule`` is the id
    of the step in ``_kubelet.rules.STEPS`` that failed: ``3a``, ``3b`` or ``6``.
    """

    def __init__(self, message: str, rule: str) -> None:
        self.message = message
        self.rule = rule
        super().__init__(message)

    def __reduce__(self) -> tuple[type[SandboxConfigError], tuple[str, str]]:
        return (type(self), (self.message, self.rule))


class FeatureGateError(WinnetError, ValueError):
    """A ``--feature-gates`` value the kubelet would reject; ``str()`` is its text.

    Mirrors k8s.io/component-base/featuregate (``Set``/``SetFromMap``): ``missing bool
    value for NAME``, ``invalid value of NAME=VALUE, err: strconv.ParseBool: parsing
    "VALUE": invalid syntax``, ``unrecognized feature gate: NAME`` (names and values
    longer than 200 characters are cut). ``gate`` is the gate's name."""

    def __init__(self, message: str, gate: str) -> None:
        self.message = message
        self.gate = gate
        super().__init__(message)

    def __reduce__(self) -> tuple[type[FeatureGateError], tuple[str, str]]:
        return (type(self), (self.message, self.gate))


class UnsupportedVersionError(WinnetError, ValueError):
    """A kubelet version outside the modelled range, or a string that is not a version.

    No upstream text: the grammar is ``v?MAJOR.MINOR[.PATCH][-pre][+build]`` (what
    ``kubelet --version`` prints, e.g. ``v1.32.4-eks-1``), ASCII digits without leading
    zeros, nothing around it; supported are the minors of ``_kubelet.profile.TIMELINE``."""

    def __init__(self, version: object, reason: str) -> None:
        self.version = version
        self.reason = reason
        shown = quoted(version) if type(version) is str else type_name(version)
        super().__init__(f"kubelet version {shown}: {reason}")

    def __reduce__(self) -> tuple[type[UnsupportedVersionError], tuple[object, str]]:
        return (type(self), (self.version, self.reason))


class InvalidUtf8Error(WinnetError, ValueError):
    """The kubelet would put bytes that are not UTF-8 into a request field, at ``field``
    (the pod's JSON path, e.g. ``spec.containers[0].env[2].value``); ``value`` holds the
    kubelet's bytes.

    A ``runtime.v1`` string cannot hold them, so no request is built. What the kubelet
    does is in ``reason``: kubelets 1.34 and later fail ``CreateContainer`` with gRPC's
    text ``grpc: error while marshaling: string field contains invalid UTF-8`` (the
    container waits in ``CreateContainerError``; kubernetes#136323); older ones send the
    bytes and leave it to the runtime."""

    def __init__(self, field: str, reason: str, value: bytes = b"") -> None:
        self.field = field
        self.reason = reason
        self.value = value
        super().__init__(f"{field}: {reason}" if field else reason)

    def __reduce__(self) -> tuple[type[InvalidUtf8Error], tuple[str, str, bytes]]:
        return (type(self), (self.field, self.reason, self.value))


class InvalidRequestError(WinnetError, ValueError):
    """A CRI request the runtime side cannot act on, at ``field`` (a proto field path
    such as ``config.windows.security_context.namespace_options.network``).

    Mirrors a runtime's ``InvalidArgument`` gRPC status on ``RunPodSandbox``: the path
    uses the proto field names of cri-api ``runtime/v1/api.proto``."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}" if field else reason)

    def __reduce__(self) -> tuple[type[InvalidRequestError], tuple[str, str]]:
        return (type(self), (self.field, self.reason))


class NodeConfigError(WinnetError, ValueError):
    """A node's configuration that cannot be read or planned with, at ``where``: a field
    of [`NodeFacts`][kubelet_winnet.runtime.NodeFacts] (``excluded_ports[2]``) or a file
    and line of a file copied off the node (``C:/k/config.toml:12``).

    No upstream text: containerd, the kubelet and kube-proxy each refuse their own files
    in their own words; this is the one error for any of them, e.g.
    ``config.toml:3: version = 7, containerd reads schema versions 1 to 4``."""

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"{where}: {reason}" if where else reason)

    def __reduce__(self) -> tuple[type[NodeConfigError], tuple[str, str]]:
        return (type(self), (self.where, self.reason))

    @property
    def line(self) -> int | None:
        """The line of ``where`` when it names a file's line (``C:/k/config.toml:12``:
        12), else None."""
        _, colon, tail = self.where.rpartition(":")
        return int(tail) if colon and tail.isdigit() and tail.isascii() else None

    @property
    def file(self) -> str | None:
        """The file of ``where`` when it names a file's line, else None."""
        return self.where.rpartition(":")[0] if self.line is not None else None


class HcnError(WinnetError, OSError):
    """An HCN call failed: ``hresult`` is the 32-bit HRESULT as an unsigned int,
    ``error_record`` the parsed JSON error record (or ``None``).

    Mirrors what computenetwork.dll returns: ``<operation> failed: HRESULT 0x803B0002:
    <message from the error record>``."""

    def __init__(
        self,
        operation: str,
        hresult: int,
        message: str = "",
        error_record: dict[str, object] | None = None,
    ) -> None:
        # Checked: runtime.hcn exports this class, and a bad argument must not turn
        # into a bare TypeError from the formatting below.
        for name, value, expected, ok in (
            ("operation", operation, "a str", type(operation) is str),
            ("hresult", hresult, "an int", type(hresult) is int),
            ("message", message, "a str", type(message) is str),
            ("error_record", error_record, "a dict or None",
             error_record is None or type(error_record) is dict),
        ):
            if not ok:
                raise InvalidArgumentError(name, expected, type_name(value))
        self.operation = operation
        self.hresult = hresult & 0xFFFFFFFF
        self.error_record = error_record
        self.message = message
        text = f"{operation} failed: HRESULT 0x{self.hresult:08X}"
        if message:
            text += f": {message}"
        OSError.__init__(self, text)

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(
        self,
    ) -> tuple[type[HcnError], tuple[str, int, str, dict[str, object] | None]]:
        return (type(self), (self.operation, self.hresult, self.message, self.error_record))


class HcnNotFoundError(HcnError):
    """The HCN object does not exist: ``ERROR_NOT_FOUND`` (HRESULT 0x80070490) and the
    HCN codes of the same meaning (0x803B0002 endpoint, 0x803B0027 compartment), the
    group ``runtime.hcn`` treats as "already gone"."""


class NotRegularFileError(WinnetError, OSError):
    """A file to be read at ``path`` is, when opened, ``kind`` (a FIFO, a socket, a
    device, a directory), not a regular file: it is opened without waiting and looked
    at before a byte is read, so a file a search listed that is replaced by a FIFO is
    refused, never waited on for ever. ``strerror`` is the reason the commands print
    after "cannot read:".

    No upstream text: ``<path>: a FIFO, not a regular file, when opened``."""

    def __init__(self, path: str, kind: str) -> None:
        self.path = path
        self.kind = kind
        OSError.__init__(self, None, f"{kind}, not a regular file, when opened", path)

    def __str__(self) -> str:
        return f"{self.path}: {self.strerror}"

    def __reduce__(self) -> tuple[type[NotRegularFileError], tuple[str, str]]:
        return (type(self), (self.path, self.kind))


class StateFileError(WinnetError, OSError):
    """A sandbox state record (or the state directory) at ``path`` cannot be read or
    written: missing, unreadable, truncated, not JSON, or of a foreign schema.

    No upstream text (containerd keeps sandbox state in its own store): ``<path>:
    <reason>``, an ``OSError`` like the file error behind it."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        OSError.__init__(self, f"{path}: {reason}")

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(self) -> tuple[type[StateFileError], tuple[str, str]]:
        return (type(self), (self.path, self.reason))


class ClusterAccessError(WinnetError, OSError):
    """Reading pods or nodes from a cluster failed (``kubelet-winnet audit``). Mirrors no
    upstream text; the API server's ``Status.message`` is quoted inside, clipped.

    ``kind`` says how: ``kubeconfig``, ``unreachable``, ``unauthorized`` (401),
    ``forbidden`` (403; ``permission`` names what is missing, e.g. ``list pods``),
    ``server`` (5xx or another status), ``malformed`` (a body that is not the list
    the API promises, or is cut short; also a page over the byte bound, a repeated
    ``continue`` token, or a list that does not end), ``timeout`` (a request that took
    longer than ``--request-timeout``); ``status`` is the HTTP status or 0.
    """

    def __init__(self, kind: str, message: str, *, status: int = 0, permission: str = "") -> None:
        self.kind = kind
        self.message = message
        self.status = status
        self.permission = permission
        OSError.__init__(self, message)

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(
        self,
    ) -> tuple[type[ClusterAccessError], tuple[str, str], dict[str, object]]:
        return (type(self), (self.kind, self.message),
                {"status": self.status, "permission": self.permission})


class CriError(WinnetError, OSError):
    """A CRI call failed: ``method`` is the gRPC path
    (``/runtime.v1.RuntimeService/RunPodSandbox``), ``code`` the gRPC status code name
    (``NOT_FOUND``, ``UNAVAILABLE``, ``DEADLINE_EXCEEDED``, ...), ``details`` the
    runtime's message (truncated to a bounded length)."""

    def __init__(self, method: str, code: str, details: str) -> None:
        self.method = method
        self.code = code
        self.details = details
        OSError.__init__(self, f"{method}: {code}: {details}" if details else f"{method}: {code}")

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(self) -> tuple[type[CriError], tuple[str, str, str]]:
        return (type(self), (self.method, self.code, self.details))


class CriEndpointError(WinnetError, ValueError):
    """A runtime endpoint the CRI client cannot dial: only ``unix:///absolute/path``
    is accepted (crictl's ``--runtime-endpoint`` form). ``endpoint`` is the value
    (truncated), ``reason`` what is wrong with it."""

    def __init__(self, endpoint: str, reason: str) -> None:
        self.endpoint = endpoint
        self.reason = reason
        super().__init__(f"runtime endpoint {endpoint!r}: {reason}")

    def __reduce__(self) -> tuple[type[CriEndpointError], tuple[str, str]]:
        return (type(self), (self.endpoint, self.reason))
