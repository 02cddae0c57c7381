"""The bundle of an assignment: what a worker needs to grade any submission of it, and nothing of anyone's.

A worker builds each task's scratch course from two things only: the submission's own files (the
:class:`~dpgrader.grading.task.PackedTask`) and its assignment's :class:`~dpgrader.grading.task.AssignmentBundle`,
made here once per grading run: the course's ``nbgrader_config.py``, the regular files of
``source/<assignment>/``, and a gradebook that knows this assignment (its notebooks, cells, source
cells with their checksums, and due date, copied from the course's gradebook) and no student. So a
worker on another machine needs no shared filesystem and never sees a classmate's grade.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from dpgrader.course import Course
from dpgrader.gradebook import stamp_new_gradebooks_in_process
from dpgrader.grading.task import AssignmentBundle, Files


def source_files(course: Course, assignment: str) -> Files:
    """Every regular file under ``source/<assignment>/`` (no link followed), by path in a scratch course."""
    root = course.root
    found = {}
    for folder, subfolders, names in os.walk(course.source(assignment)):
        subfolders[:] = sorted(d for d in subfolders if not Path(folder, d).is_symlink())
        for name in sorted(names):
            path = Path(folder, name)
            if path.is_file() and not path.is_symlink():
                found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def template_gradebook(course: Course, assignment: str, target: Path) -> Path:
    """A gradebook at ``target`` holding ``assignment`` as the course's gradebook has it, and no student."""
    from nbgrader.api import Gradebook

    stamp_new_gradebooks_in_process()
    with Gradebook(course.gradebook_url) as known:
        original = known.find_assignment(assignment)
        with Gradebook(f"sqlite:///{target}", course_id=original.course_id) as template:
            template.update_or_create_assignment(assignment, duedate=original.duedate)
            for notebook in original.notebooks:
                template.update_or_create_notebook(notebook.name, assignment, kernelspec=notebook.kernelspec)
                for cell in notebook.grade_cells:
                    template.update_or_create_grade_cell(cell.name, notebook.name, assignment,
                                                         max_score=cell.max_score, cell_type=cell.cell_type)
                for cell in notebook.task_cells:
                    template.update_or_create_task_cell(cell.name, notebook.name, assignment,
                                                        max_score=cell.max_score, cell_type=cell.cell_type)
                for cell in notebook.solution_cells:
                    template.update_or_create_solution_cell(cell.name, notebook.name, assignment)
                for cell in notebook.source_cells:
                    template.update_or_create_source_cell(cell.name, notebook.name, assignment, cell_type=cell.cell_type,
                                                          locked=cell.locked, source=cell.source, checksum=cell.checksum)
    return target


def assignment_bundle(course: Course, assignment: str) -> AssignmentBundle:
    """The bundle every task of ``assignment`` is graded with (the course's gradebook must know the assignment)."""
    with tempfile.TemporaryDirectory(prefix="dpgrader-bundle-") as folder:
        gradebook = template_gradebook(course, assignment, Path(folder) / Course.GRADEBOOK).read_bytes()
    files = {Course.CONFIG: course.config_file.read_bytes(), **source_files(course, assignment),
             Course.GRADEBOOK: gradebook}
    return AssignmentBundle(assignment, files)
