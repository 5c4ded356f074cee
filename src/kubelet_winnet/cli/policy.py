"""``kubelet-winnet policy``: the ValidatingAdmissionPolicy and binding that warn at
``kubectl apply`` time (the objects are :mod:`kubelet_winnet._lint.policy`'s)."""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

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
_NAME_PART = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
# One requirement of a label selector (kubectl -l syntax): key, !key, key=value,
# key==value, key!=value, key in (a,b), key notin (a,b).
_REQUIREMENT = re.compile(
    r"\s*(?:(?P<not>!)\s*(?P<absent>[^\s=!(),]+)"
    r"|(?P<key>[^\s=!(),]+)\s*(?:(?P<op>==|=|!=)\s*(?P<value>[^\s=!(),]*)"
    r"|\s+(?P<set>in|notin)\s*\((?P<values>[^()]*)\))?)\s*(?:,|$)"
)


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


def _label_key(key: str, flag: str) -> str:
    prefix, _, name = key.rpartition("/")
    if (not _NAME_PART.fullmatch(name) or len(name) > 63
            or (prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix)))):
        raise _FlagError(f"{flag}: {key[:70]!r} is not a label key")
    return key


def _label_value(value: str, flag: str) -> str:
    if value and (len(value) > 63 or not _NAME_PART.fullmatch(value)):
        raise _FlagError(f"{flag}: {value[:70]!r} is not a label value")
    return value


def _selector(text: str) -> dict[str, Any]:
    """``key=value,key in (a,b),!key`` as a LabelSelector (matchLabels, matchExpressions)."""
    flag = "--namespace-selector"
    labels: dict[str, str] = {}
    expressions: list[dict[str, Any]] = []
    position = 0
    text = text.strip()
    while position < len(text):
        found = _REQUIREMENT.match(text, position)
        if found is None or found.end() == position:
            raise _FlagError(f"{flag}: cannot read {text[position:position + 40]!r} (use "
                             "key=value, key!=value, key in (a,b), key notin (a,b), key or !key)")
        position = found.end()
        if found["absent"] is not None:
            expressions.append({"key": _label_key(found["absent"], flag),
                                "operator": "DoesNotExist"})
            continue
        key = _label_key(found["key"], flag)
        if found["op"] in ("=", "=="):
            labels[key] = _label_value(found["value"], flag)
        elif found["op"] == "!=":
            expressions.append({"key": key, "operator": "NotIn",
                                "values": [_label_value(found["value"], flag)]})
        elif found["set"] is not None:
            values = [_label_value(v.strip(), flag) for v in found["values"].split(",")]
            expressions.append({"key": key, "operator": "In" if found["set"] == "in" else "NotIn",
                                "values": values})
        else:
            expressions.append({"key": key, "operator": "Exists"})
        if position < len(text) and text[position - 1] != ",":  # pragma: no cover - regex
            raise _FlagError(f"{flag}: expected a comma at {text[position:position + 40]!r}")
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
    from kubelet_winnet._lint.rules import host_network_reach

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
        session.out.write(_yaml(policy) + "---\n" + _yaml(binding))
    return session.status


def _yaml(value: Any) -> str:
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


COMMAND = Command("policy", _configure, _run)
