"""Mutable array references: eager, jit, loops, grad, vmap, printing and errors.

Oracles: NumPy in-place updates of a copy for values; analytic derivatives and
`check_grads`; JAX 0.10.2's printed jaxprs and error messages (observed).
"""

from __future__ import annotations

import numpy as np
import pytest

from polyjax_core import make_jaxpr
from polyjax_core.state import AbstractRef, Ref
from polyjax_interpreters import ad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.remat import checkpoint as remat_checkpoint
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax, ref
from polyjax_numpy import numpy as jnp

F32 = np.float32


def _x(*shape):
    return np.arange(np.prod(shape), dtype=F32).reshape(shape)


# Index forms: static ints (negative too), slices, `...`, mixed.
INDICES = [
    ...,
    0,
    -1,
    (slice(1, None),),
    (1, slice(None)),
    (slice(None), 2),
    (slice(0, 1), 1),
    (slice(None), slice(None, None, 2)),
    (slice(1, None, 2), slice(2, 0, 1)),  # (an empty slice)
]


@pytest.mark.parametrize("idx", INDICES, ids=str)
def test_eager_reads_and_writes_match_numpy(idx):
    x = _x(2, 3)
    r = ref.new_ref(x)
    np.testing.assert_array_equal(r[idx], x[idx])
    want = x.copy()
    value = np.full(np.shape(x[idx]), 7.0, F32)
    want[idx] = value
    r[idx] = value
    want[idx] += value
    r[idx] += value
    ref.addupdate(r, idx, value)
    want[idx] += value
    np.testing.assert_array_equal(ref.freeze(r), want)


def test_jit_reads_and_writes_with_traced_indices():
    def f(x, i):
        r = ref.new_ref(x)
        r[i] += 1.0
        r[i, 0] = ref.swap(r, (i, 1), r[i, 0])  # swap two entries of row i
        return ref.freeze(r)

    want = _x(2, 3)
    want[1] += 1.0
    want[1, [0, 1]] = want[1, [1, 0]]
    np.testing.assert_array_equal(jit(f)(_x(2, 3), np.int32(1)), want)
    # A negative traced index counts from the end, as a static one does.
    np.testing.assert_array_equal(jit(f)(_x(2, 3), np.int32(-1)), want)


def test_ref_type_repr_and_isinstance():
    r = ref.new_ref(np.ones(2, np.int32))
    assert repr(r) == "Ref([1, 1], dtype=int32)"
    assert str(r.aval) == "Ref{int32[2]}" and isinstance(r.aval, AbstractRef)
    assert (r.shape, r.dtype, r.ndim, len(r)) == ((2,), np.dtype(np.int32), 1, 2)
    assert repr(ref.new_ref(1)) == "Ref(1, dtype=int32, weak_type=True)"
    seen = []
    jit(lambda r: seen.append(isinstance(r, Ref)))(r)
    assert seen == [True] and not isinstance(np.ones(2), Ref)


def test_jaxpr_prints_as_jax():
    def f(x, i):
        r = ref.new_ref(x)
        r[...] += 1.0
        r[0] = 5.0
        ref.addupdate(r, i, 2.0)
        return ref.freeze(r), r[1:], ref.swap(r, i, 3.0)

    assert str(make_jaxpr(f)(np.zeros(3, F32), np.int32(0))) == (
        "{ lambda ; a:f32[3] b:i32[]. let\n"
        "    c:Ref{f32[3]} = new_ref[kind=None memory_space=None] a\n"
        "    d:f32[3] <- c[...]\n"
        "    e:f32[3] = add d 1.0:f32[]\n"
        "    c[...] <- e\n"
        "    c[0] <- 5.0:f32[]\n"
        "    c[b] += 2.0:f32[]\n"
        "    f:f32[3] = freeze c\n"
        "    g:f32[2] <- c[1:]\n"
        "    h:f32[], c[b] <- c[b], 3.0:f32[]\n"
        "  in (f, g, h) }"
    )


def test_jit_updates_reference_arguments_and_closed_over_references():
    acc = ref.new_ref(np.zeros(3, F32))
    total = ref.new_ref(np.float32(0))

    @jit
    def step(a, x):
        a[...] += x
        total[...] += x.sum()  # closed over, not an argument
        return a[0]

    assert step(acc, np.ones(3, F32)) == 1.0
    assert step(acc, np.ones(3, F32)) == 2.0  # the cached executable writes back too
    np.testing.assert_array_equal(acc[...], [2.0, 2.0, 2.0])
    assert total[...] == 6.0
    # A reference only read is passed in and left as it was.
    assert jit(lambda a: a[...].sum())(acc) == 6.0
    np.testing.assert_array_equal(acc[...], [2.0, 2.0, 2.0])


def _sum_of_squares(xs):
    acc = ref.new_ref(np.float32(0))

    def body(carry, x):
        acc[...] += x * x
        return carry, None

    lax.scan(body, None, xs)
    return acc[...]


def _histogram(idx):
    counts = ref.new_ref(jnp.zeros(4))

    def body(i, carry):
        counts[idx[i]] += 1.0
        return carry

    lax.fori_loop(0, idx.shape[0], body, None)
    return ref.freeze(counts)


def test_loops_accumulate_in_references():
    xs = np.arange(4, dtype=F32)
    assert _sum_of_squares(xs) == 14.0
    assert jit(_sum_of_squares)(xs) == 14.0
    idx = np.array([0, 3, 3, 1, 3], np.int32)
    np.testing.assert_array_equal(jit(_histogram)(idx), [1.0, 1.0, 0.0, 3.0])
    # The loop's jaxpr keeps the reference as a const operand of the loop, as JAX prints.
    text = str(make_jaxpr(_sum_of_squares)(xs))
    assert "] b a\n" in text and "c[...] <- g" in text and "num_consts=1" in text


def test_eager_loop_over_a_reference():
    r = ref.new_ref(np.float32(1))
    lax.fori_loop(0, 3, lambda i, c: r.__setitem__(..., r[...] * 2.0), None)
    assert r[...] == 8.0


def test_cond_branches_write_references():
    def f(p, x):
        r = ref.new_ref(x)

        def yes():
            r[...] += 1.0

        lax.cond(p, yes, lambda: None)
        return r[...]

    assert jit(f)(True, np.float32(1)) == 2.0
    assert jit(f)(False, np.float32(1)) == 1.0


def test_grad_through_references():
    def f(x):
        r = ref.new_ref(jnp.zeros((2, 3)))
        r[0] = x * x
        r[1, 1:] += x[:2]
        ref.addupdate(r, 0, x)
        return ref.freeze(r).sum()

    x = np.array([1.0, 2.0, 3.0], F32)
    np.testing.assert_allclose(ad.grad(f)(x), 2 * x + 1 + np.array([1, 1, 0]))
    np.testing.assert_allclose(jit(ad.grad(_sum_of_squares))(x), 2 * x)
    np.testing.assert_allclose(ad.grad(jit(_sum_of_squares))(x), 2 * x)
    check_grads(jit(f), (x,), order=1, modes=("fwd", "rev"))

    def strided(x):
        r = ref.new_ref(jnp.zeros(5))
        r[::2] = x * x
        r[1::2] += r[:4:2] * x[1:]
        return ref.freeze(r)

    check_grads(jit(strided), (x,), order=1, modes=("fwd", "rev"))


def test_grad_refuses_writing_differentiated_values_to_outside_references():
    outside = ref.new_ref(np.float32(0))

    def write(x):
        outside[...] = x
        return x

    with pytest.raises(Exception, match="non-differentiated array reference of type Ref"):
        ad.grad(write)(1.0)
    # Reading one is fine: it is a constant.
    outside[...] = np.float32(3)
    assert ad.grad(lambda x: x * outside[...])(2.0) == 3.0


def test_vmap_of_references():
    def f(x):
        r = ref.new_ref(jnp.zeros(()))  # made inside: batched
        r[...] += x
        return ref.freeze(r)

    xs = np.arange(3, dtype=F32)
    np.testing.assert_array_equal(vmap(f)(xs), xs)
    np.testing.assert_array_equal(vmap(_sum_of_squares)(np.ones((2, 3), F32)), [3.0, 3.0])
    # A reference argument is batched along its leading axis.
    acc = ref.new_ref(np.zeros(3, F32))

    def add(x, a):
        a[...] += x

    vmap(add)(xs, acc)
    np.testing.assert_array_equal(acc[...], xs)
    outside = ref.new_ref(np.float32(0))
    with pytest.raises(Exception, match="vmapped value on an unbatched array reference"):
        vmap(lambda x: outside.__setitem__(..., x))(xs)


def test_errors():
    r = ref.new_ref(np.zeros(3, F32))
    with pytest.raises(ValueError, match=r"Invalid shape for `swap`. Ref shape: \(3,\)"):
        r[...] = np.float32(1)
    with pytest.raises(ValueError, match="Invalid dtype for `swap`. Ref dtype: float32. Value"):
        r[...] = np.ones(3, np.int32)
    with pytest.raises(ValueError, match=r"Invalid shape for `addupdate`"):
        ref.addupdate(r, ..., np.ones(2, F32))
    with pytest.raises(NotImplementedError, match="positive step"):
        r[::-1]
    with pytest.raises(ValueError, match="traced for jit returned a mutable array reference"):
        jit(lambda x: ref.new_ref(x))(1.0)
    with pytest.raises(ValueError, match="traced for cond returned a mutable array reference"):
        jit(lambda p, x: lax.cond(p, lambda: ref.new_ref(x), lambda: ref.new_ref(x)))(True, 1.0)
    with pytest.raises(ValueError, match="appeared at both a and b"):
        jit(lambda a, b: a[...] + b[...])(r, r)
    with pytest.raises(TypeError, match="expects a mutable array reference"):
        ref.freeze(np.ones(2))
    with pytest.raises(TypeError, match="expects an array, got a mutable array reference"):
        ref.new_ref(r)


def test_empty_and_free_ref():
    e = ref.empty_ref(jnp.zeros(2, np.int32))  # anything with shape and dtype
    assert e.aval == AbstractRef(jnp.zeros(2, np.int32).aval)
    assert ref.free_ref(e) is None


def test_written_buffers_are_donated_and_shared_ones_kept():
    x = jnp.ones(3)
    r = ref.new_ref(x)  # a copy: writing the reference never touches `x`
    old = r._value
    r[...] += 1.0
    assert old.is_deleted() and not x.is_deleted()
    frozen = ref.freeze(r)  # shared now: the next write copies before donating
    jit(lambda a: a.__setitem__(0, 5.0))(r)
    np.testing.assert_array_equal(frozen, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(r[...], [5.0, 2.0, 2.0])
    np.testing.assert_array_equal(x, [1.0, 1.0, 1.0])


def test_nested_jit_while_cond_remat_and_stages():
    total = ref.new_ref(np.float32(0))

    @jit
    def inner(x):
        total[...] += x  # a jitted closure over a reference, called from another jit
        return x

    assert jit(lambda x: inner(x) * 2)(3.0) == 6.0 and total[...] == 3.0
    assert ad.grad(lambda x: jit(lambda y: y * total[...])(x))(2.0) == 3.0

    def count_to(n):
        acc = ref.new_ref(0)
        lax.while_loop(lambda c: acc[...] < n, lambda c: acc.__setitem__(..., acc[...] + 1), None)
        return acc[...]

    assert jit(count_to)(5) == 5  # the cond reads the reference the body writes

    def square(x):
        r = ref.new_ref(x)
        r[...] = r[...] * x
        return r[...]

    assert ad.grad(remat_checkpoint(square))(3.0) == 6.0
    # Ahead of time: the lowered program takes the contents and returns the new ones.
    r = ref.new_ref(np.zeros(2, F32))
    compiled = jit(lambda r: r.__setitem__(..., r[...] + 1.0)).lower(r).compile()
    compiled(r)
    compiled(r)
    np.testing.assert_array_equal(r[...], [2.0, 2.0])


def test_eager_integer_indices_share_one_executable():
    from polyjax_interpreters import dispatch

    r = ref.new_ref(np.zeros(6, F32))
    r[0] = np.float32(0)  # compiles the write
    before = len(dispatch._eager_cache)
    for i in range(1, 6):
        r[i] = np.float32(i)
    assert len(dispatch._eager_cache) == before
    np.testing.assert_array_equal(r[...], np.arange(6, dtype=F32))
