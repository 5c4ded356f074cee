"""The ``node`` command's rules as data: what a Windows node's own configuration does to
the networking its pods ask for. Each rule has a page under ``pages/`` (rendered into
``docs/rules/``); the checks themselves read the node's files and live beside the command
(``_lint/node_checks.py``). Rule ids are distinct from the ``check`` rules' ids, so one ignore
annotation (``ignore-check.kubelet-winnet.io/<rule>`` on the ``Node`` object) names one rule.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from kubelet_winnet._lint.rules import Rule, Severity
from kubelet_winnet.runtime._releases import (
    HOST_PROCESS_IN_UVM,
    REMOVED_CRI_OPTIONS,
    removed_in,
    removed_option,
)

__all__ = ["NODE_PORT_RANGE", "NODE_RULES", "NODE_RULES_BY_ID", "nearest_node_rule",
           "node_rule_page"]

# The default Service NodePort range (kube-apiserver --service-node-port-range).
NODE_PORT_RANGE = (30000, 32767)

NODE_RULES: tuple[Rule, ...] = (
    Rule("node-gate-stops-kubelet", Severity.ERROR,
         "the kubelet configuration sets a feature gate its release does not have (removed, "
         "not yet added, or no gate at all): the kubelet exits at start-up"),
    Rule("node-gate-stops-kube-proxy", Severity.ERROR,
         "the kube-proxy configuration sets a feature gate its release does not have: "
         "kube-proxy exits at start-up"),
    Rule("node-flag-removed", Severity.ERROR,
         "a kubelet or kube-proxy flag its release no longer has (the klog flags, the "
         "dockershim flags, --container-runtime): the component exits at start-up"),
    Rule("node-gate-locked", Severity.ERROR,
         "the kubelet or kube-proxy configuration sets a gate against the value its release "
         "locks it to (WinDSR=false or WinOverlay=false on 1.34+, a GA gate set to false): "
         "the component exits at start-up"),
    Rule("node-proxy-mode", Severity.ERROR,
         "a Windows kube-proxy mode other than kernelspace: a validation error, kube-proxy "
         "does not start"),
    Rule("node-config-version", Severity.ERROR,
         "a containerd configuration the node's containerd refuses to load (a file it "
         "cannot decode, its schema version, or a short plugin name in a version 2 file on "
         "1.x): containerd does not start"),
    Rule("node-option-removed", Severity.WARNING,
         f"containerd {removed_in(removed_option('bin_dir'))} no longer reads "
         f"{' or '.join(option.key for option in REMOVED_CRI_OPTIONS)}: CNI plugins outside "
         "the default folder are not found and pods lose networking"),
    Rule("node-runtime-table-unread", Severity.ERROR,
         "a runtime table at a path the file's schema version does not read: the handler "
         "is not registered and RuntimeClasses naming it fail"),
    Rule("node-hyperv-host-process", Severity.WARNING,
         f"Hyper-V runtime handlers with hcsshim {HOST_PROCESS_IN_UVM.hcsshim}+: HostProcess "
         "pods under them get no network at all"),
    Rule("node-host-port-dropped", Severity.WARNING,
         "the node's CNI network does not apply port mappings: every hostPort is silently "
         "dropped"),
    Rule("node-dns-dropped", Severity.WARNING,
         "the node's CNI network does not apply the pods' DNS settings (no dns capability, "
         "or a plugin that ignores some): dnsPolicy None or Default and dnsConfig are "
         "silently ignored"),
    Rule("node-port-range", Severity.WARNING,
         "a Windows excluded or dynamic port range overlaps the NodePort range: Services' "
         "node ports collide with ports Windows keeps"),
    Rule("node-pause-image", Severity.WARNING,
         "pause 3.10 or 3.10.1 as the sandbox image of a Windows Server 2025 node with "
         "Hyper-V handlers: Hyper-V pods fail with HCS_E_IMAGE_MISMATCH"),
)
NODE_RULES_BY_ID: Mapping[str, Rule] = {rule.id: rule for rule in NODE_RULES}


def node_rule_page(rule_id: str) -> str:
    """A node rule's page (markdown), as ``node --explain`` prints it."""
    from importlib import resources

    if rule_id not in NODE_RULES_BY_ID:
        raise KeyError(rule_id)
    return (resources.files("kubelet_winnet._lint") / "pages" / f"{rule_id}.md").read_text(
        encoding="utf-8"
    )


def nearest_node_rule(name: str) -> str | None:
    close = difflib.get_close_matches(name, NODE_RULES_BY_ID, n=1, cutoff=0.6)
    return close[0] if close else None


