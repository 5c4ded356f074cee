"""pkg/kubelet/kubelet_pods_test.go, as data: TestSortPodIPs (the order of the downward
API's ``status.podIP`` / ``status.podIPs``), and the status test that pins the
same order for the pod's API status.

The index holds this file's table in a version it reports without a commit (the 103,204
character version, index id 810839808); the newest stored version, aba588cd, is larger
than the index reads, so its rows could not be checked line by line.
"""

from __future__ import annotations

from tests.upstream.rows import Row, Source

FILE = "pkg/kubelet/kubelet_pods_test.go"

V_INDEX = Source(
    FILE,
    "index-810839808",
    tuple(range(26, 39)),
    "sortPodIPs is called by podFieldSelectorRuntimeValue (\"make podIPs order match node "
    "IP family preference #97979\") in every release from 1.21; the table reads the same in "
    "the only complete version the index returns",
)

_FAKE = ("newTestKubelet: kl.nodeIPs is empty unless the row sets nodeIP -> "
         "NodeContext(node_ips=()) or NodeContext(node_ips=(nodeIP,))")

_SORT = (
    ("Simple", "", ["10.0.0.1"], ["10.0.0.1"]),
    ("Dual-stack", "", ["10.0.0.1", "fd01::1234"], ["10.0.0.1", "fd01::1234"]),
    ("Dual-stack with explicit node IP", "192.168.1.1", ["10.0.0.1", "fd01::1234"],
     ["10.0.0.1", "fd01::1234"]),
    ("Dual-stack with CRI returning wrong family first", "", ["fd01::1234", "10.0.0.1"],
     ["10.0.0.1", "fd01::1234"]),
    ("Dual-stack with explicit node IP with CRI returning wrong family first", "192.168.1.1",
     ["fd01::1234", "10.0.0.1"], ["10.0.0.1", "fd01::1234"]),
    ("Dual-stack with IPv6 node IP", "fd00::5678", ["10.0.0.1", "fd01::1234"],
     ["fd01::1234", "10.0.0.1"]),
    ("Dual-stack with IPv6 node IP, other CRI order", "fd00::5678", ["fd01::1234", "10.0.0.1"],
     ["fd01::1234", "10.0.0.1"]),
    ("No Pod IP matching Node IP", "fd00::5678", ["10.0.0.1"], ["10.0.0.1"]),
    ("No Pod IP matching (unspecified) Node IP", "", ["fd01::1234"], ["fd01::1234"]),
    ("Multiple IPv4 IPs", "", ["10.0.0.1", "10.0.0.2", "10.0.0.3"], ["10.0.0.1"]),
    ("Multiple Dual-Stack IPs", "", ["10.0.0.1", "10.0.0.2", "fd01::1234", "10.0.0.3",
                                     "fd01::5678"], ["10.0.0.1", "fd01::1234"]),
)

ROWS: tuple[Row, ...] = (
    *(
        Row(V_INDEX, "TestSortPodIPs", name, {"nodeIP": node_ip, "podIPs": ips},
            {"expectedIPs": expected}, fake=_FAKE)
        for name, node_ip, ips, expected in _SORT
    ),
    *(
        Row(V_INDEX, "TestGenerateAPIPodStatusPodIPs", name, {"nodeIP": node_ip,
            "criPodIPs": ips}, {"podIPs": expected}, fake=_FAKE,
            out_of_scope="the pod's API status (generateAPIPodStatus), not a CRI request; "
            "its order is sortPodIPs', which TestSortPodIPs's row of the same name checks "
            "through the downward API")
        for name, node_ip, ips, expected in _SORT
    ),
)

# Tests of this file not transcribed (yet), with the reason.
NOT_TRANSCRIBED = (
    ("TestMakeEnvironmentVariables",
     "transcribed from the newer version aba588cd (tests/upstream/kubelet_pods_env.py)"),
    ("TestMakeMounts and the volume tests",
     "TestMakeMounts drives Linux paths (bind propagation, /etc/hosts, SELinux) through a "
     "fake host util, in the version the index cannot read whole (aba588cd); the Windows "
     "table is transcribed from kubelet_pods_windows_test.go "
     "(tests/upstream/kubelet_pods_windows.py)"),
)
SOURCES = (V_INDEX,)
