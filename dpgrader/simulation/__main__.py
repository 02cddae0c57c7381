"""``python -m dpgrader.simulation``: build and grade the made-up class (``make demo``)."""

import sys

from dpgrader.simulation.demo import main

if __name__ == "__main__":
    sys.exit(main())
