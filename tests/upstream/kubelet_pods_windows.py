"""pkg/kubelet/kubelet_pods_windows_test.go, as data: TestMakeMountsWindows (the container
and host paths ``makeMounts`` gives each volume mount on Windows).

Two stored versions. 05c351a9 calls ``makeMounts(&pod, "/pod", &container, "fakepodname",
"", []string{""}, podVolumes, fhu, fsp, nil, false)``: the trailing ``supportsRRO`` argument
arrived with RecursiveReadOnlyMounts (1.30) and the ``imageVolumes`` one (1.31) is not there
yet, so it is the 1.30 table. 843c0752 passes ``podIP`` as one string and uses
``mount.FakeHostUtil``: a pre-1.26 kubelet.

Fakes: ``stubVolume{path}`` is a mounter whose ``GetPath`` is ``path`` and whose
``GetAttributes()`` is the zero value (not read-only) -> an ``emptyDir`` volume (also not
read-only) with ``volume_paths[name] = path``. The test's pod has hostNetwork and pod IPs
``[""]``, so a kubelet adds the hosts mount after these; the table's expected list stops
before it, and the rows compare the volume mounts only (``note``).
"""

from __future__ import annotations

from tests.upstream.rows import Row, Source

FILE = "pkg/kubelet/kubelet_pods_windows_test.go"

V_130 = Source(
    FILE,
    "05c351a9037bd79bf88c56171a951c3097b658da",
    (30,),
    "makeMounts takes supportsRRO (RecursiveReadOnlyMounts, 1.30) but not imageVolumes "
    "(ImageVolume, 1.31)",
)
V_OLD = Source(
    FILE,
    "843c0752dfaa6e58323096947bb76d02de76d4e0",
    (),
    "makeMounts takes a single podIP string and the test uses mount.FakeHostUtil: older "
    "than every modelled kubelet (1.26+)",
)

_FAKE = ("stubVolume{path} -> an emptyDir volume with volume_paths[name] = path (GetAttributes "
         "not read-only, as stubVolume's zero value)")
_NOTE = "the hosts mount a hostNetwork pod gets after these is not in the table; not compared"

# (mountPath, volume name, readOnly, stub path, expected containerPath, expected hostPath)
_MOUNTS = (
    ("c:/etc/hosts", "disk", False, "c:/mnt/disk", "c:/etc/hosts", "c:/mnt/disk"),
    ("c:/mnt/path3", "disk", True, "c:/mnt/disk", "c:/mnt/path3", "c:/mnt/disk"),
    ("c:/mnt/path4", "disk4", False, "c:/mnt/host", "c:/mnt/path4", "c:/mnt/host"),
    ("c:/mnt/path5", "disk5", False, "c:/var/lib/kubelet/podID/volumes/empty/disk5",
     "c:/mnt/path5", "c:/var/lib/kubelet/podID/volumes/empty/disk5"),
    ("\\mnt\\path6", "disk6", False, "/mnt/disk6", "c:\\mnt\\path6", "c:/mnt/disk6"),
    ("/mnt/path7", "disk7", False, "\\mnt\\disk7", "c:/mnt/path7", "c:\\mnt\\disk7"),
    ("\\\\.\\pipe\\pipe1", "pipe1", False, "\\\\.\\pipe\\pipe1", "\\\\.\\pipe\\pipe1",
     "\\\\.\\pipe\\pipe1"),
)

ROWS: tuple[Row, ...] = (
    *(
        Row(V_130, "TestMakeMountsWindows", f"volumeMounts[{index}] {mount_path}",
            {"mountPath": mount_path, "name": name, "readOnly": read_only, "stubPath": stub},
            {"containerPath": container_path, "hostPath": host_path, "readOnly": read_only,
             "selinuxRelabel": False},
            fake=_FAKE, note=_NOTE)
        for index, (mount_path, name, read_only, stub, container_path, host_path)
        in enumerate(_MOUNTS)
    ),
    Row(V_OLD, "TestMakeMountsWindows", "(whole table)", {}, {},
        out_of_scope=V_OLD.evidence),
)
SOURCES = (V_130, V_OLD)
