"""sdpa_course: everything the scaled dot-product attention course needs around its reference library.

``sdpa_lib`` is the reference (numpy only) that students re-implement and grading compares
against; this package is the course built on it, one concern per module:

* :mod:`~sdpa_course.chapters` and :mod:`~sdpa_course.glossary`: the chapter table and the bilingual terms;
* :mod:`~sdpa_course.lessons`: the code the lecture notebooks call, one module per chapter topic;
* :mod:`~sdpa_course.plots` and :mod:`~sdpa_course.widgets`: figures and interactive explorers;
* :mod:`~sdpa_course.profiling`: the one timing rule and peak-memory measure;
* :mod:`~sdpa_course.grading`: the nbgrader checks, the mistake catalogue and the autograder;
* :mod:`~sdpa_course.quiz`: the interview question bank and its drill;
* :mod:`~sdpa_course.cli`: the ``sdpa-course`` command (grade, check, progress);
* :mod:`~sdpa_course.progress_store`: the scores ``check`` remembers for ``progress``, per course folder;
* :mod:`~sdpa_course.json_file`: one JSON file several processes update (quiz answers, check scores);
* :func:`sdpa_course.replay`: a failed hidden test case, drawn again in the learner's notebook;
* :mod:`~sdpa_course.i18n`: the course in Chinese (the language is chosen once: ``$SDPA_LANG``).
"""
from .i18n.language import spoken_language as _spoken_language

if _spoken_language() == "zh":  # Chinese labels in the figures of every notebook that uses the course
    from .i18n.figures import use_chinese_fonts as _use_chinese_fonts
    _use_chinese_fonts()


def __getattr__(name: str):
    """``sdpa_course.replay``, imported on first use (it brings in the grading package)."""
    if name == "replay":
        from .replaying import replay
        return replay
    raise AttributeError(f"module 'sdpa_course' has no attribute {name!r}")
