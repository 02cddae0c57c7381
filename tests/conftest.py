"""Shared pytest set-up: a non-interactive matplotlib backend, and the bundled datasets as fixtures."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import pytest  # noqa: E402

from dplib.datasets import load_adult_with_pii, load_voter_roll  # noqa: E402


@pytest.fixture(scope="module")
def people():
    """The Adult train split with made-up PII."""
    return load_adult_with_pii()


@pytest.fixture(scope="module")
def voters():
    """The made-up public voter roll."""
    return load_voter_roll()
