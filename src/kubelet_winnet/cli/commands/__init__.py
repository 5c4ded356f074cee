"""One module per command; each defines ``COMMAND`` (a :class:`~kubelet_winnet.cli.session.Command`)
and imports downward only: never another command."""

__all__: list[str] = []
