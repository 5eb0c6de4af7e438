"""Entry point of the per-file Python test targets: runs pytest on the one
suite file named on the command line (a runfiles path), from that file's
directory so its conftest.py and helper modules are found as in `make test`."""

import os
import sys

import pytest


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: pytest_main.py SUITE_FILE [pytest args...]", file=sys.stderr)
        return 2
    suite = os.path.abspath(sys.argv[1])
    os.chdir(os.path.dirname(suite))
    sys.path.insert(0, os.path.dirname(suite))
    return pytest.main(["-q", "-p", "no:cacheprovider", os.path.basename(suite), *sys.argv[2:]])


if __name__ == "__main__":
    sys.exit(main())
