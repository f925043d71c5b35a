"""Grade a coding drill from the learner's source text: one path for the terminal and the notebook.

:func:`grade_drill` never runs the learner's code in this process.  It compiles the source here
(compiling runs nothing: a syntax error is reported without starting a kernel), then runs it in a
kernel of its own (:func:`~sdpa_course.grading.learner_kernel.learner_kernel`: in the bubblewrap
sandbox where it works, with an ``sdpa_lib`` whose :attr:`~sdpa_course.quiz.drills.Drill.absent`
functions have no code, the course package out of reach), and grades each function the drill
asks for with its task's :meth:`~sdpa_course.grading.task.Task.check_random` here, on
:class:`~sdpa_course.grading.remote.RemoteFunction` proxies: the cases are drawn, the reference
computed, the outputs compared and the mistakes named in this process, from the data the kernel
sends back.  Patching numpy in the kernel, or replacing the grader's agent there, changes
nothing but what the learner's own functions return.

Every outcome is a :class:`DrillResult`, never an exception: a syntax error, a missing function,
the template's ``NotImplementedError``, a call of an absent ``sdpa_lib`` function, code that
runs past the time limit, an error raised, a wrong answer (the grading engine's teaching
message for the first failure, with its smallest failing case).
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..grading.errors import ForbiddenCallError, GradingError
from ..grading.remote import RemoteFunction, StudentError, StudentTimeout
from ..i18n.messages import _
from .drills import Drill

DEFAULT_TIMEOUT = 20.0  # seconds the source, or one round of calls, may take

PASSED = "passed"
SYNTAX = "syntax error"
RAISED_ON_LOAD = "error when loaded"
MISSING = "missing function"
NOT_IMPLEMENTED = "not implemented"
ABSENT = "called the reference"
TIMEOUT = "time limit"
WRONG = "wrong"
NOT_GRADED = "not graded"
COULD_NOT_GRADE = "could not grade"  # the grading's own failure (no kernel, no sandbox under strict): not an attempt


@dataclass(frozen=True)
class DrillResult:
    """What grading a drill's source found.

    ``problem`` is :data:`PASSED` or the kind of failure (:data:`SYNTAX`, :data:`WRONG`, ...; :data:`COULD_NOT_GRADE`
    when the grading itself failed, which is not the learner's attempt);
    ``message`` the grading engine's teaching message for the first failure, or the pass
    summary; ``cases`` the random cases graded right; ``seconds`` the time grading took;
    ``note`` which protection was off (no sandbox here), or "".
    """
    passed: bool
    problem: str
    message: str = field(repr=False)
    cases: int = 0
    seconds: float = field(default=0.0, repr=False)
    note: str = field(default="", repr=False)


def protection_note() -> str:
    """"" where the sandbox works; else the sentence saying which protections are off while the learner's code runs."""
    from ..grading.sandbox import sandbox_status
    status = sandbox_status()
    if status.usable:
        return ""
    return _("{sandbox} The verdict is still decided outside your code.").format(sandbox=status.fallback_sentence())


def syntax_problem(source: str, filename: str) -> str | None:
    """Why ``source`` does not compile, with the line and a caret; None when it does.  Compiling runs nothing."""
    try:
        compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as error:
        where = _("{file}, line {line}").format(file=filename, line=error.lineno) if error.lineno else filename
        lines = [f"{where}: {type(error).__name__}: {error.msg}"]
        if error.text:
            lines.append(f"    {error.text.rstrip()}")
            if error.offset:
                lines.append("    " + " " * (error.offset - 1) + "^")
        return "\n".join(lines)
    except (ValueError, RecursionError, MemoryError) as error:  # a NUL byte; nesting too deep to parse
        return _("{file} cannot be compiled: {error_type}: {error}").format(
            file=filename, error_type=type(error).__name__, error=error)
    return None


def grade_drill(drill: Drill, source: str, *, timeout: float = DEFAULT_TIMEOUT, filename: str | None = None,
                rng: np.random.Generator | None = None, strict: bool = False) -> DrillResult:
    """Grade ``source`` (the learner's whole file or cell) as the answer to ``drill``.

    Parameters
    ----------
    drill : Drill
    source : str
        Python source defining the drill's functions (:attr:`Drill.functions`).
    timeout : float
        Seconds that running the source, or one round of calls of a function, may take.
    filename : str, optional
        The name the source's lines are quoted under; default :attr:`Drill.filename`.
    rng : numpy.random.Generator, optional
        Draws the seeds of the random cases; default the grading generator (fresh seeds).
    strict : bool
        Refuse to grade (``problem`` :data:`NOT_GRADED`) where the sandbox is not available.

    Returns
    -------
    DrillResult
        Passed only when every function is right on every random case.
    """
    started = time.monotonic()
    filename = filename or drill.filename
    note = protection_note()

    def result(problem: str, message: str, cases: int = 0) -> DrillResult:
        return DrillResult(problem == PASSED, problem, message, cases, time.monotonic() - started, note)

    if not isinstance(source, str):
        return result(NOT_GRADED, _("expected the source code as text, got {type}").format(type=type(source).__name__))
    problem = syntax_problem(source, filename)
    if problem:
        return result(SYNTAX, _("syntax error: your code does not compile, so nothing was run.") + f"\n{problem}")
    from ..grading.learner_kernel import KernelDied, learner_kernel
    from ..grading.sandbox import SandboxUnavailableError, SandboxUnavailableWarning
    name = None  # the function being graded; None while the file itself runs
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SandboxUnavailableWarning)  # said once, in ``note``
            with learner_kernel(drill.absent, timeout=timeout, strict=strict) as kernel:
                raised = kernel.run(source, filename)
                if raised is not None:
                    return result(RAISED_ON_LOAD, _load_error(raised, filename))
                found = kernel.functions(drill.functions)
                for name in drill.functions:
                    if not isinstance(found.get(name), RemoteFunction):
                        return result(MISSING, _missing(drill, name, found.get(name)))
                counts = []
                for name, graded in zip(drill.functions, drill.tasks):
                    counts.append(graded.check_random(found[name], rng=rng))
    except NotImplementedError:
        return result(NOT_IMPLEMENTED, _("not implemented yet: {function} still raises NotImplementedError (the "
                                         "template's stub). Replace that line with your code.").format(
            function=name or _("your code")))
    except ForbiddenCallError as error:
        return result(ABSENT, _("{function} called a function that is absent while drills are graded: {error}").format(
            function=name or _("your code"), error=error))
    except StudentTimeout:
        where = _("running your file") if name is None else _("{function} on the grading cases").format(function=name)
        return result(TIMEOUT, _("time limit: {what} did not finish within {seconds:g} s. Look for a loop that "
                                 "never ends (a while loop whose condition never changes, a range that never runs "
                                 "out), or work that grows much faster than the inputs.").format(what=where,
                                                                                                seconds=timeout))
    except KernelDied as error:
        return result(NOT_GRADED if name is None else WRONG, f"{name or _('your code')}: {error}")
    except SandboxUnavailableError as error:
        return result(COULD_NOT_GRADE, _("not graded: {error} (strict: the drill runs only in the sandbox)").format(
            error=error))
    except GradingError as error:
        return result(WRONG, f"{name}: {error}")
    except StudentError as error:
        return result(WRONG, _("{function} raised {error}").format(function=name or _("your code"), error=error))
    except Exception as error:  # the kernel would not start, say: report it, never crash the quiz
        return result(COULD_NOT_GRADE, _("grading could not run: {error_type}: {error}").format(
            error_type=type(error).__name__, error=error))
    total = sum(counts)
    each = ", ".join(f"{function} {count}" for function, count in zip(drill.functions, counts))
    return result(PASSED, _("passed: right on all {total} random cases ({each}), graded in {seconds:.1f} s.").format(
        total=total, each=each, seconds=time.monotonic() - started), total)


def _load_error(raised: StudentError, filename: str) -> str:
    """Running the source raised: the error and the learner's lines of the traceback."""
    lines = [line for line in "\n".join(raised.frames).splitlines() if line.strip()]
    own = [i for i, line in enumerate(lines) if line.lstrip().startswith(f"File {filename}:")]  # IPython's frame header
    shown = lines[own[0]:] if own else lines[-4:]
    return (_("your file raised {error_type} when it ran, before any check: {error}").format(
        error_type=raised.ename, error=raised.evalue) + "\n" + "\n".join(f"    {line}" for line in shown[-8:])).rstrip()


def _missing(drill: Drill, name: str, found) -> str:
    if found is None:
        defined = "" if len(drill.functions) == 1 else _(" (this drill asks for {functions})").format(
            functions=", ".join(drill.functions))
        return _("missing function: your code defines no {function}{asked}. Keep the name and the signature of the "
                 "template.").format(function=name, asked=defined)
    return _("missing function: {function} in your code is not a function ({found}); keep the template's def "
             "{function}(...).").format(function=name, found=repr(found))


__all__ = ["COULD_NOT_GRADE", "DEFAULT_TIMEOUT", "DrillResult", "grade_drill", "protection_note", "syntax_problem"]
