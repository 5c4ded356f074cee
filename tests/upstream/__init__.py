"""The kubelet's own table-driven unit tests, transcribed as data and run through the
public API at every kubelet minor their release covers.

One data module per upstream test file (``kuberuntime_container_windows.py`` for
``pkg/kubelet/kuberuntime/kuberuntime_container_windows_test.go``, ...), one runner
``test_*.py`` per data module; :mod:`tests.upstream.catalog` lists them for the generated
conformance page (``docs/conformance.md``).
"""
