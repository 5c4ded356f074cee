"""apimachinery's string validators the kubelet's request depends on
(``pkg/util/validation/validation.go``, and from apimachinery v0.35 the label-key check of
``pkg/api/validate/content/kube.go`` behind ``IsQualifiedName``): the messages per
release, read in the kubernetes/apimachinery history at each ``v0.<minor>.0`` tag."""

from __future__ import annotations

import re

from kubelet_winnet._kubelet import golang
from kubelet_winnet._kubelet.request_facts import LABEL_DOTS_MESSAGE, LABEL_KEY_MESSAGES

__all__ = ["DNS1123_LABEL_MAX", "is_dns1123_label", "is_label_value", "is_qualified_name"]

DNS1123_LABEL_MAX = 63
_SUBDOMAIN_MAX = 253
_NAME_MAX = 63
_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL = re.compile(_LABEL_FMT)
_SUBDOMAIN = re.compile(_SUBDOMAIN_FMT)
_NAME = re.compile(_NAME_FMT)
_NAME_MESSAGE = ("must consist of alphanumeric characters, '-', '_' or '.', and must start "
                 "and end with an alphanumeric character")
_NAME_EXAMPLES = ("MyName", "my.name", "123-abc")


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    """``RegexError``: the examples each followed by ", " and joined by " or " (hence
    the two spaces before "or")."""
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    listed = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {listed}regex used for validation is '{fmt}')"


def _max_len_error(length: int, in_bytes: bool) -> str:
    # MaxLenError: "characters" in pkg/util/validation, "bytes" in validate/content.
    return f"must be no more than {length} {'bytes' if in_bytes else 'characters'}"


def _fullmatch(pattern: re.Pattern[str], value: str) -> bool:
    # Go's regexp matches UTF-8 bytes; no pattern here admits a character past ASCII.
    return pattern.fullmatch(value) is not None


def is_dns1123_label(value: str, minor: int) -> list[str]:
    """``IsDNS1123Label``: a valid subdomain that is not a label "must not contain
    dots" from apimachinery v0.27 (commit cf894f11); before, the regular expression's
    message. ``len()`` counts bytes."""
    errors = []
    if golang.go_len(value) > DNS1123_LABEL_MAX:
        errors.append(_max_len_error(DNS1123_LABEL_MAX, False))
    if not _fullmatch(_LABEL, value):
        if LABEL_DOTS_MESSAGE.holds(minor) and _fullmatch(_SUBDOMAIN, value):
            errors.append("must not contain dots")
        else:
            errors.append(_regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric "
                "characters or '-', and must start and end with an alphanumeric character",
                _LABEL_FMT, "my-name", "123-abc",
            ))
    return errors


def _is_dns1123_subdomain(value: str, in_bytes: bool) -> list[str]:
    errors = []
    if golang.go_len(value) > _SUBDOMAIN_MAX:
        errors.append(_max_len_error(_SUBDOMAIN_MAX, in_bytes))
    if not _fullmatch(_SUBDOMAIN, value):
        errors.append(_regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
            "characters, '-' or '.', and must start and end with an alphanumeric character",
            _SUBDOMAIN_FMT, "example.com",
        ))
    return errors


def is_qualified_name(value: str, minor: int) -> list[str]:
    """``IsQualifiedName`` (from apimachinery v0.35 ``content.IsLabelKey``: "a valid
    label key" and lengths in bytes)."""
    new = LABEL_KEY_MESSAGES.holds(minor)
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        kind = "a valid label key " if new else "a qualified name "
        return [kind + _regex_error(_NAME_MESSAGE, _NAME_FMT, *_NAME_EXAMPLES)
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend("prefix part " + e for e in _is_dns1123_subdomain(prefix, new))
    if not name:
        errors.append("name part must be non-empty")
    elif golang.go_len(name) > _NAME_MAX:
        errors.append("name part " + _max_len_error(_NAME_MAX, new))
    if not _fullmatch(_NAME, name):
        errors.append("name part " + _regex_error(_NAME_MESSAGE, _NAME_FMT, *_NAME_EXAMPLES))
    return errors


_VALUE_FMT = f"({_NAME_FMT})?"
_VALUE = re.compile(_VALUE_FMT)


def is_label_value(value: str, minor: int) -> list[str]:
    """``IsValidLabelValue`` (from apimachinery v0.35 ``content.IsLabelValue``, whose
    length is in bytes): empty, or at most 63 bytes of the name form."""
    errors = []
    if golang.go_len(value) > _NAME_MAX:
        errors.append(_max_len_error(_NAME_MAX, LABEL_KEY_MESSAGES.holds(minor)))
    if not _fullmatch(_VALUE, value):
        errors.append(_regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, "
            "'-', '_' or '.', and must start and end with an alphanumeric character",
            _VALUE_FMT, "MyValue", "my_value", "12345",
        ))
    return errors
