"""Shared pytest set-up: a non-interactive matplotlib backend for every test."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")
