"""Counting the cost of attention: floating-point operations and working memory."""
from __future__ import annotations

import numpy as np

from ._checks import check_positive_int
from .tiled import default_block_size


def attention_flops(L: int, S: int, E: int, Ev: int, *, include_softmax: bool = False) -> int:
    r"""Floating-point operations of one attention head, forward.

    Counts a multiply-add as 2 operations: :math:`QK^\top` costs ``2 L S E`` and
    ``P V`` costs ``2 L S Ev``, so with ``E = Ev`` the total is ``4 L S E``, the count
    used by FlashAttention papers and by ``data/h200_sdpa_reference.csv``.
    ``include_softmax`` adds about ``5 L S`` for scale, max, subtract, exp and divide.

    Examples
    --------
    >>> attention_flops(1024, 1024, 64, 64)
    268435456
    """
    L, S, E, Ev = (check_positive_int(v, n) for v, n in ((L, "L"), (S, "S"), (E, "E"), (Ev, "Ev")))
    matmuls = 2 * L * S * E + 2 * L * S * Ev
    return matmuls + (5 * L * S if include_softmax else 0)


def attention_memory_bytes(L: int, S: int, E: int, Ev: int, *, dtype=np.float32, batch: int = 1,
                           tiled: bool = False, block_size: int | None = None) -> dict:
    """Bytes held by one attention call: the inputs, the output and the intermediate.

    The explicit formula keeps the ``(L, S)`` score matrix (``L * S`` elements, updated
    in place by the softmax); the tiled form keeps one ``(min(b, L), min(b, S))`` tile plus
    the running max, sum and output of one query block, where ``b`` is ``block_size`` or, as
    in :func:`~sdpa_lib.tiled.tiled_attention`, :func:`~sdpa_lib.tiled.default_block_size`.

    Returns
    -------
    dict with keys ``"inputs"``, ``"output"``, ``"intermediate"``, ``"total"`` (bytes)

    Examples
    --------
    >>> attention_memory_bytes(4096, 4096, 64, 64)["intermediate"] // 2**20
    64
    >>> attention_memory_bytes(4096, 4096, 64, 64, tiled=True)["intermediate"] // 2**20  # 1024 x 1024 tile
    4
    """
    L, S, E, Ev = (check_positive_int(v, n) for v, n in ((L, "L"), (S, "S"), (E, "E"), (Ev, "Ev")))
    batch = check_positive_int(batch, "batch")
    itemsize = np.dtype(dtype).itemsize
    if tiled:
        block = (default_block_size(L, S, itemsize=itemsize, batch=batch) if block_size is None
                 else check_positive_int(block_size, "block_size"))
        rows, cols = min(block, L), min(block, S)
        intermediate = rows * cols + rows * (Ev + 2)  # tile, running output, max and sum
    else:
        intermediate = L * S
    sizes = {"inputs": (L * E + S * E + S * Ev), "output": L * Ev, "intermediate": intermediate}
    sizes = {name: count * itemsize * batch for name, count in sizes.items()}
    sizes["total"] = sum(sizes.values())
    return sizes
