"""``kubelet-winnet policy``: the ValidatingAdmissionPolicy and binding that warn at
``kubectl apply`` time (the objects are :mod:`kubelet_winnet._lint.policy`'s)."""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

from kubelet_winnet._kubelet.golang import quote
from kubelet_winnet._kubelet.timeline import MAX_MINOR
from kubelet_winnet._kubelet.validation import is_label_value, is_qualified_name
from kubelet_winnet._printable import clip
from kubelet_winnet.cli.session import (
    EXIT_BAD_INPUT,
    Command,
    Session,
    add_profile_arguments,
    check_profile,
    exit_text,
)

__all__ = ["COMMAND"]

# Label keys and values, namespace and object names (k8s.io/apimachinery
# pkg/util/validation/validation.go: qualified names, DNS-1123 labels and subdomains).
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
class _FlagError(Exception):
    """A flag value the command cannot use; ``str()`` is the one-line message."""


def _configure(parser: argparse.ArgumentParser) -> None:
    from kubelet_winnet._lint.policy import DEFAULT_ACTIONS, DEFAULT_NAME, POLICY_RULES

    parser.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml",
                        help="yaml: two documents; json: a v1 List (default %(default)s)")
    parser.add_argument(
        "--action", action="append", default=[], metavar="ACTION",
        help="the binding's validationActions: warn, audit or deny, repeatable or "
        f"comma-separated (default {', '.join(a.lower() for a in DEFAULT_ACTIONS)}; deny and "
        "warn cannot be combined)",
    )
    parser.add_argument("--name", default=DEFAULT_NAME,
                        help="name of the policy and of its binding (default %(default)s)")
    parser.add_argument(
        "--namespace-selector", default="", metavar="SELECTOR",
        help="bind only in namespaces whose labels match, kubectl -l syntax "
        "(e.g. 'env=prod,team in (a,b)')",
    )
    parser.add_argument("--exclude-namespace", action="append", default=[], metavar="NAME",
                        help="leave this namespace out, repeatable")
    parser.add_argument(
        "--rules", action="append", default=[], metavar="RULE",
        help=f"rules to put in the policy, repeatable or comma-separated (default all: "
        f"{', '.join(POLICY_RULES)})",
    )
    add_profile_arguments(parser)
    parser.epilog = (
        "--kubelet-version and --feature-gates say which kubelet the hostNetwork message "
        "speaks of: admission runs before scheduling, so it cannot know the node's "
        "(kubelet-winnet audit can).\n\n" + exit_text(
            (0, "the policy and its binding printed"),
            (2, "bad flags or usage (an unknown rule or action, a kubelet version or "
             "feature gate the kubelet refuses), or output that cannot be written"),
        )
    )


def _words(values: list[str]) -> list[str]:
    return [word.strip() for value in values for word in value.split(",") if word.strip()]


def _actions(values: list[str]) -> tuple[str, ...]:
    from kubelet_winnet._lint.policy import ACTIONS, DEFAULT_ACTIONS

    by_name = {action.lower(): action for action in ACTIONS}
    chosen = []
    for word in _words(values):
        action = by_name.get(word.lower())
        if action is None:
            raise _FlagError(f"--action: {word[:40]!r} is not an action (use warn, audit or "
                             "deny)")
        chosen.append(action)
    if not values:
        return DEFAULT_ACTIONS
    if not chosen:
        raise _FlagError("--action: no action given (use warn, audit or deny)")
    if "Deny" in chosen and "Warn" in chosen:
        raise _FlagError("--action: deny and warn cannot be combined (the API server refuses "
                         "such a binding); use deny, or warn with audit")
    return tuple(dict.fromkeys(chosen))


def _rules(values: list[str]) -> tuple[str, ...]:
    from kubelet_winnet._lint.policy import NOT_IN_POLICY, POLICY_RULES

    if not values:
        return tuple(POLICY_RULES)
    chosen = []
    for word in _words(values):
        if word in NOT_IN_POLICY:
            raise _FlagError(f"--rules: {word} is not in the policy: {NOT_IN_POLICY[word]}")
        if word not in POLICY_RULES:
            raise _FlagError(f"--rules: no rule named {word[:60]!r} (the policy's rules: "
                             f"{', '.join(POLICY_RULES)})")
        chosen.append(word)
    if not chosen:
        raise _FlagError("--rules: no rule given")
    return tuple(dict.fromkeys(chosen))


# --- --namespace-selector: kubectl -l syntax, read as apimachinery reads it ---------------
#
# k8s.io/apimachinery pkg/labels/selector.go (Lexer, Parser, NewRequirement) and
# pkg/apis/meta/v1/helpers.go (ParseToLabelSelector): the tokens, the grammar, the
# validation and the error texts are theirs; the code is this module's. One pass over the
# text, so time is linear in its length whatever the whitespace.

_SELECTOR_HINT = "use key=value, key!=value, key in (a,b), key notin (a,b), key or !key"
_SPACE = re.compile(r"[ \t\r\n]*")  # selector.go isWhitespace: these four only
_IDENTIFIER = re.compile(r"[^ \t\r\n=!(),<>]+")  # up to whitespace or a special symbol
_SPECIAL = frozenset("=!(),<>")
_TWO_CHARACTER = ("==", "!=")
_KEYWORDS = ("in", "notin")
_END = ""  # the end-of-string token
# What binaryOperators prints (selection.Operator values, in selector.go's order).
_BINARY = "in, notin, =, ==, !=, gt, lt"

# What labels.Parse checks keys and values with, at the newest apimachinery the project
# models: an API server's selector parser (pkg/api/validate/content IsLabelKey and
# IsLabelValue), whose messages _kubelet/validation.py keeps per release.
_API_MINOR = MAX_MINOR


def _go_quote(text: str) -> str:
    # field.Error's ErrorBody prints a string value with %q; clipped for the terminal.
    return clip(quote(text), 80)


def _invalid(text: str, errors: list[str]) -> _FlagError:
    # field.Invalid(path, value, detail) as a user reads it, without the nil path.
    return _FlagError(
        "--namespace-selector: unable to parse requirement: Invalid value: "
        f"{_go_quote(text)}: {'; '.join(errors)}"
    )


def _tokens(text: str) -> list[tuple[str, str]]:
    """selector.go's Lexer: (kind, literal) pairs, kind one of the special symbols,
    "identifier", "in", "notin" or the end ``""``."""
    tokens: list[tuple[str, str]] = []
    position = 0
    while True:
        position = _SPACE.match(text, position).end()  # type: ignore[union-attr]
        if position == len(text):
            tokens.append((_END, ""))
            return tokens
        if text[position] in _SPECIAL:
            symbol = text[position:position + 2]
            if symbol not in _TWO_CHARACTER:
                symbol = text[position]
            tokens.append((symbol, symbol))
            position += len(symbol)
            continue
        found = _IDENTIFIER.match(text, position)
        assert found is not None  # not a space and not special: an identifier starts here
        word = found[0]
        tokens.append((word if word in _KEYWORDS else "identifier", word))
        position = found.end()


class _SelectorParser:
    """selector.go's Parser over the tokens: ``parse`` gives (key, operator, values)."""

    def __init__(self, text: str) -> None:
        self._tokens = _tokens(text)
        self._at = 0

    def _peek(self, values: bool = True) -> tuple[str, str]:
        kind, literal = self._tokens[self._at]
        # In a value context, in and notin are plain identifiers ("x in (in)").
        return ("identifier" if values and kind in _KEYWORDS else kind), literal

    def _take(self, values: bool = True) -> tuple[str, str]:
        token = self._peek(values)
        self._at += 1
        return token

    @staticmethod
    def _error(message: str) -> _FlagError:
        return _FlagError(f"--namespace-selector: {message}; {_SELECTOR_HINT}")

    def _found(self, literal: str, expected: str, requirement: bool = True) -> _FlagError:
        what = f"found '{clip(literal, 40)}', expected: {expected}"
        return self._error(f"unable to parse requirement: {what}" if requirement else what)

    def parse(self) -> list[tuple[str, str, list[str]]]:
        requirements: list[tuple[str, str, list[str]]] = []
        while True:
            kind, literal = self._peek()
            if kind == _END:
                return requirements
            if kind not in ("identifier", "!"):
                raise self._found(literal, "!, identifier, or 'end of string'", False)
            requirements.append(self._requirement())
            kind, literal = self._take()
            if kind == _END:
                return requirements
            if kind != ",":
                raise self._found(literal, "',' or 'end of string'", False)
            kind, literal = self._peek()
            if kind not in ("identifier", "!"):
                raise self._found(literal, "identifier after ','", False)

    def _requirement(self) -> tuple[str, str, list[str]]:
        kind, key = self._take()
        operator = ""
        if kind == "!":
            operator = "DoesNotExist"
            kind, key = self._take()
        if kind != "identifier":
            raise self._found(key, "identifier")
        errors = is_qualified_name(key, _API_MINOR)
        if errors:
            raise _invalid(key, errors)
        if operator or self._peek()[0] in (_END, ","):
            return key, operator or "Exists", []
        kind, literal = self._take(values=False)
        operators = {"in": "In", "notin": "NotIn", "=": "Equals", "==": "Equals",
                     "!=": "NotEquals", ">": "Gt", "<": "Lt"}
        if kind not in operators:
            raise self._found(literal, _BINARY)
        operator = operators[kind]
        values = self._set() if operator in ("In", "NotIn") else self._exact()
        for value in values:
            errors = is_label_value(value, _API_MINOR)
            if errors:
                raise _invalid(value, errors)
        if operator in ("Gt", "Lt"):
            # labels.Parse takes them; a LabelSelector has no such operator
            # (ParseToLabelSelector's words).
            raise self._error(f'"{operator.lower()}" isn\'t supported in label selectors')
        return key, operator, values

    def _exact(self) -> list[str]:
        if self._peek()[0] in (_END, ","):
            return [""]
        kind, literal = self._take()
        if kind != "identifier":
            raise self._found(literal, "identifier")
        return [literal]

    def _set(self) -> list[str]:
        kind, literal = self._take()
        if kind != "(":
            # selector.go writes this one without the comma
            raise self._error(f"unable to parse requirement: found '{clip(literal, 40)}' "
                              "expected: '('")
        kind, literal = self._peek()
        if kind == ")":  # "()": the one empty value
            self._take()
            return [""]
        if kind not in ("identifier", ","):
            raise self._found(literal, "',', ')' or identifier")
        values: set[str] = set()
        while True:
            kind, literal = self._take()
            if kind == "identifier":
                values.add(literal)
                kind, literal = self._peek()
                if kind == ")":
                    break
                if kind != ",":
                    raise self._found(literal, "',' or ')'")
            elif kind == ",":
                # "(,", ",," and ",)" each stand for the empty value.
                after = self._peek()[0]
                if not values or after in (",", ")"):
                    values.add("")
                if after == ")":
                    break
            else:
                raise self._found(literal, "',', or identifier")
        self._take()  # the ")"
        return sorted(values)  # a set, listed sorted as sets.String.List() does


def _selector(text: str) -> dict[str, Any]:
    """``key=value,key in (a,b),!key`` as a LabelSelector (matchLabels,
    matchExpressions), every requirement kept: they are ANDed, as ``labels.Parse`` ANDs
    them, so ``env=prod,env=dev`` is both (and matches no namespace), never the last
    one only. ``!=`` is ``NotIn`` of its one value, which matches the same labels."""
    labels: dict[str, str] = {}
    expressions: list[dict[str, Any]] = []
    for key, operator, values in _SelectorParser(text).parse():
        if operator == "Equals" and labels.get(key, values[0]) == values[0]:
            labels[key] = values[0]
            continue
        expression: dict[str, Any] = {
            "key": key, "operator": {"Equals": "In", "NotEquals": "NotIn"}.get(operator, operator),
        }
        if values:
            expression["values"] = values
        if expression not in expressions:
            expressions.append(expression)
    selector: dict[str, Any] = {}
    if labels:
        selector["matchLabels"] = labels
    if expressions:
        selector["matchExpressions"] = expressions
    return selector


def _namespaces(values: list[str]) -> tuple[str, ...]:
    for name in values:
        if len(name) > 63 or not _DNS_LABEL.fullmatch(name):
            raise _FlagError(f"--exclude-namespace: {name[:70]!r} is not a namespace name")
    return tuple(dict.fromkeys(values))


def _name(text: str) -> str:
    if len(text) > 253 or not _DNS_SUBDOMAIN.fullmatch(text):
        raise _FlagError(f"--name: {text[:70]!r} is not an object name (lowercase letters, "
                         "digits, '-' and '.')")
    return text


def _run(args: argparse.Namespace, session: Session) -> int:
    from kubelet_winnet._lint.policy import PolicyOptions, policy_objects
    from kubelet_winnet._lint.reach import host_network_reach

    try:
        options = PolicyOptions(
            name=_name(args.name),
            actions=_actions(args.action),
            rules=_rules(args.rules),
            namespace_selector=_selector(args.namespace_selector),
            exclude_namespaces=_namespaces(args.exclude_namespace),
        )
    except _FlagError as exc:
        session.error(str(exc))
        return EXIT_BAD_INPUT
    if not check_profile(args, session):
        return session.status
    policy, binding = policy_objects(
        options, host_network_reach(args.kubelet_version, args.feature_gates)
    )
    if args.output == "json":
        listing = {"apiVersion": "v1", "kind": "List", "items": [policy, binding]}
        session.out.write(json.dumps(listing, indent=2) + "\n")
    else:
        from kubelet_winnet.cli.output.yaml_text import resource_document

        session.out.write(resource_document(policy) + "---\n" + resource_document(binding))
    return session.status


COMMAND = Command("policy", _configure, _run)
