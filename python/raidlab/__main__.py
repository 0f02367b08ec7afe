"""``python -m raidlab``: the same as the ``raidlab`` command."""

import sys

from raidlab.cli import main

if __name__ == "__main__":
    sys.exit(main())
