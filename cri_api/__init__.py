"""Vendored, wire-compatible subsets of the Kubernetes CRI protobuf API."""
