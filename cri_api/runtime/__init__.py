"""The CRI ``runtime`` protobuf package."""
