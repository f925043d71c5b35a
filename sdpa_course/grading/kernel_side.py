"""The grader's agent inside the student's kernel: call a student function on data, publish its result as data.

This source (with :mod:`~sdpa_course.grading.codec` before it) is sent into the kernel
when grading starts, before any of the student's code runs, and kept there as the module
``_sdpa_grader``.  Each request names a student function or variable, carries the
arguments as a codec payload and an id; the answer is one ``display_data`` message of
type :data:`RESULT_MIME` holding the id and the encoded result (or the error the
function raised, the warnings it emitted, its peak traced memory).

Nothing here is trusted: the student's code runs in this process and may replace any
of it.  The grader only ever reads the published answer as data and checks it itself,
so the worst a tampered agent can do is report outputs the student's function could
have returned anyway.

What this agent says to the student comes from the grader, already in the course's language:
the failure of a helper call is the grader's sentence, and a value that cannot be sent is told
by the codec's messages, translated from what the grader installed with it.

While a call runs, names listed as *helpers* in the request are bound in the student's
namespace to stubs that ask the grader (over a Unix socket it listens on for that call
only) for the reference helper's result, so that a function is graded on its own and
not again for the mistakes of the helpers it calls.
"""
import inspect
import json
import socket
import struct
import traceback
import tracemalloc
import warnings

from IPython import get_ipython
from IPython.display import publish_display_data

try:  # in the kernel, the codec's source has run just before this one, in the same namespace
    encode, decode, UnsupportedValue  # noqa: B018
except NameError:  # imported as a module of sdpa_course
    from .codec import UnsupportedValue, decode, encode

RESULT_MIME = "application/vnd.sdpa-grader.result+json"
SOURCE_NAMES = ("<sdpa grader codec>", "<sdpa grader agent>")  # the file names the sources are compiled under


def _user_namespace() -> dict:
    return get_ipython().user_ns


def _student_frames(error: BaseException) -> list:
    """(file, line, function, text) of the traceback frames outside this agent."""
    frames = traceback.extract_tb(error.__traceback__)
    return [[frame.filename, frame.lineno, frame.name, frame.line or ""] for frame in frames
            if frame.filename not in SOURCE_NAMES]


def _exchange(path: str, message: bytes) -> bytes:
    """Send one length-prefixed message to the grader's helper socket and read its answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(path)
        connection.sendall(struct.pack("!Q", len(message)) + message)
        size = struct.unpack("!Q", _read(connection, 8))[0]
        return _read(connection, size)


def _read(connection, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = connection.recv(min(left, 2**20))
        if not chunk:
            raise ConnectionError("the grader closed the helper connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _helper_stub(name: str, path: str):
    def helper(*args, **kwargs):
        answer = json.loads(_exchange(path, json.dumps({"name": name, "args": encode((args, kwargs))}).encode()))
        if not answer["ok"]:  # the grader's sentence, naming the helper
            raise RuntimeError(answer["error"])
        return decode(answer["value"])
    helper.__name__ = helper.__qualname__ = name
    return helper


def _publish(answer: dict) -> None:
    publish_display_data({RESULT_MIME: json.dumps(answer)})


def _run(function, args, kwargs, measure_memory: bool) -> dict:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if measure_memory:
            tracemalloc.start()
            tracemalloc.reset_peak()
            start = tracemalloc.get_traced_memory()[0]
        try:
            result = function(*args, **kwargs)
        finally:
            peak = tracemalloc.get_traced_memory()[1] - start if measure_memory else None
            if measure_memory:
                tracemalloc.stop()
    return {"result": result, "peak_bytes": peak,
            "warnings": [[w.category.__name__, str(w.message)] for w in caught]}


def handle_file(path: str) -> None:
    """Serve the request the grader wrote to ``path``."""
    with open(path, encoding="utf-8") as request:
        handle(request.read())


def handle(request_text: str) -> None:
    """Serve one request and publish its answer.

    The request is JSON with an ``id`` and an ``op``:

    * ``get``: ``names``; the answer's ``values`` maps each name the namespace has to what it
      is (``callable``, or the encoded value, or why it is not data);
    * ``source``: ``name``; the answer carries the function's source;
    * ``call``: ``name``, ``args`` (the encoded list of ``(args, kwargs)`` cases), ``helpers``,
      ``measure_memory``; the answer's ``results`` has one entry per case run, in order, each
      with the encoded result (or the error raised: the cases after it are not run), the
      warnings emitted and the peak traced memory.
    """
    request = json.loads(request_text)
    answer = {"id": request["id"], "ok": True}
    namespace = _user_namespace()
    if request["op"] == "get":
        answer["values"] = {name: _description(namespace[name]) for name in request["names"] if name in namespace}
    elif request["name"] not in namespace:
        answer.update(ok=False, missing=True)
    elif request["op"] == "source":
        answer.update(_source(namespace[request["name"]]))
    else:
        answer["results"] = _calls(namespace, request)
    _publish(answer)


def _description(target) -> dict:
    return {"ok": True, "callable": True} if callable(target) else _encoded(target)


def _source(target) -> dict:
    try:
        return _encoded(inspect.getsource(target))
    except (OSError, TypeError) as error:
        return {"ok": False, "unsupported": str(error)}


def _calls(namespace: dict, request: dict) -> list:
    """Run the named function on each case in turn, with the helpers bound; stop after the first that raises."""
    target, helpers = namespace[request["name"]], request.get("helpers") or {}
    saved = {helper: namespace[helper] for helper in helpers.get("names", []) if helper in namespace}
    namespace.update({helper: _helper_stub(helper, helpers["socket"]) for helper in helpers.get("names", [])})
    results = []
    try:
        for args, kwargs in decode(request["args"]):
            try:
                outcome = _run(target, args, kwargs, bool(request.get("measure_memory")))
            except BaseException as error:  # noqa: B036  (SystemExit and KeyboardInterrupt are the student's too)
                results.append({"ok": False, "error": {"ename": type(error).__name__, "evalue": str(error)[:4000],
                                                       "frames": _student_frames(error)}})
                break
            results.append({**_encoded(outcome["result"]), "warnings": outcome["warnings"],
                            "peak_bytes": outcome["peak_bytes"]})
    finally:
        for helper in helpers.get("names", []):
            namespace.pop(helper, None)
        namespace.update(saved)
    return results


def _encoded(value) -> dict:
    try:
        return {"ok": True, "value": encode(value)}
    except UnsupportedValue as error:
        return {"ok": False, "unsupported": str(error)}
