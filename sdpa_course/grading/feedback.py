"""nbgrader feedback that shows each failed test's message, never the hidden tests' source.

nbgrader's feedback is the autograded notebook rendered to HTML, hidden tests and all
(the grade cells are restored from the gradebook before execution), and an IPython
traceback quotes the lines around the failure.  Configured in nbgrader_config.py, the
preprocessors below run in ``nbgrader generate_feedback``: ClearHiddenTests removes the
hidden regions and :class:`ShowOnlyErrorMessages` keeps only ``ErrorName: message`` of
each error, which is the feedback our checks write for the student.
"""
from __future__ import annotations

from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade


class ShowOnlyErrorMessages(NbGraderPreprocessor):
    """Replace every grade cell's error traceback by its one-line ``ename: evalue``."""

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == "code" and is_grade(cell):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
        return cell, resources
