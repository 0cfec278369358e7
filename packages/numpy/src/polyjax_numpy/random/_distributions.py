"""Samplers: random bits turned into draws from distributions, as JAX draws them.

Every sampler takes a key (typed or raw), a static shape and a dtype, and is a
pure function of them. To give JAX's numbers for JAX's keys, each follows
JAX's recipe for the same distribution (which bits it draws, how it splits its
key, which transformation it applies), not merely a correct one:

- `uniform` puts the top mantissa bits of random integers under the exponent of
  1.0 (a float in [1, 2)), subtracts 1, scales to [minval, maxval) and clips
  below at minval;
- `normal` is `sqrt(2) * erf_inv(u)` for `u` uniform in (-1, 1);
- `randint` draws two words per element from two split keys and combines them
  modulo the span, which keeps the bias of the modulo below 2**-32;
- complex `normal` is `(x + 1j y) / sqrt(2)` in complex arithmetic.

Each body runs staged (`_args.staged`), as JAX's does. `uniform_draw` and
`normal_draw` are the unchecked bodies the other samplers build on; they also
take a batch of keys (one draw of `shape` per key).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core.typing import Shape
from polyjax_numpy.lax import _bits, _shape_ops
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.numpy import _out_sharding as _os
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.random import _prng
from polyjax_numpy.random._args import (
    check_shape,
    const,
    float_dtype,
    sample,
    single_key,
    staged,
    to_rank,
)

__all__ = ["bits", "normal", "randint", "uniform"]


@_os.replicated_inside
def bits(key: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Random unsigned integers, every bit uniformly distributed.

    Args:
      key: a single PRNG key (typed or raw).
      shape: the result's shape.
      dtype: an unsigned integer dtype (default uint32).
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Returns:
      An array of `shape` and `dtype`.

    Example:
      >>> from polyjax_numpy import random
      >>> random.bits(random.PRNGKey(0), (2,))
      Array([4070199207, 4202968722], dtype=uint32)
    """
    typed = single_key("bits", key)
    dtype = dtypes.canonicalize_dtype(np.uint32 if dtype is None else dtype)
    if not dtypes.issubdtype(dtype, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return _prng.random_bits(typed, dtype.itemsize * 8, check_shape("bits", shape))


def _uniform_unit(typed: _prng.PRNGKeyArray, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """Floats in [1, 2) minus 1: random mantissa bits under the exponent of 1.0.

    As JAX, the draw is as narrow as the mantissa allows (8 bits for bfloat16),
    then widened to the float's width.
    """
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    draw_bits = next(w for w in (8, 16, 32, 64) if w > nmant)
    uint = np.dtype(f"uint{nbits}")
    raw = _prng.random_bits(typed, draw_bits, shape)
    if draw_bits != nbits:
        raw = lax.convert_element_type(raw, uint)
    one_bits = np.asarray(1.0, dtype).view(uint)[()]
    mantissa = lax.shift_right_logical(raw, const(draw_bits - nmant, uint))
    floats = _bits.bitcast_convert_type(lax.bitwise_or(mantissa, one_bits), dtype)
    return lax.sub(floats, const(1.0, dtype))


@_os.replicated_inside
def uniform(
    key: Any,
    shape: Shape = (),
    dtype: Any = None,
    minval: Any = 0.0,
    maxval: Any = 1.0,
    *,
    out_sharding: Any = None,
) -> Any:
    """Floats drawn uniformly from [minval, maxval).

    Args:
      key: a single PRNG key (typed or raw).
      shape: the result's shape; `minval` and `maxval` must broadcast to it.
      dtype: a floating dtype (default float32, float64 under x64).
      minval, maxval: the bounds, scalars or arrays.
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Returns:
      An array of `shape` and `dtype`.

    Example:
      >>> from polyjax_numpy import random
      >>> random.uniform(random.PRNGKey(0), (2,))
      Array([0.947667 , 0.9785799], dtype=float32)
    """
    shape = check_shape("uniform", shape)
    return sample("uniform", _uniform, key, (minval, maxval), shape, dtype)


@staged("shape", "dtype")
def _uniform(typed: Any, minval: Any, maxval: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    lo, hi = _u.convert(minval, dtype), _u.convert(maxval, dtype)
    return uniform_draw(typed, shape, dtype, lo, hi)


def uniform_draw(
    typed: _prng.PRNGKeyArray, shape: tuple[int, ...], dtype: np.dtype, lo: Any, hi: Any
) -> Any:
    """`uniform` without the argument checks, for the other samplers.

    `typed` may be a batch of keys (shape B), giving draws of shape B + `shape`;
    `lo` and `hi` are of `dtype` and broadcast to `shape`.
    """
    lo, hi = to_rank(lo, len(shape)), to_rank(hi, len(shape))
    unit = _uniform_unit(typed, shape, dtype)
    scaled = lax.add(lax.mul(unit, lax.sub(hi, lo)), lo)
    # Rounding in the scaling can land just below minval; the bound is kept.
    return lax.max(lo, scaled)


@_os.replicated_inside
def normal(key: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Standard normal draws (complex dtypes: real and imaginary parts each of variance 1/2).

    Args:
      key: a single PRNG key (typed or raw).
      shape: the result's shape.
      dtype: a floating or complex dtype (default float32).
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.normal(random.PRNGKey(0), (2,))
      Array([1.6226422, 2.0252647], dtype=float32)
    """
    shape = check_shape("normal", shape)
    return sample("normal", _normal, key, (), shape, dtype, dtype_rule=_float_or_complex_dtype)


def _float_or_complex_dtype(fun_name: str, dtype: Any) -> np.dtype:
    dtype = dtypes.canonicalize_dtype(dtypes.float_ if dtype is None else dtype)
    if dtypes.issubdtype(dtype, np.complexfloating):
        return dtype
    return float_dtype(fun_name, dtype)


@staged("shape", "dtype")
def _normal(typed: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    if dtypes.issubdtype(dtype, np.complexfloating):
        # (re + 1j im) / sqrt(2) in complex arithmetic, as JAX computes it.
        real_dtype = np.dtype(dtypes.finfo(dtype).dtype)
        k_re, k_im = _prng.split_keys(typed, 2)
        re = lax.convert_element_type(normal_draw(k_re, shape, real_dtype), dtype)
        im = lax.convert_element_type(normal_draw(k_im, shape, real_dtype), dtype)
        z = lax.add(re, lax.mul(const(1j, dtype), im))
        sqrt2 = np.asarray(np.sqrt(2.0), real_dtype).astype(dtype)[()]
        return lax.div(z, sqrt2)
    return normal_draw(typed, shape, dtype)


def symmetric_uniform(typed: _prng.PRNGKeyArray, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """Uniform draws in the open interval (-1, 1) (keys may be a batch)."""
    lo = np.nextafter(np.asarray(-1.0, dtype), np.asarray(0.0, dtype))[()]
    return uniform_draw(typed, shape, dtype, lo, const(1.0, dtype))


def normal_draw(typed: _prng.PRNGKeyArray, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """Real standard normal draws without the argument checks (keys may be a batch)."""
    u = symmetric_uniform(typed, shape, dtype)
    return lax.mul(const(np.sqrt(2.0), dtype), lax.erf_inv(u))


@_os.replicated_inside
def randint(
    key: Any, shape: Shape, minval: Any, maxval: Any, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Integers drawn uniformly from [minval, maxval).

    Bounds outside the dtype's range are clipped to it (a `maxval` above the
    range makes the dtype's max a possible value); an empty range
    (`maxval <= minval`) gives `minval`. 8- and 16-bit dtypes are sampled as
    int32 and converted, as JAX does.

    Args:
      key: a single PRNG key (typed or raw).
      shape: the result's shape; the bounds must broadcast to it.
      minval, maxval: the bounds (inclusive, exclusive), scalars or arrays.
      dtype: an integer dtype (default int32, int64 under x64).
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Raises:
      OverflowError: a Python int bound does not fit the default integer type.

    Example:
      >>> from polyjax_numpy import random
      >>> random.randint(random.PRNGKey(0), (3,), 0, 10)
      Array([9, 0, 2], dtype=int32)
    """
    shape = check_shape("randint", shape)
    bounds = (_int_bound("minval", minval), _int_bound("maxval", maxval))
    return sample("randint", _randint, key, bounds, shape, dtype, dtype_rule=_randint_dtype)


def _randint_dtype(fun_name: str, dtype: Any) -> np.dtype:
    dtype = dtypes.canonicalize_dtype(dtypes.int_ if dtype is None else dtype)
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"{fun_name} only accepts integer dtypes, got {dtype}")
    return dtype


@staged("shape", "dtype")
def _randint(typed: Any, minval: Any, maxval: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    if dtype.itemsize < 4:
        info = dtypes.iinfo(dtype)
        minval = _clip(minval, int(info.min), int(info.max))
        maxval = _clip(maxval, int(info.min), int(info.max) + 1)
        out = _randint_words(typed, shape, minval, maxval, np.dtype(np.int32))
        return lax.convert_element_type(out, dtype)
    return _randint_words(typed, shape, minval, maxval, dtype)


def _randint_words(
    typed: _prng.PRNGKeyArray, shape: tuple[int, ...], minval: Any, maxval: Any, dtype: np.dtype
) -> Any:
    info = dtypes.iinfo(dtype)
    nbits = info.bits
    uint = np.dtype(f"uint{nbits}")
    above = _greater_than(maxval, int(info.max))
    minval = _u.convert(_clip(minval, int(info.min), int(info.max)), dtype)
    maxval = _u.convert(_clip(maxval, int(info.min), int(info.max)), dtype)
    minval, maxval = to_rank(minval, len(shape)), to_rank(maxval, len(shape))

    k1, k2 = _prng.split(typed, 2)
    hi_bits = _prng.random_bits(k1, nbits, shape)
    lo_bits = _prng.random_bits(k2, nbits, shape)

    span = lax.convert_element_type(lax.sub(maxval, minval), uint)
    one = const(1, uint)
    # An empty range gives minval: a span of 1 always draws offset 0.
    span = lax.select_n(lax.le(maxval, minval), span, _shape_ops.full_like(span, 1))
    # A maxval clipped from above the range includes the max itself.
    span = lax.select_n(lax.bitwise_and(above, lax.gt(maxval, minval)), span, lax.add(span, one))
    # The two draws act as one 2*nbits-bit number modulo span:
    # (hi * 2**nbits + lo) mod span, with 2**nbits mod span = (2**(nbits/2) mod span)**2.
    multiplier = lax.rem(const(2 ** (nbits // 2), uint), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.rem(
        lax.add(lax.mul(lax.rem(hi_bits, span), multiplier), lax.rem(lo_bits, span)), span
    )
    return lax.add(minval, lax.convert_element_type(offset, dtype))


def _int_bound(name: str, v: Any) -> Any:
    """A randint bound as an array; Python ints must fit the default integer (JAX's rule)."""
    if isinstance(v, int) and not isinstance(v, bool):
        default = dtypes.canonicalize_dtype(dtypes.int_)
        info = dtypes.iinfo(default)
        if not int(info.min) <= v <= int(info.max):
            raise OverflowError(
                f"randint: {name}={v} does not fit in {default.name}; pass an array of a wider "
                "dtype to have it clipped"
            )
        return const(v, default)
    _u.check_arraylike("randint", v)
    return v


def _representable(value: int, dtype: np.dtype) -> bool:
    if dtypes.issubdtype(dtype, np.integer):
        info = dtypes.iinfo(dtype)
        return int(info.min) <= value <= int(info.max)
    return True


def _clip(v: Any, lo: int, hi: int) -> Any:
    """`v` clipped to [lo, hi], comparing in `v`'s own dtype (a bound it cannot hold is moot)."""
    dt = _u.dtype(v)
    if _representable(lo, dt):
        v = lax.max(v, const(lo, dt))
    if _representable(hi, dt):
        v = lax.min(v, const(hi, dt))
    return v


def _greater_than(v: Any, bound: int) -> Any:
    dt = _u.dtype(v)
    if not _representable(bound, dt):
        return np.bool_(False) if bound > 0 else np.bool_(True)
    return lax.gt(v, const(bound, dt))
