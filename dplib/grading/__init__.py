"""Tools for running the course's nbgrader pipeline: throwaway course folders, releases, grades."""

from dplib.grading.course import (
    CellGrade,
    Course,
    assignments_in,
    notebooks_of,
)

__all__ = ["CellGrade", "Course", "assignments_in", "notebooks_of"]
