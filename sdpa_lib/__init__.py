"""sdpa_lib: the reference library of the scaled dot-product attention course (numpy only).

What a student re-implements and what grading compares against: softmax and its
derivatives, scores and projections, masks, attention forward and backward, heads,
tiled online softmax, cost counts, positions (RoPE, ALiBi), decoding with a KV cache, and
the input checks.  It imports numpy and the
standard library, nothing else; the course around it (grading, quiz, widgets, demos)
is the separate package ``sdpa_course``.

Shape legend: ``...`` leading axes (batch, heads), ``L`` query length, ``S`` key/value
length, ``E`` query/key features, ``Ev`` value features, ``H`` heads, ``D`` d_model.
Masks are boolean with True = may attend.
"""
from .attention import (attention_weights, scaled_dot_product_attention,
                        scaled_dot_product_attention_backward)
from .complexity import attention_flops, attention_memory_bytes
from .decoding import decode_step
from .heads import MultiHeadAttention, merge_heads, split_heads
from .masks import block_diagonal_mask, causal_mask, combine_masks, mask_to_bias, padding_mask, sliding_window_mask
from .positions import alibi_bias, alibi_slopes, apply_rope, rope_frequencies
from .scores import cosine_scores, dot_product_scores, init_projection, project_qkv, scaled_scores
from .softmax import entropy, log_softmax, logsumexp, softmax, softmax_backward, softmax_jacobian
from .tiled import tiled_attention

__version__ = "0.1.0"

__all__ = [
    "MultiHeadAttention", "alibi_bias", "alibi_slopes", "apply_rope", "attention_flops", "attention_memory_bytes",
    "attention_weights", "block_diagonal_mask", "causal_mask", "combine_masks", "cosine_scores", "decode_step",
    "dot_product_scores", "entropy", "init_projection", "log_softmax", "logsumexp", "mask_to_bias", "merge_heads",
    "padding_mask", "project_qkv", "rope_frequencies", "scaled_dot_product_attention",
    "scaled_dot_product_attention_backward", "scaled_scores", "sliding_window_mask", "softmax", "softmax_backward",
    "softmax_jacobian", "split_heads", "tiled_attention",
]
