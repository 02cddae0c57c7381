"""``python -m dplib.grading.classroom``: the instructor's command line."""

import sys

from dplib.grading.classroom.cli import main

if __name__ == "__main__":
    sys.exit(main())
