"""vmap of gather and the scatters, fuzzed against a Python loop.

Hypothesis draws an operand shape, valid dimension numbers (offset/window,
collapsed/inserted, start index map, operand and index batching dimensions),
slice sizes, index values (negative and past the end included) and a mode;
then batches the operand, the indices, the updates or any mix, each at a random
axis. `vmap(f)` must equal stacking `f` over the batch. The scatters work on
int32 values, so that the order in which repeated indices combine cannot change
the result (replace uses one update value per batch element for the same
reason). Examples are derandomized: CI sees the same cases every run.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polyjax_interpreters import batching
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax

MODES = list(lax.GatherScatterMode)
_FUZZ = settings(max_examples=5, deadline=None, derandomize=True, database=None)


@st.composite
def _layouts(draw, min_index=0):
    """(operand shape, gather dimension numbers, slice sizes, index batch shape).

    `min_index`: the fewest index vector components.
    """
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    roles = draw(
        st.lists(
            st.sampled_from(["batch", "collapsed", "window"]), min_size=rank, max_size=rank
        ).filter(lambda r: r.count("batch") <= rank - min_index)
    )
    operand_batching = tuple(d for d in range(rank) if roles[d] == "batch")
    collapsed = tuple(d for d in range(rank) if roles[d] == "collapsed")
    free = [d for d in range(rank) if roles[d] != "batch"]
    n_index = draw(st.integers(min_index, len(free)))
    start_index_map = tuple(draw(st.permutations(free))[:n_index])
    sizes = tuple(
        draw(st.integers(0, n)) if roles[d] == "window" else 1 for d, n in enumerate(shape)
    )
    # The indices' batch axes: free ones of random size, and one per operand
    # batching dimension (of its size), in a random order.
    free_batch = draw(st.lists(st.integers(1, 3), max_size=2))
    axes = [("free", n) for n in free_batch] + [("paired", d) for d in operand_batching]
    axes = draw(st.permutations(axes))
    batch_shape = tuple(n if kind == "free" else shape[n] for kind, n in axes)
    index_batching = tuple(axes.index(("paired", d)) for d in operand_batching)
    n_window = rank - len(collapsed) - len(operand_batching)
    out_rank = len(batch_shape) + n_window
    offset_dims = tuple(sorted(draw(st.permutations(range(out_rank)))[:n_window]))
    dn = lax.GatherDimensionNumbers(
        offset_dims=offset_dims,
        collapsed_slice_dims=collapsed,
        start_index_map=start_index_map,
        operand_batching_dims=operand_batching,
        start_indices_batching_dims=index_batching,
    )
    return shape, dn, sizes, batch_shape


def _indices(rng, shape, start_index_map, batch_shape):
    """Start indices from 2 below 0 to 2 past the end of each indexed axis."""
    out = np.zeros((*batch_shape, len(start_index_map)), np.int32)
    for k, d in enumerate(start_index_map):
        out[..., k] = rng.integers(-2, shape[d] + 2, size=batch_shape)
    return out


def _hows(n_args):
    """(batch size, which arguments are batched): every non-empty choice with a batch
    of 2, and everything batched over an empty batch."""
    choices = [c for c in itertools.product([False, True], repeat=n_args) if any(c)]
    return [(2, c) for c in choices] + [(0, (True,) * n_args)]


def _how_id(how) -> str:
    size, batched = how
    return f"B{size}-" + "".join("b" if b else "u" for b in batched)


def _batched(draw_axis, batched, size, make):
    """(argument, its batch axis): `make(b)` stacked over the batch at a random axis,
    or `make(0)` and None when not `batched`."""
    if not batched:
        return make(0), None
    example = make(0)
    stacked = np.stack([make(b) for b in range(size)]) if size else example[None][:0]
    axis = draw_axis(stacked.ndim - 1)
    return np.moveaxis(stacked, 0, axis), axis


def _loop(f, in_axes, args, size):
    """`f` on each batch element, stacked (an empty batch: `f`'s result shape)."""
    jf = jit(f)
    if size == 0:
        example = [
            a if ax is None else np.zeros(np.delete(a.shape, ax), a.dtype)
            for a, ax in zip(args, in_axes)
        ]
        out = np.asarray(jf(*example))
        return np.zeros((0, *out.shape), out.dtype)
    outs = []
    for b in range(size):
        sliced = [a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, in_axes)]
        outs.append(np.asarray(jf(*sliced)))
    return np.stack(outs)


def _check_vmap(f, args, in_axes, size):
    got = np.asarray(jit(batching.vmap(f, in_axes))(*args))
    want = _loop(f, in_axes, args, size)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@settings(_FUZZ)
@given(
    layout=_layouts(),
    mode=st.sampled_from(MODES),
    fill=st.sampled_from([None, -1.5]),
    data=st.data(),
)
@pytest.mark.parametrize("how", _hows(2), ids=_how_id)
def test_vmap_gather_matches_loop(how, layout, mode, fill, data):
    shape, dn, sizes, batch_shape = layout
    size, batched = how
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    axis = lambda hi: data.draw(st.integers(0, hi))  # noqa: E731
    base = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x, x_ax = _batched(axis, batched[0], size, lambda b: base + 100 * b)
    i, i_ax = _batched(
        axis, batched[1], size, lambda b: _indices(rng, shape, dn.start_index_map, batch_shape)
    )

    def f(x, i):
        return lax.gather(x, i, dn, sizes, mode=mode, fill_value=fill)

    _check_vmap(f, (x, i), (x_ax, i_ax), size)


_SCATTERS = ["scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max"]


@settings(_FUZZ)
@given(
    # XLA's scatter with an empty index vector combines repeated updates wrongly
    # (JAX's result is the same); the loop would not be a trustworthy oracle.
    layout=_layouts(min_index=1),
    mode=st.sampled_from(MODES),
    name=st.sampled_from(_SCATTERS),
    data=st.data(),
)
@pytest.mark.parametrize("how", _hows(3), ids=_how_id)
def test_vmap_scatter_matches_loop(how, layout, mode, name, data):
    shape, gdn, sizes, batch_shape = layout
    size, batched = how
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    axis = lambda hi: data.draw(st.integers(0, hi))  # noqa: E731
    dn = lax.ScatterDimensionNumbers(
        update_window_dims=gdn.offset_dims,
        inserted_window_dims=gdn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=gdn.start_index_map,
        operand_batching_dims=gdn.operand_batching_dims,
        scatter_indices_batching_dims=gdn.start_indices_batching_dims,
    )
    window = [
        s
        for d, s in enumerate(sizes)
        if d not in (*gdn.collapsed_slice_dims, *gdn.operand_batching_dims)
    ]
    it_w, it_b = iter(window), iter(batch_shape)
    n_out = len(batch_shape) + len(window)
    up_shape = tuple(next(it_w) if d in dn.update_window_dims else next(it_b) for d in range(n_out))

    def updates(b):
        if name == "scatter":  # which of several updates of one element wins is unspecified
            return np.full(up_shape, 50 + b, np.int32)
        return rng.integers(-3, 4, size=up_shape).astype(np.int32)

    base = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape) % 5 - 2
    x, x_ax = _batched(axis, batched[0], size, lambda b: base + 10 * b)
    index_map = dn.scatter_dims_to_operand_dims
    i, i_ax = _batched(
        axis, batched[1], size, lambda b: _indices(rng, shape, index_map, batch_shape)
    )
    u, u_ax = _batched(axis, batched[2], size, updates)
    fun = getattr(lax, name)

    def f(x, i, u):
        return fun(x, i, u, dn, mode=mode)

    _check_vmap(f, (x, i, u), (x_ax, i_ax, u_ax), size)
