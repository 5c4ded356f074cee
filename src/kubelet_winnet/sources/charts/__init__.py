"""Helm charts and kustomizations: what a chart or kustomization must be before a renderer
runs (``guard``), the renderer as a bounded child process (``process``), the rendering
itself (``render``) and where each rendered object was written (``origins``)."""

__all__: list[str] = []
