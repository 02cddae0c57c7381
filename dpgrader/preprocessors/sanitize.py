"""Sanitizing plug-ins (run before anything executes): metadata repaired, the instructor's cells restored.

:class:`SanitizeMetadata` replaces nbgrader's ``DeduplicateIds``, :class:`RestoreCells`
replaces ``OverwriteCells`` (the package docstring, :mod:`dpgrader.preprocessors`, says why).
"""

from __future__ import annotations

from nbformat.notebooknode import NotebookNode
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor, OverwriteCells
from traitlets import Bool

from dpgrader.cells import grade_id_of, nbgrader_metadata, visible_lines
from dpgrader.preprocessors.source_notebook import SourceNotebook


class SanitizeMetadata(NbGraderPreprocessor):
    """Trust nothing in a submitted cell's nbgrader metadata but its ``grade_id``.

    - metadata that is not a dict, has no ``grade_id`` or an id the gradebook does not
      know is removed (the cell is graded as ordinary code);
    - of several cells with the same id (copy-paste keeps the metadata), the last keeps
      it, as nbgrader's ``DeduplicateIds`` intends, and the others lose it *entirely*;
    - the kept metadata is rebuilt from the gradebook (flags, points, type, schema
      version), so hand-edited or outdated metadata cannot abort the run.
    """

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        source = SourceNotebook(resources)
        last_copy = {}
        for index, cell in enumerate(nb.cells):
            if grade_id_of(cell) in source.by_name:
                last_copy[grade_id_of(cell)] = index
        for index, cell in enumerate(nb.cells):
            if "nbgrader" not in cell.metadata:
                continue
            grade_id = grade_id_of(cell)
            if last_copy.get(grade_id) != index:
                reason = "a duplicate of a later cell" if grade_id in last_copy else "unknown to the gradebook"
                self.log.warning("Cell %d (grade_id %r) is %s: graded as ordinary code", index, grade_id, reason)
                del cell.metadata["nbgrader"]
                continue
            cell.metadata["nbgrader"] = source.metadata(grade_id)
        return nb, resources


class RestoreCells(OverwriteCells):
    """nbgrader's ``OverwriteCells``, with missing cells put back robustly.

    Every missing test cell (and, unlike nbgrader, every missing read-only cell such
    as the imports at the top) comes back from the gradebook, right after the closest
    earlier cell of the source notebook that the submission still has (at the top if
    none), so an empty notebook or a deleted exercise with its tests is still graded.
    """

    restore_read_only_cells = Bool(True, help="Also put back deleted read-only cells.").tag(config=True)

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        """An untouched released test cell gets its hidden tests back silently.

        nbgrader stores a test cell's checksum *with* its hidden tests, so every untouched
        release cell looks changed and nbgrader warns "checksum has changed" for each; the
        cell is restored either way, so the warning is kept for real edits only.
        """
        grade_id = grade_id_of(cell)
        if grade_id is not None:
            try:
                source_cell = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:
                source_cell = None
            if source_cell is not None and source_cell.locked and visible_lines(cell.source) == visible_lines(
                    source_cell.source, drop_hidden=True):
                cell.source = source_cell.source
        return super().preprocess_cell(cell, resources, index)

    def add_missing_grade_cells(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        source = SourceNotebook(resources)
        source_cells = self.gradebook.find_notebook(self.notebook_id, self.assignment_id).source_cells
        for position, wanted in enumerate(source.cells):
            name = wanted["name"]
            if name not in source.points and not (self.restore_read_only_cells and source.is_read_only(name)):
                continue
            present = {grade_id_of(cell): i for i, cell in enumerate(nb.cells) if "grade_id" in nbgrader_metadata(cell)}
            if name in present:
                continue
            where = 0
            for earlier in reversed(source.cells[:position]):
                if earlier["name"] in present:
                    where = present[earlier["name"]] + 1
                    break
            self.log.warning("Missing cell %s: put back from the gradebook", name)
            if name in source.points:
                cell = self.missing_cell_transform(
                    source_cells[position], source.points[name], is_solution=name in source.solutions
                )
            else:
                cell = self._read_only_cell(source, name)
            nb.cells.insert(where, cell)
        return nb, resources

    def _read_only_cell(self, source: SourceNotebook, name: str) -> NotebookNode:
        wanted = source.by_name[name]
        cell = NotebookNode(
            cell_type=wanted["cell_type"],
            metadata=NotebookNode(deletable=False, editable=False, nbgrader=NotebookNode(source.metadata(name))),
            source=wanted["source"],
        )
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        return cell

