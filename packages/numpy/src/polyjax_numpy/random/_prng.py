"""PRNG keys: how a key is made, split, folded with data, and turned into random bits.

polyjax's random numbers are *counter based*, as JAX's: a key is a few 32-bit
words, and every random value is a pure function of a key. Nothing is stateful,
so a program that wants fresh numbers splits its key (`split`) and never reuses
one. The default (and only built-in) generator is Threefry-2x32
(`lax.threefry2x32`); its conventions here are JAX's, so a given key gives the
same bits as in JAX (with `jax_threefry_partitionable`, JAX's default):

- a seed `s` becomes the key words `[s >> 32, s & 0xFFFFFFFF]` (the high word is
  0 for 32-bit seeds);
- the bits of an array of shape `S` are the encryption of the counters
  `(hi, lo)` of each element's row-major index: for 32 bits, the two output words
  xor-ed; for 64 bits, the words concatenated; for 8 and 16 bits, the 32-bit
  value truncated;
- `split(key, S)` encrypts the same counters and keeps both words as new keys;
- `fold_in(key, d)` encrypts the single counter `[d >> 32, d & 0xFFFFFFFF]`.

**Key arrays.** `random.key(seed)` gives a *typed* key array (dtype
`key<fry>`); `random.PRNGKey(seed)` gives the legacy raw form, a `uint32[2]`
array. Every sampler takes either. A typed key array is a `PRNGKeyArray`: for
transformations a pytree node around its `uint32[..., 2]` key data, with the
generator as static data, so it passes through `jit`, `vmap`, `scan`, `cond` and
`grad` with no special rule; for users (``polyjax.tree_util``) a leaf, as in JAX
(`jax_tree_util.register_array_node`). Indexing, iteration and `reshape` act on
its leading (key) axes. Decision: jaxprs show the key data (`u32[..., 2]`) and the
`threefry2x32` equations where JAX shows `key<fry>[...]` avals and its
`random_*` primitives (docs/random.md).
"""

from __future__ import annotations

import dataclasses
import operator
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from polyjax_core import basearray, config, dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import ShapedArray, ShapeDtypeStruct, register_aval_handler
from polyjax_core.jax_tree_util import register_array_node
from polyjax_numpy.lax import _bits, _random_bits, _shape_ops
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.lax._extended import ExtendedArray
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._creation import asarray

_U32 = np.dtype(np.uint32)
_UINT_BY_WIDTH = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32, 64: np.dtype(np.uint64)}


# ---------------------------------------------------------------------------
# Threefry-2x32 as a PRNG


def _split_words(x: Any) -> tuple[Any, Any]:
    """An integer array as its (high, low) 32-bit words, both uint32."""
    dt = _u.dtype(x)
    if dt.itemsize == 8:
        x = _bits.bitcast_convert_type(x, np.uint64) if dt.kind == "i" else x
        hi = lax.convert_element_type(lax.shift_right_logical(x, np.uint64(32)), _U32)
        lo = lax.convert_element_type(lax.bitwise_and(x, np.uint64(0xFFFFFFFF)), _U32)
        return hi, lo
    if dt.kind == "i":
        x = lax.convert_element_type(x, np.dtype(f"int{max(dt.itemsize, 4) * 8}"))
        x = _bits.bitcast_convert_type(x, _U32)  # the bit pattern: negative seeds wrap
    else:
        x = lax.convert_element_type(x, _U32)
    return _shape_ops.full_like(x, 0, _U32), x


def _counters(shape: tuple[int, ...]) -> tuple[Any, Any]:
    """The (hi, lo) words of each element's row-major index in an array of `shape`."""
    size = sd.shape_size(shape)  # symbolic for symbolic shapes (export)
    if type(size) is int and size >= 2**32:
        raise NotImplementedError(f"random arrays of 2**32 or more elements ({shape})")
    lo = _shape_ops.reshape(_shape_ops.iota(_U32, size), shape)
    return _shape_ops.full(shape, 0, _U32), lo


def _threefry(key_data: Any, hi: Any, lo: Any) -> tuple[Any, Any]:
    """The encryption of the counters `(hi, lo)` (shape S) under keys of shape B: B + S.

    A batch of keys (data of shape B + (2,)) encrypts the same counters under
    each key, as JAX's key arrays do.
    """
    batch = tuple(_u.shape(key_data)[:-1])
    counters = tuple(_u.shape(lo))
    out = (*batch, *counters)
    last = len(batch)

    def word(i: int) -> Any:
        w = _shape_ops.slice(key_data, (0,) * last + (i,), (*batch, i + 1))
        w = _shape_ops.squeeze(w, (last,))
        return _shape_ops.broadcast_in_dim(w, out, tuple(range(last))) if batch else w

    def count(c: Any) -> Any:
        if not batch or not counters:
            return c
        return _shape_ops.broadcast_in_dim(c, out, tuple(range(last, len(out))))

    y1, y2 = _random_bits.threefry2x32(word(0), word(1), count(hi), count(lo))
    return y1, y2


def _stack_words(y1: Any, y2: Any) -> Any:
    axis = _u.ndim(y1)
    return _shape_ops.concatenate(
        [_shape_ops.expand_dims(y1, (axis,)), _shape_ops.expand_dims(y2, (axis,))], axis
    )


def threefry_seed(seed: Any) -> Any:
    """The `uint32[2]` key data of an integer seed."""
    return _stack_words(*_split_words(seed))


def threefry_split(key_data: Any, shape: tuple[int, ...]) -> Any:
    """`uint32[*B, *shape, 2]`: the key data of `shape` new keys derived from each of B."""
    return _stack_words(*_threefry(key_data, *_counters(shape)))


def threefry_fold_in(key_data: Any, data: Any) -> Any:
    """The key data of the key derived from `key_data` and the integer `data`."""
    return _stack_words(*_threefry(key_data, *_split_words(data)))


def threefry_random_bits(key_data: Any, bit_width: int, shape: tuple[int, ...]) -> Any:
    """Random unsigned integers of `bit_width` bits, of shape `B + shape` for B keys."""
    y1, y2 = _threefry(key_data, *_counters(shape))
    if bit_width == 64:
        u64 = _UINT_BY_WIDTH[64]
        y1, y2 = lax.convert_element_type(y1, u64), lax.convert_element_type(y2, u64)
        return lax.bitwise_or(lax.shift_left(y1, np.uint64(32)), y2)
    bits = lax.bitwise_xor(y1, y2)
    if bit_width == 32:
        return bits
    return lax.convert_element_type(bits, _UINT_BY_WIDTH[bit_width])


@dataclasses.dataclass(frozen=True)
class PRNGImpl:
    """A pseudo-random number generator: the functions on its key data.

    Attributes:
      name: the generator's name (`key_impl` returns it; printed in dtypes as `key<tag>`).
      tag: a short name for dtypes.
      key_shape: the shape of one key's data (`(2,)` for threefry).
      seed, split, fold_in, random_bits: the generator's functions on key data.
    """

    name: str
    tag: str
    key_shape: tuple[int, ...]
    seed: Callable[[Any], Any]
    split: Callable[[Any, tuple[int, ...]], Any]
    fold_in: Callable[[Any, Any], Any]
    random_bits: Callable[[Any, int, tuple[int, ...]], Any]

    def __str__(self) -> str:
        return self.name


threefry_prng_impl = PRNGImpl(
    name="threefry2x32",
    tag="fry",
    key_shape=(2,),
    seed=threefry_seed,
    split=threefry_split,
    fold_in=threefry_fold_in,
    random_bits=threefry_random_bits,
)

_IMPLS = {threefry_prng_impl.name: threefry_prng_impl}


def resolve_prng_impl(impl: Any) -> PRNGImpl:
    """`impl` (None for the configured default, a name, or a `PRNGImpl`) as a `PRNGImpl`."""
    if impl is None:
        impl = config.default_prng_impl.value
    if isinstance(impl, PRNGImpl):
        return impl
    if isinstance(impl, str) and impl in _IMPLS:
        return _IMPLS[impl]
    raise ValueError(f"unrecognized PRNG implementation {impl!r}; known: {sorted(_IMPLS)}")


# ---------------------------------------------------------------------------
# Typed key arrays


class _KeyRules:
    """How generic array code treats key dtypes (`ExtendedDType._rules`)."""

    @staticmethod
    def full_like(keys: Any, fill_value: Any, dtype: Any, shape: Any) -> PRNGKeyArray:
        """`zeros_like`/`ones_like`/`full_like` of a key array: a key array of the same
        implementation whose key data is `fill_value` (a number, or keys to broadcast)."""
        if dtype is not None and dtype != keys.dtype:
            raise TypeError(
                f"full_like of a key array needs dtype={keys.dtype} or None, got {dtype}"
            )
        impl = keys._impl
        data_shape = (*(keys.shape if shape is None else shape), *impl.key_shape)
        if isinstance(fill_value, PRNGKeyArray):
            if fill_value._impl != impl:
                raise TypeError(
                    f"full_like: fill value keys of {fill_value.dtype} for keys of {keys.dtype}"
                )
            data = _u.broadcast_to(fill_value._base_array, data_shape)
        else:
            data = _shape_ops.full_like(keys._base_array, fill_value, shape=data_shape)
        return PRNGKeyArray(impl, data)


class PRNGKeyDType(dtypes.ExtendedDType):
    """The dtype of typed key arrays, printed `key<fry>` for threefry."""

    _rules = _KeyRules

    def __init__(self, impl: PRNGImpl):
        self._impl = impl

    @property
    def type(self) -> type:
        return dtypes.prng_key

    @property
    def name(self) -> str:
        return f"key<{self._impl.tag}>"

    @property
    def impl(self) -> PRNGImpl:
        return self._impl

    def __repr__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PRNGKeyDType) and other._impl == self._impl

    def __hash__(self) -> int:
        return hash((PRNGKeyDType, self._impl.name))


class PRNGKeyArray(ExtendedArray):
    """An array of typed PRNG keys (dtype `key<fry>`): the key data and its generator.

    Its shape is the data's shape without the trailing key axes. Transformations
    see it as a pytree node (its one child is the `uint32` key data), users'
    pytree functions as a leaf. As an `ExtendedArray` it goes through the
    structural lax primitives, and so through `jnp.concatenate`, `stack`, `where`,
    `reshape`, `take`, indexing, `.at[]`, `lax.dynamic_slice` ..., which act on
    the key axes; `==`/`!=` compare whole keys; arithmetic raises TypeError, as
    in JAX.
    """

    __slots__ = ("__weakref__", "_base_array", "_impl")  # weakrefs: the key-reuse checker
    __array_priority__ = 100

    def __init__(self, impl: PRNGImpl, key_data: Any):
        # No validation: pytree machinery rebuilds nodes around placeholder leaves.
        self._impl = impl
        self._base_array = key_data

    @property
    def _physical(self) -> Any:
        return self._base_array

    @property
    def _trailing(self) -> tuple[int, ...]:
        return tuple(self._impl.key_shape)

    def _rewrap(self, data: Any) -> PRNGKeyArray:
        return PRNGKeyArray(self._impl, data)

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype)

    @property
    def weak_type(self) -> bool:
        return False

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(_u.shape(self._base_array)[: -len(self._impl.key_shape)])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def dtype(self) -> PRNGKeyDType:
        return PRNGKeyDType(self._impl)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator[PRNGKeyArray]:
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, idx: Any) -> PRNGKeyArray:
        from polyjax_numpy.numpy._indexing import getitem

        return getitem(self, idx)  # NumPy indexing of the key axes, as for arrays

    def reshape(self, *shape: Any) -> PRNGKeyArray:
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = tuple(shape[0])
        new = _shape_ops._compute_newshape(self.shape, shape)
        data = _shape_ops.reshape(self._base_array, (*new, *self._impl.key_shape))
        return PRNGKeyArray(self._impl, data)

    def ravel(self) -> PRNGKeyArray:
        return self.reshape(-1)

    flatten = ravel

    @property
    def T(self) -> PRNGKeyArray:
        n = self.ndim
        perm = (*range(n)[::-1], *range(n, n + len(self._impl.key_shape)))
        return PRNGKeyArray(self._impl, _shape_ops.transpose(self._base_array, perm))

    # The array methods JAX's key arrays have: each is the jnp function of its name.
    @property
    def at(self) -> Any:
        from polyjax_numpy.numpy._index_update import at

        return at(self)

    def copy(self) -> PRNGKeyArray:
        return PRNGKeyArray(self._impl, self._base_array)

    def squeeze(self, axis: Any = None) -> PRNGKeyArray:
        from polyjax_numpy.numpy._manipulation import squeeze

        return squeeze(self, axis)

    def swapaxes(self, axis1: int, axis2: int) -> PRNGKeyArray:
        from polyjax_numpy.numpy._manipulation import swapaxes

        return swapaxes(self, axis1, axis2)

    def transpose(self, *axes: Any) -> PRNGKeyArray:
        from polyjax_numpy.numpy._manipulation import transpose

        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], tuple | list)):
            axes = axes[0]
        return transpose(self, axes or None)

    def take(self, indices: Any, axis: int | None = None, **kwargs: Any) -> PRNGKeyArray:
        from polyjax_numpy.numpy._indexing import take

        return take(self, indices, axis=axis, **kwargs)

    def block_until_ready(self) -> PRNGKeyArray:
        ready = getattr(self._base_array, "block_until_ready", None)
        if ready is not None:
            ready()
        return self

    def __repr__(self) -> str:
        data = np.asarray(self._base_array) if _is_concrete(self._base_array) else None
        head = f"Array({self.shape}, dtype={self.dtype.name})"
        return head if data is None else f"{head} overlaying:\n{data}"

    def __eq__(self, other: object) -> Any:  # type: ignore[override]  # elementwise, as arrays
        from polyjax_numpy.numpy._ufuncs import equal

        return equal(self, other) if _u.is_operand(other) else NotImplemented

    def __ne__(self, other: object) -> Any:  # type: ignore[override]  # elementwise, as arrays
        from polyjax_numpy.numpy._ufuncs import not_equal

        return not_equal(self, other) if _u.is_operand(other) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable-looking values, as arrays


def _is_concrete(x: Any) -> bool:
    return isinstance(x, np.ndarray) or type(x).__name__ == "Array"


register_aval_handler(PRNGKeyArray, lambda k: k.aval)
basearray.Array.register(PRNGKeyArray)  # key arrays are arrays, as in JAX


def _unflatten_keys(impl: PRNGImpl, data: Any) -> Any:
    """Keys around ``data``; around the type of key data (`eval_shape`, the stages'
    `out_info`) the type of the keys, as JAX reports it."""
    if isinstance(data, ShapeDtypeStruct):
        return ShapeDtypeStruct(data.shape[: -len(impl.key_shape)], PRNGKeyDType(impl))
    return PRNGKeyArray(impl, data)


# A node for transformations (they carry the key data), a leaf for users (as in JAX).
register_array_node(
    PRNGKeyArray,
    lambda k: ((k._base_array,), k._impl),
    lambda impl, children: _unflatten_keys(impl, children[0]),
    lambda k: len(k._impl.key_shape),
)


# ---------------------------------------------------------------------------
# Checking keys given to the public functions


def check_key(fun_name: str, key: Any) -> tuple[PRNGKeyArray, bool]:
    """`key` as a typed key array, and whether it came as raw `uint32` key data.

    Raises:
      TypeError: `key` is neither a typed key array nor `uint32` data of shape (..., 2).
    """
    if isinstance(key, PRNGKeyArray):
        return key, False
    if not _u.is_operand(key) or isinstance(key, int | float | complex | bool):
        raise TypeError(f"{fun_name} accepts a single key, got {type(key).__name__}: {key!r}")
    data = asarray(key)
    impl = resolve_prng_impl(None)
    shape = _u.shape(data)
    if _u.dtype(data) != _U32 or tuple(shape[-len(impl.key_shape) :]) != impl.key_shape:
        raise TypeError(
            f"{fun_name} requires a key array (from random.key) or raw key data of dtype "
            f"uint32 and shape (..., {', '.join(map(str, impl.key_shape))}) (from "
            f"random.PRNGKey); got {_u.dtype(data).name}{list(shape)}."
        )
    _check_legacy_key_allowed()
    return PRNGKeyArray(impl, data), True


_LEGACY_KEY_MESSAGE = (
    "Legacy uint32 key array passed as key to jax.random function. Please create keys "
    "using jax.random.key(). If use of a raw key array was intended, set "
    'jax_legacy_prng_key="allow".'
)


def _check_legacy_key_allowed() -> None:
    """Applies `jax_legacy_prng_key` to raw key data given where a key is expected."""
    policy = config.legacy_prng_key.value
    if policy == "error":
        raise ValueError(_LEGACY_KEY_MESSAGE)
    if policy == "warn":
        warnings.warn(_LEGACY_KEY_MESSAGE, UserWarning, stacklevel=4)


def check_single_key(fun_name: str, key: Any) -> tuple[PRNGKeyArray, bool]:
    """As `check_key`, also requiring a single key (shape ())."""
    typed, raw = check_key(fun_name, key)
    if typed.shape:
        raise ValueError(
            f"{fun_name} accepts a single key, but was given a key array of shape "
            f"{typed.shape} != (). Use jax.vmap for batching."
        )
    return typed, raw


def check_shape(fun_name: str, shape: Any) -> tuple[int, ...]:
    """`shape` (an int or a sequence of ints) as a tuple of non-negative ints.

    Symbolic dimensions are kept (random bits of symbolic shapes, for export).

    Raises:
      TypeError: `shape` holds something other than integers.
      ValueError: a dimension is negative.
    """
    if isinstance(shape, int | np.integer):
        shape = (shape,)
    try:
        out = tuple(d if sd.is_symbolic_dim(d) else operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(
            f"{fun_name}: shape must be a sequence of integers, got {shape!r}"
        ) from None
    if any(type(d) is int and d < 0 for d in out):
        raise ValueError(f"{fun_name}: negative dimensions are not allowed, got shape {out}")
    return out


# ---------------------------------------------------------------------------
# Public key functions


def key(seed: Any, *, impl: Any = None) -> PRNGKeyArray:
    """A typed PRNG key (dtype `key<fry>`) made from an integer seed.

    Args:
      seed: a Python int or an integer array (a scalar, or a batch of seeds
        giving a batch of keys).
      impl: the generator: None (the `jax_default_prng_impl` config, threefry2x32)
        or its name.

    Returns:
      A key array of the seed's shape.

    Example:
      >>> from polyjax_numpy import random
      >>> random.key_data(random.key(42))
      Array([ 0, 42], dtype=uint32)
    """
    prng = resolve_prng_impl(impl)
    if isinstance(seed, PRNGKeyArray):
        raise TypeError("key() expects an integer seed, got a key array")
    if isinstance(seed, int) and not isinstance(seed, bool):
        seed = _seed_from_int(seed)
    seed_arr = asarray(seed)
    if not dtypes.issubdtype(_u.dtype(seed_arr), np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    # The seed functions act elementwise: a batch of seeds gives a batch of keys.
    data = prng.seed(seed_arr)
    return PRNGKeyArray(prng, data)


def _seed_from_int(seed: int) -> np.ndarray:
    """A Python int seed as JAX takes it: wrapped to 32 bits unless x64 is on."""
    if config.enable_x64.value:
        if not -(2**63) <= seed < 2**64:
            raise OverflowError(f"seed {seed} does not fit in 64 bits")
        return np.asarray(seed % 2**64, np.uint64)
    return np.asarray(seed % 2**32, np.uint32)


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:  # noqa: N802 (JAX's name)
    """A legacy raw PRNG key: the `uint32[2]` key data of an integer seed.

    Prefer `key`, whose typed keys cannot be confused with other arrays.

    Example:
      >>> from polyjax_numpy import random
      >>> random.PRNGKey(0)
      Array([0, 0], dtype=uint32)
    """
    return key_data(key(seed, impl=impl))


def key_data(keys: Any) -> Any:
    """The `uint32` data under a key array (raw keys are returned as they are)."""
    if isinstance(keys, PRNGKeyArray):
        return keys._base_array
    typed, _ = check_key("key_data", keys)
    return typed._base_array


def wrap_key_data(key_bits_array: Any, *, impl: Any = None) -> PRNGKeyArray:
    """The typed key array whose data is `key_bits_array` (`uint32[..., 2]` for threefry).

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy import random
      >>> random.wrap_key_data(np.array([0, 42], np.uint32)).shape
      ()
    """
    prng = resolve_prng_impl(impl)
    data = asarray(key_bits_array)
    shape = _u.shape(data)
    if _u.dtype(data) != _U32 or tuple(shape[len(shape) - len(prng.key_shape) :]) != prng.key_shape:
        raise TypeError(
            f"wrap_key_data: key data must be uint32 with trailing shape {prng.key_shape}, "
            f"got {_u.dtype(data).name}{list(shape)}"
        )
    return PRNGKeyArray(prng, data)


def key_impl(keys: Any) -> str:
    """The name of the generator behind `keys`."""
    typed, _ = check_key("key_impl", keys)
    return typed._impl.name


def _return(typed: PRNGKeyArray, raw: bool) -> Any:
    return typed._base_array if raw else typed


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """Splits a key into `num` new keys (a shape gives an array of keys of that shape).

    Args:
      key: a single key, typed or raw.
      num: how many keys, or their shape.

    Returns:
      The new keys, in the form of `key` (typed, or raw `uint32[..., 2]`).

    Raises:
      ValueError: `key` is a batch of keys (use `vmap`).

    Example:
      >>> from polyjax_numpy import random
      >>> random.split(random.key(0), 3).shape
      (3,)
    """
    typed, raw = check_single_key("split", key)
    shape = check_shape("split", num)
    return _return(PRNGKeyArray(typed._impl, typed._impl.split(typed._base_array, shape)), raw)


def fold_in(key: Any, data: Any) -> Any:
    """A new key derived from `key` and the integer `data` (e.g. a step number).

    Example:
      >>> from polyjax_numpy import random
      >>> random.key_data(random.fold_in(random.key(0), 7))
      Array([2716826189,  292468403], dtype=uint32)
    """
    typed, raw = check_single_key("fold_in", key)
    if isinstance(data, int) and not isinstance(data, bool):
        if not 0 <= data < 2**32:
            raise OverflowError(f"fold_in: Python int data {data} out of bounds for uint32")
        data = np.uint32(data)
    data = asarray(data)
    if not dtypes.issubdtype(_u.dtype(data), np.integer) or _u.shape(data):
        raise TypeError(f"fold_in: data must be an integer scalar, got {data!r}")
    # JAX folds in the data as uint32 (an int32 array wraps).
    data = lax.convert_element_type(data, _U32)
    return _return(PRNGKeyArray(typed._impl, typed._impl.fold_in(typed._base_array, data)), raw)


def clone(key: Any) -> Any:
    """`key` itself: keys are immutable values here (for code written for JAX's `clone`)."""
    return key


def split_keys(typed: PRNGKeyArray, num: int) -> list[PRNGKeyArray]:
    """`split(key, num)` unstacked into `num` keys; a batch of keys gives `num` batches."""
    data = typed._impl.split(typed._base_array, (num,))
    axis = len(typed.shape)
    shape = _u.shape(data)
    out = []
    for i in range(num):
        start = tuple(i if d == axis else 0 for d in range(len(shape)))
        limit = tuple(i + 1 if d == axis else n for d, n in enumerate(shape))
        piece = _shape_ops.squeeze(_shape_ops.slice(data, start, limit), (axis,))
        out.append(PRNGKeyArray(typed._impl, piece))
    return out


def key_dtype(impl_spec: Any = None) -> PRNGKeyDType:
    """The dtype of typed keys of a generator (None: the default, `key<fry>`).

    Example:
      >>> from polyjax_numpy import random
      >>> random.key_dtype()
      key<fry>
    """
    return PRNGKeyDType(resolve_prng_impl(impl_spec))


def random_bits(key: PRNGKeyArray, bit_width: int, shape: tuple[int, ...]) -> Any:
    """Random unsigned integers of `bit_width` bits from a single typed key."""
    if bit_width not in _UINT_BY_WIDTH:
        raise ValueError(f"bit_width must be 8, 16, 32 or 64, got {bit_width}")
    if bit_width == 64 and not config.enable_x64.value:
        raise ValueError("64-bit random bits need jax_enable_x64")
    return key._impl.random_bits(key._base_array, bit_width, shape)
