"""CRI ``runtime.v1`` messages; import them with ``from cri_api.runtime.v1 import api_pb2``."""
