"""Multi-head attention: split d_model into heads, attend per head, concatenate, project with W_O.

``num_kv_heads`` selects the family: ``num_kv_heads == num_heads`` is MHA, ``1`` is MQA
(multi-query), anything in between that divides ``num_heads`` is GQA (grouped-query).
"""
from __future__ import annotations

import numpy as np

from ._checks import as_float_array, check_positive_int
from .attention import scaled_dot_product_attention
from .scores import init_projection


def split_heads(x, num_heads: int) -> np.ndarray:
    """Split the feature axis into heads: ``(..., L, D)`` -> ``(..., H, L, D/H)``.

    Head ``h`` takes features ``h*D/H .. (h+1)*D/H - 1`` (contiguous blocks, as every
    framework lays out its fused QKV weights).

    Examples
    --------
    >>> split_heads(np.arange(8.0).reshape(2, 4), 2)[1]
    array([[2., 3.],
           [6., 7.]])
    """
    x = as_float_array(x, "x", min_ndim=2, legend="(..., L, D)")
    num_heads = check_positive_int(num_heads, "num_heads")
    *batch, length, d_model = x.shape
    if d_model % num_heads:
        raise ValueError(f"num_heads={num_heads} must divide D={d_model} (x.shape={x.shape}); "
                         f"choose a head count among {[h for h in range(1, d_model + 1) if d_model % h == 0]}")
    x = x.reshape(*batch, length, num_heads, d_model // num_heads)  # (..., L, H, D/H)
    return np.swapaxes(x, -3, -2)  # (..., L, H, D/H) -> (..., H, L, D/H)


def merge_heads(x) -> np.ndarray:
    """Concatenate the heads back: ``(..., H, L, Dh)`` -> ``(..., L, H*Dh)``; inverse of :func:`split_heads`.

    Examples
    --------
    >>> x = np.arange(24.0).reshape(2, 3, 4)
    >>> bool(np.array_equal(merge_heads(split_heads(x, 2)), x))
    True
    """
    x = as_float_array(x, "x", min_ndim=3, legend="(..., H, L, Dh)")
    *batch, num_heads, length, head_dim = x.shape
    x = np.swapaxes(x, -3, -2)  # (..., H, L, Dh) -> (..., L, H, Dh)
    return x.reshape(*batch, length, num_heads * head_dim)  # (..., L, H*Dh)


class MultiHeadAttention:
    r"""Multi-head attention with separate Q, K, V projections and an output projection ``W_O``.

    .. math:: \operatorname{MultiHead}(X_q, X_{kv}) = \operatorname{Concat}(\text{head}_1..\text{head}_H)\,W^O,
              \quad \text{head}_h = \operatorname{Attention}(X_q W^Q_h, X_{kv} W^K_{g(h)}, X_{kv} W^V_{g(h)})

    where ``g(h) = h // (H / num_kv_heads)`` maps each query head to its key/value group.

    Parameters
    ----------
    d_model : int
        Feature size ``D`` of the inputs and of the output.
    num_heads : int
        Query heads ``H``; must divide ``d_model``.  Head size ``Dh = D / H``.
    rng : numpy.random.Generator
        Draws the parameters (see :func:`~sdpa_lib.scores.init_projection`).
    num_kv_heads : int, optional
        Key/value heads; defaults to ``num_heads`` (MHA). Must divide ``num_heads``.
    dtype : float32 or float64

    Attributes
    ----------
    w_q : ndarray ``(D, H*Dh)``;  w_k, w_v : ndarray ``(D, Hkv*Dh)``;  w_o : ndarray ``(H*Dh, D)``

    Examples
    --------
    >>> mha = MultiHeadAttention(8, 4, np.random.default_rng(0), num_kv_heads=2)
    >>> mha(np.ones((2, 5, 8))).shape, mha.parameter_count()
    ((2, 5, 8), 192)
    """

    def __init__(self, d_model: int, num_heads: int, rng: np.random.Generator, *,
                 num_kv_heads: int | None = None, dtype=np.float64):
        self.d_model = check_positive_int(d_model, "d_model")
        self.num_heads = check_positive_int(num_heads, "num_heads")
        self.num_kv_heads = self.num_heads if num_kv_heads is None else check_positive_int(num_kv_heads, "num_kv_heads")
        if self.d_model % self.num_heads:
            raise ValueError(f"num_heads={num_heads} must divide d_model={d_model}")
        if self.num_heads % self.num_kv_heads:
            raise ValueError(f"num_kv_heads={self.num_kv_heads} must divide num_heads={num_heads} "
                             f"(each key/value head serves a whole group of query heads)")
        self.head_dim = self.d_model // self.num_heads
        kv_width = self.num_kv_heads * self.head_dim
        self.w_q = init_projection(d_model, d_model, rng, dtype)  # (D, H*Dh)
        self.w_k = init_projection(d_model, kv_width, rng, dtype)  # (D, Hkv*Dh)
        self.w_v = init_projection(d_model, kv_width, rng, dtype)  # (D, Hkv*Dh)
        self.w_o = init_projection(d_model, d_model, rng, dtype)  # (H*Dh, D)

    def parameter_count(self) -> int:
        """Number of weights in W_Q, W_K, W_V and W_O (no biases)."""
        return sum(w.size for w in (self.w_q, self.w_k, self.w_v, self.w_o))

    def __call__(self, x_query, x_kv=None, attn_mask=None, *, is_causal: bool = False,
                 return_weights: bool = False):
        """Attend from ``x_query`` ``(..., L, D)`` to ``x_kv`` ``(..., S, D)`` (self-attention if None).

        ``attn_mask`` (bool True = may attend, or float bias) has one of three shapes,
        told apart by its rank against the inputs' batch axes ``...``:

        * ``(L, S)``: the same for every sequence and every head;
        * ``(..., L, S)``, the inputs' batch axes (each its size or 1): one per sequence,
          the same for every head;
        * ``(..., H, L, S)``, one axis more: one per head (``H`` is ``num_heads`` or 1);
          ``(H, L, S)`` for inputs without batch axes.

        For padding, ``padding_mask(lengths, S)[:, None]`` ``(B, 1, 1, S)`` is the explicit
        form.  A ``(..., L, S)`` mask whose axis -3 has size ``num_heads`` (such as a
        ``(B, L, S)`` mask when ``B == H``) could be meant per head, missing its batch axes,
        so it is refused with a ``ValueError`` that shows both ways of writing it.
        Returns ``(..., L, D)``, and the weights ``(..., H, L, S)`` if ``return_weights``.
        """
        x_query = as_float_array(x_query, "x_query", min_ndim=2, legend="(..., L, D)")
        x_kv = x_query if x_kv is None else as_float_array(x_kv, "x_kv", min_ndim=2, legend="(..., S, D)")
        for name, x in (("x_query", x_query), ("x_kv", x_kv)):
            if x.shape[-1] != self.d_model:
                raise ValueError(f"{name} must have D={self.d_model} features; got {name}.shape={x.shape}")
        group = self.num_heads // self.num_kv_heads
        q = split_heads(x_query @ self.w_q, self.num_heads)  # (..., L, D) @ (D, H*Dh) -> (..., H, L, Dh)
        k = split_heads(x_kv @ self.w_k, self.num_kv_heads)  # (..., S, D) @ (D, Hkv*Dh) -> (..., Hkv, S, Dh)
        v = split_heads(x_kv @ self.w_v, self.num_kv_heads)  # (..., Hkv, S, Dh)
        k, v = (np.repeat(t, group, axis=-3) for t in (k, v))  # (..., Hkv, S, Dh) -> (..., H, S, Dh)
        if attn_mask is not None:
            attn_mask = self._mask_for_heads(attn_mask, max(x_query.ndim, x_kv.ndim) - 2)
        result = scaled_dot_product_attention(q, k, v, attn_mask, is_causal=is_causal,
                                              return_weights=return_weights)
        heads, weights = result if return_weights else (result, None)  # (..., H, L, Dh), (..., H, L, S)
        output = merge_heads(heads) @ self.w_o  # (..., L, H*Dh) @ (H*Dh, D) -> (..., L, D)
        return (output, weights) if return_weights else output

    def _mask_for_heads(self, attn_mask, batch_ndim: int):
        """``attn_mask`` aligned with the per-head scores ``(..., H, L, S)``, read as :meth:`__call__` documents."""
        shape, heads = np.shape(attn_mask), self.num_heads
        if len(shape) == batch_ndim + 3:  # (..., H, L, S): one per head
            if shape[-3] not in (1, heads):
                raise ValueError(f"attn_mask.shape={shape} has the rank of a per-head mask (..., H, L, S) for "
                                 f"inputs with {batch_ndim} batch axes, but its head axis (-3) has size "
                                 f"{shape[-3]}, not num_heads={heads} or 1")
            return attn_mask
        if len(shape) > batch_ndim + 3:
            raise ValueError(f"attn_mask.shape={shape} has more axes than a per-head mask (..., H, L, S) for "
                             f"inputs with {batch_ndim} batch axes; give the inputs those batch axes instead")
        if len(shape) < 3:  # (L, S): the same everywhere (or too few axes, which attention reports)
            return attn_mask
        if heads > 1 and shape[-3] == heads:
            shared, per_head = (*shape[:-2], 1, *shape[-2:]), (*(1,) * (batch_ndim + 3 - len(shape)), *shape)
            raise ValueError(f"attn_mask.shape={shape} could mean two things with num_heads={heads}: one mask "
                             f"per sequence (..., L, S), the same for every head, or one per head (H, L, S), since "
                             f"its axis -3 has size {heads}; give the head axis explicitly: "
                             f"np.expand_dims(attn_mask, -3) {shared} for one per sequence, or "
                             f"attn_mask reshaped to {per_head} for one per head")
        return np.expand_dims(attn_mask, -3)  # (..., L, S) -> (..., 1, L, S): the same for every head
