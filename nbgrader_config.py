"""nbgrader configuration: this repository is an nbgrader course directory.

solutions/<assignment>/  is the instructor's source (nbgrader's "source" step),
exercises/<assignment>/  is what `nbgrader generate_assignment` makes of it (the release step),
and students' work is collected under submitted/, graded into autograded/, feedback/ (git-ignored).
"""
from pathlib import Path

from sdpa_course.chapters import CHAPTERS  # the one list of chapters (sdpa_course is installed with the course)

c = get_config()  # noqa: F821  (provided by nbgrader when it loads this file)

c.CourseDirectory.course_id = "sdpa"
c.CourseDirectory.root = str(Path(__file__).resolve().parent)
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
# The assignments, one per chapter (nbgrader 0.9 adds each to the gradebook when it is generated).
ASSIGNMENTS = [chapter.assignment for chapter in CHAPTERS]

# The release keeps the stubs and the visible tests; solution regions become NotImplementedError.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Grading: restore deleted test cells, and don't take points for harmless warnings on stderr.
c.OverwriteCells.add_missing_cells = True
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"\w*Warning:"
# The verdict is decided outside the student's process (sdpa_course/grading/trusted_execute.py): the
# student's cells run in their kernel, each test cell runs here from the gradebook's source, and calls
# the student's functions in the kernel on data.  The rest of the pipeline is nbgrader's own.
c.Autograde.autograde_preprocessors = [
    "sdpa_course.grading.trusted_execute.TrustedExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
# A cell that loops forever is stopped and scores 0; the others still run.
c.Execute.timeout = 60
c.Execute.interrupt_on_timeout = True
c.LimitOutput.max_lines = 200
c.LimitOutput.max_traceback = 60

# A submission may not bring its own modules: a stray sdpa_lib.py, sdpa_course/ or numpy/ beside the notebook
# would shadow the reference the tests compare against.  These files are not copied for grading.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback",
                            "*.py", "*.pth", "*.so", "sdpa_lib*", "sdpa_course*", "numpy*"]

# Feedback shows each failed test's message, not the hidden tests' source (see sdpa_course/grading/feedback.py).
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "sdpa_course.grading.feedback.ShowOnlyErrorMessages",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
