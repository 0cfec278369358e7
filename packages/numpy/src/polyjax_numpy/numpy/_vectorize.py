"""Mapping functions over arrays: `vectorize`, `apply_along_axis`, `apply_over_axes`.

All three are `vmap` underneath: the function is traced once, on one slice, and
batched, instead of being called once per element as in NumPy. So the function
must be traceable (written with `jnp`/`lax`), and it sees tracers.

`vectorize` follows NumPy's generalized-ufunc rules. Without a `signature`
every argument is mapped elementwise (the function gets rank-0 arrays and may
return any shape); with one, such as `"(m,n),(n)->(m)"`, each argument's
trailing core dimensions are passed whole, the leading loop dimensions
broadcast together, and core dimensions of one name must agree in size.
Arguments listed in `excluded` (positions, or names of keyword arguments) and
`None` arguments are passed unchanged; other keyword arguments are mapped like
trailing positional ones, so a signature must count them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from polyjax_interpreters.batching import vmap
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._creation import asarray
from polyjax_numpy.numpy._manipulation import expand_dims, moveaxis, reshape, transpose

# NumPy's grammar of generalized-ufunc signatures, e.g. "(m,n),(n)->(m)".
_NAME = r"\w+"
_CORE_DIMS = rf"(?:{_NAME}(?:,{_NAME})*)?"
_ARGUMENT = rf"\({_CORE_DIMS}\)"
_ARGUMENTS = rf"{_ARGUMENT}(?:,{_ARGUMENT})*"
_SIGNATURE = re.compile(rf"^{_ARGUMENTS}->{_ARGUMENTS}$")

CoreDims = tuple[str, ...]


def parse_signature(signature: str) -> tuple[list[CoreDims], list[CoreDims]]:
    """The core dimension names of each input and each output of a gufunc signature.

    Raises:
      ValueError: `signature` does not follow the grammar.

    Example:
      >>> parse_signature("(m,n),(n)->(m)")
      ([('m', 'n'), ('n',)], [('m',)])
    """
    compact = re.sub(r"\s+", "", signature)
    if not _SIGNATURE.match(compact):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    inputs, outputs = compact.split("->")

    def dims(part: str) -> list[CoreDims]:
        return [tuple(re.findall(_NAME, arg)) for arg in re.findall(rf"\({_CORE_DIMS}\)", part)]

    return dims(inputs), dims(outputs)


def _record_sizes(sizes: dict[str, int], shape: tuple, core: CoreDims, what: str) -> None:
    """Checks a value's core dimensions against (and adds them to) the known sizes."""
    if len(shape) < len(core):
        raise ValueError(
            f"{what} with shape {shape} does not have enough dimensions for all core "
            f"dimensions {core}"
        )
    for name, size in zip(core, shape[len(shape) - len(core) :]):
        if sizes.setdefault(name, size) != size:
            raise ValueError(
                f"inconsistent size for core dimension {name!r}: {size} vs {sizes[name]}"
            )


def _checked_outputs(
    fun: Callable[..., Any], sizes: dict[str, int], output_core: list[CoreDims] | None
) -> Callable[..., Any]:
    """`fun`, checking that its outputs have the signature's core dimensions."""
    if output_core is None:
        return fun

    def checked(*args: Any) -> Any:
        out = fun(*args)
        outs = out if isinstance(out, tuple) else (out,)
        if len(output_core) != 1 or isinstance(out, tuple):
            if not isinstance(out, tuple) or len(out) != len(output_core):
                raise TypeError(
                    f"wrong number of output arguments: expected {len(output_core)}, got "
                    f"{len(outs) if isinstance(out, tuple) else 1}"
                )
        outs = tuple(asarray(o) for o in outs)
        local = dict(sizes)
        for o, core in zip(outs, output_core):
            if _u.ndim(o) != len(core):
                raise ValueError(
                    f"output shape {_u.shape(o)} does not match core dimensions {core}"
                )
            _record_sizes(local, _u.shape(o), core, "output")
        return outs if isinstance(out, tuple) else outs[0]

    return checked


def vectorize(
    pyfunc: Callable[..., Any],
    *,
    excluded: Iterable[int | str] = frozenset(),
    signature: str | None = None,
) -> Callable[..., Any]:
    """`pyfunc` mapped over its arguments' elements (or core slices), with broadcasting.

    Args:
      pyfunc: a traceable function.
      excluded: positions (ints) or keyword names (strs) of arguments passed unchanged.
      signature: a generalized-ufunc signature such as `"(n),(n)->()"`; None maps
        every argument elementwise.

    Returns:
      The vectorized function. Its results have the broadcast loop shape followed by
      the output core shape.

    Raises:
      ValueError: an invalid signature; when called, inconsistent core dimensions.
      TypeError: when called, a signature counting another number of arguments.

    Example:
      >>> import polyjax.numpy as jnp
      >>> dot = jnp.vectorize(jnp.dot, signature="(n),(n)->()")
      >>> dot(jnp.ones((3, 2)), jnp.arange(2.0))
      Array([1., 1., 1.], dtype=float32)
    """
    excluded = frozenset(excluded)
    for e in excluded:
        if not isinstance(e, int | str) or isinstance(e, bool):
            raise TypeError(f"excluded must hold ints and strs, got {e!r}")
    input_core, output_core = (None, None) if signature is None else parse_signature(signature)

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        positions = [i for i, a in enumerate(args) if i not in excluded and a is not None]
        names = [k for k, v in kwargs.items() if k not in excluded and v is not None]
        operands = [asarray(args[i]) for i in positions] + [asarray(kwargs[k]) for k in names]

        def call(*mapped: Any) -> Any:
            full = list(args)
            for i, v in zip(positions, mapped):
                full[i] = v
            kw = dict(kwargs)
            kw.update(zip(names, mapped[len(positions) :]))
            return pyfunc(*full, **kw)

        cores = [()] * len(operands) if input_core is None else input_core
        if len(cores) != len(operands):
            raise TypeError(
                f"wrong number of positional arguments: expected {len(cores)}, got {len(operands)}"
            )
        sizes: dict[str, int] = {}
        for x, core in zip(operands, cores):
            _record_sizes(sizes, _u.shape(x), core, "input")
        return _map_loop_dims(_checked_outputs(call, sizes, output_core), operands, cores)

    return wrapped


def _map_loop_dims(fun: Callable[..., Any], operands: list[Any], cores: list[CoreDims]) -> Any:
    """`fun` batched over the operands' loop dimensions (all but the core ones), broadcast."""
    loops = [_u.shape(x)[: _u.ndim(x) - len(c)] for x, c in zip(operands, cores)]
    loop_shape = tuple(np.broadcast_shapes(*loops)) if loops else ()
    rank = len(loop_shape)
    prepared, present = [], []
    for x, loop in zip(operands, loops):
        # Right-aligned as in broadcasting; a size-1 axis that broadcasts is not mapped.
        padded = (1,) * (rank - len(loop)) + tuple(loop)
        has = [d == n for d, n in zip(padded, loop_shape)]
        kept = tuple(d for d, h in zip(padded, has) if h)
        prepared.append(reshape(x, kept + _u.shape(x)[len(loop) :]))
        present.append(has)
    for axis in reversed(range(rank)):
        fun = vmap(fun, in_axes=tuple(0 if has[axis] else None for has in present))
    return fun(*prepared)


def apply_along_axis(
    func1d: Callable[..., Any], axis: int, arr: Any, *args: Any, **kwargs: Any
) -> Any:
    """`func1d` applied to the 1-D slices of `arr` along `axis` (batched with `vmap`).

    The dimensions of `func1d`'s result replace `axis` in the result's shape.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.apply_along_axis(jnp.diff, 1, jnp.array([[1, 4, 9], [2, 3, 7]]))
      Array([[3, 5],
             [1, 4]], dtype=int32)
    """
    _u.check_arraylike("apply_along_axis", arr)
    arr = asarray(arr)
    rank = _u.ndim(arr)
    axis = _u.canonicalize_axis(axis, rank)

    def fun(a: Any) -> Any:
        return func1d(a, *args, **kwargs)

    for _ in range(rank - 1):
        fun = vmap(fun)
    out = fun(moveaxis(arr, axis, -1))
    # The batched axes come first: those before `axis`, then those after it.
    out_rank = _u.ndim(out) - (rank - 1)
    order = (
        list(range(axis)) + list(range(rank - 1, rank - 1 + out_rank)) + list(range(axis, rank - 1))
    )
    return transpose(out, order)


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: int | Iterable[int]) -> Any:
    """`func(a, axis)` applied for each axis in turn, keeping the rank (as NumPy).

    Raises:
      ValueError: `func` returns a result that is neither of `a`'s rank nor one less.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.apply_over_axes(jnp.sum, jnp.ones((2, 3, 4)), [0, 2])
      Array([[[8.],
              [8.],
              [8.]]], dtype=float32)
    """
    _u.check_arraylike("apply_over_axes", a)
    out = asarray(a)
    for axis in (axes,) if isinstance(axes, int) else axes:
        axis = _u.canonicalize_axis(axis, _u.ndim(out))
        res = asarray(func(out, axis))
        if _u.ndim(res) == _u.ndim(out) - 1:
            res = expand_dims(res, axis)
        elif _u.ndim(res) != _u.ndim(out):
            raise ValueError(
                "apply_over_axes: function is not returning an array of the correct shape: "
                f"{_u.shape(res)} from {_u.shape(out)} over axis {axis}"
            )
        out = res
    return out


__all__ = ["apply_along_axis", "apply_over_axes", "vectorize"]
