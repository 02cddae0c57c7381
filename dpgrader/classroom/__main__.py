"""``python -m dpgrader.classroom``: the instructor's command line."""

import sys

from dpgrader.classroom.cli import main

if __name__ == "__main__":
    sys.exit(main())
