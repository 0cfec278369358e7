"""Abstract values: what tracing knows about an array without its data.

A traced program never sees numbers, only *abstract values* ("avals"): a shape,
a dtype, and whether the dtype is *weak*. A weak type comes from a Python
scalar (`x * 2.0`): it takes part in type promotion only as far as it must, so
`f16 * 2.0` stays `f16` (see `polyjax_core.dtypes`).

    ShapedArray((3, 4), float32)            str(): float32[3,4]   in a jaxpr: f32[3,4]
    ShapedArray((), int32, weak_type=True)  str(): ~int32[]       in a jaxpr: i32[]

Inside a `shard_map` body checked with `check_vma=True`, an aval also records
the manual mesh axes its value *varies* over (`vma`, a frozenset of axis
names; see `polyjax_core.vma`). It prints after the shape, as JAX does:
`float32[4]{V:i}`, `float32[4]{V:(i,j)}`; outside shard_map it is empty and
nothing changes.

Shapes may hold symbolic dimensions (`polyjax_core.symbolic_dims.DimExpr`) next
to ints: `f32[b,2*b]`.

`get_aval(x)` maps a concrete value (a NumPy array or scalar, a Python scalar,
or a type a higher package registered with `register_aval_handler`) to its
abstract value, canonicalizing 64-bit dtypes to 32-bit unless `jax_enable_x64`
is on, as JAX does. An object with `__jax_array__` is refused with JAX's
`ValueError` (`jax_array_error`): as in JAX, only explicit conversions
(`jnp.asarray`, and what calls it) use that protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from polyjax_core import dtypes, mesh_context
from polyjax_core import symbolic_dims as sd
from polyjax_core.aval_sharding import AvalSharding

__all__ = [
    "AbstractToken",
    "AbstractValue",
    "ShapeDtypeStruct",
    "ShapedArray",
    "Token",
    "abstract_token",
    "get_aval",
    "jax_array_error",
    "note_axis_order",
    "ordered_axes",
    "register_aval_handler",
    "shaped_abstractify",
    "short_dtype_name",
    "vma_str",
]


class AbstractValue:
    """Base class of abstract values. Subclasses say what tracing may know of a value."""

    __slots__ = ()
    # Indexing hooks of a type whose tracers index differently from arrays
    # (`state.AbstractRef`): `hook(tracer, index[, value])`.
    _getitem: Any = None
    _setitem: Any = None

    if TYPE_CHECKING:
        # Every abstract value polyjax makes is an array's (`ShapedArray`), and the
        # transformations read it through the base type (`Var.aval`, `get_aval`).
        # Declared for type checkers only: nothing is added at run time.
        shape: tuple[sd.DimSize, ...]
        dtype: Any
        weak_type: bool

        @property
        def ndim(self) -> int: ...

        def update(
            self,
            shape: Any = None,
            dtype: Any = None,
            weak_type: Any = None,
            vma: Any = None,
            sharding: Any = None,
        ) -> ShapedArray: ...

        def strip_weak_type(self) -> ShapedArray: ...

    def str_short(self, short_dtypes: bool = False) -> str:
        return str(self)


_SHORT_PREFIXES = (("bfloat", "bf"), ("complex", "c"), ("float", "f"), ("uint", "u"), ("int", "i"))


def short_dtype_name(dtype: Any) -> str:
    """The short dtype name used in printed jaxprs: `float32` -> `f32`, `bfloat16` -> `bf16`.

    Example:
      >>> short_dtype_name(np.dtype("uint8"))
      'u8'
    """
    name = str(getattr(dtype, "name", dtype))
    for long, short in _SHORT_PREFIXES:
        if name.startswith(long):
            return short + name[len(long) :]
    return name


def _as_dtype(dtype: Any) -> Any:
    if isinstance(dtype, dtypes.ExtendedDType):
        return dtype
    return np.dtype(dtype)


_KEEP: Any = object()


def _as_aval_sharding(sharding: Any, ndim: int) -> AvalSharding | None:
    """An `AvalSharding` from one, from a ``NamedSharding``-like (``.mesh``, ``.spec``)
    or None."""
    if sharding is None or type(sharding) is AvalSharding:
        return sharding
    mesh, spec = getattr(sharding, "mesh", None), getattr(sharding, "spec", None)
    if mesh is None or spec is None:
        raise TypeError(f"ShapedArray: sharding must be a NamedSharding, got {sharding!r}")
    return AvalSharding.make(mesh, spec, ndim)


class ShapedArray(AbstractValue):
    """The abstract value of an array: shape, dtype, weak type and varying manual axes.

    Args:
      shape: a tuple of ints and/or symbolic dimensions.
      dtype: a NumPy dtype (or dtype-like) or an extended dtype.
      weak_type: whether the dtype is weak (the value came from a Python scalar).
      vma: the manual mesh axes the value varies over (only inside a checked
        `shard_map` body; empty elsewhere).

    Example:
      >>> a = ShapedArray((3, 4), np.float32)
      >>> str(a), a.str_short(short_dtypes=True)
      ('float32[3,4]', 'f32[3,4]')
      >>> a.update(shape=(2,))
      ShapedArray(float32[2])
      >>> str(a.update(vma=frozenset({"i"})))
      'float32[3,4]{V:i}'
    """

    __slots__ = ("shape", "dtype", "weak_type", "vma", "aval_sharding", "_hash")
    array_abstraction_level = 1

    def __init__(
        self,
        shape: Sequence[Any],
        dtype: Any,
        weak_type: bool = False,
        vma: frozenset = frozenset(),
        sharding: Any = None,
    ):
        self.shape = sd.canonicalize_shape(shape, "ShapedArray")
        self.dtype = _as_dtype(dtype)
        self.weak_type = bool(weak_type)
        self.vma = vma if type(vma) is frozenset else frozenset(vma)
        self.aval_sharding = _as_aval_sharding(sharding, len(self.shape))
        self._hash: int | None = None

    ndim = property(lambda self: len(self.shape))

    @property
    def size(self) -> Any:
        return sd.shape_size(self.shape)

    @property
    def sharding(self) -> Any:
        """The sharding the type carries, as JAX's `typeof(x).sharding`.

        A ``NamedSharding`` over the abstract mesh: the type's own (explicit mode,
        `aval_sharding`), else the default one over the mesh in context (the empty
        one outside any mesh) with one ``None`` per dimension (docs/sharding.md).
        It needs a sharding factory (polyjax-sharding registers ``NamedSharding``
        on import); with polyjax-core alone it is None.
        """
        s = self.aval_sharding
        if s is None:
            return mesh_context.default_aval_sharding(len(self.shape))
        return mesh_context.abstract_sharding(s.mesh, s.spec)

    def update(
        self, shape=None, dtype=None, weak_type=None, vma=None, sharding=_KEEP
    ) -> ShapedArray:
        """A copy with some of shape, dtype, weak_type, vma and sharding replaced.

        The sharding is kept while the rank is (else dropped) unless given; None
        drops it.
        """
        if sharding is _KEEP:
            sharding = self.aval_sharding
            if shape is not None and len(shape) != len(self.shape):
                sharding = None
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
            self.vma if vma is None else vma,
            sharding,
        )

    def strip_weak_type(self) -> ShapedArray:
        return self.update(weak_type=False) if self.weak_type else self

    def __eq__(self, other: object) -> bool:
        return (
            type(self) is type(other)
            and self.dtype == other.dtype
            and self.shape == other.shape
            and self.weak_type == other.weak_type
            and self.vma == other.vma
            and self.aval_sharding == other.aval_sharding
        )

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(
                (self.shape, self.dtype, self.weak_type, self.vma, self.aval_sharding)
            )
        return self._hash

    def _shape_str(self) -> str:
        s = self.aval_sharding
        if s is None:
            return ",".join(str(d) for d in self.shape)
        return ",".join(f"{d}{s.dim_str(i)}" for i, d in enumerate(self.shape))

    def str_short(self, short_dtypes: bool = False) -> str:
        """`float32[3,4]` (or `f32[3,4]`, as jaxprs print it, with `short_dtypes=True`)."""
        name = short_dtype_name(self.dtype) if short_dtypes else str(self.dtype.name)
        s = self.aval_sharding
        reductions = s.reductions_str() if s is not None else ""
        return f"{name}[{self._shape_str()}]{vma_str(self.vma, reductions)}"

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short(short_dtypes=False)}{weak})"

    def __str__(self) -> str:
        # JAX's form: `float32[3]`, with a `~` in front of a weak type.
        return ("~" if self.weak_type else "") + self.str_short(short_dtypes=False)


class AbstractToken(AbstractValue):
    """The type of a token (`lax.create_token`): a value that only orders effects.

    A token has no shape, no dtype and no data; it prints `Tok` in a jaxpr and
    lowers to `!stablehlo.token`. It varies over no manual axis, has no
    sharding, and is never weak (the attributes below say so for the code that
    reads them from any abstract value).

    Example:
      >>> t = AbstractToken()
      >>> t, t.str_short(), t == abstract_token
      (AbstractToken(), 'Tok', True)
    """

    __slots__ = ()
    vma: frozenset = frozenset()
    weak_type = False
    aval_sharding = None

    def str_short(self, short_dtypes: bool = False) -> str:
        return "Tok"

    def strip_weak_type(self) -> AbstractToken:  # type: ignore[override]  # a token's type
        return self

    def update(self, *args: Any, **kwargs: Any) -> AbstractToken:  # type: ignore[override]  # any update is a token
        return self  # (only vma/weak_type updates reach a token: it has neither)

    def __eq__(self, other: object) -> bool:
        return type(other) is AbstractToken

    def __hash__(self) -> int:
        return hash(AbstractToken)

    def __repr__(self) -> str:
        return "AbstractToken()"

    __str__ = __repr__


abstract_token = AbstractToken()


_axis_rank: dict[Any, int] = {}


def note_axis_order(names: Sequence[Any]) -> None:
    """Records a mesh's axis order, in which printed avals list their varying axes.

    `shard_map` calls it with its mesh's axis names, so that `{V:(j,i)}` follows
    the mesh as JAX's printing does; names never noted print after, sorted.
    """
    for k, n in enumerate(names):
        _axis_rank[n] = k


def ordered_axes(names: Any) -> tuple:
    """Axis names in the noted mesh order (`note_axis_order`), unknown ones last, sorted."""
    return tuple(sorted(names, key=lambda n: (_axis_rank.get(n, len(_axis_rank)), str(n))))


def vma_str(vma: frozenset, reductions: str = "") -> str:
    """JAX's printed form of varying manual axes: '', `{V:i}` or `{V:(i,j)}`;
    unreduced/reduced axes (``reductions``, e.g. ``U:b``) follow in the braces."""
    parts = []
    if vma:
        names = ordered_axes(vma)
        inner = str(names[0]) if len(names) == 1 else "(" + ",".join(str(n) for n in names) + ")"
        parts.append("V:" + inner)
    if reductions:
        parts.append(reductions)
    return "{" + ", ".join(parts) + "}" if parts else ""


class ShapeDtypeStruct:
    """A shape and dtype standing in for an array, to trace or lower without data.

    Args:
      shape: a tuple of ints and/or symbolic dimensions.
      dtype: the element type.
      weak_type: whether the dtype is weak.
      sharding: an optional sharding (used by the runtime; opaque to core).

    Example:
      >>> s = ShapeDtypeStruct((2, 3), np.float32)
      >>> s.ndim, s.size
      (2, 6)
    """

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, *, weak_type: bool = False, sharding: Any = None):
        self.shape = sd.canonicalize_shape(shape, "ShapeDtypeStruct")
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be given, got None")
        self.dtype = _as_dtype(dtype)
        self.weak_type = bool(weak_type)
        self.sharding = sharding

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: sd.shape_size(self.shape))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ShapeDtypeStruct) and (
            self.shape,
            self.dtype,
            self.weak_type,
            self.sharding,
        ) == (other.shape, other.dtype, other.weak_type, other.sharding)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type, self.sharding))

    def __repr__(self) -> str:
        extra = ", weak_type=True" if self.weak_type else ""
        if self.sharding is not None:
            extra += f", sharding={self.sharding}"
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{extra})"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]  # type: ignore[return-value]  # len() refuses a symbolic size


# ---------------------------------------------------------------------------
# get_aval: concrete value -> abstract value

_aval_handlers: dict[type, Callable[[Any], AbstractValue]] = {}


def register_aval_handler(typ: type, handler: Callable[[Any], AbstractValue]) -> None:
    """Teaches `get_aval` a value type (e.g. the runtime's `Array`, or `Tracer`).

    Subclasses of `typ` are found through the MRO on first use.
    """
    _aval_handlers[typ] = handler


_INT32 = np.iinfo(np.int32)
_INT64 = np.iinfo(np.int64)


def _python_int_aval(x: int) -> ShapedArray:
    dtype = dtypes.canonicalize_dtype(np.int64)
    info = _INT32 if dtype == np.int32 else _INT64
    if not info.min <= x <= info.max:
        raise OverflowError(f"Python int {x} too large to convert to {dtype.name}")
    return ShapedArray((), dtype, weak_type=True)


def _python_scalar_aval(typ: type) -> Callable[[Any], ShapedArray]:
    wide = {bool: np.bool_, float: np.float64, complex: np.complex128}[typ]
    # A Python bool is not weakly typed (JAX's rule): there is only one bool width.
    weak = typ is not bool
    return lambda x: ShapedArray((), dtypes.canonicalize_dtype(wide), weak_type=weak)


def _numpy_aval(x: Any) -> ShapedArray:
    return ShapedArray(x.shape, dtypes.dtype(x, canonicalize=True))


register_aval_handler(np.ndarray, _numpy_aval)
register_aval_handler(np.generic, _numpy_aval)
register_aval_handler(int, _python_int_aval)
for _t in (bool, float, complex):
    register_aval_handler(_t, _python_scalar_aval(_t))


def _find_handler(typ: type) -> Callable[[Any], AbstractValue] | None:
    for base in typ.__mro__:
        handler = _aval_handlers.get(base)
        if handler is not None:
            if base is not typ:
                _aval_handlers[typ] = handler
            return handler
    return None


def get_aval(x: Any) -> AbstractValue:
    """The abstract value of a concrete value or tracer.

    Args:
      x: a NumPy array or scalar, a Python bool/int/float/complex, a tracer, or a
        value of a registered type.

    Returns:
      Its abstract value, with the dtype canonicalized (64-bit becomes 32-bit
      unless `jax_enable_x64` is on) and `weak_type=True` for Python scalars.

    Raises:
      TypeError: `x` is not a valid array value.
      ValueError: `x` has `__jax_array__` (JAX no longer converts it here).
      OverflowError: a Python int does not fit the default integer type.

    Example:
      >>> get_aval(1.0)
      ShapedArray(float32[], weak_type=True)
    """
    typ = type(x)
    handler = _aval_handlers.get(typ) or _find_handler(typ)
    if handler is not None:
        return handler(x)
    if hasattr(x, "__jax_array__"):
        raise jax_array_error()
    raise TypeError(f"Value {x!r} of type {typ} is not a valid JAX type")


class Token:
    """A concrete token, as `lax.create_token` returns outside tracing.

    A token carries no data: it only orders effects inside a compiled program,
    so the value itself is an empty marker (a pytree leaf, of type
    `AbstractToken`). Compiled programs take and return tokens through a
    placeholder (see docs/lax.md).

    Example:
      >>> get_aval(Token())
      AbstractToken()
    """

    __slots__ = ()

    def block_until_ready(self) -> Token:
        return self


register_aval_handler(Token, lambda t: abstract_token)


def jax_array_error() -> ValueError:
    """JAX's error for an object with `__jax_array__` met where an array's type is
    needed: only `jnp.asarray`/`jnp.array` (and the functions and operators that
    call them) convert such objects; primitives no longer do."""
    return ValueError(
        "Triggering __jax_array__() during abstractification is no longer supported. To "
        "avoid this error, either explicitly convert your object using jax.numpy.array(), "
        "or register your object as a pytree."
    )


def _typed_sharding(sharding: Any) -> Any:
    """What of a runtime sharding enters a type: a NamedSharding's explicit axes."""
    if sharding is None or not hasattr(sharding, "spec") or not hasattr(sharding, "mesh"):
        return None
    return sharding


def shaped_abstractify(x: Any) -> AbstractValue:
    """Like `get_aval`, but also accepts stand-ins without data (`ShapeDtypeStruct`).

    Used where only the type of an argument matters: tracing and lowering.
    """
    if isinstance(x, ShapeDtypeStruct):
        dtype = dtypes.canonicalize_dtype(x.dtype, allow_extended_dtype=True)
        return ShapedArray(x.shape, dtype, x.weak_type, sharding=_typed_sharding(x.sharding))
    if isinstance(x, AbstractValue):
        return x
    return get_aval(x)
