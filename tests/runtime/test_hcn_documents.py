"""Pure HCN pieces: HRESULT decoding, document builders and parsers.

Expected values come from ``shared/reference/cri-and-hcn.md`` (codes, document shapes).
"""

from __future__ import annotations

import contextlib
import json
import pickle
import uuid

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from kubelet_winnet.errors import HcnError, HcnNotFoundError, InvalidArgumentError, WinnetError
from kubelet_winnet.runtime import hcn
from kubelet_winnet.runtime.hcn import _documents as documents
from kubelet_winnet.runtime.hcn import _hresult as hresult

GUID_TEXT = "5d6dab2a-4da7-4620-ad42-24beea2ee094"
GUID = uuid.UUID(GUID_TEXT)


# --- HRESULT ---------------------------------------------------------------------------


def test_hresult_from_win32_reduces_to_facility_7() -> None:
    assert hresult.hresult_from_win32(1168) == 0x80070490  # ERROR_NOT_FOUND
    assert hresult.hresult_from_win32(0) == 0
    assert hresult.win32_code(0x80070490) == 1168
    assert hresult.win32_code(-2147023728) == 1168  # the same value as a signed c_int32
    assert hresult.win32_code(0x803B0002) is None  # an HCN code is not a Win32 one
    assert hresult.facility(0x803B001B) == hresult.FACILITY_HCN == 0x3B


@pytest.mark.parametrize(
    ("code", "text"),
    [
        (0x803B0002, "endpoint not found"),
        (0x803B001B, "invalid JSON"),
        (0x803B0019, "GUID conversion failure"),
        (0x803B0027, "network compartment not found"),
        (0x803B0029, "default namespace already exists"),
        (0x803B002B, "the endpoint is already in a namespace"),
        (0x803B0014, "endpoint already attached"),
        (0x803B002C, "entity has references"),
        (0x803B002E, "namespace attach failed"),
        (0x80070490, "Win32 error 1168 (ERROR_NOT_FOUND)"),
        (0x80070005, "Win32 error 5 (ERROR_ACCESS_DENIED)"),
    ],
)
def test_describe_names_reference_codes(code: int, text: str) -> None:
    assert text in hresult.describe(code)


def test_not_found_family_is_exactly_the_listed_codes() -> None:
    assert hresult.is_not_found(0x80070490)
    assert hresult.is_not_found(0x803B0002)
    assert hresult.is_not_found(0x803B0027)
    # codes that must not make teardown forget a live namespace
    for code in (0x80004005, 0x80070005, 0x803B002C, 0x803B001B, 0x80070002):
        assert not hresult.is_not_found(code)


def test_success_without_record_is_no_error() -> None:
    assert hresult.error_for("HcnOpenNamespace", 0, None) is None
    assert hresult.error_for("HcnOpenNamespace", 0, "") is None
    assert hresult.error_for("HcnOpenNamespace", 0, "  \n") is None
    assert hresult.error_for("HcnOpenNamespace", 1, None) is None  # S_FALSE is success


def test_negative_hresult_with_record_uses_record_text() -> None:
    record = '{"Success": false, "Error": "Élément introuvable", "ErrorCode": 2147943568}'
    error = hresult.error_for("HcnDeleteNamespace", -2147023728, record)
    assert isinstance(error, HcnNotFoundError)
    assert isinstance(error, HcnError) and isinstance(error, OSError)
    assert isinstance(error, WinnetError)
    assert error.hresult == 0x80070490
    assert error.operation == "HcnDeleteNamespace"
    assert error.message == "Élément introuvable"
    assert error.error_record == {
        "Success": False,
        "Error": "Élément introuvable",
        "ErrorCode": 2147943568,
    }
    assert str(error) == "HcnDeleteNamespace failed: HRESULT 0x80070490: Élément introuvable"


def test_non_empty_record_with_success_hresult_is_an_error() -> None:
    # "An error is a negative HRESULT or a non-empty error record."
    error = hresult.error_for(
        "HcnModifyNamespace", 0, '{"Success": false, "Error": "x", "ErrorCode": 2151350315}'
    )
    assert error is not None and error.hresult == 0x803B002B
    assert type(error) is HcnError


def test_record_without_failure_code_reads_as_e_fail() -> None:
    error = hresult.error_for("HcnModifyNamespace", 0, '{"success": false, "error": "odd"}')
    assert error is not None and error.hresult == hresult.E_FAIL
    assert error.message == "odd"  # keys read case-insensitively
    error = hresult.error_for("HcnModifyNamespace", 0, '{"ErrorCode": 5}')
    assert error is not None and error.hresult == hresult.E_FAIL


def test_unparsable_record_keeps_raw_text() -> None:
    error = hresult.error_for("HcnCreateNamespace", 0x80004005, "not json ✗")
    assert error is not None
    assert error.error_record is None
    assert error.message == "not json ✗"


def test_negative_hresult_without_record_is_described() -> None:
    error = hresult.error_for("HcnCreateNamespace", 0x803B001B, None)
    assert error is not None and error.message == "HCN: invalid JSON"


def test_hcn_errors_pickle() -> None:
    error = hresult.error_for("HcnOpenNamespace", 0x80070490, '{"Error": "gone"}')
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is HcnNotFoundError
    expected = ("HcnOpenNamespace", 0x80070490, "gone")
    assert (again.operation, again.hresult, again.message) == expected


@given(st.integers(min_value=-(2**31), max_value=2**32 - 1), st.none() | st.text())
@example(-1, None)
@example(0, "{}")
def test_error_for_is_total(code: int, record: str | None) -> None:
    """Any HRESULT and any record text give None or an HcnError, never another exception."""
    error = hresult.error_for("HcnOpenNamespace", code, record)
    failed = bool(code & 0x80000000) or bool((record or "").strip())
    assert (error is not None) == failed
    if error is not None:
        assert error.hresult & 0x80000000


# --- builders ---------------------------------------------------------------------------


def test_namespace_settings_schema_2_with_owner_and_name() -> None:
    doc = json.loads(documents.namespace_settings(owner="kubelet-winnet", name="sändbox-Ω"))
    assert doc == {
        "SchemaVersion": {"Major": 2, "Minor": 0},
        "Owner": "kubelet-winnet",
        "Name": "sändbox-Ω",
    }
    assert "sändbox-Ω" in documents.namespace_settings(name="sändbox-Ω")  # not \u-escaped
    # containerd's create document: empty but for the schema
    assert json.loads(documents.namespace_settings()) == {"SchemaVersion": {"Major": 2, "Minor": 0}}


def test_query_filter_is_json_inside_a_string() -> None:
    doc = json.loads(documents.namespace_query({"ID": GUID_TEXT}))
    assert doc["SchemaVersion"] == {"Major": 2, "Minor": 0}
    assert doc["Flags"] == 0
    assert isinstance(doc["Filter"], str)
    assert json.loads(doc["Filter"]) == {"ID": GUID_TEXT}
    assert json.loads(documents.namespace_query(detailed=True)) == {
        "SchemaVersion": {"Major": 2, "Minor": 0},
        "Flags": 1,
    }


def test_modify_requests() -> None:
    for kind in ("Add", "Remove"):
        assert json.loads(documents.endpoint_modify_request(GUID, kind)) == {
            "ResourceType": "Endpoint",
            "RequestType": kind,
            "Settings": {"EndpointId": GUID_TEXT},
        }
    with pytest.raises(ValueError, match="Add"):
        documents.endpoint_modify_request(GUID, "Update")  # type: ignore[arg-type]


# --- parsers ------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["ID", "Id", "id"])
def test_namespace_id_key_is_case_insensitive(key: str) -> None:
    text = json.dumps({key: GUID_TEXT.upper(), "type": "HostDefault", "NamespaceId": 1})
    namespace = documents.parse_namespace(text)
    assert namespace.id == GUID
    assert namespace.is_host_default and namespace.compartment == 1


def test_parse_full_namespace_document() -> None:
    endpoint = uuid.uuid4()
    text = json.dumps(
        {
            "ID": "{" + GUID_TEXT + "}",
            "Owner": "kubelet-winnet",
            "Name": "pod-α",
            "NamespaceId": 7,
            "NamespaceGuid": str(uuid.uuid4()),
            "Type": "Host",
            "Resources": [
                {"Type": "Endpoint", "Data": {"Id": str(endpoint)}},
                {"Type": "Container", "Data": {"ID": str(uuid.uuid4())}},
            ],
            "SchemaVersion": {"Major": 2, "Minor": 0},
        }
    )
    namespace = documents.parse_namespace(text)
    assert (namespace.id, namespace.owner, namespace.name) == (GUID, "kubelet-winnet", "pod-α")
    assert namespace.compartment == 7 and not namespace.is_host_default
    assert namespace.endpoint_ids == (endpoint,)
    assert namespace.raw["NamespaceId"] == 7


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[]",
        "{",
        '{"Type": "Host"}',
        '{"ID": "not-a-guid"}',
        '{"ID": 12}',
        f'{{"ID": "{GUID_TEXT}", "NamespaceId": -1}}',
        f'{{"ID": "{GUID_TEXT}", "NamespaceId": true}}',
        f'{{"ID": "{GUID_TEXT}", "Resources": {{}}}}',
        f'{{"ID": "{GUID_TEXT}", "Resources": [{{"Data": {{}}}}]}}',
        f'{{"ID": "{GUID_TEXT}", "Owner": 3}}',
        # two spellings of the id key with two different ids
        f'{{"ID": "{GUID_TEXT}", "Id": "1ef1c264-917b-4830-bfaa-5f9722f3c4c1"}}',
        "[" * 100000,
    ],
)
def test_malformed_namespace_document_is_an_hcn_error(text: str) -> None:
    with pytest.raises(HcnError, match="malformed HCN output") as caught:
        documents.parse_namespace(text)
    assert caught.value.hresult == hresult.E_UNEXPECTED


def test_guid_lists() -> None:
    other = uuid.uuid4()
    text = json.dumps([GUID_TEXT.upper(), "{" + str(other) + "}"])
    assert documents.parse_guid_list(text) == (GUID, other)
    assert documents.parse_guid_list("") == ()
    assert documents.parse_guid_list("null") == ()
    assert documents.parse_guid_list("[]") == ()
    for bad in ('{"a": 1}', '["nope"]', "[1]"):
        with pytest.raises(HcnError):
            documents.parse_guid_list(bad)


def test_detailed_list() -> None:
    text = json.dumps([{"ID": GUID_TEXT, "Type": "HostDefault"}])
    (namespace,) = documents.parse_namespace_list(text)
    assert namespace.id == GUID and namespace.is_host_default


@given(st.text())
@example('{"ID": "00000000-0000-0000-0000-000000000000"}')
def test_parse_namespace_is_total(text: str) -> None:
    """Whatever HCN sends, the parser returns a Namespace or raises HcnError."""
    with contextlib.suppress(HcnError):
        documents.parse_namespace(text)


@given(st.uuids(), st.text().filter(lambda s: "\x00" not in s), st.text())
def test_settings_round_trip(namespace_id: uuid.UUID, name: str, owner: str) -> None:
    """What we build, the parser reads back (after HCN adds its own ID)."""
    doc = json.loads(documents.namespace_settings(owner=owner, name=name))
    doc["ID"] = str(namespace_id)
    parsed = documents.parse_namespace(json.dumps(doc))
    assert (parsed.id, parsed.owner, parsed.name) == (namespace_id, owner, name)


def test_public_names_match_all() -> None:
    for module in (hcn, documents, hresult):
        public = {n for n in vars(module) if not n.startswith("_")}
        assert set(module.__all__) <= public
        assert len(module.__all__) == len(set(module.__all__))


# --- whatever the DLL returns, parsing raises only HcnError ------------------------------

HUGE = "9" * 5000  # past Python's int_max_str_digits (4300): json.loads raises ValueError
BIG = "9" * 4000  # below it: parses, and must not be echoed back in full


@pytest.mark.parametrize(
    "text",
    [
        f'{{"ID": "{GUID_TEXT}", "NamespaceId": {HUGE}}}',
        f'{{"ID": "{GUID_TEXT}", "NamespaceId": {BIG}}}',
        f'{{"ID": {BIG}}}',
        f'{{"ID": "{GUID_TEXT}", "Owner": [{BIG}]}}',
        f'{{"ID": "{GUID_TEXT}", "Resources": [{BIG}]}}',
        f'{{"ID": "{"x" * 100_000}"}}',
        "[" * 100_000 + "]" * 100_000,
        '{"a": ' * 50_000 + "1" + "}" * 50_000,
        # the same key twice, with values that compare recursively
        '{"x": ' + "[" * 900 + "]" * 900 + ', "X": ' + "[" * 900 + "[1]" + "]" * 900 + "}",
        '"\\ud800"',
        "\ud800",
        "null",
        "3",
        '"a string"',
        "[]",
        "true",
    ],
    ids=lambda t: t[:30],
)
def test_parse_namespace_raises_only_hcn_errors(text: str) -> None:
    with pytest.raises(HcnError) as caught:
        documents.parse_namespace(text)
    assert caught.value.hresult == hresult.E_UNEXPECTED
    assert len(str(caught.value)) < 300  # bounded, whatever came in


def test_surrogates_in_names_are_text() -> None:
    # JSON pairs the escaped surrogates and keeps the lone one: text JSON allows, kept.
    text = f'{{"ID": "{GUID_TEXT}", "Name": "\\ud800\\udc00\\udfff"}}'
    assert documents.parse_namespace(text).name == "\U00010000\udfff"


@pytest.mark.parametrize(
    "text",
    [
        f"[{HUGE}]",
        f"[{BIG}]",
        f'["{"a" * 100_000}"]',
        "[" * 100_000,
        "[" * 50_000 + "]" * 50_000,
        '["\\ud800"]',
        "\ud800",
        '{"ID": 1}',
        "7",
        '"guid"',
    ],
    ids=lambda t: t[:30],
)
def test_guid_lists_raise_only_hcn_errors(text: str) -> None:
    for parse in (documents.parse_guid_list, documents.parse_namespace_list):
        with pytest.raises(HcnError) as caught:
            parse(text)
        assert len(str(caught.value)) < 300


@pytest.mark.parametrize("value", [None, b'{"ID": 1}', 5])
def test_parsers_refuse_non_text(value: object) -> None:
    # The caller's argument, not HCN output: a wrong type is InvalidArgumentError.
    for parse in (
        documents.parse_namespace,
        documents.parse_guid_list,
        documents.parse_namespace_list,
    ):
        with pytest.raises(InvalidArgumentError) as caught:
            parse(value)  # type: ignore[arg-type]
        assert caught.value.argument == "text"
        assert str(caught.value).startswith("text: expected a str, got ")


@pytest.mark.parametrize(
    "record",
    [
        f'{{"ErrorCode": {HUGE}, "Error": "x"}}',
        f'{{"ErrorCode": {BIG}, "Error": "x"}}',
        '{"ErrorCode": -2147467259, "Error": "negative"}',
        '{"ErrorCode": 2147500037.0}',
        '{"ErrorCode": "0x80004005"}',
        '{"Error": ' * 50_000 + "1" + "}" * 50_000,
        '{"Error": "\\ud800"}',
        "\ud800",
        "[1, 2]",
        "null",
    ],
    ids=lambda t: t[:30],
)
def test_error_records_of_any_shape(record: str) -> None:
    """A failure stays an HcnError whose code is a failure code, whatever the record."""
    for code in (0, 0x80004005):
        error = hresult.error_for("HcnDeleteNamespace", code, record)
        assert isinstance(error, HcnError)
        assert error.hresult & 0x80000000
        assert hresult.parse_error_record(record) is None or isinstance(
            hresult.parse_error_record(record), dict
        )


def test_negative_error_code_in_a_record_is_read_as_32_bits() -> None:
    error = hresult.error_for("HcnDeleteNamespace", 0, '{"ErrorCode": -2147023728}')
    assert error is not None and error.hresult == 0x80070490
    assert isinstance(error, HcnNotFoundError)


@given(st.text(alphabet=st.characters(codec=None), max_size=200))
def test_every_parser_is_total(text: str) -> None:
    """Including lone surrogates (what invalid UTF-16 from the DLL decodes to)."""
    for parse in (
        documents.parse_namespace,
        documents.parse_guid_list,
        documents.parse_namespace_list,
    ):
        with contextlib.suppress(HcnError):
            parse(text)
    hresult.error_for("HcnOpenNamespace", 0x80004005, text)
