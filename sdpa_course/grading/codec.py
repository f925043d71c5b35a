"""Values as data between the grader and the student's kernel: JSON with numpy arrays in ``.npy`` form.

The grader never unpickles what a student's kernel sends: a value is a JSON tree whose
leaves are plain JSON numbers and strings, and whose arrays are ``np.save`` bytes read
back with ``allow_pickle=False`` (numeric and boolean dtypes only).  What can cross:

=======================================  ==========================================
``None``, ``bool``, ``int``, ``float``,   as themselves
``str``
``tuple``, ``list``, ``dict`` (str/int    recursively, the container kind kept
keys)
``numpy.ndarray`` (bool, int, uint,       shape and dtype kept
float, complex), numpy scalars
``numpy.random.Generator``                its bit generator's name and state (a copy that
                                          draws the same numbers)
a numeric dtype (``np.float32``,          by name, as a dtype or as the scalar type it was
``np.dtype("int8")``, ``float``)          (``float``, ``int``, ``bool``, ``complex`` too)
=======================================  ==========================================

Anything else (a function, a module, a class instance) is refused with an
:class:`UnsupportedValue` that names its type.  Sizes are bounded by :data:`MAX_BYTES`.

This module imports only the standard library and numpy, so its source also runs in
the student's kernel (see :mod:`sdpa_course.grading.kernel_side`).  There, where the course
package is not importable, its messages are translated from :data:`TRANSLATED`, which the
grader fills when it installs its agent (:func:`sdpa_course.grading.remote.agent_installation`).
"""
from __future__ import annotations

import base64
import io
import json

import numpy as np

try:  # imported as a module of sdpa_course
    from ..i18n.messages import N_, _
except ImportError:  # this source runs in the student's kernel
    TRANSLATED: dict[str, str] = {}  # {English: the learner's language}, given by the grader

    def N_(text: str) -> str:
        return text

    def _(text: str) -> str:
        return TRANSLATED.get(text, text)

MAX_BYTES = 256 * 2**20  # the largest payload either side accepts (encoded)
MAX_DEPTH = 20
ARRAY_KINDS = "biufc"  # bool, int, uint, float, complex


class UnsupportedValue(TypeError):
    """A value that cannot be sent as data (its type is named in the message)."""


# Why a value cannot be sent: the messages the student's kernel may give, translated there from TRANSLATED.
UNSUPPORTED = {
    "too large": N_("the value is {size_mib:.0f} MiB encoded; at most {limit_mib} MiB can be sent"),
    "too deep": N_("the value is nested more than {depth} levels deep"),
    "array dtype": N_("an array of dtype {dtype} cannot be sent; only numbers and booleans can"),
    "dict keys": N_("a dict can be sent only with str or int keys"),
    "dtype": N_("the dtype {dtype} cannot be sent; only numeric and boolean dtypes can"),
    "type": N_("a {type} cannot be sent as data; use numbers, strings, numpy arrays, or tuples, lists and dicts of "
               "them"),
}


def encode(value) -> str:
    """``value`` as a JSON string (arrays as base64 ``.npy``).

    Examples
    --------
    >>> decode(encode((np.arange(3.0), {"k": [1, None]}, np.float32(2))))
    (array([0., 1., 2.]), {'k': [1, None]}, np.float32(2.0))
    >>> decode(encode([np.float32, np.dtype("int8"), float]))
    [<class 'numpy.float32'>, dtype('int8'), <class 'float'>]
    """
    arrays: list[str] = []
    text = json.dumps({"value": _tree(value, arrays, 0), "arrays": arrays}, allow_nan=True)
    if len(text) > MAX_BYTES:
        raise UnsupportedValue(_(UNSUPPORTED["too large"]).format(size_mib=len(text) / 2**20,
                                                                  limit_mib=MAX_BYTES // 2**20))
    return text


def decode(text: str):
    """The value :func:`encode` wrote, rebuilt without unpickling anything.

    Raises
    ------
    ValueError
        If ``text`` is not a payload :func:`encode` could have written.
    """
    if not isinstance(text, str) or len(text) > MAX_BYTES:
        raise ValueError("a payload must be a string of at most "
                         f"{MAX_BYTES // 2**20} MiB; got {type(text).__name__} of length {len(text) if isinstance(text, str) else '?'}")
    try:
        document = json.loads(text)
        arrays = [_array(item) for item in document["arrays"]]
        return _value(document["value"], arrays, 0)
    except (KeyError, TypeError, IndexError, AttributeError) as error:
        raise ValueError(f"malformed payload ({type(error).__name__}: {error})") from None


def _tree(value, arrays: list, depth: int):
    if depth > MAX_DEPTH:
        raise UnsupportedValue(_(UNSUPPORTED["too deep"]).format(depth=MAX_DEPTH))
    if value is None or isinstance(value, (bool, str)):
        return {"py": value}
    if isinstance(value, (int, float)) and not isinstance(value, np.generic):
        return {"py": value if isinstance(value, float) or abs(value) < 2**63 else float(value)}
    if isinstance(value, np.generic) and value.dtype.kind in ARRAY_KINDS:
        arrays.append(_npy(np.asarray(value)))
        return {"scalar": len(arrays) - 1}
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in ARRAY_KINDS:
            raise UnsupportedValue(_(UNSUPPORTED["array dtype"]).format(dtype=value.dtype))
        arrays.append(_npy(value))
        return {"array": len(arrays) - 1}
    if isinstance(value, (tuple, list)):
        return {type(value).__name__: [_tree(item, arrays, depth + 1) for item in value]}
    if isinstance(value, dict):
        if not all(isinstance(key, (str, int)) and not isinstance(key, bool) for key in value):
            raise UnsupportedValue(_(UNSUPPORTED["dict keys"]))
        return {"dict": [[key, _tree(item, arrays, depth + 1)] for key, item in value.items()]}
    if isinstance(value, np.dtype) or value in _PYTHON_TYPES.values() or (
            isinstance(value, type) and issubclass(value, np.generic)):
        return _dtype_tree(value)
    if isinstance(value, np.random.Generator):
        return {"generator": {"bit_generator": type(value.bit_generator).__name__, "state": value.bit_generator.state}}
    raise UnsupportedValue(_(UNSUPPORTED["type"]).format(type=f"{type(value).__module__}.{type(value).__qualname__}"))


_PYTHON_TYPES = {"float": float, "int": int, "bool": bool, "complex": complex}


def _dtype_tree(value) -> dict:
    if value in _PYTHON_TYPES.values() and not isinstance(value, np.dtype):
        return {"type": value.__name__}
    dtype = np.dtype(value)
    if dtype.kind not in ARRAY_KINDS:
        raise UnsupportedValue(_(UNSUPPORTED["dtype"]).format(dtype=dtype))
    return {"dtype": [dtype.str, "dtype" if isinstance(value, np.dtype) else "type"]}


def _npy(array: np.ndarray) -> str:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array) if array.ndim else array, allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _array(text: str) -> np.ndarray:
    array = np.load(io.BytesIO(base64.b64decode(text.encode("ascii"), validate=True)), allow_pickle=False)
    if array.dtype.kind not in ARRAY_KINDS:
        raise ValueError(f"an array of dtype {array.dtype} is not accepted")
    return array


def _value(node, arrays: list, depth: int):
    if depth > MAX_DEPTH or not isinstance(node, dict) or len(node) != 1:
        raise ValueError("malformed payload (bad node)")
    (kind, content), = node.items()
    if kind == "py":
        if content is not None and not isinstance(content, (bool, int, float, str)):
            raise ValueError("malformed payload (bad plain value)")
        return content
    if kind == "array":
        return arrays[content]
    if kind == "scalar":
        return arrays[content][()]
    if kind in ("tuple", "list"):
        items = [_value(item, arrays, depth + 1) for item in content]
        return tuple(items) if kind == "tuple" else items
    if kind == "dict":
        return {key: _value(item, arrays, depth + 1) for key, item in content}
    if kind == "type":
        return _PYTHON_TYPES[content]
    if kind == "dtype":
        name, form = content
        dtype = np.dtype(str(name))
        if dtype.kind not in ARRAY_KINDS:
            raise ValueError(f"the dtype {dtype} is not accepted")
        return dtype if form == "dtype" else dtype.type
    if kind == "generator":
        bit_generator = getattr(np.random, content["bit_generator"], None)
        if not (isinstance(bit_generator, type) and issubclass(bit_generator, np.random.BitGenerator)):
            raise ValueError(f"unknown bit generator {content['bit_generator']!r}")
        generator = np.random.Generator(bit_generator())
        generator.bit_generator.state = content["state"]
        return generator
    raise ValueError(f"malformed payload (unknown kind {kind!r})")
