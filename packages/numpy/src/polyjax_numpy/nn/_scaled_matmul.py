"""Block-scaled matrix products: `scaled_matmul`, `scaled_dot_general` and their configs.

A block-scaled operand is a low-precision array (float8 or float4) together
with one scale per block of `block_size` consecutive elements along the
contracting dimension; the value it stands for is ``data * scale`` (times an
optional global scale). JAX lowers these to cuDNN kernels on GPUs only; polyjax
computes them on every platform by the definition: both operands are widened to
float32, multiplied by their repeated scales and contracted, with the result in
`preferred_element_type`.

`scaled_dot_general` quantizes its full-precision operands first: for each
block, the scale is ``amax / max(data_type)`` (rounded up to a power of two for
the ``float8_e8m0fnu`` scales of "mxfp8", so that no element overflows), and the
data is ``x / scale`` rounded to `data_type`. Derivatives pass straight through
the quantization (the rounding's derivative is taken as 1).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

import ml_dtypes
import numpy as np

from polyjax_core import dtypes
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.numpy import _util as _u


@dataclasses.dataclass
class BlockScaleConfig:
    """How one operand of `scaled_dot_general` is quantized.

    Attributes:
      mode: "mxfp8" or "nvfp4".
      block_size: elements per scale along the contracting dimension.
      data_type: the quantized data's dtype.
      scale_type: the scales' dtype.
      global_scale: an extra float32 scale for the whole operand (nvfp4), or None.
      infer_only: whether only the forward product is needed.
    """

    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any
    infer_only: bool


def get_scaled_dot_general_config(
    mode: Literal["nvfp4", "mxfp8"], global_scale: Any = None
) -> BlockScaleConfig:
    """The standard quantization config for `mode`.

    "mxfp8": blocks of 32, ``float8_e4m3fn`` data, ``float8_e8m0fnu`` scales.
    "nvfp4": blocks of 16, ``float4_e2m1fn`` data, ``float8_e4m3fn`` scales and a
    float32 global scale (default 1).

    Example:
      >>> from polyjax_numpy import nn
      >>> nn.get_scaled_dot_general_config("mxfp8").block_size
      32
    """
    if mode == "mxfp8":
        return BlockScaleConfig(mode, 32, dtypes.float8_e4m3fn, dtypes.float8_e8m0fnu, None, False)
    if mode == "nvfp4":
        if global_scale is None:
            global_scale = jnp.ones((1,), np.float32)
        return BlockScaleConfig(
            mode, 16, dtypes.float4_e2m1fn, dtypes.float8_e4m3fn, global_scale, False
        )
    raise ValueError(f"Unsupported mode: {mode!r} (expected 'mxfp8' or 'nvfp4').")


def _expand_scales(scales: Any, k: int, name: str) -> Any:
    blocks = scales.shape[-1]
    if blocks == 0 or k % blocks:
        raise ValueError(
            f"scaled_matmul: {name} has {blocks} blocks, which do not divide the contracting "
            f"size {k}."
        )
    return jnp.repeat(scales.astype(np.float32), k // blocks, axis=-1)


def scaled_matmul(
    lhs: Any,
    rhs: Any,
    lhs_scales: Any,
    rhs_scales: Any,
    preferred_element_type: Any = np.float32,
) -> Any:
    """The product of two block-scaled operands: ``out[b, m, n] = sum_k L[b, m, k] R[b, n, k]``,
    with ``L = lhs * lhs_scales`` (each scale repeated over its block) and likewise `R`.

    Args:
      lhs: ``[B, M, K]``; rhs: ``[B, N, K]`` (note: `K` last in both).
      lhs_scales: ``[B, M, K // block]``; rhs_scales: ``[B, N, K // block]``.
      preferred_element_type: the result's dtype.

    Returns:
      ``[B, M, N]``.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy import nn
      >>> nn.scaled_matmul(np.ones((1, 1, 4), np.float32), np.ones((1, 1, 4), np.float32),
      ...                  np.float32([[[2, 1]]]), np.float32([[[1, 3]]]))
      Array([[[10.]]], dtype=float32)
    """
    _u.check_arraylike("scaled_matmul", lhs, rhs, lhs_scales, rhs_scales)
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)
    lhs_scales, rhs_scales = jnp.asarray(lhs_scales), jnp.asarray(rhs_scales)
    if (
        lhs.ndim != 3
        or rhs.ndim != 3
        or lhs.shape[0] != rhs.shape[0]
        or lhs.shape[2] != rhs.shape[2]
    ):
        raise ValueError(
            f"scaled_matmul: expected lhs [B, M, K] and rhs [B, N, K], got {lhs.shape} and "
            f"{rhs.shape}."
        )
    for scales, data, name in ((lhs_scales, lhs, "lhs_scales"), (rhs_scales, rhs, "rhs_scales")):
        if scales.ndim != 3 or scales.shape[:2] != data.shape[:2]:
            raise ValueError(
                f"scaled_matmul: {name} must be [B, rows, K // block] matching {data.shape}, "
                f"got {scales.shape}."
            )
    k = lhs.shape[2]
    left = lhs.astype(np.float32) * _expand_scales(lhs_scales, k, "lhs_scales")
    right = rhs.astype(np.float32) * _expand_scales(rhs_scales, k, "rhs_scales")
    out = jnp.einsum("bmk,bnk->bmn", left, right, preferred_element_type=np.float32)
    return out.astype(preferred_element_type)


def _quantize(x: Any, config: BlockScaleConfig) -> tuple[Any, Any]:
    """`(data, scales)` of `x` (``[B, R, K]``, `K` a multiple of the block size)."""
    bs = config.block_size
    b, r, k = x.shape
    blocks = jnp.reshape(x.astype(np.float32), (b, r, k // bs, bs))
    if config.global_scale is not None:
        blocks = blocks / jnp.asarray(config.global_scale, np.float32).reshape(())
    top = float(ml_dtypes.finfo(config.data_type).max)
    amax = jnp.max(jnp.abs(blocks), axis=-1)
    scale = amax / top
    if np.dtype(config.scale_type) == np.dtype(dtypes.float8_e8m0fnu):
        scale = jnp.exp2(jnp.ceil(jnp.log2(jnp.where(scale > 0, scale, 1.0))))
    scale = jnp.where(scale > 0, scale, 1.0).astype(config.scale_type)
    scaled = blocks / scale.astype(np.float32)[..., None]
    # Straight-through: the rounding's derivative is taken as 1.
    rounded = jnp.clip(scaled, -top, top).astype(config.data_type).astype(np.float32)
    data = scaled + lax.stop_gradient(rounded - scaled)
    return jnp.reshape(data, (b, r, k)), scale


def scaled_dot_general(
    lhs: Any,
    rhs: Any,
    dimension_numbers: Any,
    preferred_element_type: Any = np.float32,
    configs: list[BlockScaleConfig] | None = None,
    implementation: Literal["cudnn"] | None = None,
) -> Any:
    """`lax.dot_general` computed on block-quantized operands (see the module docstring).

    Args:
      lhs, rhs: full-precision operands.
      dimension_numbers: ``((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``.
      preferred_element_type: the result's dtype.
      configs: ``[lhs_config, rhs_config, gradient_config]`` (default: three "mxfp8"
        configs); the third is accepted for JAX's signature.
      implementation: None or "cudnn" (the same computation here).

    Returns:
      What `lax.dot_general` returns: batch, then lhs free, then rhs free dimensions.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy import nn
      >>> nn.scaled_dot_general(np.ones((2, 32), np.float32), np.ones((32, 3), np.float32),
      ...                       (((1,), (0,)), ((), ())))
      Array([[32., 32., 32.],
             [32., 32., 32.]], dtype=float32)
    """
    if implementation not in (None, "cudnn"):
        raise ValueError(f"scaled_dot_general: unknown implementation {implementation!r}.")
    if configs is None:
        configs = [get_scaled_dot_general_config("mxfp8")] * 3
    _u.check_arraylike("scaled_dot_general", lhs, rhs)
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(int(d) for d in dims) for dims in (lc, rc, lb, rb))
    lf = tuple(d for d in range(lhs.ndim) if d not in lc + lb)
    rf = tuple(d for d in range(rhs.ndim) if d not in rc + rb)
    lhs_t = jnp.transpose(lhs, lb + lf + lc)
    rhs_t = jnp.transpose(rhs, rb + rf + rc)
    batch = lhs_t.shape[: len(lb)]
    l_free, r_free = (
        lhs_t.shape[len(lb) : len(lb) + len(lf)],
        rhs_t.shape[len(rb) : len(rb) + len(rf)],
    )
    k = int(np.prod(lhs_t.shape[len(lb) + len(lf) :], dtype=np.int64))
    nb = int(np.prod(batch, dtype=np.int64))
    lhs3 = jnp.reshape(lhs_t, (nb, int(np.prod(l_free, dtype=np.int64)), k))
    rhs3 = jnp.reshape(rhs_t, (nb, int(np.prod(r_free, dtype=np.int64)), k))
    bs = max(configs[0].block_size, configs[1].block_size)
    pad = (-k) % bs  # zeros add nothing to the products
    if pad:
        lhs3 = jnp.pad(lhs3, ((0, 0), (0, 0), (0, pad)))
        rhs3 = jnp.pad(rhs3, ((0, 0), (0, 0), (0, pad)))
    lq, ls = _quantize(lhs3, configs[0])
    rq, rs = _quantize(rhs3, configs[1])
    out = scaled_matmul(lq, rq, ls, rs, np.float32)
    for config in configs[:2]:
        if config.global_scale is not None:
            out = out * jnp.asarray(config.global_scale, np.float32).reshape(())
    return jnp.reshape(out, batch + l_free + r_free).astype(preferred_element_type)
