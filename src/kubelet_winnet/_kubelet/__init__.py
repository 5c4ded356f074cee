"""The kubelet model: what a kubelet decides and sends for a pod, as data plus pure
functions. No I/O: nothing here imports yaml, kubernetes, grpc, ctypes or argparse."""

__all__: list[str] = []
