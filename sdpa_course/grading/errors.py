"""The two ways a graded check fails: a wrong answer, or a call to the forbidden reference."""


class GradingError(AssertionError):
    """A graded check failed; the message is the feedback the student reads.

    In a notebook, IPython shows it as its message alone (``_render_traceback_``): the frames
    of the grading code are no help to the learner, and the message names their own line.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[0;31m{type(self).__name__}\x1b[0m: {self}"]


class ForbiddenCallError(RuntimeError):
    """Raised when graded code calls the reference it is meant to re-implement."""
