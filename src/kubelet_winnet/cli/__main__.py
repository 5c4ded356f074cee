"""``python -m kubelet_winnet.cli``: the ``kubelet-winnet`` command."""

import sys

from kubelet_winnet.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    sys.exit(main())
