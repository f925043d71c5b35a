"""Grading speaks the learner's language: feedback, differences, and the messages composed for the student's kernel.

The English is the catalog's source, so these tests run with ``SDPA_LANG=zh`` and compare
with what the catalog says (a message the catalog does not translate yet fails them).
"""
from __future__ import annotations

import os
import subprocess
import sys
import types

import numpy as np
import pytest

from sdpa_course.grading import GradingError, expect_shape
from sdpa_course.grading.checks import Outcome
from sdpa_course.grading.catalogue.softmax import SOFTMAX_MISTAKES
from sdpa_course.grading.differences import describe_difference
from sdpa_course.grading.exercises import task
from sdpa_course.grading.remote import agent_installation
from sdpa_course.grading.student_lib import build_student_library
from sdpa_course.i18n.messages import _

OTHER_AXIS = next(m for m in SOFTMAX_MISTAKES if m.name == "softmax over the wrong axis")


@pytest.fixture
def chinese(monkeypatch):
    monkeypatch.setenv("SDPA_LANG", "zh")


def softmax_over_first_axis(x, axis=-1):
    exps = np.exp(x - x.max(axis=0, keepdims=True))
    return exps / exps.sum(axis=0, keepdims=True)


def feedback(student, cases) -> str:
    with pytest.raises(GradingError) as failure:
        task("ch05", "softmax").check(student, cases)
    return str(failure.value)


def test_a_known_mistake_is_named_and_explained_in_chinese(chinese):
    """Does a catalogued mistake graded in Chinese give the Chinese verdict, the mistake's Chinese name and hint?"""
    name, hint = _(OTHER_AXIS.name), _(OTHER_AXIS.hint)
    assert name != OTHER_AXIS.name and hint != OTHER_AXIS.hint, "the catalog does not translate this mistake"
    text = feedback(softmax_over_first_axis, [((np.arange(12.0).reshape(3, 4),), {})])
    assert text.startswith("在输入 ") and "答案错误" in text
    assert f"这像是一个已知的错误：{name}。{hint}" in text
    assert "known mistake" not in text and "wrong answer" not in text


def test_the_same_mistake_reads_as_before_in_english():
    """Is the English feedback unchanged (the catalog's source text, word for word)?"""
    text = feedback(softmax_over_first_axis, [((np.arange(12.0).reshape(3, 4),), {})])
    assert text.startswith("wrong answer on inputs (array(3, 4) float64): your output differs from the correct "
                           "answer: at index ")
    assert f"This looks like a known mistake: {OTHER_AXIS.name}. {OTHER_AXIS.hint}" in text


@pytest.mark.parametrize("actual, expected, kind, chinese_text", [
    (np.arange(6.0).reshape(2, 3).T, np.arange(6.0).reshape(2, 3), "transposed shape", "最后两个轴"),
    (2 * np.arange(1.0, 7.0).reshape(2, 3), np.arange(1.0, 7.0).reshape(2, 3), "constant factor", "乘以一个常数 2"),
    (np.ones((2, 3, 1)), np.ones((2, 3)), "length-1 axis (has an extra)", "多了一个长度为 1 的轴"),
])
def test_a_difference_is_told_in_chinese_and_keeps_its_kind(chinese, actual, expected, kind, chinese_text):
    """Is the kind of difference (what grading compares) the English one, and its explanation Chinese prose?"""
    difference = describe_difference(actual, expected, {"query": np.ones((2, 3))})
    assert difference.kind == kind
    assert chinese_text in difference.text and "your" not in difference.text


def test_a_wrong_shape_is_still_graded_as_a_shape_failure_in_chinese(chinese):
    """Does a wrong shape stay a "shape" failure when the message that says so is Chinese?"""
    comparison = task("ch05", "softmax").comparison
    x = np.arange(6.0).reshape(2, 3)
    failure = comparison.failure("softmax", (x,), {}, Outcome(value=np.ones((3, 2))))
    assert failure.kind.startswith("shape")
    assert "你的输出的形状是 (3, 2)，应为 (2, 3)" in failure.feedback
    with pytest.raises(GradingError, match="形状"):
        expect_shape(np.ones(3), (2,), legend="(L,)")


def test_the_student_side_library_refuses_in_chinese(chinese, tmp_path):
    """Is the ForbiddenCallError of the student's sdpa_lib copy written into it in Chinese (its kernel has no catalog)?"""
    build_student_library(tmp_path, ["softmax"])
    call = "import numpy, sdpa_lib\ntry:\n    sdpa_lib.softmax(numpy.zeros(2))\nexcept RuntimeError as e:\n    print(e)"
    done = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n{call}"],
                          capture_output=True, text=True, env={"PATH": os.defpath}, check=True)
    assert done.stdout.startswith("评分你的作业时不能使用 sdpa_lib.softmax：")


def test_the_kernels_agent_says_what_cannot_be_sent_in_chinese(chinese, monkeypatch):
    """Does the agent installed in the student's kernel (which cannot read catalogs) carry the Chinese messages?"""
    monkeypatch.setitem(sys.modules, "_sdpa_grader", types.ModuleType("placeholder"))
    namespace: dict = {}
    exec(agent_installation(), namespace)  # noqa: S102  (the grader's own agent)
    agent = sys.modules["_sdpa_grader"]
    assert "__sdpa_install" not in namespace
    with pytest.raises(agent.UnsupportedValue, match="无法作为数据发送"):
        agent.encode(object())
