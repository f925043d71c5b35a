"""The explorers, the coding drills and ``sdpa-quiz --help`` in Chinese (``SDPA_LANG=zh``): every word they show."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from sdpa_course.i18n.figures import use_chinese_fonts  # noqa: E402
from sdpa_course.quiz.drill_grading import SYNTAX, grade_drill  # noqa: E402
from sdpa_course.quiz.drills import all_drills, drill  # noqa: E402
from sdpa_course.widgets import mask_explorer, pipeline, rope_explorer, saturation, temperature  # noqa: E402

# What may stay in Latin letters: identifiers, formulas and matplotlib's own tick markup.
IDENTIFIERS = {"Softmax", "softmax", "sqrt", "log", "d_k", "W_Q", "W_K", "W_V", "ev", "_F", "dp", "ds", "True", "RoPE",
               "mathdefault"}
CHINESE = re.compile("[\u4e00-\u9fff]")

EXPLORERS = {
    "pipeline": (pipeline.pipeline_explorer,
                 [lambda step=step: pipeline.draw_pipeline_step(step) for step in range(6)]),
    "saturation": (saturation.saturation_explorer, [lambda: saturation.draw_saturation(64, False),
                                                    lambda: saturation.draw_saturation(64, True)]),
    "temperature": (temperature.temperature_explorer, [temperature.draw_temperature]),
    "mask": (mask_explorer.mask_explorer,
             [lambda: mask_explorer.draw_mask_explorer("padding+causal", 5, 0, side="left")]),
    "rope": (rope_explorer.rope_explorer, [rope_explorer.draw_rope_explorer]),
}


@pytest.fixture
def chinese(monkeypatch):
    """Chinese explorers with a front end, in the fonts a Chinese notebook uses (as importing the course there sets)."""
    monkeypatch.setenv("SDPA_LANG", "zh")
    monkeypatch.setenv("SDPA_HEADLESS", "0")
    monkeypatch.setattr("IPython.display.display", lambda *args, **kwargs: None)
    with matplotlib.rc_context(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no Chinese font installed: the glyphs are boxes, the labels the same
        use_chinese_fonts()
        yield
    plt.close("all")


def visible_texts(explorer, draws) -> list[str]:
    """The controls' descriptions and option labels, and every visible text of the figures the explorer draws."""
    texts = []
    for control in explorer().children[0].children:
        texts += [control.description, *getattr(control, "_options_labels", ())]
    for draw in draws:
        figure = draw()
        figure.canvas.draw()
        texts += [text.get_text() for text in figure.findobj(Text) if text.get_visible() and text.get_text()]
    return texts


@pytest.mark.parametrize("name", EXPLORERS)
def test_explorer_speaks_chinese(chinese, name):
    """Built in Chinese, does an explorer show Chinese labels, with no English word left but identifiers?"""
    texts = visible_texts(*EXPLORERS[name])
    english = {word for text in texts for word in re.findall(r"[A-Za-z_]{2,}", text)} - IDENTIFIERS
    assert not english, f"{name}: English words left {sorted(english)} in {texts}"
    assert sum(bool(CHINESE.search(text)) for text in texts) >= 5, texts


def test_mask_explorer_keeps_its_english(monkeypatch):
    """In English, are the mask explorer's labels and title the words they always were?"""
    monkeypatch.setenv("SDPA_LANG", "en")
    monkeypatch.setenv("SDPA_HEADLESS", "0")
    monkeypatch.setattr("IPython.display.display", lambda *args, **kwargs: None)
    kind = mask_explorer.mask_explorer().children[0].children[0]
    assert list(kind._options_labels) == list(mask_explorer.MASK_KINDS) and kind.value == "padding+causal"
    figure = mask_explorer.draw_mask_explorer("causal", side="left")
    assert figure._suptitle.get_text() == "causal mask, left padding: True = may attend"
    plt.close("all")


@pytest.mark.parametrize("chosen", all_drills(), ids=lambda d: d.name)
def test_drill_prompt_in_chinese(monkeypatch, chosen):
    """Does every drill show its title and prompt in Chinese, its function's signature kept?"""
    monkeypatch.setenv("SDPA_LANG", "zh")
    shown = chosen.describe()
    title, prompt = shown.split("\n\n", 1)
    assert CHINESE.search(title) and "分钟" in title
    assert prompt.startswith("编写 ") and f"{chosen.functions[0]}(" in prompt
    assert not re.search(r"\b(Write|the|is|are|while)\b", prompt), prompt


def test_drill_verdict_in_chinese(monkeypatch):
    """Is a drill's syntax error reported in Chinese (graded without starting a kernel)?"""
    monkeypatch.setenv("SDPA_LANG", "zh")
    result = grade_drill(drill("stable-softmax"), "def softmax(x, axis=-1):\n    return (\n")
    assert result.problem == SYNTAX and result.message.startswith("语法错误：你的代码无法编译")
    assert "第 2 行" in result.message


def quiz_help(*args: str, language: str = "en") -> str:
    environment = {**os.environ, "SDPA_LANG": language}
    return subprocess.run([sys.executable, "-m", "sdpa_course.quiz.cli", *args], capture_output=True, text=True,
                          check=True, env=environment).stdout


def test_quiz_help_in_the_language_of_lang():
    """Does ``sdpa-quiz --lang zh --help`` speak Chinese throughout, and ``--help`` alone English?"""
    chinese = quiz_help("--lang", "zh", "--help")
    assert chinese.startswith("用法：sdpa-quiz") and "\n选项:\n" in chinese
    assert "显示此帮助信息并退出" in chinese
    assert "编程练习" in chinese and "usage" not in chinese and "show this help" not in chinese
    assert quiz_help("--lang=zh", "--help").startswith("用法：")
    english = quiz_help("--help")
    assert english.startswith("usage: sdpa-quiz") and "options:" in english and "show this help message" in english
