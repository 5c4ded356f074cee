"""Wire-compatibility checks of our CRI ``runtime.v1`` proto against the reference facts.

Every expected value here is transcribed from the reference notes on cri-api v0.37
(shared/reference/cri-and-hcn.md), or, where a row says so, from the upstream
api.proto that cri_api/runtime/v1/api.proto names as verified. Nothing is learned
by running our own code.
"""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import descriptor_pool, json_format
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor

from cri_api.runtime.v1 import api_pb2

PACKAGE = "runtime.v1"
PROTO_FILE = "cri_api/runtime/v1/api.proto"

# Hand-encoded RunPodSandboxRequest whose only content is
# config.windows.security_context.namespace_options.network = NODE.
NODE_REQUEST = bytes.fromhex("0a 08 4a 06 0a 04 22 02 08 02")
# namespace_options present with network = POD, inside the security context.
POD_NAMESPACE_OPTIONS = bytes.fromhex("22 00")

_TYPE_NAMES = {
    FieldDescriptor.TYPE_STRING: "string",
    FieldDescriptor.TYPE_BOOL: "bool",
    FieldDescriptor.TYPE_INT32: "int32",
    FieldDescriptor.TYPE_INT64: "int64",
    FieldDescriptor.TYPE_UINT32: "uint32",
    FieldDescriptor.TYPE_UINT64: "uint64",
    FieldDescriptor.TYPE_ENUM: "enum",
    FieldDescriptor.TYPE_MESSAGE: "message",
}

# (field name, number, kind, repeated, referenced type) where kind is a scalar name,
# "enum", "message" or "map" (map<string,string>); the referenced type is the full
# name of the enum or message, else None.
Row = tuple[str, int, str, bool, str | None]


def _s(name: str, number: int, kind: str = "string") -> Row:
    return (name, number, kind, False, None)


def _rs(name: str, number: int, kind: str = "string") -> Row:
    return (name, number, kind, True, None)


def _m(name: str, number: int, message: str) -> Row:
    return (name, number, "message", False, f"{PACKAGE}.{message}")


def _rm(name: str, number: int, message: str) -> Row:
    return (name, number, "message", True, f"{PACKAGE}.{message}")


def _e(name: str, number: int, enum: str) -> Row:
    return (name, number, "enum", False, f"{PACKAGE}.{enum}")


def _map(name: str, number: int) -> Row:
    return (name, number, "map", True, None)


# Transcribed from the reference table. Where the table gives only a name and number
# (metadata, dns_config, port_mappings, overhead, selinux_options, seccomp_profile_path,
# seccomp, supplemental_groups_policy) the type is the upstream one.
REFERENCE_TABLE: dict[str, list[Row]] = {
    "WindowsNamespaceOption": [_e("network", 1, "NamespaceMode")],
    "WindowsSandboxSecurityContext": [
        _s("run_as_username", 1),
        _s("credential_spec", 2),
        _s("host_process", 3, "bool"),
        _m("namespace_options", 4, "WindowsNamespaceOption"),
    ],
    "WindowsPodSandboxConfig": [_m("security_context", 1, "WindowsSandboxSecurityContext")],
    "WindowsContainerSecurityContext": [
        _s("run_as_username", 1),
        _s("credential_spec", 2),
        _s("host_process", 3, "bool"),
    ],
    "WindowsContainerResources": [
        _s("cpu_shares", 1, "int64"),
        _s("cpu_count", 2, "int64"),
        _s("cpu_maximum", 3, "int64"),
        _s("memory_limit_in_bytes", 4, "int64"),
        _s("rootfs_size_in_bytes", 5, "int64"),
        _rm("affinity_cpus", 6, "WindowsCpuGroupAffinity"),
    ],
    "WindowsCpuGroupAffinity": [
        _s("cpu_mask", 1, "uint64"),
        _s("cpu_group", 2, "uint32"),
    ],
    "WindowsContainerConfig": [
        _m("resources", 1, "WindowsContainerResources"),
        _m("security_context", 2, "WindowsContainerSecurityContext"),
    ],
    "PodSandboxMetadata": [
        _s("name", 1),
        _s("uid", 2),
        _s("namespace", 3),
        _s("attempt", 4, "uint32"),
    ],
    "DNSConfig": [_rs("servers", 1), _rs("searches", 2), _rs("options", 3)],
    "PortMapping": [
        _e("protocol", 1, "Protocol"),
        _s("container_port", 2, "int32"),
        _s("host_port", 3, "int32"),
        _s("host_ip", 4),
    ],
    "PodSandboxConfig": [
        _m("metadata", 1, "PodSandboxMetadata"),
        _s("hostname", 2),
        _s("log_directory", 3),
        _m("dns_config", 4, "DNSConfig"),
        _rm("port_mappings", 5, "PortMapping"),
        _map("labels", 6),
        _map("annotations", 7),
        _m("linux", 8, "LinuxPodSandboxConfig"),
        _m("windows", 9, "WindowsPodSandboxConfig"),
    ],
    "LinuxPodSandboxConfig": [
        _s("cgroup_parent", 1),
        _m("security_context", 2, "LinuxSandboxSecurityContext"),
        _map("sysctls", 3),
        _m("overhead", 4, "LinuxContainerResources"),
        _m("resources", 5, "LinuxContainerResources"),
    ],
    "LinuxSandboxSecurityContext": [
        _m("namespace_options", 1, "NamespaceOption"),
        _m("selinux_options", 2, "SELinuxOption"),
        _m("run_as_user", 3, "Int64Value"),
        _s("readonly_rootfs", 4, "bool"),
        _rs("supplemental_groups", 5, "int64"),
        _s("privileged", 6, "bool"),
        _s("seccomp_profile_path", 7),
        _m("run_as_group", 8, "Int64Value"),
        _m("seccomp", 9, "SecurityProfile"),
        _m("apparmor", 10, "SecurityProfile"),
        _e("supplemental_groups_policy", 11, "SupplementalGroupsPolicy"),
    ],
    "NamespaceOption": [
        _e("network", 1, "NamespaceMode"),
        _e("pid", 2, "NamespaceMode"),
        _e("ipc", 3, "NamespaceMode"),
        _s("target_id", 4),
        _m("userns_options", 5, "UserNamespace"),
    ],
    "Int64Value": [_s("value", 1, "int64")],
    "SecurityProfile": [
        _e("profile_type", 1, "SecurityProfile.ProfileType"),
        _s("localhost_ref", 2),
    ],
    "RunPodSandboxRequest": [
        _m("config", 1, "PodSandboxConfig"),
        _s("runtime_handler", 2),
    ],
    "RunPodSandboxResponse": [_s("pod_sandbox_id", 1)],
}

# Messages the reference table does not spell out; facts from the upstream api.proto.
UPSTREAM_TABLE: dict[str, list[Row]] = {
    "UserNamespace": [
        _e("mode", 1, "NamespaceMode"),
        _rm("uids", 2, "IDMapping"),
        _rm("gids", 3, "IDMapping"),
    ],
    "IDMapping": [
        _s("host_id", 1, "uint32"),
        _s("container_id", 2, "uint32"),
        _s("length", 3, "uint32"),
    ],
    "SELinuxOption": [_s("user", 1), _s("role", 2), _s("type", 3), _s("level", 4)],
    "LinuxContainerResources": [
        _s("cpu_period", 1, "int64"),
        _s("cpu_quota", 2, "int64"),
        _s("cpu_shares", 3, "int64"),
        _s("memory_limit_in_bytes", 4, "int64"),
        _s("oom_score_adj", 5, "int64"),
        _s("cpuset_cpus", 6),
        _s("cpuset_mems", 7),
        _rm("hugepage_limits", 8, "HugepageLimit"),
        _map("unified", 9),
        _s("memory_swap_limit_in_bytes", 10, "int64"),
    ],
    "HugepageLimit": [_s("page_size", 1), _s("limit", 2, "uint64")],
}

REFERENCE_ENUMS: dict[str, dict[str, int]] = {
    "NamespaceMode": {"POD": 0, "CONTAINER": 1, "NODE": 2, "TARGET": 3},
    "Protocol": {"TCP": 0, "UDP": 1, "SCTP": 2},
    "SecurityProfile.ProfileType": {"RuntimeDefault": 0, "Unconfined": 1, "Localhost": 2},
    # Upstream, not in the reference table.
    "SupplementalGroupsPolicy": {"Merge": 0, "Strict": 1},
}

ALL_MESSAGES = {**REFERENCE_TABLE, **UPSTREAM_TABLE}


def _pool_message(name: str) -> Descriptor:
    return descriptor_pool.Default().FindMessageTypeByName(f"{PACKAGE}.{name}")


def _pool_enum(name: str) -> EnumDescriptor:
    return descriptor_pool.Default().FindEnumTypeByName(f"{PACKAGE}.{name}")


def _describe(field: FieldDescriptor) -> Row:
    message_type = field.message_type
    if message_type is not None and message_type.GetOptions().map_entry:
        key, value = message_type.fields_by_name["key"], message_type.fields_by_name["value"]
        assert (key.type, value.type) == (FieldDescriptor.TYPE_STRING,) * 2
        return (field.name, field.number, "map", field.is_repeated, None)
    kind = _TYPE_NAMES[field.type]
    ref: str | None = None
    if field.enum_type is not None:
        ref = field.enum_type.full_name
    elif message_type is not None:
        ref = message_type.full_name
    return (field.name, field.number, kind, field.is_repeated, ref)


def _node_request() -> api_pb2.RunPodSandboxRequest:
    request = api_pb2.RunPodSandboxRequest()
    request.config.windows.security_context.namespace_options.network = api_pb2.NODE
    return request


# --- bytes on the wire -------------------------------------------------------------


def test_node_request_serializes_to_hand_encoded_bytes() -> None:
    assert _node_request().SerializeToString() == NODE_REQUEST


def test_hand_encoded_bytes_parse_to_node_with_presence_at_every_level() -> None:
    request = api_pb2.RunPodSandboxRequest.FromString(NODE_REQUEST)
    assert request.HasField("config")
    assert request.config.HasField("windows")
    assert not request.config.HasField("linux")
    assert request.config.windows.HasField("security_context")
    context = request.config.windows.security_context
    assert context.HasField("namespace_options")
    assert context.namespace_options.network == api_pb2.NODE
    assert request.runtime_handler == ""
    assert request.SerializeToString() == NODE_REQUEST


def test_present_pod_namespace_options_serialize_as_22_00() -> None:
    context = api_pb2.WindowsSandboxSecurityContext(
        namespace_options=api_pb2.WindowsNamespaceOption(network=api_pb2.POD)
    )
    assert context.HasField("namespace_options")
    assert context.SerializeToString() == POD_NAMESPACE_OPTIONS


def test_set_in_parent_gives_the_same_present_pod_form() -> None:
    context = api_pb2.WindowsSandboxSecurityContext()
    context.namespace_options.SetInParent()
    assert context.SerializeToString() == POD_NAMESPACE_OPTIONS


def test_unset_namespace_options_serialize_to_nothing() -> None:
    context = api_pb2.WindowsSandboxSecurityContext()
    assert not context.HasField("namespace_options")
    assert context.SerializeToString() == b""
    # Reading the default does not create presence.
    assert context.namespace_options.network == api_pb2.POD
    assert not context.HasField("namespace_options")


def test_has_field_tells_present_pod_from_unset() -> None:
    present = api_pb2.WindowsSandboxSecurityContext.FromString(POD_NAMESPACE_OPTIONS)
    absent = api_pb2.WindowsSandboxSecurityContext.FromString(b"")
    assert present.HasField("namespace_options")
    assert present.namespace_options.network == api_pb2.POD
    assert not absent.HasField("namespace_options")
    assert absent.namespace_options.network == api_pb2.POD


def test_present_pod_in_a_full_request_keeps_presence() -> None:
    # Same path as NODE_REQUEST with an empty WindowsNamespaceOption: lengths 6, 4, 2, 0.
    wire = bytes.fromhex("0a 06 4a 04 0a 02 22 00")
    request = api_pb2.RunPodSandboxRequest.FromString(wire)
    context = request.config.windows.security_context
    assert context.HasField("namespace_options")
    assert context.namespace_options.network == api_pb2.POD
    assert request.SerializeToString() == wire


# --- descriptors ---------------------------------------------------------------------


def test_file_is_registered_under_its_repo_path_and_package() -> None:
    assert api_pb2.DESCRIPTOR.name == PROTO_FILE
    assert api_pb2.DESCRIPTOR.package == PACKAGE
    assert descriptor_pool.Default().FindFileByName(PROTO_FILE) is api_pb2.DESCRIPTOR
    assert api_pb2.DESCRIPTOR.dependencies == []


@pytest.mark.parametrize("message", sorted(ALL_MESSAGES))
def test_message_full_name(message: str) -> None:
    descriptor = _pool_message(message)
    assert descriptor.full_name == f"{PACKAGE}.{message}"
    assert descriptor.file is api_pb2.DESCRIPTOR
    assert getattr(api_pb2, message).DESCRIPTOR is descriptor


@pytest.mark.parametrize("message", sorted(ALL_MESSAGES))
def test_message_fields_match_table(message: str) -> None:
    descriptor = _pool_message(message)
    actual = sorted((_describe(f) for f in descriptor.fields), key=lambda row: row[1])
    expected = sorted(ALL_MESSAGES[message], key=lambda row: row[1])
    assert actual == expected


@pytest.mark.parametrize("message", sorted(ALL_MESSAGES))
def test_plain_proto3_scalars_have_no_presence(message: str) -> None:
    # Upstream uses no `optional`: only singular messages track presence.
    for field in _pool_message(message).fields:
        singular_message = field.message_type is not None and not field.is_repeated
        assert field.has_presence is singular_message, field.full_name


def test_deprecated_seccomp_profile_path_keeps_number_7() -> None:
    field = _pool_message("LinuxSandboxSecurityContext").fields_by_name["seccomp_profile_path"]
    assert field.number == 7
    assert field.GetOptions().deprecated


@pytest.mark.parametrize("enum", sorted(REFERENCE_ENUMS))
def test_enum_values(enum: str) -> None:
    descriptor = _pool_enum(enum)
    assert descriptor.full_name == f"{PACKAGE}.{enum}"
    assert {v.name: v.number for v in descriptor.values} == REFERENCE_ENUMS[enum]


def test_namespace_mode_module_constants() -> None:
    assert (api_pb2.POD, api_pb2.CONTAINER, api_pb2.NODE, api_pb2.TARGET) == (0, 1, 2, 3)
    assert api_pb2.NamespaceMode.Name(api_pb2.NamespaceMode.ValueType(2)) == "NODE"


def test_profile_type_is_nested_in_security_profile() -> None:
    descriptor = _pool_enum("SecurityProfile.ProfileType")
    assert descriptor.containing_type is _pool_message("SecurityProfile")
    assert api_pb2.SecurityProfile.Localhost == 2


def test_run_pod_sandbox_method_path() -> None:
    service = api_pb2.DESCRIPTOR.services_by_name["RuntimeService"]
    assert service.full_name == f"{PACKAGE}.RuntimeService"
    method = service.methods_by_name["RunPodSandbox"]
    assert f"/{service.full_name}/{method.name}" == "/runtime.v1.RuntimeService/RunPodSandbox"
    assert method.input_type.full_name == "runtime.v1.RunPodSandboxRequest"
    assert method.output_type.full_name == "runtime.v1.RunPodSandboxResponse"
    assert not method.client_streaming
    assert not method.server_streaming


# --- proto3 JSON ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "field", "json_name"),
    [
        ("WindowsSandboxSecurityContext", "namespace_options", "namespaceOptions"),
        ("WindowsSandboxSecurityContext", "host_process", "hostProcess"),
        ("WindowsSandboxSecurityContext", "run_as_username", "runAsUsername"),
        ("WindowsSandboxSecurityContext", "credential_spec", "credentialSpec"),
        ("WindowsPodSandboxConfig", "security_context", "securityContext"),
        ("RunPodSandboxResponse", "pod_sandbox_id", "podSandboxId"),
        ("RunPodSandboxRequest", "runtime_handler", "runtimeHandler"),
        ("PodSandboxConfig", "log_directory", "logDirectory"),
        ("PodSandboxConfig", "port_mappings", "portMappings"),
        ("WindowsContainerResources", "affinity_cpus", "affinityCpus"),
    ],
)
def test_json_names(message: str, field: str, json_name: str) -> None:
    assert _pool_message(message).fields_by_name[field].json_name == json_name


def test_request_to_json() -> None:
    request = _node_request()
    context = request.config.windows.security_context
    context.host_process = True
    context.run_as_username = "NT AUTHORITY\\SYSTEM"
    context.credential_spec = "{}"
    request.runtime_handler = "runhcs-wcow-process"
    expected: dict[str, Any] = {
        "config": {
            "windows": {
                "securityContext": {
                    "runAsUsername": "NT AUTHORITY\\SYSTEM",
                    "credentialSpec": "{}",
                    "hostProcess": True,
                    "namespaceOptions": {"network": "NODE"},
                }
            }
        },
        "runtimeHandler": "runhcs-wcow-process",
    }
    assert json_format.MessageToDict(request) == expected
    parsed = json_format.ParseDict(expected, api_pb2.RunPodSandboxRequest())
    assert parsed == request


def test_present_pod_survives_json_as_empty_object() -> None:
    context = api_pb2.WindowsSandboxSecurityContext()
    context.namespace_options.SetInParent()
    as_dict = json_format.MessageToDict(context)
    assert as_dict == {"namespaceOptions": {}}
    back = json_format.ParseDict(as_dict, api_pb2.WindowsSandboxSecurityContext())
    assert back.HasField("namespace_options")
    assert back.SerializeToString() == POD_NAMESPACE_OPTIONS


def test_response_json_name() -> None:
    response = api_pb2.RunPodSandboxResponse(pod_sandbox_id="abc")
    assert json_format.MessageToDict(response) == {"podSandboxId": "abc"}
    assert json_format.Parse('{"podSandboxId": "abc"}', api_pb2.RunPodSandboxResponse()) == response


# --- what cri-api changed after v0.36 (pkg/apis/runtime/v1/api.proto) ------------------


def test_key_value_holds_bytes_from_cri_api_d3d9c71() -> None:
    """`bytes value = 2;` (kubernetes#139168; v0.37.0 and the v0.34.9, v0.35.6, v0.36.2
    backports): the same wire encoding as the string it was, any bytes allowed."""
    fields = _pool_message("KeyValue").fields_by_name
    assert (fields["key"].number, fields["key"].type) == (1, FieldDescriptor.TYPE_STRING)
    assert (fields["value"].number, fields["value"].type) == (2, FieldDescriptor.TYPE_BYTES)
    pair = api_pb2.KeyValue(key="K", value=b"\xff")
    assert pair.SerializeToString() == bytes.fromhex("0a 01 4b 12 01 ff")


def test_signal_names_carry_the_prefix_of_cri_api_044b7de() -> None:
    """Every name gained SIGNAL_, no number changed: 66 values, 0 to 65."""
    values = {v.name: v.number for v in _pool_enum("Signal").values}
    assert len(values) == 66 and sorted(values.values()) == list(range(66))
    assert all(name.startswith("SIGNAL_") for name in values)
    assert (values["SIGNAL_RUNTIME_DEFAULT"], values["SIGNAL_SIGKILL"],
            values["SIGNAL_SIGTERM"], values["SIGNAL_SIGRTMINPLUS1"],
            values["SIGNAL_SIGRTMAXMINUS14"], values["SIGNAL_SIGRTMAX"]) == (0, 13, 23, 36, 51, 65)


def test_mount_options_of_cri_api_master() -> None:
    """d106c2f: `repeated string mount_options = 11;` on Mount; d279f3c: `bool
    mount_options = 3;` on RuntimeFeatures (neither is ever set by kubelet_winnet)."""
    mount = _pool_message("Mount").fields_by_name["mount_options"]
    assert (mount.number, mount.type, mount.is_repeated) == (11, FieldDescriptor.TYPE_STRING,
                                                             True)
    feature = _pool_message("RuntimeFeatures").fields_by_name["mount_options"]
    assert (feature.number, feature.type) == (3, FieldDescriptor.TYPE_BOOL)
