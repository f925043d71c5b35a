"""The thirteen chapters: one table shared by notebooks, exercises, quiz and tools."""
from __future__ import annotations

from typing import NamedTuple

from .i18n.language import spoken_language
from .i18n.messages import _


class Chapter(NamedTuple):
    number: int
    slug: str  # notebooks/NN_<slug>.ipynb, solutions/chNN_<slug>/chNN_<slug>.ipynb
    title: str
    title_zh: str  # the seed's chapter title (chapter 13's is the course's own)

    @property
    def shown_title(self) -> str:
        """The title in the learner's language (:func:`~sdpa_course.i18n.language.spoken_language`)."""
        return self.title_zh if spoken_language() == "zh" else self.title

    @property
    def notebook(self) -> str:
        """Lecture notebook path, relative to the repository root."""
        return f"notebooks/{self.number:02d}_{self.slug}.ipynb"

    @property
    def assignment(self) -> str:
        """nbgrader assignment name (folder under solutions/ and exercises/)."""
        return f"ch{self.number:02d}_{self.slug}"


CHAPTERS = (
    Chapter(1, "visual_demo", "Visual demo: the whole pipeline", "可视化演示"),
    Chapter(2, "qkv", "Query, key and value", "查询键值三要素"),
    Chapter(3, "dot_product", "Dot-product similarity", "点积相似度"),
    Chapter(4, "scaling", "The scaling factor", "缩放因子"),
    Chapter(5, "softmax", "Softmax normalisation", "Softmax 归一化"),
    Chapter(6, "weighted_sum", "The weighted sum and multi-head attention", "加权求和输出"),
    Chapter(7, "parallelism", "Parallelism and cost", "并行计算优势"),
    Chapter(8, "masking", "Masking in industry", "工业级应用"),
    Chapter(9, "applications", "Applications", "AI 应用场景"),
    Chapter(10, "python_demo", "The Python demo", "Python 演示"),
    Chapter(11, "misconceptions", "Common misconceptions", "常见误区"),
    Chapter(12, "interview", "Interview questions", "面试题"),
    Chapter(13, "beyond", "Beyond the atom", "注意力之上"),  # not in the seed, which stops at the formula
)


def chapter(key: int | str) -> Chapter:
    """Look a chapter up by number, slug or assignment name ("4", 4, "scaling", "ch04_scaling").

    Examples
    --------
    >>> chapter("scaling").notebook, chapter(4).assignment
    ('notebooks/04_scaling.ipynb', 'ch04_scaling')
    """
    for candidate in CHAPTERS:
        if str(key) in (str(candidate.number), f"{candidate.number:02d}", candidate.slug, candidate.assignment):
            return candidate
    raise KeyError(_("no chapter {key!r}; chapters are 1-{last} or one of {slugs}").format(
        key=key, last=len(CHAPTERS), slugs=", ".join(c.slug for c in CHAPTERS)))
