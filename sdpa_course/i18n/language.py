"""The language the course speaks to this learner: English unless told otherwise, chosen once.

``$SDPA_LANG`` (``en`` or ``zh``) decides; without it, a Chinese locale (``LC_ALL``,
``LC_MESSAGES`` or ``LANG`` starting with ``zh``) means Chinese.  ``sdpa-quiz --lang`` and
``sdpa-course --lang`` set it for their run (read before their parser is built, :func:`language_argument`, so
that their help is in that language too); in a notebook, :func:`set_language` sets it for the
kernel (the widgets and the quiz read it when they start).
"""
from __future__ import annotations

import os
from typing import Sequence

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


def language_argument(argv: Sequence[str]) -> str | None:
    """The language a command line asks for with ``--lang LANG`` or ``--lang=LANG`` (the last one), or None.

    A command reads it before it builds its parser, so that the help and the parser's messages are in that
    language (``sdpa-course check --lang zh --help``); a value that is not a language of the course is left to
    the parser to refuse.

    Examples
    --------
    >>> language_argument(["check", "5", "--lang", "zh"]), language_argument(["--lang=en"]), language_argument(["-h"])
    ('zh', 'en', None)
    """
    chosen = None
    for word, following in zip(argv, [*argv[1:], None]):
        value = following if word == "--lang" else word.removeprefix("--lang=") if word.startswith("--lang=") else None
        if value in LANGUAGES:
            chosen = value
    return chosen
