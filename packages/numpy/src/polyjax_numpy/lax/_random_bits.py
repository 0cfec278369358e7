"""Random bits: the `threefry2x32` block cipher and XLA's `rng_bit_generator`.

`threefry2x32(key1, key2, x1, x2)` is the counter-based Threefry-2x32 cipher
with 20 rounds (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
SC 2011): it encrypts the pairs of 32-bit words `(x1, x2)` with the key
`(key1, key2)`, elementwise. It is written with lax's integer operations
(wrapping uint32 adds, rotations made of shifts and `or`, and `xor`), so it is
bit-exact on every backend; it has no derivative (its values are integers).

`rng_bit_generator(key, shape, dtype, algorithm)` is XLA's stateful-looking
but pure generator: it maps a key to `(new_key, bits)`.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import ShapedArray
from polyjax_core.primitive import Primitive
from polyjax_core.typing import ArrayLike
from polyjax_interpreters import batching, mlir
from polyjax_numpy.lax import _shape_rules as sr
from polyjax_numpy.lax._declare import define_rules
from polyjax_numpy.lax._elementwise import (
    add,
    bitwise_or,
    bitwise_xor,
    shift_left,
    shift_right_logical,
)
from polyjax_numpy.lax._shape_ops import broadcast_in_dim, concatenate, reshape, slice
from polyjax_numpy.lax._sharding_constraint import batched_out_sharding

__all__ = [
    "RandomAlgorithm",
    "rng_bit_generator",
    "rng_bit_generator_p",
    "threefry2x32",
    "threefry2x32_p",
]

_U32 = np.dtype(np.uint32)

# ---------------------------------------------------------------------------
# threefry2x32

# Rotation distances of Threefry-2x32 (Random123, table 4), used four at a time.
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
# The key-schedule parity constant of Threefish (the third key word is k0 ^ k1 ^ it).
_PARITY = 0x1BD11BDA


def _threefry2x32_rule(*avals: ShapedArray) -> list[ShapedArray]:
    sr.check_dtypes("threefry2x32", avals, [(np.uint32,)] * 4)
    shape = sr.broadcasting_shape("threefry2x32", *(a.shape for a in avals))
    return [ShapedArray(shape, _U32), ShapedArray(shape, _U32)]


def _u32(value: int) -> np.ndarray:
    return np.array(value, _U32)


def _rotl(x: Any, d: int) -> Any:
    return bitwise_or(shift_left(x, _u32(d)), shift_right_logical(x, _u32(32 - d)))


def _threefry2x32_lowered(k1: Any, k2: Any, x1: Any, x2: Any) -> list[Any]:
    """The cipher in lax operations (traced by `mlir.lower_fun`)."""
    shapes = [tuple(v.shape) for v in (k1, k2, x1, x2)]
    shape = sd.broadcast_shapes(*shapes)  # symbolic dimensions allowed

    def full(v: Any) -> Any:
        if sd.definitely_equal_shape(v.shape, shape):
            return v
        dims = tuple(range(len(shape))) if v.shape else ()
        return broadcast_in_dim(v, shape, dims)

    k1, k2, x1, x2 = map(full, (k1, k2, x1, x2))
    ks = (k1, k2, bitwise_xor(bitwise_xor(k1, k2), _u32(_PARITY)))
    x1, x2 = add(x1, ks[0]), add(x2, ks[1])
    for group in range(5):
        for r in _ROTATIONS[group % 2]:
            x1 = add(x1, x2)
            x2 = bitwise_xor(_rotl(x2, r), x1)
        # Key injection after every four rounds.
        i = group + 1
        x1 = add(x1, ks[i % 3])
        x2 = add(add(x2, ks[(i + 1) % 3]), _u32(i))
    return [x1, x2]


def _threefry2x32_batch(args: Sequence[Any], dims: Sequence[Any]) -> tuple:
    args, out_dim = batching._broadcast_args(args, dims)
    return threefry2x32_p.bind(*args), [out_dim, out_dim]


threefry2x32_p = Primitive("threefry2x32")
threefry2x32_p.multiple_results = True
define_rules(
    threefry2x32_p,
    _threefry2x32_rule,
    mlir.lower_fun(_threefry2x32_lowered),
    jvp="zero",
    batching=_threefry2x32_batch,
)


def threefry2x32(key1: ArrayLike, key2: ArrayLike, x1: ArrayLike, x2: ArrayLike) -> list:
    """Threefry-2x32 (20 rounds) of the counters `(x1, x2)` under the key `(key1, key2)`.

    Args:
      key1, key2: the two 32-bit words of the key, uint32 arrays.
      x1, x2: the two 32-bit words of each block to encrypt, uint32 arrays.
        All four operands have one shape, or are scalars.

    Returns:
      `[y1, y2]`: the two words of the encrypted blocks, uint32 arrays.

    Example:
      >>> import numpy as np
      >>> z = np.uint32(0)
      >>> [hex(int(v)) for v in threefry2x32(z, z, z, z)]
      ['0x6b200159', '0x99ba4efe']
    """
    return threefry2x32_p.bind(key1, key2, x1, x2)


# ---------------------------------------------------------------------------
# rng_bit_generator


class RandomAlgorithm(enum.IntEnum):
    """Which generator `rng_bit_generator` uses (XLA's `RandomAlgorithm`)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2


_ALGORITHM_NAMES = {
    RandomAlgorithm.RNG_DEFAULT: "DEFAULT",
    RandomAlgorithm.RNG_THREE_FRY: "THREE_FRY",
    RandomAlgorithm.RNG_PHILOX: "PHILOX",
}
_BITS_DTYPES = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))


def _rng_bit_generator_rule(
    key: ShapedArray,
    *,
    shape: tuple,
    dtype: np.dtype,
    algorithm: RandomAlgorithm,
    out_sharding: Any,
) -> list[ShapedArray]:
    if key.dtype != _U32 or key.shape != (4,):
        raise TypeError(
            f"rng_bit_generator: the key must be a uint32[4] array, got {key.str_short()}"
        )
    if dtype not in _BITS_DTYPES:
        raise TypeError(f"rng_bit_generator: dtype must be unsigned, got {dtype}")
    return [ShapedArray(key.shape, key.dtype), ShapedArray(tuple(shape), dtype)]


def _rng_bit_generator_lowering(
    ctx: mlir.LoweringRuleContext,
    key: ir.Value,
    *,
    shape: tuple,
    dtype: np.dtype,
    algorithm: RandomAlgorithm,
    out_sharding: Any,
) -> list:
    # XLA's generators keep their state in uint64 words: the key's four
    # uint32 words are viewed as two uint64 ones, and back.
    u64 = mlir.dtype_to_ir_type(np.dtype(np.uint64))
    u32 = mlir.dtype_to_ir_type(_U32)
    state = hlo.bitcast_convert(
        ir.RankedTensorType.get([2], u64),
        hlo.reshape(ir.RankedTensorType.get([2, 2], u32), key),
    )
    # XLA generates 32 or 64-bit words: narrower dtypes keep the low bits.
    gen_dtype = dtype if dtype.itemsize >= 4 else _U32
    bits_type = ir.RankedTensorType.get(list(shape), mlir.dtype_to_ir_type(gen_dtype))
    algo = ir.Attribute.parse(f"#stablehlo<rng_algorithm {_ALGORITHM_NAMES[algorithm]}>")
    op = hlo.RngBitGeneratorOp(state.type, bits_type, algo, state)
    new_state, bits = op.results
    new_key = hlo.reshape(
        ir.RankedTensorType.get([4], u32),
        hlo.bitcast_convert(ir.RankedTensorType.get([2, 2], u32), new_state),
    )
    if gen_dtype != dtype:
        bits = hlo.convert(ir.RankedTensorType.get(list(shape), mlir.dtype_to_ir_type(dtype)), bits)
    return [new_key, bits]


def _rng_bit_generator_batch(
    args: Sequence[Any], dims: Sequence[Any], *, out_sharding: Any, **params: Any
) -> tuple:
    # One generator per key: the batch of keys is unstacked, and the results stacked.
    (keys,), (d,) = args, dims
    keys = batching.moveaxis(keys, d, 0)
    n = keys.shape[0]
    new_keys, bits = [], []
    for i in range(n):
        k = reshape(slice(keys, (i, 0), (i + 1, 4)), (4,))
        nk, b = rng_bit_generator_p.bind(k, out_sharding=None, **params)
        new_keys.append(reshape(nk, (1, 4)))
        bits.append(reshape(b, (1, *b.shape)))
    stacked = batched_out_sharding(concatenate(bits, 0), out_sharding, 0)
    return [concatenate(new_keys, 0), stacked], [0, 0]


rng_bit_generator_p = Primitive("rng_bit_generator")
rng_bit_generator_p.multiple_results = True
define_rules(
    rng_bit_generator_p,
    _rng_bit_generator_rule,
    _rng_bit_generator_lowering,
    jvp="zero",
    batching=_rng_bit_generator_batch,
)


def rng_bit_generator(
    key: ArrayLike,
    shape: Sequence[int],
    dtype: Any = np.uint32,
    algorithm: RandomAlgorithm = RandomAlgorithm.RNG_DEFAULT,
    *,
    out_sharding: Any = None,
) -> tuple:
    """Random bits from XLA's generator: `(new_key, bits)`.

    The result depends on the backend's implementation of `algorithm`
    (`RNG_DEFAULT` lets the backend choose); it is deterministic for a given
    key on one backend.

    Args:
      key: a uint32[4] array, the generator's state.
      shape: the shape of `bits`.
      dtype: an unsigned integer dtype for `bits` (uint8 and uint16 keep the
        low bits of 32-bit words).
      algorithm: a `RandomAlgorithm`.
      out_sharding: the sharding of `bits` (explicit mode: its type's sharding).

    Returns:
      `(new_key, bits)`: the next state (uint32[4]) and the random bits.
    """
    shape = tuple(int(s) for s in shape)
    dtype = dtypes.canonicalize_dtype(dtype)  # uint64 is uint32 without x64, as in JAX
    new_key, bits = rng_bit_generator_p.bind(
        key,
        shape=shape,
        dtype=dtype,
        algorithm=RandomAlgorithm(algorithm),
        out_sharding=out_sharding,
    )
    return new_key, bits
