"""Scaled dot-product attention (`nn.dot_product_attention`), as in "Attention is all you need".

Shapes follow JAX's convention: `query` is `(B, T, N, H)` (batch, query length,
heads, head size), `key` and `value` are `(B, S, K, H)`. `N` may be a multiple
of `K` (grouped-query attention: each key/value head serves `N // K` query
heads). The batch axis may be absent. The logits `q . k * scale` go through an
optional additive `bias`, boolean `mask` (True keeps), causal mask and
sequence-length masks, then a softmax over `S` computed in float32 (for
low-precision inputs), and weight the values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_numpy.lax import _dot, _shape_ops
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.nn._softmax import softmax
from polyjax_numpy.numpy import _util as _u


def _broadcast_to(x: Any, shape: tuple, name: str) -> Any:
    xs = tuple(_u.shape(x))
    try:
        np.broadcast_shapes(xs, shape)
    except ValueError:
        raise ValueError(
            f"dot_product_attention: {name} of shape {xs} does not broadcast to "
            f"the logits' shape {shape} (B, N, T, S)"
        ) from None
    if len(xs) < len(shape):
        x = _shape_ops.broadcast_to_rank(x, len(shape))
        xs = tuple(_u.shape(x))
    return _shape_ops.broadcast_in_dim(x, shape, tuple(range(len(shape))))


def dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    bias: Any = None,
    mask: Any = None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    query_seq_lengths: Any = None,
    key_value_seq_lengths: Any = None,
    local_window_size: int | tuple[int, int] | None = None,
    implementation: str | None = None,
) -> Any:
    """Scaled dot-product attention.

    Args:
      query: `(B, T, N, H)` or `(T, N, H)`.
      key, value: `(B, S, K, H)` or `(S, K, H)`, with `N % K == 0`.
      bias: optional additive bias, broadcastable to `(B, N, T, S)`.
      mask: optional boolean mask broadcastable to `(B, N, T, S)`; False entries are
        excluded.
      scale: the logits' scale (default `1 / sqrt(H)`).
      is_causal: mask out keys after each query position.
      query_seq_lengths, key_value_seq_lengths: optional `(B,)` int lengths; positions
        beyond them are masked.
      local_window_size: `(left, right)` or one int: each query only attends to keys
        within that window of its position.
      implementation: None or "xla" (others are accelerator kernels: NotImplementedError).

    Returns:
      The attention output, of `query`'s shape.

    Raises:
      ValueError: shapes or head counts that do not fit.
    """
    if implementation not in (None, "xla"):
        raise NotImplementedError(
            f"dot_product_attention: implementation={implementation!r} is not available; "
            "use None or 'xla'"
        )
    _u.check_arraylike("dot_product_attention", query, key, value)
    query, key, value = _u.promote_dtypes(query, key, value)
    unbatched = _u.ndim(query) == 3
    if unbatched:
        query, key, value = (_shape_ops.expand_dims(x, (0,)) for x in (query, key, value))
    for name, x in (("query", query), ("key", key), ("value", value)):
        if _u.ndim(x) != 4:
            raise ValueError(
                f"dot_product_attention: {name} must be rank 3 or 4, got shape {_u.shape(x)}"
            )
    b, t, n, h = _u.shape(query)
    _, s, k, hk = _u.shape(key)
    if _u.shape(value) != _u.shape(key):
        raise ValueError(
            f"dot_product_attention: key {_u.shape(key)} and value "
            f"{_u.shape(value)} must have the same shape"
        )
    if hk != h or n % k:
        raise ValueError(
            f"dot_product_attention: query {_u.shape(query)} and key {_u.shape(key)} need the "
            "same head size H and a number of query heads N that is a multiple of K"
        )
    groups = n // k
    dtype = _u.dtype(query)
    scale = 1.0 / np.sqrt(h) if scale is None else scale

    # Grouped heads: query (B, T, K, G, H) against key (B, S, K, H).
    q = _shape_ops.reshape(query, (b, t, k, groups, h))
    # logits[b, k, g, t, s] = sum_h q[b, t, k, g, h] * key[b, s, k, h]
    logits = _dot.dot_general(
        q,
        key,
        (((4,), (3,)), ((0, 2), (0, 2))),
        preferred_element_type=np.dtype(np.float32)
        if dtypes.issubdtype(dtype, np.floating)
        else None,
    )
    # dot_general puts batch dims first, then q's free (T, G), then key's (S):
    # (B, K, T, G, S) -> (B, K, G, T, S) -> (B, N, T, S)
    logits = _shape_ops.transpose(logits, (0, 1, 3, 2, 4))
    logits = _shape_ops.reshape(logits, (b, n, t, s))
    ldtype = _u.dtype(logits)
    logits = lax.mul(logits, np.asarray(scale, ldtype)[()])
    full = (b, n, t, s)
    if bias is not None:
        bias = _u.convert(bias, ldtype) if _u.is_operand(bias) else bias
        if unbatched and _u.ndim(bias) == 3:
            bias = _shape_ops.expand_dims(bias, (0,))
        logits = lax.add(logits, _broadcast_to(bias, full, "bias"))
    keep = None
    if mask is not None:
        mask = _u.convert(mask, np.dtype(bool))
        if unbatched and _u.ndim(mask) == 3:
            mask = _shape_ops.expand_dims(mask, (0,))
        keep = _broadcast_to(mask, full, "mask")
    rows = _shape_ops.broadcasted_iota(np.int32, full, 2)
    cols = _shape_ops.broadcasted_iota(np.int32, full, 3)
    if is_causal:
        keep = _and(keep, lax.ge(rows, cols))
    if local_window_size is not None:
        left, right = (
            (local_window_size, local_window_size)
            if isinstance(local_window_size, int)
            else local_window_size
        )
        keep = _and(
            keep,
            lax.bitwise_and(
                lax.ge(cols, lax.sub(rows, np.int32(left))),
                lax.le(cols, lax.add(rows, np.int32(right))),
            ),
        )
    if query_seq_lengths is not None:
        lengths = _shape_ops.broadcast_in_dim(
            _u.convert(query_seq_lengths, np.dtype(np.int32)), full, (0,)
        )
        keep = _and(keep, lax.lt(rows, lengths))
    if key_value_seq_lengths is not None:
        lengths = _shape_ops.broadcast_in_dim(
            _u.convert(key_value_seq_lengths, np.dtype(np.int32)), full, (0,)
        )
        keep = _and(keep, lax.lt(cols, lengths))
    if keep is not None:
        # A large negative finite value (not -inf): a fully masked row stays finite.
        big_negative = np.asarray(
            np.finfo(np.float32).min if ldtype == np.float32 else dtypes.finfo(ldtype).min, ldtype
        )[()]
        logits = lax.select_n(keep, _shape_ops.full_like(logits, big_negative), logits)
    probs = softmax(logits, axis=-1)
    probs = lax.convert_element_type(probs, dtype)
    # out[b, t, n, h] = sum_s probs[b, n, t, s] * value[b, s, n // G, h]
    probs = _shape_ops.reshape(probs, (b, k, groups, t, s))
    out = _dot.dot_general(probs, value, (((4,), (1,)), ((0, 1), (0, 2))))
    # (B, K, G, T, H) -> (B, T, K, G, H) -> (B, T, N, H)
    out = _shape_ops.reshape(_shape_ops.transpose(out, (0, 3, 1, 2, 4)), (b, t, n, h))
    return _shape_ops.squeeze(out, (0,)) if unbatched else out


def _and(a: Any, b: Any) -> Any:
    return b if a is None else lax.bitwise_and(a, b)
