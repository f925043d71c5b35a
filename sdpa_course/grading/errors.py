"""The two ways a graded check fails: a wrong answer, or a call to the forbidden reference."""


class GradingError(AssertionError):
    """A graded check failed; the message is the feedback the student reads."""


class ForbiddenCallError(RuntimeError):
    """Raised when graded code calls the reference it is meant to re-implement."""
