"""The top-level names and small modules of issue 20: custom_gradient, closure_convert,
custom_batching, ops.segment_*, image, monitoring, dlpack.is_supported_dtype,
host_* aliases, make_user_context and copy_to_host_async.

Oracles: NumPy (segment reductions by loops; resampling by per-pixel loops
written from the documented formula), finite differences (`check_grads`), and
counts of traces / rule calls for the behaviours that are about caching and
dispatch.
"""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

import polyjax as jax
import polyjax.numpy as jnp
from polyjax import image, monitoring, ops
from polyjax.custom_batching import custom_vmap, sequential_vmap
from polyjax.test_util import check_grads

RNG = np.random.default_rng(0)

# --- custom_gradient / closure_convert ----------------------------------------------------


def test_custom_gradient_uses_the_given_vjp():
    @jax.custom_gradient
    def f(x, y):
        return x * y, lambda g: (g * y, 10.0 * g * x)

    x, y = np.float32(2.0), np.float32(3.0)
    assert float(f(x, y)) == 6.0
    gx, gy = jax.jit(jax.grad(f, argnums=(0, 1)))(x, y)
    assert (float(gx), float(gy)) == (3.0, 20.0)
    xs = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(jax.vmap(jax.grad(f))(xs, xs), xs)


def test_custom_gradient_single_argument_and_second_order():
    @jax.custom_gradient
    def square(x):
        return x**2, lambda g: g * 2.0 * x  # a bare cotangent for the one argument

    assert float(jax.grad(square)(np.float32(3.0))) == 6.0
    assert float(jax.grad(jax.grad(square))(np.float32(3.0))) == 2.0


def test_closure_convert_hoists_traced_closures():
    def outer(y):
        converted, consts = jax.closure_convert(lambda x: jnp.sin(x * y), np.float32(1.0))
        assert len(consts) == 1  # `y` is a tracer of grad here
        return converted(np.float32(2.0), *consts)

    y = np.float32(0.3)
    np.testing.assert_allclose(jax.grad(outer)(y), 2.0 * np.cos(2.0 * y), rtol=1e-6)
    converted, consts = jax.closure_convert(lambda x: x * 2.0, np.float32(1.0))
    assert consts == [] and float(converted(np.float32(4.0))) == 8.0


# --- custom_batching ------------------------------------------------------------------------


def test_custom_vmap_calls_the_rule_only_under_vmap():
    calls = []

    @custom_vmap
    def f(x, y):
        return jnp.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, x, y):
        calls.append((axis_size, tuple(in_batched)))
        return 2.0 * jnp.sin(x) * y, True

    x = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(f(x[1], 2.0), np.sin(1.0) * 2.0, rtol=1e-6)
    assert calls == []
    np.testing.assert_allclose(jax.vmap(f, (0, None))(x, 2.0), 4.0 * np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.vmap(f))(x, x), 2.0 * np.sin(x) * x, rtol=1e-6)
    assert calls == [(3, (True, False)), (3, (True, True))]
    # Derivatives differentiate the function itself.
    check_grads(f, (np.float32(0.5), np.float32(1.5)), order=1)


def test_sequential_vmap_loops_over_the_batch():
    f = sequential_vmap(lambda a, b: jnp.sum(a) * b)
    a = RNG.normal(size=(4, 3)).astype(np.float32)
    got = jax.vmap(f, (0, None))(a, np.float32(2.0))
    np.testing.assert_allclose(got, a.sum(1) * 2.0, rtol=1e-5)
    jaxpr = str(jax.make_jaxpr(jax.vmap(f, (0, None)))(a, np.float32(2.0)))
    assert "scan" in jaxpr or "while" in jaxpr


# --- ops.segment_* ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,np_op,empty",
    [("sum", np.add, 0.0), ("prod", np.multiply, 1.0), ("max", np.maximum, -np.inf),
     ("min", np.minimum, np.inf)],
)  # fmt: skip
def test_segments_against_a_numpy_loop(name, np_op, empty):
    data = RNG.normal(size=(6, 2)).astype(np.float32)
    ids = np.array([0, 3, 0, -1, 5, 3])  # -1 and 5 (>= num_segments) are dropped
    want = np.full((4, 2), empty, np.float32)
    for row, s in zip(data, ids):
        if 0 <= s < 4:
            want[s] = np_op(want[s], row)
    segment = jax.jit(getattr(ops, f"segment_{name}"), static_argnums=(2, 3, 4, 5))
    got = segment(data, ids, 4)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    bucketed = segment(data, ids, 4, False, False, 4)
    np.testing.assert_allclose(bucketed, want, rtol=1e-6)
    ints = segment(np.arange(6, dtype=np.int32), ids, 4)  # empty segments: the dtype's limits
    assert ints[1] == {"sum": 0, "prod": 1, "max": np.iinfo(np.int32).min}.get(
        name, np.iinfo(np.int32).max
    )


def test_segment_sum_num_segments_and_grads():
    ids = np.array([0, 2, 0])
    np.testing.assert_array_equal(ops.segment_sum(np.ones(3, np.float32), ids), [2.0, 0.0, 1.0])
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(ops.segment_sum)(np.ones(3, np.float32), ids)
    full = np.array([0, 1, 0])  # no empty segment: its -inf has no derivative
    seg_max = jax.jit(lambda d: ops.segment_max(d, full, 2))
    check_grads(seg_max, (np.float32([1.0, 2.0, 3.0]),), order=1, modes=("rev",))


# --- image ------------------------------------------------------------------------------------


def _kernel(method, x):
    x = abs(x)
    if method == "linear":
        return max(0.0, 1.0 - x)
    if method == "cubic":
        a = -0.5
        if x <= 1:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a if x < 2 else 0.0
    radius = 3.0 if method == "lanczos3" else 5.0
    return float(np.sinc(x) * np.sinc(x / radius)) if x < radius else 0.0


def _np_resample_1d(v, out_size, scale, translation, method, antialias):
    """One axis, pixel by pixel, from the documented formula."""
    n = len(v)
    width = max(1.0 / scale, 1.0) if antialias else 1.0
    out = np.zeros(out_size)
    for o in range(out_size):
        s = (o + 0.5 - translation) / scale - 0.5
        if not -0.5 <= s <= n - 0.5:
            continue
        w = np.array([_kernel(method, (i - s) / width) for i in range(n)])
        if abs(w.sum()) > 1000 * np.finfo(np.float32).eps:
            out[o] = (w / w.sum()) @ v
    return out


@pytest.mark.parametrize("method", ["cubic", "lanczos5"])
def test_scale_and_translate_against_numpy(method):
    x = RNG.normal(size=(5, 7)).astype(np.float32)
    scale, shift = (1.3, 0.6), (0.4, -1.2)
    # One compilation instead of many eager operations; scale and shift stay traced.
    resample = jax.jit(image.scale_and_translate, static_argnums=(1, 2, 5))
    got = resample(x, (6, 4), (0, 1), np.array(scale), np.array(shift), method)
    rows = np.stack([_np_resample_1d(c, 6, scale[0], shift[0], method, True) for c in x.T], 1)
    want = np.stack([_np_resample_1d(r, 4, scale[1], shift[1], method, True) for r in rows])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_resize_methods():
    x = RNG.normal(size=(4, 6)).astype(np.float32)
    resize = jax.jit(image.resize, static_argnums=(1, 2, 3))
    got = resize(x, (4, 3), "bilinear", False)
    want = np.stack([_np_resample_1d(r, 3, 0.5, 0.0, "linear", False) for r in x])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # Nearest: input pixel floor((o + 0.5) * in / out).
    nearest = x[[1, 3]][:, [0, 1, 1, 2, 3, 3, 4, 5, 5]]
    np.testing.assert_array_equal(resize(x, (2, 9), "nearest", True), nearest)
    assert image.ResizeMethod.from_string("tricubic") is image.ResizeMethod.CUBIC
    with pytest.raises(ValueError, match="Unknown resize method"):
        image.resize(x, (2, 2), "box")
    cubic = jax.jit(lambda a: image.resize(a, (3, 4), "cubic"))
    check_grads(cubic, (x[:2, :3],), order=1, modes=("rev",))


# --- monitoring, dlpack, host aliases, user contexts, copy_to_host_async ---------------


def test_monitoring_listeners():
    events, durations = [], []
    listener = lambda event, **kw: events.append((event, kw))  # noqa: E731
    monitoring.register_event_listener(listener)
    monitoring.register_event_duration_secs_listener(lambda e, d, **kw: durations.append((e, kw)))
    try:
        monitoring.record_event("/test/event", step=1)
        jax.jit(lambda x: x * 3.0 + 0.5)(np.float32(1.0))
    finally:
        monitoring.clear_event_listeners()
    assert events == [("/test/event", {"step": 1})]
    assert any(e == "/jax/core/compile/backend_compile_duration" for e, _ in durations)
    with pytest.raises(AssertionError):
        monitoring.unregister_event_listener(listener)


def test_dlpack_supported_dtypes_round_trip():
    for dtype in (np.float32, np.int8, np.uint64, np.bool_, np.complex64, ml_dtypes.bfloat16):
        assert jax.dlpack.is_supported_dtype(dtype)
    assert not jax.dlpack.is_supported_dtype(ml_dtypes.int4)
    assert not jax.dlpack.is_supported_dtype(ml_dtypes.float8_e4m3fn)
    x = np.arange(3, dtype=np.int16)
    np.testing.assert_array_equal(np.from_dlpack(jax.dlpack.from_dlpack(x)), x)


def test_host_aliases_warn_and_match_process_queries():
    with pytest.warns(UserWarning, match="renamed to polyjax.process_count"):
        assert jax.host_count() == jax.process_count()
    with pytest.warns(UserWarning):
        assert jax.host_id() == jax.process_index()
    with pytest.warns(UserWarning):
        assert jax.host_ids() == jax.process_indices()


def test_user_context_retraces_jit():
    ctx = jax.make_user_context(1)
    traces = []

    @jax.jit
    def f(x):
        traces.append(ctx.value)
        return x + ctx.value

    assert float(f(np.float32(1.0))) == 2.0
    with ctx(5):
        assert float(f(np.float32(1.0))) == 6.0
    assert float(f(np.float32(1.0))) == 2.0
    assert traces == [1, 5]
    with pytest.raises(TypeError, match="hashable"):
        ctx([1])


def test_copy_to_host_async_returns_its_argument():
    tree = {"a": jax.device_put(np.ones(2, np.float32)), "b": 3}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert jax.copy_to_host_async(tree) is tree
    np.testing.assert_array_equal(jax.device_get(tree)["a"], np.ones(2))


# --- ad_checkpoint: saved residuals and policy answers --------------------------------------


def test_print_saved_residuals(capsys):
    from polyjax import ad_checkpoint as ac

    def f(x, y):
        return jnp.cos(jnp.sin(x) * y).sum()

    x, y = np.ones(3, np.float32), np.float32(2.0)
    ac.print_saved_residuals(jax.checkpoint(f), x, y)
    assert capsys.readouterr().out.splitlines() == [
        "f32[3] from the argument x",
        "f32[] from the argument y",
    ]
    whats = [what for _, what in ac.saved_residuals(f, x, y)]
    assert any(w.startswith("output of sin from") for w in whats)


def test_offload_policy_answers():
    from polyjax import ad_checkpoint as ac

    policy = jax.checkpoint_policies.save_and_offload_only_these_names(
        names_which_can_be_saved=["a"],
        names_which_can_be_offloaded=["b"],
        offload_src="device",
        offload_dst="pinned_host",
    )

    def g(x):
        a = ac.checkpoint_name(jnp.sin(x), "a")
        b = ac.checkpoint_name(jnp.sin(a), "b")
        return jnp.sin(jnp.sin(b)).sum()

    x = np.linspace(0.1, 0.9, 3, dtype=np.float32)
    saved = ac.saved_residuals(jax.checkpoint(g, policy=policy), x)
    # a and b are kept (b "offloaded": on CPU, saved in place), c is recomputed.
    assert len(saved) == 3
    np.testing.assert_allclose(jax.grad(jax.checkpoint(g, policy=policy))(x), jax.grad(g)(x))
    assert (
        repr(ac.Recompute) == "Recompute"
        and ac.Offloadable("device", "pinned_host").dst == "pinned_host"
    )


# --- extend + interpreters: a library declares a primitive with its rules ----------------------


def test_a_primitive_declared_through_extend_works_under_every_transformation():
    from jaxlib.mlir.dialects import stablehlo as hlo

    from polyjax.extend.core import Primitive
    from polyjax.interpreters import ad, batching, mlir

    cube_p = Primitive("test_cube")
    cube_p.def_impl(lambda x: np.asarray(x) ** 3)
    cube_p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(cube_p, lambda ctx, x: [hlo.multiply(x, hlo.multiply(x, x))])
    ad.defjvp(cube_p, lambda g, x: g * 3.0 * x * x)
    batching.defvectorized(cube_p)

    x = np.linspace(0.5, 1.5, 3, dtype=np.float32)
    np.testing.assert_allclose(jax.jit(cube_p.bind)(x), x**3, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(cube_p.bind)(x), x**3, rtol=1e-6)
    check_grads(cube_p.bind, (x,), order=1)
    assert "test_cube" in str(jax.make_jaxpr(cube_p.bind)(x))


def test_extend_random_threefry_matches_the_lax_primitive():
    from polyjax.extend import random

    count = np.arange(5, dtype=np.uint32)
    out = random.threefry_2x32((np.uint32(3), np.uint32(7)), count)
    first = jax.lax.threefry2x32(
        np.uint32(3), np.uint32(7), count[:3], np.array([3, 4, 0], np.uint32)
    )
    np.testing.assert_array_equal(out, np.concatenate(first)[[0, 1, 2, 3, 4]])


def test_linear_call_uses_its_transpose():
    from polyjax.custom_derivatives import linear_call

    def div_add(x, denom):
        return x + linear_call(lambda r, v: v / r, lambda r, ct: ct / r, denom, x)

    x = np.float32(9.0)
    assert float(div_add(x, np.float32(3.0))) == 12.0
    (ct,) = jax.linear_transpose(lambda v: div_add(v, np.float32(3.0)), x)(np.float32(18.0))
    assert float(ct) == 24.0  # 18 + 18 / 3

    def custom_id(v):  # a "transpose" that is not the true one shows it is used
        return linear_call(lambda _, u: u, lambda _, c: 7.0 * c, (), v)

    (t,) = jax.linear_transpose(custom_id, x)(np.float32(1.0))
    assert float(t) == 7.0
    with pytest.raises(NotImplementedError, match="not differentiable"):
        jax.jvp(custom_id, (x,), (x,))
