"""The course's command lines in the learner's language: argparse's own words too.

argparse writes a few words of its own into every help and error ("usage:", "options", "show this
help message and exit", "error:"), in English.  :class:`TranslatedParser` gives them as the
course's messages; its subcommands' parsers are of the same class.  Build it once the language is
known (:func:`~sdpa_course.i18n.language.language_argument`): the help is translated when the
parser is made.
"""
from __future__ import annotations

import argparse
import sys

from .messages import _


class TranslatedFormatter(argparse.HelpFormatter):
    """argparse's help formatter with the usage line's "usage: " translated."""

    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, _("usage: ") if prefix is None else prefix)


class TranslatedParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose section titles, ``-h`` help, usage and error line are in the learner's language.

    The messages argparse makes of a bad command line (an invalid choice, a missing argument) stay argparse's.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, formatter_class=TranslatedFormatter, add_help=False, **kwargs)
        self._positionals.title = _("positional arguments")
        self._optionals.title = _("options")
        self.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS,
                          help=_("show this help message and exit"))

    def error(self, message: str):
        self.print_usage(sys.stderr)
        self.exit(2, _("{program}: error: {message}").format(program=self.prog, message=message) + "\n")
