"""A cluster's nodes and pods: a live API server through the ``kubernetes`` client
(``kube_client``) or a ``kubectl get -o json`` dump (``source``)."""

__all__: list[str] = []
