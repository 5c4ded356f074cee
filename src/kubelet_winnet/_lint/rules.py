"""The ``check`` rules as data: :data:`RULES` (id, severity, summary, docs page), the
codes ``explain`` prints (:data:`REASONS`), the :class:`Finding` a rule produces, and each
rule's page. The rules are applied by :func:`kubelet_winnet._lint.checks.check_pod`; the
ignore annotations and comments are read by :mod:`kubelet_winnet._lint.ignores`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from kubelet_winnet._lint.targeting import Target
from kubelet_winnet.runtime._releases import HOST_PROCESS_IN_UVM

__all__ = [
    "REASONS",
    "REASONS_BY_ID",
    "RULES",
    "RULES_BY_ID",
    "Finding",
    "Path",
    "Reason",
    "Rule",
    "Severity",
    "help_url",
    "rule_page",
]

# The project has no published address: a rule's page is named by its path in the
# source tree, and an absolute helpUri exists only where the user configures where the
# pages are published (help_url).
RULE_PAGES = "docs/rules/"


class Severity(enum.IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @property
    def sarif_level(self) -> str:
        return {1: "note", 2: "warning", 3: "error"}[self.value]


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    summary: str
    # The severity when the pod does not declare spec.os.name: windows (only targets it),
    # for rules whose upstream check applies to declared Windows pods alone.
    severity_without_os: Severity | None = None
    # What the rule warns of happens on Windows nodes only: for a pod that no OS field,
    # selector or affinity pins, the text says "if this pod runs on a Windows node" and
    # the severity is one level lower (a Linux workload in the same repository is fine).
    windows_nodes_only: bool = False

    @property
    def help_uri(self) -> str:
        """The rule's page, a URI reference relative to the project's source tree (no
        address is guessed: :func:`help_url` with a configured base gives an absolute
        one)."""
        return f"{RULE_PAGES}{self.id}.md"

    @property
    def severity_text(self) -> str:
        """The severities a finding of this rule can have, from the rule's data:
        "info (error when spec.os.name is windows)", "warning (info for a pod pinned to
        no OS)"."""
        base = self.severity_without_os or self.severity
        cases = []
        if self.severity_without_os is not None:
            cases.append(f"{self.severity.label} when spec.os.name is windows")
        if self.windows_nodes_only and self.severity > Severity.INFO:
            cases.append(f"{Severity(self.severity - 1).label} for a pod pinned to no OS")
        return base.label + (f" ({'; '.join(cases)})" if cases else "")

    def severity_for(self, target: Target) -> Severity:
        """The severity of a finding on a pod aimed at ``target``: a windows_nodes_only
        rule is one level lower on a pod pinned to no OS."""
        if target is Target.UNTARGETED and self.windows_nodes_only:
            return Severity(max(Severity.INFO, self.severity - 1))
        return self.severity


RULES: tuple[Rule, ...] = (
    Rule("host-network-ignored", Severity.WARNING,
         "hostNetwork: true on a Windows pod that is not HostProcess is silently ignored",
         windows_nodes_only=True),
    Rule("host-process-mixed", Severity.ERROR,
         "some but not all containers are HostProcess: the kubelet refuses the pod"),
    Rule("host-process-needs-host-network", Severity.ERROR,
         "HostProcess containers without hostNetwork: true: the kubelet refuses the pod"),
    Rule("host-process-pod-false", Severity.ERROR,
         "a HostProcess container in a pod whose hostProcess is false: the kubelet refuses "
         "the pod"),
    Rule("host-process-override", Severity.ERROR,
         "hostProcess: false on a container of a pod whose hostProcess is true: the API "
         "server rejects the pod"),
    Rule("host-port-mismatch", Severity.ERROR,
         "under hostNetwork a hostPort must equal its containerPort"),
    Rule("windows-forbidden-field", Severity.ERROR,
         "a field the API server rejects for a pod with spec.os.name: windows",
         severity_without_os=Severity.INFO),
    Rule("gmsa-spec-missing", Severity.INFO,
         "gmsaCredentialSpecName without gmsaCredentialSpec: needs the GMSA webhook"),
    Rule("host-process-hyperv-no-network", Severity.WARNING,
         f"a HostProcess pod with a Hyper-V RuntimeClass: hcsshim "
         f"{HOST_PROCESS_IN_UVM.hcsshim_line} runs it in a utility VM with no network at all"),
    Rule("dns-needs-cni-capability", Severity.INFO,
         "a Windows pod's own DNS settings (dnsPolicy None or Default, dnsConfig) take effect "
         "only where the node's CNI plugin declares the dns capability",
         windows_nodes_only=True),
    Rule("unknown-field", Severity.ERROR,
         "a key that is no field of its Kubernetes type: kubectl apply rejects the object, "
         "other clients drop the field"),
)


class Reason(NamedTuple):
    """A code ``explain`` prints (``kubelet_winnet.WarningCode``): the check rule it is a
    case of, so one id has one severity everywhere; ``rule`` None: a note about the
    command-line flags, which ``check`` prints as a note too."""

    id: str
    rule: str | None
    summary: str


REASONS: tuple[Reason, ...] = (
    Reason("host-network-gate-off", "host-network-ignored",
           "kubelet 1.26-1.32 with WindowsHostNetwork turned off does not send network NODE"),
    Reason("host-network-withdrawn", "host-network-ignored",
           "kubelet 1.33 and later never send network NODE (KEP-3503 withdrawn)"),
    Reason("containerd-ignores-namespace-options", "host-network-ignored",
           "the kubelet sends network NODE, but no released containerd acts on it"),
    Reason("gmsa-spec-missing", "gmsa-spec-missing",
           "gmsaCredentialSpecName without gmsaCredentialSpec: needs the GMSA webhook"),
    Reason("feature-gate-not-modelled", None,
           "a --feature-gates name this library does not model (a kubelet refuses a gate it "
           "does not know)"),
    Reason("deprecated-feature-gate", None,
           "a deprecated gate set in --feature-gates (the kubelet logs that it will be "
           "removed)"),
)
REASONS_BY_ID: Mapping[str, Reason] = {reason.id: reason for reason in REASONS}

RULES_BY_ID: Mapping[str, Rule] = {rule.id: rule for rule in RULES}

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Finding:
    rule: Rule
    severity: Severity  # the rule's, or lower (no os.name, or a pod pinned to no OS)
    message: str  # one sentence under 120 characters: what happens and what to do
    field: Path  # from the manifest root
    container: str | None = None
    detail: str = ""  # the versions, upstream's words, other ways out

    @property
    def text(self) -> str:
        """The whole finding: the sentence, then the detail."""
        return f"{self.message} {self.detail}" if self.detail else self.message


def rule_page(rule_id: str) -> str:
    """The documentation of a rule (markdown), as ``check --explain`` prints it and the
    docs site shows it (docs/rules/ is generated from these pages)."""
    from importlib import resources

    if rule_id not in RULES_BY_ID:
        raise KeyError(rule_id)
    return (resources.files("kubelet_winnet._lint") / "pages" / f"{rule_id}.md").read_text(
        encoding="utf-8"
    )


def help_url(rule_id: str, base: str | None) -> str | None:
    """The address of a rule's page under the documentation base the user configured
    (``{rule}`` in it is replaced by the id, else ``<id>.md`` is appended), or None
    without a base: never a guessed address."""
    if not base:
        return None
    if "{rule}" in base:
        return base.replace("{rule}", rule_id)
    return f"{base}{'' if base.endswith('/') else '/'}{rule_id}.md"

