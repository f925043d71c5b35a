"""`sdpa-course` and the grading pipeline in Chinese: the help, the check and progress tables, a repair note and
an ungradable reason, and the Chinese course (zh/) grading in Chinese whatever the instructor's language.

These pass once the Chinese catalog has the messages of `sdpa-course` (sdpa_course/locale/zh_CN/messages.po).
"""
from __future__ import annotations

import copy
import re
import shutil
from argparse import Namespace
from pathlib import Path

import nbformat
import pytest
from exercise_harness import ROOT, cells_by_id, read
from test_progress_store import ASSIGNMENT, graded, make_course

from sdpa_course import cli
from sdpa_course.grading.autograde import UNGRADABLE, Limits, StudentResult, failure_reason, write_ungradable_feedback
from sdpa_course.grading.repair import expected_from_notebook, note_text, repair
from sdpa_course.i18n.language import LANGUAGE_ENV, language_argument
from sdpa_course.progress_store import SCORES_ENV

ZH = ROOT / "zh"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
# What may stay in Latin letters in the Chinese help: commands, options, metavars, paths, names of tools.
IDENTIFIERS = {"sdpa", "course", "grade", "check", "export", "validate", "progress", "chapters", "assignment",
               "notebooks", "softmax", "exercises", "zh", "en", "MiB", "CPU", "bubblewrap", "Validate", "SDPA_LANG",
               "ID", "JOBS", "COURSE", "MEMORY_MB", "TIMEOUT", "help", "h", "ch05_softmax"}


@pytest.fixture
def chinese(monkeypatch):
    monkeypatch.setenv(LANGUAGE_ENV, "zh")


def english_words(text: str) -> set[str]:
    """The Latin words of ``text`` that are not identifiers (options such as --memory-mb count as identifiers)."""
    text = re.sub(r"--?[\w-]+|\{[\w,]+\}|\$\w+|\S+/", " ", text)
    return {word for word in re.findall(r"[A-Za-z_][\w]*", text) if word not in IDENTIFIERS}


def test_the_language_comes_from_the_command_line_before_the_parser():
    assert language_argument(["check", "--lang", "zh", "--help"]) == "zh"
    assert language_argument(["progress", "--lang=zh", "--lang", "en"]) == "en"
    assert language_argument(["check", "--lang", "fr"]) is None and language_argument(["check", "--lang"]) is None


@pytest.mark.parametrize("argv, environment", [(["check", "--lang", "zh", "--help"], "en"),
                                               (["--help"], "zh"), (["grade", "--help"], "zh")])
def test_the_help_is_chinese(argv, environment, monkeypatch, capsys):
    """`sdpa-course check --lang zh --help` and `SDPA_LANG=zh sdpa-course --help`: no English left but identifiers."""
    monkeypatch.setenv(LANGUAGE_ENV, environment)
    with pytest.raises(SystemExit):
        cli.main(argv)
    shown = capsys.readouterr().out
    assert "用法：" in shown and "显示此帮助信息并退出" in shown, shown
    assert english_words(shown) == set(), shown


def test_a_bad_option_is_refused_in_chinese(chinese, capsys):
    with pytest.raises(SystemExit):
        cli.main(["grade", "x", "--jobs", "0"])
    assert "sdpa-course grade：错误：argument --jobs: 至少应为 1，得到的是 0" in capsys.readouterr().err


@pytest.fixture
def learner(tmp_path, monkeypatch) -> Path:
    """A course with chapter 5 in both editions (the Chinese one in zh/), scores and quiz in tmp_path, no grading.

    `--lang` sets the language for the process: the English of the other tests is put back afterwards."""
    monkeypatch.setenv(LANGUAGE_ENV, "en")
    monkeypatch.setenv(SCORES_ENV, str(tmp_path / "scores.json"))
    monkeypatch.setenv("SDPA_QUIZ_STORE", str(tmp_path / "quiz.json"))
    monkeypatch.setattr(cli, "sandbox_or_refusal", lambda args: 0)
    course = make_course(tmp_path / "course")
    make_course(course / "zh")
    return course


def test_check_and_progress_speak_chinese(learner, monkeypatch, capsys):
    """`check 5 --lang zh` and `progress --lang zh`: the chapter's Chinese title, the points, what is left, in Chinese."""
    monkeypatch.setattr(cli, "check_one", lambda course, item, limits, source: graded(3))
    assert cli.main(["check", "5", "--lang", "zh", "--course", str(learner)]) == 1
    checked = capsys.readouterr().out
    assert re.search(r"^ 5 Softmax 归一化 +3 / 9$", checked, re.M) and "\n合计 " in checked, checked
    cli.main(["progress", "--lang", "zh", "--course", str(learner)])
    shown = capsys.readouterr().out
    row = next(line for line in shown.splitlines() if line.startswith(" 5 "))
    assert "Softmax 归一化" in row and " 得 3/9" in row and "待写：softmax" in row, row
    assert "还没有练习" in next(line for line in shown.splitlines() if line.startswith(" 1 "))
    assert "测验：错题本中有 0 道题" in shown, shown


def test_an_ungradable_chapter_is_said_in_chinese(learner, monkeypatch, capsys):
    monkeypatch.setenv(LANGUAGE_ENV, "zh")  # the reason is written in the grading's language
    reason = failure_reason(None, "", Limits(timeout=5))
    monkeypatch.setattr(cli, "check_one", lambda course, item, limits, source: StudentResult(
        "learner", ASSIGNMENT, UNGRADABLE, reason=reason))
    cli.main(["check", "5", "--lang", "zh", "--course", str(learner)])
    shown = capsys.readouterr().out
    assert f"{ASSIGNMENT}：无法评分：评分用时超过 5 秒，已被停止" in shown and "未评分" in shown, shown


def pasted_twice(notebook, grade_id: str):
    """``notebook`` with the cell ``grade_id`` pasted again after itself, metadata and all (as JupyterLab pastes)."""
    index = next(i for i, cell in enumerate(notebook.cells) if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    pasted = copy.deepcopy(notebook.cells[index])
    pasted.id = "pasted"
    notebook.cells.insert(index + 1, pasted)
    return notebook


@pytest.mark.skipif(not (ZH / "exercises" / ASSIGNMENT).is_dir(), reason="no zh/exercises/ch05_softmax")
def test_a_repair_note_is_chinese(chinese):
    """The note on top of a repaired notebook and each repair in it: Chinese, the cell and its id named."""
    release = read(ZH / "exercises" / ASSIGNMENT / NOTEBOOK)
    [message] = repair(pasted_twice(copy.deepcopy(release), "softmax"), expected_from_notebook(release), NOTEBOOK)
    assert message.startswith(f"{NOTEBOOK}：第 ") and '都是答案单元格“softmax”' in message, message
    assert "请删除你不要的那个副本。" in message and "are both" not in message, message
    assert note_text([message]).startswith("**评分备注。**这个笔记本中有些计分单元格与发布时不同")


def test_the_ungradable_page_is_chinese(chinese, tmp_path):
    page = write_ungradable_feedback(tmp_path, StudentResult("s1", ASSIGNMENT, UNGRADABLE, reason="内核不再响应"))
    text = page.read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in text and f"{ASSIGNMENT}：你的提交无法评分" in text and "它的任何部分都没有计分" in text


def test_the_chinese_course_speaks_chinese_to_an_english_instructor(monkeypatch):
    """`sdpa-course grade --course zh` loads zh/'s configuration, which sets Chinese: the reasons and pages follow."""
    monkeypatch.setenv(LANGUAGE_ENV, "en")
    assert cli.graded_course(Namespace(course=str(ZH))) == ZH
    assert failure_reason(None, "", Limits(timeout=5)) == "评分用时超过 5 秒，已被停止"


# --- the Chinese course graded for real ----------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.skipif(not (ZH / "exercises" / ASSIGNMENT).is_dir(), reason="no zh/exercises/ch05_softmax")
def test_the_chinese_course_grades_a_pasted_cell_and_an_unreadable_notebook_in_chinese(tmp_path, monkeypatch):
    """Grading zh/ (its own configuration) with an English instructor: the repair note and the reason are Chinese,
    and the pasted notebook keeps the points of its written function."""
    from sdpa_course.grading.autograde import GRADED, grade_students
    monkeypatch.setenv(LANGUAGE_ENV, "en")
    shutil.copy2(ROOT / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    course = tmp_path / "zh"
    course.mkdir()
    shutil.copy2(ZH / "nbgrader_config.py", course / "nbgrader_config.py")
    shutil.copytree(ZH / "solutions" / ASSIGNMENT, course / "solutions" / ASSIGNMENT)
    solved = read(ZH / "exercises" / ASSIGNMENT / NOTEBOOK)
    cells_by_id(solved)["softmax"].source = cells_by_id(read(course / "solutions" / ASSIGNMENT / NOTEBOOK))["softmax"].source
    for student in ("pasted", "broken"):
        (course / "submitted" / student / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(pasted_twice(solved, "softmax"), course / "submitted" / "pasted" / ASSIGNMENT / NOTEBOOK)
    (course / "submitted" / "broken" / ASSIGNMENT / NOTEBOOK).write_text("not a notebook")
    results = grade_students(course, ASSIGNMENT, ["pasted", "broken"], Limits(timeout=600), generate=True,
                             cache=tmp_path / "cache")
    pasted, broken = results["pasted"], results["broken"]
    assert pasted.status == GRADED and pasted.score > 0, pasted
    assert any('都是答案单元格“softmax”' in note for note in pasted.notes), pasted.notes
    autograded = read(course / "autograded" / "pasted" / ASSIGNMENT / NOTEBOOK)
    assert autograded.cells[0].source.startswith("**评分备注。**")
    assert broken.status == UNGRADABLE and "无法读取笔记本文件" in broken.reason, broken
