"""``python -m pystanprivacy``: the command line of :mod:`pystanprivacy.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
