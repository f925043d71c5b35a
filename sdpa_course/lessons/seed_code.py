"""The seed document's Python demo (chapter 10), kept as written so its printed numbers can be reproduced.

The three functions below are the seed's code line for line.  Only two things changed:
the Chinese comments are replaced by English ones in our own words, and the
``if __name__ == "__main__":`` block became :func:`run_seed_demo`, which also *returns*
what it printed so a notebook or a test can check it.  The printed labels are English
(the seed prints them in Chinese).

Known limits of this code, on purpose left in place (chapter 10 shows each one):

* ``q @ k.T`` reverses *every* axis of ``k``, so the function is only right for 2-D
  inputs ``(S, E)``; a batch ``(B, S, E)`` either fails or, when ``B == E == S``,
  silently returns numbers of the right shape that are wrong.
* no mask, no batch axes, no way to choose the scale.
* the projections are drawn from ``randn`` (variance 1), not the fan-in scaled
  ``N(0, 1/d_model)`` that keeps ``Var(q . k)`` near ``d_k`` (see
  :func:`sdpa_lib.scores.init_projection`).

Use :func:`sdpa_lib.scaled_dot_product_attention` for anything else.
"""
import numpy as np


def softmax(x, axis=-1):
    # Shift by the row maximum first: exp then never sees a large positive number and cannot overflow
    x = x - np.max(x, axis=axis, keepdims=True)
    return np.exp(x) / np.sum(np.exp(x), axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v):
    d_k = k.shape[-1]
    scores = q @ k.T                # step 1: every query dotted with every key
    scores = scores / np.sqrt(d_k)  # step 2: divide by sqrt(d_k)
    weights = softmax(scores)       # step 3: softmax turns each row into weights
    output = weights @ v            # step 4: weighted sum of the values
    return output, weights


def run_seed_demo():
    """Run the seed's ``__main__`` block unchanged and return every array it made.

    Calls ``np.random.seed(0)``, so it resets numpy's *global* random state, exactly as
    the seed's script does.  Prints the rounded weights and output as the seed does.

    Returns
    -------
    dict
        ``X`` ``(3, 4)``; ``W_q, W_k, W_v`` ``(4, 4)``; ``q, k, v`` ``(3, 4)``;
        ``output`` ``(3, 4)``; ``weights`` ``(3, 3)``, rows summing to 1.

    Examples
    --------
    >>> import contextlib, io
    >>> with contextlib.redirect_stdout(io.StringIO()):
    ...     demo = run_seed_demo()
    >>> demo["weights"].shape, demo["output"].shape
    ((3, 3), (3, 4))
    """
    np.random.seed(0)
    # Three word vectors standing for the sentence "我 爱 北京" (I love Beijing), one row per word
    X = np.array([
        [0.9, 0.1, 0.2, 0.3],
        [0.2, 0.8, 0.4, 0.1],
        [0.1, 0.3, 0.6, 0.9],
    ])
    d_model = X.shape[1]
    # Three random projection matrices; training would adjust them by gradient descent
    W_q = np.random.randn(d_model, d_model)
    W_k = np.random.randn(d_model, d_model)
    W_v = np.random.randn(d_model, d_model)
    q, k, v = X @ W_q, X @ W_k, X @ W_v
    output, weights = scaled_dot_product_attention(q, k, v)
    print("Attention weights (each row sums to 1):")
    print(np.round(weights, 3))
    print("Self-attention output (same shape as the input):")
    print(np.round(output, 3))
    return dict(X=X, W_q=W_q, W_k=W_k, W_v=W_v, q=q, k=k, v=v, output=output, weights=weights)
