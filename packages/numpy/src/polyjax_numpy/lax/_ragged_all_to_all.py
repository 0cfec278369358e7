"""`ragged_all_to_all`: an all-to-all of variable-size slices along the leading axis.

Each position of the named axis sends, for each of the `K` slots of its
``input_offsets``/``send_sizes``/``output_offsets`` (``K`` a multiple of the
axis size ``P``; slot ``i`` goes to position ``i // (K // P)``), the rows
``operand[input_offsets[i] : input_offsets[i] + send_sizes[i]]``, written on
the receiver at ``output_offsets[i]`` (the *sender's* offsets, as in JAX).
The result is the receiver's ``output`` with those rows replaced.

XLA:CPU has no ``ragged-all-to-all`` instruction, so the lowering (inside
`shard_map` over the named axes) emulates it: it gathers every position's
operand and slot tables (`all_gather`), and each position then copies, for each
sender and each slot addressed to it, a window of the sender's rows into its
output under a mask (static shapes: the window is a `dynamic_slice` of padded
rows, placed by a second one). The cost is an all-gather of the operand, fine
for the host devices it serves.

It is linear in `operand` and `output` (the jvp applies it to the tangents);
there is no transpose and no batching rule, as for JAX on CPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad, batching, mlir
from polyjax_interpreters.axis_context import manual_axis_context
from polyjax_numpy.lax import _elementwise as ew
from polyjax_numpy.lax._declare import define_rules
from polyjax_numpy.lax._parallel import (
    _all_gather_lowering,
    _axis_index_lowering,
    _names,
    _size,
    _unsupported_impl,
    _varying,
)
from polyjax_numpy.lax._shape_ops import (
    broadcast_in_dim,
    broadcasted_iota,
    concatenate,
    full,
    squeeze,
)
from polyjax_numpy.lax._shape_ops import slice as _slice
from polyjax_numpy.lax._slicing import dynamic_slice

__all__ = ["ragged_all_to_all", "ragged_all_to_all_p"]

ragged_all_to_all_p = Primitive("ragged_all_to_all")


def _abstract_eval(
    operand: ShapedArray,
    output: ShapedArray,
    input_offsets: ShapedArray,
    send_sizes: ShapedArray,
    output_offsets: ShapedArray,
    recv_sizes: ShapedArray,
    *,
    axis_name: tuple,
    axis_index_groups: Any,
) -> ShapedArray:
    if operand.ndim < 1 or output.ndim != operand.ndim:
        raise ValueError(
            "ragged_all_to_all: operand and output must have one rank (at least 1), got shapes "
            f"{tuple(operand.shape)} and {tuple(output.shape)}"
        )
    if tuple(operand.shape[1:]) != tuple(output.shape[1:]):
        raise ValueError(
            "ragged_all_to_all: operand and output must agree past the leading axis, got "
            f"{tuple(operand.shape)} and {tuple(output.shape)}"
        )
    if np.dtype(operand.dtype) != np.dtype(output.dtype):
        raise TypeError(
            f"ragged_all_to_all: operand and output dtypes differ: {operand.dtype} and "
            f"{output.dtype}"
        )
    tables = (input_offsets, send_sizes, output_offsets, recv_sizes)
    names = ("input_offsets", "send_sizes", "output_offsets", "recv_sizes")
    for name, t in zip(names, tables):
        if t.ndim != 1 or np.dtype(t.dtype).kind not in "iu":
            raise TypeError(f"ragged_all_to_all: {name} must be a 1-D integer array, got {t}")
    if len({t.shape[0] for t in tables}) != 1:
        raise ValueError(
            "ragged_all_to_all: input_offsets, send_sizes, output_offsets and recv_sizes "
            f"must have one length, got {[t.shape[0] for t in tables]}"
        )
    size = _size(axis_name)
    if tables[0].shape[0] % size:
        raise ValueError(
            f"ragged_all_to_all: the offset and size arrays' length {tables[0].shape[0]} is "
            f"not a multiple of the size {size} of axis {axis_name}"
        )
    return output.update(vma=_varying(output.vma | operand.vma, axis_name))


def _window(src: Any, start: Any, place: Any, count: Any, rows: int) -> Any:
    """`rows` rows with ``src[start : start + count]`` at ``place`` and a mask of them."""
    tail = tuple(get_aval(src).shape[1:])
    dtype = get_aval(src).dtype
    zeros = full((rows, *tail), 0, dtype)
    # src[start + t] for t < rows (past its end: zeros), then shifted down by `place`.
    window = dynamic_slice(concatenate([src, zeros], 0), (start, *(0,) * len(tail)), (rows, *tail))
    placed = dynamic_slice(
        concatenate([zeros, window], 0), (ew.sub(rows, place), *(0,) * len(tail)), (rows, *tail)
    )
    t = broadcasted_iota(np.int32, (rows,), 0)
    mask = ew.bitwise_and(ew.ge(t, place), ew.lt(t, ew.add(place, count)))
    return placed, broadcast_in_dim(mask, (rows, *tail), (0,))


def _assemble(
    operands: Any, output: Any, in_off: Any, sizes: Any, out_off: Any, me: Any, *, per: int
) -> Any:
    """The receiver's output from every sender's (gathered) operand and slot tables."""
    senders, rows = get_aval(operands).shape[0], get_aval(output).shape[0]
    result = output
    for j in range(senders):
        src = squeeze(_slice(operands, (j, *(0,) * (get_aval(operands).ndim - 1)),
                             (j + 1, *get_aval(operands).shape[1:])), (0,))  # fmt: skip
        for s in range(per):
            slot = ew.add(ew.mul(me, np.int32(per)), np.int32(s))

            def entry(table: Any, slot: Any = slot, j: int = j) -> Any:
                row = squeeze(_slice(table, (j, 0), (j + 1, get_aval(table).shape[1])), (0,))
                picked = dynamic_slice(row, (slot,), (1,))
                return ew.convert_element_type(squeeze(picked, (0,)), np.int32)

            placed, mask = _window(src, entry(in_off), entry(out_off), entry(sizes), rows)
            result = ew.select_n(mask, result, placed)
    return result


def _lowering(
    ctx: Any,
    operand: Any,
    output: Any,
    input_offsets: Any,
    send_sizes: Any,
    output_offsets: Any,
    recv_sizes: Any,
    *,
    axis_name: tuple,
    axis_index_groups: Any,
) -> list:
    groups = manual_axis_context(ctx, axis_name, "ragged_all_to_all").replica_groups(axis_name)
    senders = groups.shape[1]
    plain = [ShapedArray(a.shape, a.dtype) for a in ctx.avals_in]

    def gather(x: Any, aval: ShapedArray) -> tuple[Any, ShapedArray]:
        out = ShapedArray((senders, *aval.shape), aval.dtype)
        sub = ctx.replace(avals_in=[aval], avals_out=[out])
        (y,) = _all_gather_lowering(
            sub,
            x,
            all_gather_dimension=0,
            axis_name=axis_name,
            axis_index_groups=None,
            axis_size=senders,
            tiled=False,
        )
        return y, out

    gathered = [
        gather(x, a)
        for x, a in zip(
            (operand, input_offsets, send_sizes, output_offsets),
            (plain[0], plain[2], plain[3], plain[4]),
        )
    ]
    i32 = ShapedArray((), np.dtype(np.int32))
    (me,) = _axis_index_lowering(ctx.replace(avals_in=[], avals_out=[i32]), axis_name=axis_name)
    (g_op, a_op), (g_in, a_in), (g_sz, a_sz), (g_out, a_out) = gathered
    per = plain[2].shape[0] // senders
    rule = mlir.lower_fun(lambda *xs: _assemble(*xs, per=per), multiple_results=False)
    avals = [a_op, plain[1], a_in, a_sz, a_out, i32]
    sub = ctx.replace(avals_in=avals, avals_out=[ShapedArray(plain[1].shape, plain[1].dtype)])
    return rule(sub, g_op, output, g_in, g_sz, g_out, me)


def _batcher(axis_data: Any, vals: list, dims: list, *, axis_name: tuple, axis_index_groups: Any):
    """Over the vmapped axis itself the positions are the batch: each receiver assembles
    its output from the stacked senders directly."""
    if axis_name != (axis_data.name,):
        raise NotImplementedError(
            f"ragged_all_to_all under vmap: only over the vmapped axis alone, got {axis_name}"
        )
    n = axis_data.size
    operand, output, in_off, sizes, out_off, _ = (
        batching.bdim_at_front(x, d, n) for x, d in zip(vals, dims)
    )
    per = get_aval(in_off).shape[1] // n
    rows = []
    for me in range(n):
        mine = squeeze(_slice(output, (me, *(0,) * (get_aval(output).ndim - 1)),
                              (me + 1, *get_aval(output).shape[1:])), (0,))  # fmt: skip
        rows.append(_assemble(operand, mine, in_off, sizes, out_off, np.int32(me), per=per))
    return _stack_rows(rows), 0


def _stack_rows(rows: list) -> Any:
    shape = tuple(get_aval(rows[0]).shape)
    dims = tuple(range(1, len(shape) + 1))
    return concatenate([broadcast_in_dim(r, (1, *shape), dims) for r in rows], 0)


def _jvp(primals: list, tangents: list, **params: Any) -> tuple:
    out = ragged_all_to_all_p.bind(*primals, **params)
    t_operand, t_output = (ad.instantiate_zeros(t) for t in tangents[:2])
    t_out = ragged_all_to_all_p.bind(t_operand, t_output, *primals[2:], **params)
    return out, t_out


define_rules(
    ragged_all_to_all_p,
    _abstract_eval,
    _lowering,
    impl=_unsupported_impl("ragged_all_to_all"),
    jvp=_jvp,
    axis_batching=_batcher,
)
ragged_all_to_all_p.own_vma = True
ragged_all_to_all_p.vma_operand_axes = lambda params: params["axis_name"]


def ragged_all_to_all(
    operand: Any,
    output: Any,
    input_offsets: Any,
    send_sizes: Any,
    output_offsets: Any,
    recv_sizes: Any,
    *,
    axis_name: Any,
    axis_index_groups: Any = None,
) -> Any:
    """All-to-all of ragged slices along the leading axis, over the named axis.

    Slot ``i`` of this position's tables sends
    ``operand[input_offsets[i] : input_offsets[i] + send_sizes[i]]`` to position
    ``i // (K // P)`` (``K`` slots, axis size ``P``), which writes it at
    ``output_offsets[i]`` of its `output`.

    Args:
      operand: ``[N, ...]``, the rows to send.
      output: ``[M, ...]``, the buffer the received rows are written into.
      input_offsets, send_sizes: ``[K]`` integers, the slices of `operand` sent.
      output_offsets: ``[K]`` integers, where each sent slice lands on its receiver.
      recv_sizes: ``[K]`` integers, the sizes received (``send_sizes`` seen from the
        other side, as JAX requires them).
      axis_name: the named axis (or tuple of axes) of an enclosing `shard_map`.
      axis_index_groups: not supported (must be None).

    Returns:
      `output` with the received rows written.

    Raises:
      NotImplementedError: for `axis_index_groups`, or outside `shard_map`.
      TypeError, ValueError: for operands that do not fit together.

    Example (two positions of axis ``"i"``: position 0 sends its rows 0-1 to
    itself, at 0; position 1 its row 0 to position 0, at 2, and its rows 1-2
    to itself, at 0):

      >>> import numpy as np
      >>> from polyjax_interpreters.batching import vmap
      >>> x = np.array([[1, 2, 0], [3, 4, 5]], np.float32)
      >>> f = lambda x, o, io, ss, oo, rs: ragged_all_to_all(x, o, io, ss, oo, rs, axis_name="i")
      >>> vmap(f, axis_name="i")(
      ...     x, np.zeros((2, 3), np.float32),
      ...     np.array([[0, 2], [0, 1]]), np.array([[2, 0], [1, 2]]),
      ...     np.array([[0, 0], [2, 0]]), np.array([[2, 1], [0, 2]]))
      Array([[1., 2., 3.],
             [4., 5., 0.]], dtype=float32)
    """
    if axis_index_groups is not None:
        raise NotImplementedError("ragged_all_to_all: axis_index_groups is not supported")
    return ragged_all_to_all_p.bind(
        operand,
        output,
        input_offsets,
        send_sizes,
        output_offsets,
        recv_sizes,
        axis_name=_names(axis_name),
        axis_index_groups=None,
    )
