"""polyjax.nn: activations, softmax family, one_hot, standardize, attention, initializers.

Oracles: NumPy/SciPy formulas for values, finite differences for derivatives,
and JAX's documented conventions (relu'(0) = 0, grad(logsumexp) = softmax).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special

from polyjax_core.config import softmax_custom_jvp
from polyjax_interpreters.ad import grad, jacfwd
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import nn, random
from polyjax_numpy.nn import initializers

RNG = np.random.default_rng(0)
X = np.linspace(-4, 4, 17).astype(np.float32)


def _np_softplus(x):
    return np.logaddexp(0, x)


def _np_elu(x, a=1.0):
    return np.where(x > 0, x, a * np.expm1(np.minimum(x, 0)))


ACTIVATIONS = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0)),
    "relu6": (nn.relu6, lambda x: np.clip(x, 0, 6)),
    "sigmoid": (nn.sigmoid, scipy.special.expit),
    "log_sigmoid": (nn.log_sigmoid, lambda x: -_np_softplus(-x)),
    "softplus": (nn.softplus, _np_softplus),
    "soft_sign": (nn.soft_sign, lambda x: x / (1 + np.abs(x))),
    "silu": (nn.silu, lambda x: x * scipy.special.expit(x)),
    "swish": (nn.swish, lambda x: x * scipy.special.expit(x)),
    "gelu_tanh": (
        nn.gelu,
        lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
    ),
    "gelu_exact": (lambda x: nn.gelu(x, approximate=False), lambda x: x * scipy.special.ndtr(x)),
    "elu": (nn.elu, _np_elu),
    "celu": (
        lambda x: nn.celu(x, 0.5),
        lambda x: np.maximum(x, 0) + 0.5 * np.minimum(np.expm1(x / 0.5), 0),
    ),
    "selu": (nn.selu, lambda x: 1.0507009873554805 * _np_elu(x, 1.6732632423543772)),
    "leaky_relu": (nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    "hard_tanh": (nn.hard_tanh, lambda x: np.clip(x, -1, 1)),
    "hard_sigmoid": (nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "hard_silu": (nn.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "mish": (nn.mish, lambda x: x * np.tanh(_np_softplus(x))),
    "squareplus": (nn.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2),
    "sparse_plus": (
        nn.sparse_plus,
        lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    ),
    "sparse_sigmoid": (nn.sparse_sigmoid, lambda x: np.clip((x + 1) / 2, 0, 1)),
    "tanh": (nn.tanh, np.tanh),
    "log1mexp": (nn.log1mexp, lambda x: np.log(-np.expm1(-x))),  # NaN below 0, as JAX
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_values(name):
    fn, oracle = ACTIVATIONS[name]
    out = fn(X)
    assert out.dtype == np.float32 and out.shape == X.shape
    np.testing.assert_allclose(out, oracle(X.astype(np.float64)), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize(
    "name", ["relu", "gelu_tanh", "softplus", "silu", "elu", "mish", "log_sigmoid", "selu"]
)
def test_activation_grads(name):
    fn, _ = ACTIVATIONS[name]
    x = np.array([-2.3, -0.7, 0.4, 1.9], np.float32)  # away from kinks
    check_grads(fn, (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16", np.int32, np.uint8, bool])
def test_activation_dtypes(dtype):
    x = np.array([0, 1, 2]).astype(dtype)
    out = nn.relu6(x)
    expected = np.float32 if np.dtype(dtype).kind in "iub" else np.dtype(dtype)
    assert out.dtype == expected
    np.testing.assert_allclose(np.asarray(out, np.float32), np.asarray(x, np.float32))


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [(np.int8, np.int8), (np.int32, np.int32), (np.uint8, np.uint8), (bool, np.int32)],
)
def test_relu_keeps_integers_integer(dtype, expected):
    # JAX's relu is maximum(x, 0): integer dtypes stay, bools become int32.
    x = np.array([-3, 0, 2, 1]).astype(dtype)
    for out in (nn.relu(x), jit(nn.relu)(x), vmap(nn.relu)(x)):
        assert out.dtype == expected
        np.testing.assert_array_equal(out, np.maximum(x.astype(expected), 0))
    assert nn.relu(3).dtype == np.int32 and nn.relu(3).weak_type


def test_log1mexp_grads_and_both_branches():
    x = np.array([1e-4, 0.3, 0.69, 0.7, 5.0, 40.0], np.float32)
    x64 = x.astype(np.float64)
    expect = np.where(x64 < np.log(2), np.log(-np.expm1(-x64)), np.log1p(-np.exp(-x64)))
    np.testing.assert_allclose(nn.log1mexp(x), expect, rtol=1e-6)
    check_grads(
        nn.log1mexp, (np.array([0.2, 0.9, 3.0], np.float32),), order=2, modes=("fwd", "rev")
    )
    assert nn.log1mexp(2).dtype == np.float32 and float(nn.log1mexp(0.0)) == -np.inf


@pytest.mark.parametrize(
    ("axis", "keepdims"), [(None, False), (0, False), (1, True), ((0, 1), True)]
)
def test_logmeanexp_is_logsumexp_minus_log_count(axis, keepdims):
    x = np.array([[0.5, 2.0, -1.0], [1.0, 3.0, 100.0]], np.float32)
    mask = np.array([[True, False, True], [True, True, False]])
    n = x.size if axis is None else np.prod([x.shape[a] for a in np.atleast_1d(axis)])
    expect = scipy.special.logsumexp(x, axis=axis, keepdims=keepdims) - np.log(n)
    out = nn.logmeanexp(x, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(out, expect, rtol=1e-6, atol=1e-6)
    count = mask.sum(axis=axis, keepdims=keepdims)
    masked = scipy.special.logsumexp(x, axis=axis, b=mask, keepdims=keepdims) - np.log(count)
    out = nn.logmeanexp(x, axis=axis, where=mask, keepdims=keepdims)
    np.testing.assert_allclose(out, masked, rtol=1e-6, atol=1e-6)
    assert float(nn.logmeanexp(np.array([1, 2]))) == pytest.approx(np.log(np.mean(np.exp([1, 2]))))
    assert np.isnan(nn.logmeanexp(np.zeros((0,), np.float32)))


def test_relu_derivative_at_zero_is_zero():
    assert float(grad(nn.relu)(0.0)) == 0.0
    assert float(grad(nn.relu)(1.0)) == 1.0
    assert float(grad(nn.relu6)(6.0)) == 0.0 and float(grad(nn.relu6)(3.0)) == 1.0


def test_glu():
    x = RNG.normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_allclose(nn.glu(x), x[:, :2] * scipy.special.expit(x[:, 2:]), rtol=1e-6)
    with pytest.raises(ValueError, match="even"):
        nn.glu(np.ones((2, 3), np.float32))


# ---------------------------------------------------------------------------
# softmax family


@pytest.mark.parametrize("axis", [-1, 0, (0, 1), None])
def test_logsumexp_and_softmax(axis):
    x = RNG.normal(size=(3, 4)).astype(np.float32) * 10
    np.testing.assert_allclose(nn.logsumexp(x, axis), scipy.special.logsumexp(x, axis), rtol=1e-5)
    np.testing.assert_allclose(
        nn.logsumexp(x, axis, keepdims=True),
        scipy.special.logsumexp(x, axis, keepdims=True),
        rtol=1e-5,
    )
    if axis is not None:
        np.testing.assert_allclose(
            nn.softmax(x, axis), scipy.special.softmax(x, axis), rtol=1e-5, atol=1e-7
        )
        np.testing.assert_allclose(
            nn.log_softmax(x, axis), scipy.special.log_softmax(x, axis), rtol=1e-5, atol=1e-5
        )


def test_logsumexp_is_stable_and_signed():
    big = np.array([1000.0, 1000.0], np.float32)
    np.testing.assert_allclose(nn.logsumexp(big), 1000 + np.log(2), rtol=1e-6)
    assert float(nn.logsumexp(np.array([-np.inf, -np.inf], np.float32))) == -np.inf
    b = np.array([1.0, -2.0], np.float32)
    x = np.array([0.5, 0.1], np.float32)
    out, sign = nn.logsumexp(x, b=b, return_sign=True)
    ref, ref_sign = scipy.special.logsumexp(x, b=b, return_sign=True)
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    assert float(sign) == ref_sign
    assert np.isnan(float(nn.logsumexp(x, b=b)))


def test_logsumexp_terms_with_zero_factor_do_not_set_the_shift():
    # b = (0, 1) with a = (0, -50): the sum is e^-50, whose second derivative
    # overflows float32 if the zero-weighted 0 chose the shift.
    b = np.array([0.0, 1.0], np.float32)
    f = lambda v: nn.logsumexp(np.float32([1.0, -1.0]) * v, b=b)  # noqa: E731
    np.testing.assert_allclose(f(np.float32(50.0)), -50.0, rtol=1e-6)
    np.testing.assert_allclose(grad(f)(np.float32(50.0)), -1.0, rtol=1e-6)
    assert float(grad(grad(f))(np.float32(50.0))) == 0.0


def test_grad_of_logsumexp_is_softmax():
    x = RNG.normal(size=(5,)).astype(np.float32)
    np.testing.assert_allclose(grad(nn.logsumexp)(x), nn.softmax(x), rtol=1e-6)
    check_grads(nn.logsumexp, (x,), order=2)
    check_grads(lambda v: nn.softmax(v)[1], (x,), order=2)
    check_grads(lambda v: nn.log_softmax(v)[2], (x,), order=2)


def test_softmax_custom_jvp_config_agrees():
    x = RNG.normal(size=(4,)).astype(np.float32)
    plain = jacfwd(nn.softmax)(x)
    with softmax_custom_jvp(True):
        custom = jacfwd(nn.softmax)(x)
    np.testing.assert_allclose(plain, custom, rtol=1e-5, atol=1e-7)


def test_softmax_where():
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], np.float32)
    where = np.array([True, False, True])
    out = np.asarray(nn.softmax(x, where=where))
    ref = scipy.special.softmax(x[:, [0, 2]], axis=-1)
    np.testing.assert_allclose(out[:, [0, 2]], ref, rtol=1e-6)
    assert (out[:, 1] == 0).all()
    lo = np.asarray(nn.log_softmax(x, where=where))
    assert np.isneginf(lo[:, 1]).all()
    np.testing.assert_allclose(lo[:, [0, 2]], np.log(ref), rtol=1e-5)
    np.testing.assert_allclose(
        nn.logsumexp(x, axis=1, where=where),
        scipy.special.logsumexp(x[:, [0, 2]], axis=1),
        rtol=1e-6,
    )


def test_standardize():
    x = RNG.normal(size=(3, 5)).astype(np.float32) * 3 + 1
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(nn.standardize(x), ref, rtol=1e-5, atol=1e-5)
    ref0 = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
    np.testing.assert_allclose(nn.standardize(x, axis=0), ref0, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axis", [-1, 0])
def test_one_hot(axis):
    labels = np.array([[0, 2], [1, 5]])
    out = nn.one_hot(labels, 3, axis=axis)
    ref = (labels[..., None] == np.arange(3)).astype(np.float32)  # 5 is out of range: zeros
    if axis == 0:
        ref = np.moveaxis(ref, -1, 0)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, ref)
    assert nn.one_hot(np.array([1]), 2, dtype=np.int32).dtype == np.int32


def test_one_hot_under_jit_and_vmap():
    f = jit(lambda y: nn.one_hot(y, 4))
    np.testing.assert_array_equal(f(np.array([3, 0])), np.eye(4, dtype=np.float32)[[3, 0]])
    v = vmap(lambda y: nn.one_hot(y, 4))(np.array([1, 2]))
    np.testing.assert_array_equal(v, np.eye(4, dtype=np.float32)[[1, 2]])


# ---------------------------------------------------------------------------
# attention


def _np_attention(q, k, v, bias=None, mask=None, causal=False):
    b, t, n, h = q.shape
    kh = k.shape[2]
    k = np.repeat(k, n // kh, axis=2)
    v = np.repeat(v, n // kh, axis=2)
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(h)
    if bias is not None:
        logits = logits + bias
    keep = np.ones(logits.shape, bool)
    if mask is not None:
        keep &= np.broadcast_to(mask, logits.shape)
    if causal:
        keep &= np.tril(np.ones((t, k.shape[1]), bool))
    logits = np.where(keep, logits, np.finfo(np.float32).min)
    probs = scipy.special.softmax(logits, axis=-1)
    return np.einsum("bnts,bsnh->btnh", probs, v)


@pytest.mark.parametrize("heads", [(4, 4), (4, 2)])
def test_dot_product_attention(heads):
    n, kh = heads
    q = RNG.normal(size=(2, 5, n, 8)).astype(np.float32)
    k = RNG.normal(size=(2, 6, kh, 8)).astype(np.float32)
    v = RNG.normal(size=(2, 6, kh, 8)).astype(np.float32)
    bias = RNG.normal(size=(1, n, 5, 6)).astype(np.float32)
    mask = RNG.random((2, 1, 5, 6)) > 0.3
    np.testing.assert_allclose(
        nn.dot_product_attention(q, k, v), _np_attention(q, k, v), rtol=1e-5, atol=1e-5
    )
    np.testing.assert_allclose(
        nn.dot_product_attention(q, k, v, bias, mask),
        _np_attention(q, k, v, bias, mask),
        rtol=1e-5,
        atol=1e-5,
    )
    q6 = RNG.normal(size=(2, 6, n, 8)).astype(np.float32)
    np.testing.assert_allclose(
        nn.dot_product_attention(q6, k, v, is_causal=True),
        _np_attention(q6, k, v, causal=True),
        rtol=1e-5,
        atol=1e-5,
    )
    unbatched = nn.dot_product_attention(q[0], k[0], v[0])
    np.testing.assert_allclose(unbatched, _np_attention(q, k, v)[0], rtol=1e-5, atol=1e-5)


def test_dot_product_attention_grad_and_errors():
    q = RNG.normal(size=(1, 3, 2, 4)).astype(np.float32)
    k = RNG.normal(size=(1, 3, 2, 4)).astype(np.float32)
    check_grads(
        lambda q_, k_: nn.dot_product_attention(q_, k_, k_, is_causal=True).sum(),
        (q, k),
        order=1,
        modes=("rev",),
    )
    with pytest.raises(ValueError, match="multiple of K"):
        nn.dot_product_attention(
            q, np.ones((1, 3, 3, 4), np.float32), np.ones((1, 3, 3, 4), np.float32)
        )


# ---------------------------------------------------------------------------
# initializers


def test_variance_scaling_initializers_statistics():
    key = random.key(0)
    shape = (400, 300)
    fan_in, fan_out = 400, 300
    cases = {
        "glorot_uniform": (initializers.glorot_uniform(), 2 / (fan_in + fan_out)),
        "he_uniform": (initializers.he_uniform(), 2 / fan_in),
        "lecun_uniform": (initializers.lecun_uniform(), 1 / fan_in),
        "normal": (initializers.normal(0.5), 0.25),
        "variance_scaling_normal": (
            initializers.variance_scaling(3.0, "fan_out", "normal"),
            3 / fan_out,
        ),
    }
    for name, (init, variance) in cases.items():
        w = np.asarray(init(key, shape))
        assert w.shape == shape and w.dtype == np.float32, name
        assert abs(w.var() / variance - 1) < 0.05, name
        assert abs(w.mean()) < 0.05 * np.sqrt(variance) * 10, name
    u = np.asarray(initializers.uniform(2.0)(key, (1000,)))
    assert u.min() >= 0 and u.max() < 2
    assert (np.asarray(initializers.zeros(key, (2, 3))) == 0).all()
    assert (np.asarray(initializers.ones(key, (2,), np.int32)) == 1).all()
    np.testing.assert_array_equal(
        initializers.constant(np.array([1.0, 2.0]))(key, (3, 2)), np.tile([1.0, 2.0], (3, 1))
    )


def test_variance_scaling_fans_and_errors():
    with pytest.raises(ValueError, match="invalid mode"):
        initializers.variance_scaling(1.0, "fan_sideways", "normal")
    with pytest.raises(ValueError, match="at least 2D"):
        initializers.glorot_uniform()(random.key(0), (5,))
    # a conv kernel (3, 3, in=16, out=32): receptive field 9
    w = np.asarray(
        initializers.variance_scaling(1.0, "fan_in", "uniform")(random.key(1), (3, 3, 16, 32))
    )
    assert abs(w.var() / (1 / (9 * 16)) - 1) < 0.1


def test_initializers_are_deterministic_in_the_key():
    init = initializers.he_uniform()
    a = init(random.key(3), (4, 5))
    b = init(random.key(3), (4, 5))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(np.asarray(a), np.asarray(init(random.key(4), (4, 5))))


# JAX 0.10.2: a Python scalar gives a weakly typed float32 result, except where JAX's
# formula holds strongly typed constants (gelu) or reduces (logsumexp, logmeanexp).
_WEAK = (
    "celu elu hard_sigmoid hard_silu hard_swish hard_tanh identity leaky_relu log1mexp "
    "log_sigmoid mish relu relu6 selu sigmoid silu soft_sign softplus sparse_plus "
    "sparse_sigmoid squareplus swish tanh"
).split()
_STRONG = ["gelu", "logsumexp", "logmeanexp"]


@pytest.mark.parametrize("name", _WEAK + _STRONG)
def test_python_scalars_give_jaxs_weak_type(name):
    out = getattr(nn, name)(2.0)
    assert out.dtype == np.float32 and out.weak_type == (name in _WEAK)


@pytest.mark.parametrize(
    ("dtype", "expected"), [(np.int8, np.int8), (np.int32, np.int32), (bool, np.int32)]
)
def test_hard_tanh_keeps_integers_integer(dtype, expected):
    x = np.array([-3, -1, 0, 1, 2]).astype(dtype)
    out = nn.hard_tanh(x)
    assert out.dtype == expected
    np.testing.assert_array_equal(out, np.clip(x.astype(expected), -1, 1))
