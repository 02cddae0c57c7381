"""Helpers used only by the test suite (pipeline checks, variant grading); not part of dplib."""
