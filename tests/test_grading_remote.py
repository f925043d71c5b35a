"""The grader's side of a student's kernel (sdpa_course.grading.remote) against its agent (kernel_side), in process.

A stand-in kernel runs each request cell the way the student's kernel would: the agent module
serves it from a namespace of the test's, and what it publishes becomes the cell's outputs.
So requests, files, the codec, the answer's checks and the helper socket are all the real
ones; only Jupyter is left out (tests/test_attacks.py grades through real sandboxed kernels).
"""
from __future__ import annotations

import json
import sys
import warnings

import numpy as np
import pytest

from sdpa_course.grading import kernel_side
from sdpa_course.grading.exercises import task
from sdpa_course.grading.errors import GradingError
from sdpa_course.grading.isolation import correct_helpers
from sdpa_course.grading.remote import (RESULT_MIME, KernelAnswerError, RemoteFunction, StudentError, StudentKernel,
                                        student_bindings)


class StandInKernel:
    """Runs request cells with the agent on ``namespace``; ``tamper`` may rewrite each answer before it is shown."""

    def __init__(self, namespace: dict, monkeypatch, tamper=None):
        self.namespace, self.executed, self._tamper = namespace, 0, tamper
        self._outputs: list = []
        monkeypatch.setattr(kernel_side, "_user_namespace", lambda: self.namespace)
        monkeypatch.setattr(kernel_side, "_publish", self._publish)
        monkeypatch.setitem(sys.modules, "_sdpa_grader", kernel_side)

    def _publish(self, answer: dict) -> None:
        answer = self._tamper(answer) if self._tamper else answer
        self._outputs.append({"output_type": "display_data", "data": {RESULT_MIME: json.dumps(answer)}})

    def execute(self, cell) -> None:
        self.executed += 1
        self._outputs = []
        exec(cell.source, {})  # noqa: S102  (the grader's own request line)
        cell.outputs = self._outputs


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    """A StudentKernel over a stand-in whose namespace the test fills; ``kernel.stand_in`` is the stand-in."""
    def make(namespace: dict, tamper=None) -> StudentKernel:
        stand_in = StandInKernel(namespace, monkeypatch, tamper)
        student = StudentKernel(stand_in.execute, tmp_path)
        student.stand_in = stand_in
        return student
    return make


def test_many_cases_go_in_one_request_and_stop_after_the_first_that_raises(kernel):
    """Does call_many run the cases in order in one round trip, and skip the cases after one that raises?"""
    seen = []

    def student(x):
        seen.append(x)
        if x == 2:
            raise ValueError("two is not allowed")
        return np.full(3, x, dtype=np.float32)

    remote = kernel({"student": student})
    outcomes = RemoteFunction(remote, "student").call_many([((x,), {}) for x in (1, 2, 3)])
    assert remote.stand_in.executed == 1 and seen == [1, 2], "one request; the case after the error never ran"
    first = outcomes[0].value()
    assert first.dtype == np.float32 and first.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(StudentError, match="ValueError: two is not allowed"):
        outcomes[1].value()
    assert len(outcomes) == 2


def test_an_answer_that_drops_cases_is_refused(kernel):
    """If the kernel's answer covers fewer cases than were sent, and none raised, is the answer refused?"""
    def drop_last(answer: dict) -> dict:
        return {**answer, "results": answer["results"][:-1]} if "results" in answer else answer

    remote = kernel({"student": lambda x: x}, tamper=drop_last)
    with pytest.raises(KernelAnswerError, match="does not cover the 2 cases"):
        RemoteFunction(remote, "student").call_many([((1,), {}), ((2,), {})])


def test_a_stub_keeps_its_type_and_warnings_come_back(kernel):
    """Does a stub raise NotImplementedError here, and is a warning emitted in the kernel re-emitted here?"""
    def stub(x):
        raise NotImplementedError()

    def noisy(x):
        warnings.warn("overflow encountered in exp", RuntimeWarning)
        return x

    remote = kernel({"stub": stub, "noisy": noisy})
    with pytest.raises(NotImplementedError):
        RemoteFunction(remote, "stub")(1.0)
    with pytest.warns(RuntimeWarning, match="overflow encountered"):
        assert RemoteFunction(remote, "noisy")(2.5) == 2.5


def test_the_names_of_a_cell_come_in_one_request(kernel):
    """Are a function, a value and an absent name answered in one request, each as what it is?"""
    remote = kernel({"softmax": lambda x: x, "temperature": 0.5, "not_data": object()})
    found = student_bindings(remote, {"softmax", "temperature", "missing", "not_data"})
    assert remote.stand_in.executed == 1
    assert isinstance(found["softmax"], RemoteFunction) and found["temperature"] == 0.5 and "missing" not in found
    with pytest.raises(GradingError, match="not something grading can read"):
        found["not_data"].shape  # noqa: B018


def test_a_task_names_the_failing_case_of_a_remote_function(kernel):
    """Does a wrong remote function fail on the first wrong case with its inputs, and a right one pass every case?"""
    def unnormalised(x, axis=-1):
        return np.exp(x - x.max(axis=axis, keepdims=True))

    def stable(x, axis=-1):
        shifted = np.exp(x - x.max(axis=axis, keepdims=True))
        return shifted / shifted.sum(axis=axis, keepdims=True)

    remote = kernel({"wrong": unnormalised, "right": stable})
    cases = [((np.array([0.0, 0.0]),), {}), ((np.array([1.0, 2.0, 3.0]),), {})]
    softmax_task = task("ch05", "softmax")
    assert softmax_task.check(RemoteFunction(remote, "right"), cases) == 2
    with pytest.raises(GradingError, match=r"wrong answer on inputs \(\[0\. 0\.\]\)"):
        softmax_task.check(RemoteFunction(remote, "wrong"), cases)


def test_helpers_are_answered_by_the_grader_over_the_socket(kernel):
    """Does a student's function that calls a helper get the grader's correct helper, not its own wrong one?"""
    namespace = {}
    exec("def helper(x):\n    return x * 0\n"  # noqa: S102  (the student's wrong helper)
         "def uses_helper(x):\n    return helper(x) + 1\n", namespace)
    remote = kernel(namespace)
    function = RemoteFunction(remote, "uses_helper")
    assert function(np.array([2.0])).tolist() == [1.0]
    with correct_helpers(function, helper=lambda x: x * 10):
        assert function(np.array([2.0])).tolist() == [21.0]
    assert namespace["helper"](np.array([2.0])).tolist() == [0.0], "the student's own helper is put back"

