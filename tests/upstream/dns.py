"""pkg/kubelet/network/dns/dns_test.go, as data.

The only stored version (a37cbbda) imports CRI v1alpha2, so it predates kubelet 1.26 (the
kubelet dropped v1alpha2 in 1.26). Its GetPodDNS rows test merging rules that dns.go
keeps in every later release, so they are run at 1.26-1.38; the search-line rows test the
pre-ExpandedDNSConfig limits (6 paths, 256 characters), which 1.26 and 1.27 still apply
with ExpandedDNSConfig=false, so they run there with that gate off.
"""

from __future__ import annotations

from typing import Any

from tests.upstream.rows import Row, Source

FILE = "pkg/kubelet/network/dns/dns_test.go"

V_A37CBBD = Source(
    FILE,
    "a37cbbda10a7ff8bba7050114662050cf8d53844",
    tuple(range(26, 39)),
    "predates 1.26 (CRI v1alpha2); rows carried forward to the releases whose dns.go keeps "
    "the behaviour they test (see each row's minors)",
)

_CUSTOM_FAKE = ("NewConfigurer(clusterDNS 10.0.0.10, domain kubernetes.io, a resolv.conf with "
                "\"nameserver 8.8.8.8\" / \"search host.domain\") -> NodeContext(cluster_dns="
                "(\"10.0.0.10\",), cluster_domain=\"kubernetes.io\", resolver_servers="
                "(\"8.8.8.8\",), resolver_searches=(\"host.domain\",))")
_OPTS = [{"name": "ndots", "value": "3"}, {"name": "debug"}]
_CUSTOM: tuple[tuple[str, bool, str, dict[str, Any] | None, dict[str, list[str]]], ...] = (
    ("DNSNone without DNSConfig should have empty DNS settings", False, "None", None,
     {"servers": [], "searches": [], "options": []}),
    ("DNSNone with DNSConfig should have a merged DNS settings", False, "None",
     {"nameservers": ["203.0.113.1"], "searches": ["my.domain", "second.domain"],
      "options": _OPTS},
     {"servers": ["203.0.113.1"], "searches": ["my.domain", "second.domain"],
      "options": ["ndots:3", "debug"]}),
    ("DNSClusterFirst with DNSConfig should have a merged DNS settings", False, "ClusterFirst",
     {"nameservers": ["10.0.0.11"], "searches": ["my.domain"], "options": _OPTS},
     {"servers": ["10.0.0.10", "10.0.0.11"],
      "searches": ["testNS.svc.kubernetes.io", "svc.kubernetes.io", "kubernetes.io",
                   "host.domain", "my.domain"],
      "options": ["ndots:3", "debug"]}),
    ("DNSClusterFirstWithHostNet with DNSConfig should have a merged DNS settings", True,
     "ClusterFirstWithHostNet",
     {"nameservers": ["10.0.0.11"], "searches": ["my.domain"], "options": _OPTS},
     {"servers": ["10.0.0.10", "10.0.0.11"],
      "searches": ["testNS.svc.kubernetes.io", "svc.kubernetes.io", "kubernetes.io",
                   "host.domain", "my.domain"],
      "options": ["ndots:3", "debug"]}),
    ("DNSDefault with DNSConfig should have a merged DNS settings", False, "Default",
     {"nameservers": ["10.0.0.11"], "searches": ["my.domain"], "options": _OPTS},
     {"servers": ["8.8.8.8", "10.0.0.11"], "searches": ["host.domain", "my.domain"],
      "options": ["ndots:3", "debug"]}),
)

_TYPE_FAKE = ("NewConfigurer(clusterDNS 203.0.113.1 when hasClusterDNS, domain TEST) -> "
              "NodeContext(cluster_dns=(\"203.0.113.1\",) or (), cluster_domain=\"TEST\", "
              "resolver_servers=(\"8.8.8.8\",)); the type is observed as the servers sent")
_TYPE = (
    ("valid DNSClusterFirst without hostnetwork", True, False, "ClusterFirst", "cluster"),
    ("valid DNSClusterFirstWithHostNet with hostnetwork", True, True,
     "ClusterFirstWithHostNet", "cluster"),
    ("valid DNSClusterFirstWithHostNet without hostnetwork", True, False,
     "ClusterFirstWithHostNet", "cluster"),
    ("valid DNSDefault without hostnetwork", False, False, "Default", "host"),
    ("valid DNSDefault with hostnetwork", False, True, "Default", "host"),
    ("DNSClusterFirst with hostnetwork, fallback to DNSDefault", True, True, "ClusterFirst",
     "host"),
    ("valid DNSNone", False, False, "None", "none"),
)

_NAMESERVERS = (
    ("valid: 1 nameserver", ["127.0.0.1"], ["127.0.0.1"]),
    ("valid: 3 nameservers", ["127.0.0.1", "10.0.0.10", "8.8.8.8"],
     ["127.0.0.1", "10.0.0.10", "8.8.8.8"]),
    ("invalid: 4 nameservers, trimmed to 3", ["127.0.0.1", "10.0.0.10", "8.8.8.8", "1.2.3.4"],
     ["127.0.0.1", "10.0.0.10", "8.8.8.8"]),
)

_MERGE_FAKE = ("the existing options come from the node's resolver -> NodeContext("
               "resolver_options=(\"ndots:5\", \"debug\")) with dnsPolicy Default")
_MERGE: tuple[tuple[str, list[dict[str, str]] | None, list[str]], ...] = (
    ("Empty dnsConfigOptions", None, ["ndots:5", "debug"]),
    ("No duplicated entries", [{"name": "single-request"}, {"name": "attempts", "value": "3"}],
     ["ndots:5", "debug", "single-request", "attempts:3"]),
    ("Overwrite duplicated entries",
     [{"name": "ndots", "value": "3"}, {"name": "debug"}, {"name": "single-request"},
      {"name": "attempts", "value": "3"}],
     ["ndots:3", "debug", "single-request", "attempts:3"]),
)

_SEARCH_LIMITS = (
    ("(case 0: fits)", ["testNS.svc.TEST", "svc.TEST", "TEST"],
     ["testNS.svc.TEST", "svc.TEST", "TEST"], ""),
    ("(case 1: five paths fit)", ["testNS.svc.TEST", "svc.TEST", "TEST", "AAA", "BBB"],
     ["testNS.svc.TEST", "svc.TEST", "TEST", "AAA", "BBB"], ""),
    ("(case 2: a 256-character path)",
     ["testNS.svc.TEST", "svc.TEST", "TEST", "AAA", "B" * 256, "BBB"],
     ["testNS.svc.TEST", "svc.TEST", "TEST", "AAA"],
     "this version cuts the search line from its end; kubelet 1.26's dns.go first drops "
     "every single path longer than 253 characters, keeping BBB (the library follows 1.26)"),
    ("(case 3: seven paths, six kept)",
     ["testNS.svc.TEST", "svc.TEST", "TEST", "AAA", "BBB", "CCC", "DDD"],
     ["testNS.svc.TEST", "svc.TEST", "TEST", "AAA", "BBB", "CCC"], ""),
)

ROWS: tuple[Row, ...] = (
    *(Row(V_A37CBBD, "TestGetPodDNSCustom", name,
          {"hostNetwork": host, "dnsPolicy": policy, "dnsConfig": config}, want,
          fake=_CUSTOM_FAKE) for name, host, policy, config, want in _CUSTOM),
    *(Row(V_A37CBBD, "TestGetPodDNSType", name,
          {"hasClusterDNS": cluster, "hostNetwork": host, "dnsPolicy": policy},
          {"type": kind}, fake=_TYPE_FAKE) for name, cluster, host, policy, kind in _TYPE),
    Row(V_A37CBBD, "TestGetPodDNSType", "invalid DNS policy, should return error",
        {"dnsPolicy": "invalidPolicy"}, {"error": True},
        out_of_scope="getPodDNSType's error never reaches a request: GetPodDNS logs it and "
        "uses cluster DNS (tests/kubelet/test_sandbox_config.py covers that)"),
    *(Row(V_A37CBBD, "TestFormDNSNameserversFitsLimits", name, {"nameservers": given},
          {"servers": want}, note="the DNSConfigForming event is not modelled")
      for name, given, want in _NAMESERVERS),
    *(Row(V_A37CBBD, "TestMergeDNSOptions", name, {"options": options},
          {"options": want}, fake=_MERGE_FAKE) for name, options, want in _MERGE),
    *(Row(V_A37CBBD, "TestFormDNSSearchFitsLimits", name, {"searches": given},
          {"searches": want}, out_of_scope=reason, minors=(26, 27),
          note="run with ExpandedDNSConfig=false, the only setting with these limits; the "
          "DNSConfigForming event is not modelled")
      for name, given, want, reason in _SEARCH_LIMITS),
    Row(V_A37CBBD, "TestParseResolvConf", "(whole table)", {}, {},
        out_of_scope="resolv.conf parsing: a Windows kubelet reads the node's resolver from "
        "GetNetworkParams and the registry (dns_windows.go), not from a file"),
    Row(V_A37CBBD, "TestGetPodDNS", "(whole test)", {}, {},
        out_of_scope="its pods have no namespace (an API pod always has one) and its second "
        "half reads the test machine's /etc/resolv.conf"),
)
SOURCES = (V_A37CBBD,)
