"""nbgrader configuration of the Chinese edition: the course's own configuration, rooted in this folder.

zh/solutions/ (generated from solutions/ and the catalogs by `scripts/translate.py build`) is the source,
zh/exercises/ the release (`python scripts/generate_exercises.py --lang zh`); an instructor runs nbgrader and
`sdpa-course grade --course zh` here exactly as in the English course, and the scores are the same.
"""
from pathlib import Path

from sdpa_course.i18n.language import set_language

load_subconfig(str(Path(__file__).resolve().parents[1] / "nbgrader_config.py"))  # noqa: F821 (given by traitlets)
c = get_config()  # noqa: F821
c.CourseDirectory.root = str(Path(__file__).resolve().parent)
# The Chinese course speaks Chinese: whatever loads this configuration (nbgrader, the grading worker) writes its
# grading messages, hints and feedback in Chinese, whatever the instructor's own locale.
set_language("zh")
