"""sdpa_course.lessons.masking: the seed's 苹果 example and its causal 我 爱 北京 (chapter 8)."""
import numpy as np
import pytest

from sdpa_lib import scaled_dot_product_attention
from sdpa_course.lessons.masking import SENSES, apple_in_context, embed_words


@pytest.mark.parametrize("sentence, reading", [
    (["苹果", "公司", "发布", "手机"], "company"),
    (["苹果", "公司"], "company"),
    (["我", "吃", "红", "苹果"], "fruit"),
    (["红", "苹果"], "fruit"),
])
def test_context_decides_the_reading_of_apple(sentence, reading):
    """Does the same input vector of 苹果 come out company-like beside 公司 and fruit-like beside 红 / 吃?"""
    result = apple_in_context(sentence)
    np.testing.assert_array_equal(result["input"], embed_words(["苹果"])[0])
    assert (result["sense"] > 0) == (reading == "company")
    np.testing.assert_allclose(result["weights"].sum(), 1.0)


def test_apple_alone_is_undecided():
    """Without context the output is the input: company and fruit weigh the same."""
    assert apple_in_context(["苹果"])["sense"] == pytest.approx(0.0)


def test_output_is_the_library_row():
    """Is the reported output the 苹果 row of plain self-attention on gain-scaled queries and keys?"""
    x = embed_words(["我", "吃", "红", "苹果"])
    expected = scaled_dot_product_attention(3 * x, 3 * x, x)[3]
    np.testing.assert_allclose(apple_in_context(["我", "吃", "红", "苹果"], gain=3.0)["output"], expected)


def test_bad_sentences_are_named():
    with pytest.raises(ValueError, match="must contain 苹果"):
        apple_in_context(["红"])
    with pytest.raises(ValueError, match="unknown word"):
        embed_words(["香蕉"])


def test_vocabulary_shapes():
    assert embed_words(["我"]).shape == (1, len(SENSES))
