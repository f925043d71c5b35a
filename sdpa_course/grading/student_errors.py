"""A Python error raised by the student's function, told in one short paragraph instead of a traceback.

:func:`explain_error` names the student's line that raised (the innermost frame of their
own code, not numpy's or the grader's), the input shapes, and, for the errors numpy code
meets most, the likely cause: a sum without ``keepdims``, ``.T`` on a batched array,
``B, L, E = x.shape`` on an input with more axes, ``np.dot`` on a batch.
"""
from __future__ import annotations

import re
import traceback
from typing import Mapping, Sequence

import numpy as np

from ..i18n.messages import _

LIBRARY_PARTS = ("site-packages", "dist-packages", "/lib/python", "<sdpa grader")
REDUCTION = re.compile(r"\b(sum|max|min|mean|amax|amin|logsumexp|prod)\(")


def frames_of(error: BaseException) -> list[list]:
    """``[file, line, function, text]`` of each frame of a local exception's traceback, outermost first."""
    return [[f.filename, f.lineno, f.name, f.line or ""] for f in traceback.extract_tb(error.__traceback__)]


def student_frame(frames: Sequence[Sequence]) -> Sequence | None:
    """The innermost frame that is the student's code (not a library's, not the grader's), or None."""
    own = [frame for frame in frames if not any(part in str(frame[0]) for part in LIBRARY_PARTS)
           and "sdpa_course" not in str(frame[0])]
    return own[-1] if own else None


def shapes_of(inputs: Mapping[str, object]) -> str:
    def one(value):
        if isinstance(value, np.ndarray):
            return f"{value.shape} {value.dtype}"
        return repr(value) if len(repr(value)) <= 40 else type(value).__name__
    return ", ".join(f"{name} {one(value)}" for name, value in inputs.items())


def _dropped_axis(evalue: str) -> bool:
    """Whether the shapes of a broadcast error differ by one axis removed (what a reduction without keepdims does)."""
    shapes = [tuple(int(n) for n in re.findall(r"\d+", group)) for group in re.findall(r"\(([\d, ]*)\)", evalue)]
    for longer in shapes:
        for shorter in shapes:
            if len(longer) == len(shorter) + 1 and any(longer[:k] + longer[k + 1:] == shorter for k in range(len(longer))):
                return True
    return False


def likely_cause(ename: str, evalue: str, line: str, inputs: Mapping[str, object]) -> str:
    """What usually causes this error on this line, or "" when nothing specific fits."""
    batched = any(isinstance(v, np.ndarray) and v.ndim > 2 for v in inputs.values())
    if ".T" in line and batched and ("matmul" in evalue or "broadcast" in evalue or "aligned" in evalue):
        return _("x.T reverses every axis of a batched array ((B, S, E).T is (E, S, B)); swap only the last two: "
                 "np.swapaxes(key, -1, -2).")
    if "broadcast" in evalue and (REDUCTION.search(line) and "keepdims" not in line or _dropped_axis(evalue)):
        return _("a sum or max along an axis drops that axis, so (..., N) and (...,) no longer line up; pass "
                 "keepdims=True to keep it as length 1.")
    if "values to unpack" in evalue and ".shape" in line:
        return _("unpacking x.shape into a fixed number of names assumes that many axes; take only the axes you need "
                 "from the end (L, E = x.shape[-2:]) and let ... or -1 carry the batch axes.")
    if "outer(" in line:
        return _("np.outer flattens its inputs; for a batch of outer products write p[..., :, None] * p[..., None, :].")
    if "not aligned" in evalue:
        return _("np.dot on arrays with batch axes is not a batched matmul; use @ (np.matmul), which batches the "
                 "leading axes.")
    if "matmul" in evalue:
        return _("for a @ b the last axis of a must equal the second-to-last of b: (..., L, E) @ (..., E, S); check "
                 "which operand needs its last two axes swapped.")
    if "broadcast" in evalue:
        return _("broadcasting lines shapes up from the right; an axis was dropped or added on one side only, or the "
                 "code assumes fewer axes than the input has.")
    if ename == "AxisError" or "too many indices" in evalue:
        return _("the input has fewer axes than the code assumes; index from the end (axis=-1, x[..., i]).")
    if "cannot reshape" in evalue:
        return _("a reshape to fixed sizes breaks on other shapes; compute the sizes from x.shape, or use -1 once.")
    return ""


def explain_error(function: str, ename: str, evalue: str, frames: Sequence[Sequence],
                  inputs: Mapping[str, object]) -> str:
    """``your softmax raised ValueError on its line 4, `...`: message (inputs x (2, 3) float64). Likely cause: ...``."""
    frame = student_frame(frames)
    evalue = evalue.strip().splitlines()[0][:300] if evalue.strip() else ""
    fields = dict(function=function, error=ename, message=evalue, inputs=shapes_of(inputs))
    if frame is not None and frame[3]:
        message = _("your {function} raised {error} on line {line} of its cell, `{code}`: {message} (inputs: "
                    "{inputs}).").format(line=frame[1], code=str(frame[3]).strip(), **fields)
    else:
        message = _("your {function} raised {error}: {message} (inputs: {inputs}).").format(**fields)
    cause = likely_cause(ename, evalue, str(frame[3]) if frame is not None else "", inputs)
    return _("{message}\nLikely cause: {cause}").format(message=message, cause=cause) if cause else message
