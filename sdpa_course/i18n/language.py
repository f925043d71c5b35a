"""The language the course speaks to this learner: English unless told otherwise, chosen once.

``$SDPA_LANG`` (``en`` or ``zh``) decides; without it, a Chinese locale (``LC_ALL``,
``LC_MESSAGES`` or ``LANG`` starting with ``zh``) means Chinese.  ``sdpa-quiz --lang`` and
``sdpa-course --lang`` set it for their run; in a notebook, :func:`set_language` sets it for the
kernel (the widgets and the quiz read it when they start).
"""
from __future__ import annotations

import os

LANGUAGE_ENV = "SDPA_LANG"
LANGUAGES = ("en", "zh")


def current_language() -> str:
    chosen = os.environ.get(LANGUAGE_ENV, "").strip().lower()
    if chosen:
        if chosen not in LANGUAGES:
            raise ValueError(f"{LANGUAGE_ENV}={chosen!r} is not a language of the course; use one of {', '.join(LANGUAGES)}")
        return chosen
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(name, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def spoken_language() -> str:
    """:func:`current_language`, or English when ``$SDPA_LANG`` is not a language of the course (reported where a
    command uses the language, not at import)."""
    try:
        return current_language()
    except ValueError:
        return "en"


def set_language(language: str) -> None:
    """Speak ``language`` ("en" or "zh") from now on in this process (and the processes it starts)."""
    if language not in LANGUAGES:
        raise ValueError(f"no language {language!r}; the course speaks {', '.join(LANGUAGES)}")
    os.environ[LANGUAGE_ENV] = language


def language_from_argv(argv) -> str | None:
    """The value of ``--lang`` in ``argv`` (``--lang zh`` or ``--lang=zh``; the last one given), or None.

    A command reads it before it builds its parser, so that even its ``--help`` speaks that language; the
    parser still checks the value.
    """
    found = None
    arguments = list(argv)
    for index, argument in enumerate(arguments):
        if argument == "--":
            break
        if argument == "--lang" and index + 1 < len(arguments):
            found = arguments[index + 1]
        elif argument.startswith("--lang="):
            found = argument.split("=", 1)[1]
    return found
