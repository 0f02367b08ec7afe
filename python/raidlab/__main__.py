"""``python -m raidlab``: the same as the ``raidlab`` command."""

import sys

if __name__ == "__main__":
    try:
        # Ctrl-C while the package (and its Rust core) is still loading gets the same one line
        # and status as Ctrl-C during a run, not an import traceback.
        from raidlab.cli import main
    except KeyboardInterrupt:
        sys.stderr.write("raidlab: error: interrupted\n")
        sys.exit(130)
    sys.exit(main())
