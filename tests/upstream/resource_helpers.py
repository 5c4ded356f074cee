"""pkg/api/v1/resource/helpers_test.go TestExtractResourceValue, as data: the downward
API's resourceFieldRef of a container named by containerName, a regular container or an
init container (findContainerInPod), read at the index's 39,278-character version (index
id 361390901, reported without a commit).

Upstream calls ExtractResourceValueByContainerName on its getPod(cname, podResources):
one container "foo" and one init container "init-foo" with the same resources, no API
defaulting. Here the same pod goes through container_config: container "foo" asks for
the row's resource of the row's container by containerName. Every row names its limits
where it reads one, so the kubelet's allocatable default (defaultPodLimitsForDownwardAPI,
which upstream's helper does not apply) changes nothing; the values are small integers,
the same under 1.26-1.37's float division and 1.38's exact one.
"""

from __future__ import annotations

from typing import Any

from tests.upstream.rows import Row, Source

FILE = "pkg/api/v1/resource/helpers_test.go"

V_INDEX = Source(
    FILE,
    "index-361390901",
    tuple(range(26, 39)),
    "findContainerInPod has searched init containers after containers, and the table's "
    "values are whole numbers that float64 and exact division agree on, in every release "
    "modelled",
)

# (resource, divisor, cName, podResources as limits/requests, expected value)
_CASES: tuple[tuple[str, str | None, str, dict[str, Any], str], ...] = tuple(
    (resource, divisor, name, resources, want)
    for name in ("foo", "init-foo")
    for resource, divisor, resources, want in (
        ("limits.cpu", None, {"limits": {"cpu": "9"}}, "9"),
        ("requests.cpu", None, {}, "0"),
        ("requests.cpu", None, {"requests": {"cpu": "8"}}, "8"),
        ("requests.cpu", None, {"requests": {"cpu": "100m"}}, "1"),
        ("requests.cpu", "100m", {"requests": {"cpu": "1200m"}}, "12"),
        ("requests.memory", None, {"requests": {"memory": "100Mi"}}, "104857600"),
        ("requests.memory", "1Mi", {"requests": {"memory": "100Mi"},
                                    "limits": {"memory": "1Gi"}}, "100"),
        ("limits.memory", None, {"requests": {"memory": "10Mi"},
                                 "limits": {"memory": "100Mi"}}, "104857600"),
    )
)

ROWS: tuple[Row, ...] = tuple(
    Row(V_INDEX, "TestExtractResourceValue",
        f"(case {index}: {name} {resource}{'' if divisor is None else ' / ' + divisor})",
        {"resource": resource, "divisor": divisor, "containerName": name,
         "resources": resources},
        {"value": want})
    for index, (resource, divisor, name, resources, want) in enumerate(_CASES)
)
SOURCES = (V_INDEX,)
