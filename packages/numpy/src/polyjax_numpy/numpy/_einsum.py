"""`jnp.einsum` and `jnp.einsum_path`: Einstein summation as a sequence of `dot_general`s.

The `opt_einsum` package parses the subscripts (string or interleaved form,
with `...`) and chooses the order of pairwise contractions (`optimize`:
"auto" by default, "greedy", "optimal", any opt_einsum strategy, True for
"optimal", False for left to right as written, or an explicit path such as
`einsum_path` returns). Each step then becomes lax operations:

- an index repeated within one operand takes a diagonal (a strided slice);
- an index of size 1 against a larger one on the other operand broadcasts
  (it is squeezed out of its operand);
- an index that only one operand has and that is not needed later is summed;
- indices both operands share are batch axes of `dot_general` if they are
  kept, contracting axes if not; one transpose puts the result in order.

The operands are promoted to their common dtype, and every `dot_general`
accumulates in `preferred_element_type` (by default that dtype); `precision`
goes to each of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import opt_einsum

from polyjax_core import dtypes
from polyjax_numpy.lax import _dot, _shape_ops
from polyjax_numpy.numpy import _out_sharding as _os
from polyjax_numpy.numpy import _reductions as _r
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._matrices import diagonal

# opt_einsum estimates costs from sizes: a symbolic dimension counts as this.
_SYMBOLIC_SIZE_GUESS = 8


class _Shaped:
    """What opt_einsum sees of an operand: only its shape (it never touches the data)."""

    def __init__(self, shape: tuple):
        self.shape = tuple(d if type(d) is int else _SYMBOLIC_SIZE_GUESS for d in shape)


def _split_operands(subscripts: Any, operands: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """The array operands, and opt_einsum's arguments with the arrays replaced by `_Shaped`."""
    if isinstance(subscripts, str):
        arrays = list(operands)
        _u.check_arraylike("einsum", *arrays)
        return arrays, [subscripts, *(_Shaped(_u.shape(x)) for x in arrays)]
    # Interleaved form: operand, sublist, operand, sublist, ..., [output sublist].
    args = [subscripts, *operands]
    arrays = args[0 : len(args) - len(args) % 2 : 2]
    _u.check_arraylike("einsum", *arrays)
    shaped = list(args)
    for i in range(0, len(args) - len(args) % 2, 2):
        shaped[i] = _Shaped(_u.shape(args[i]))
    return arrays, shaped


def _path_option(optimize: Any, n_operands: int) -> Any:
    if optimize is True:
        return "optimal"
    if optimize is False:
        # As written: each step contracts the running result with the next operand.
        return [(0,)] if n_operands == 1 else [(0, 1)] * (n_operands - 1)
    if isinstance(optimize, list | tuple) and optimize and optimize[0] == "einsum_path":
        return list(optimize[1:])
    return optimize


def einsum_path(subscripts: Any, /, *operands: Any, optimize: Any = "auto") -> tuple[list, Any]:
    """The contraction order `einsum` would follow, without computing anything.

    Args:
      subscripts: the einsum specification (or the first operand of the interleaved form).
      *operands: the arrays (only their shapes matter).
      optimize: as for `einsum`.

    Returns:
      `(path, info)`: the path (a list of tuples of operand positions) that `einsum`
      accepts as `optimize`, and opt_einsum's printable `PathInfo` (costs and steps).

    Example:
      >>> import polyjax.numpy as jnp
      >>> path, info = jnp.einsum_path("ij,jk,kl", jnp.ones((2, 3)), jnp.ones((3, 100)),
      ...                              jnp.ones((100, 5)), optimize="optimal")
      >>> path
      [(1, 2), (0, 1)]
    """
    arrays, args = _split_operands(subscripts, operands)
    return opt_einsum.contract_path(*args, optimize=_path_option(optimize, len(arrays)))


def einsum(
    subscripts: Any,
    /,
    *operands: Any,
    out: Any = None,
    optimize: Any = "auto",
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Einstein summation: products of the operands summed over the indices not kept.

    Args:
      subscripts: e.g. `"ij,jk->ik"` (with `...` for leading axes); or, in the
        interleaved form `einsum(a, [0, 1], b, [1, 2], [0, 2])`, the first operand.
      *operands: the arrays.
      out: not supported.
      optimize: how to order the pairwise contractions: "auto" (default), "greedy",
        "optimal" (also True), another opt_einsum strategy, False (left to right),
        or an explicit path (a list of tuples, optionally after "einsum_path").
      precision: None, a `lax.Precision` (or name), or a pair of them, for each `dot_general`.
      preferred_element_type: the accumulation and result dtype.
      out_sharding: the result's sharding (explicit mode; docs/explicit-sharding.md).

    Returns:
      The result, of the operands' common dtype or `preferred_element_type`.

    Raises:
      ValueError: malformed subscripts, or index sizes that disagree (from opt_einsum).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.einsum("ij,j->i", jnp.array([[1, 2], [3, 4]]), jnp.array([1, 1]))
      Array([3, 7], dtype=int32)
    """
    _r._check_out(out, "einsum")
    with _os.requesting(out_sharding):
        result = _einsum(subscripts, operands, optimize, precision, preferred_element_type)
    return _os.finish(result, out_sharding)


def _einsum(
    subscripts: Any, operands: Any, optimize: Any, precision: Any, preferred_element_type: Any
) -> Any:
    arrays, args = _split_operands(subscripts, operands)
    _, contractions = opt_einsum.contract_path(
        *args, einsum_call=True, use_blas=True, optimize=_path_option(optimize, len(arrays))
    )
    if preferred_element_type is None:
        out_dtype, weak = dtypes.result_type(*arrays, return_weak_type_flag=True)
        out_dtype = dtypes.canonicalize_dtype(out_dtype)
    else:
        dtypes.check_user_dtype_supported(preferred_element_type, "einsum")
        out_dtype, weak = dtypes.canonicalize_dtype(preferred_element_type), False
    ops = [_u.as_operand(x) for x in _u.promote_dtypes(*arrays)]
    for contract_inds, _, einsum_str, _, _ in contractions:
        inputs, result = einsum_str.split("->")
        names = inputs.split(",")
        # opt_einsum pops the operands in descending position order and lists them so;
        # contracting them in their original order keeps `ij,jk->ik` transpose-free.
        picked = [ops.pop(i) for i in contract_inds][::-1]
        ops.append(_contract_step(picked, names[::-1], result, precision, out_dtype))
    (result_array,) = ops
    return _u.as_array(_u.convert(result_array, out_dtype, weak))


# ---------------------------------------------------------------------------
# One step of the path


def _take_diagonals(x: Any, names: str) -> tuple[Any, str]:
    """Diagonals over each index repeated within one operand (`"ii"` -> `"i"`)."""
    while True:
        repeated = next((c for c in names if names.count(c) > 1), None)
        if repeated is None:
            return x, names
        i = names.index(repeated)
        j = names.index(repeated, i + 1)
        x = diagonal(x, 0, i, j)
        names = "".join(c for k, c in enumerate(names) if k not in (i, j)) + repeated


def _sum_out(x: Any, names: str, keep: set[str], dtype: Any) -> tuple[Any, str]:
    axes = tuple(i for i, c in enumerate(names) if c not in keep)
    if not axes:
        return x, names
    # Summed in the result dtype: a bool sum is an "or", as in NumPy's einsum.
    x = _r.sum(x, axes, dtype=dtype)
    return x, "".join(c for c in names if c in keep)


def _squeeze(x: Any, names: str, drop: set[str]) -> tuple[Any, str]:
    axes = tuple(i for i, c in enumerate(names) if c in drop)
    if not axes:
        return x, names
    return _shape_ops.squeeze(x, axes), "".join(c for c in names if c not in drop)


def _to_order(x: Any, names: str, result: str) -> Any:
    perm = tuple(names.index(c) for c in result)
    return x if perm == tuple(range(len(perm))) else _shape_ops.transpose(x, perm)


def _contract_step(
    operands: list[Any], names: list[str], result: str, precision: Any, out_dtype: Any
) -> Any:
    x, x_names = operands[0], names[0]
    if len(operands) == 1:
        x, x_names = _take_diagonals(x, x_names)
        x, x_names = _sum_out(x, x_names, set(result), out_dtype)
        return _to_order(x, x_names, result)
    # More than two operands in one step (an explicit path may say so): fold pairwise,
    # keeping the indices that later operands or the result still need.
    for k in range(1, len(operands)):
        later = set(result).union(*names[k + 1 :])
        y, y_names = operands[k], names[k]
        if k == len(operands) - 1:
            target = result
        else:
            needed = later & (set(x_names) | set(y_names))
            target = "".join(sorted(needed, key=(x_names + y_names).index))
        x = _contract_pair(x, x_names, y, y_names, target, precision, out_dtype)
        x_names = target
    return x


def _contract_pair(
    x: Any, x_names: str, y: Any, y_names: str, result: str, precision: Any, out_dtype: Any
) -> Any:
    x, x_names = _take_diagonals(x, x_names)
    y, y_names = _take_diagonals(y, y_names)
    # A size-1 index facing a larger one broadcasts: drop it from its operand.
    x_sizes = dict(zip(x_names, _u.shape(x), strict=True))
    y_sizes = dict(zip(y_names, _u.shape(y), strict=True))
    shared = set(x_names) & set(y_names)
    x, x_names = _squeeze(x, x_names, {c for c in shared if x_sizes[c] == 1 != y_sizes[c]})
    y, y_names = _squeeze(y, y_names, {c for c in shared if y_sizes[c] == 1 != x_sizes[c]})
    x, x_names = _sum_out(x, x_names, set(result) | set(y_names), out_dtype)
    y, y_names = _sum_out(y, y_names, set(result) | set(x_names), out_dtype)
    shared_names = [c for c in x_names if c in y_names]
    batch = [c for c in shared_names if c in result]
    contracted = [c for c in shared_names if c not in result]
    dnums = (
        (tuple(x_names.index(c) for c in contracted), tuple(y_names.index(c) for c in contracted)),
        (tuple(x_names.index(c) for c in batch), tuple(y_names.index(c) for c in batch)),
    )
    out = _dot.dot_general(
        x,
        y,
        dnums,
        precision=precision,
        preferred_element_type=out_dtype,
        out_sharding=_os.inner(),
    )
    out_names = (
        "".join(batch)
        + "".join(c for c in x_names if c not in shared_names)
        + "".join(c for c in y_names if c not in shared_names)
    )
    return _to_order(out, out_names, result)


__all__ = ["einsum", "einsum_path"]
