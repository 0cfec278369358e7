"""PRNG keys and the basic samplers: bits identical to JAX's for the same key.

The known answers were produced by JAX 0.10.2 (default config, threefry2x32
with `jax_threefry_partitionable`) in a separate environment; they pin the
conventions documented in `polyjax_numpy.random._prng`.
"""

from __future__ import annotations

import numpy as np
import pytest

from polyjax_core.config import enable_x64
from polyjax_interpreters.ad import grad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax, random
from polyjax_numpy import numpy as jnp


def _data(k):
    return np.asarray(random.key_data(k)).tolist()


# ---------------------------------------------------------------------------
# Keys


@pytest.mark.parametrize(
    "seed, expected",
    [
        (0, [0, 0]),
        (42, [0, 42]),
        (-1, [0, 4294967295]),
        (2**31, [0, 2147483648]),
        (2**32 + 5, [0, 5]),
        (np.uint32(2**32 - 1), [0, 4294967295]),
    ],
)
def test_prngkey_of_seed(seed, expected):
    raw = random.PRNGKey(seed)
    assert raw.dtype == np.uint32 and raw.shape == (2,)
    assert np.asarray(raw).tolist() == expected
    assert _data(random.key(seed)) == expected


def test_typed_key_array_basics():
    k = random.key(1)
    assert k.shape == () and k.ndim == 0 and str(k.dtype) == "key<fry>"
    assert random.key_impl(k) == "threefry2x32"
    assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[0 1]"
    ks = random.split(k, 3)
    assert ks.shape == (3,) and len(ks) == 3
    # JAX's values for split(key(1), 3)
    assert _data(ks) == [
        [507451445, 1853169794],
        [1948878966, 4237131848],
        [2441914641, 3819641963],
    ]
    assert _data(ks[1]) == [1948878966, 4237131848]
    assert [_data(x) for x in ks] == _data(ks)
    assert ks.reshape(3, 1).shape == (3, 1) and ks.reshape(3, 1).T.shape == (1, 3)
    assert bool(ks[0] == ks[0]) and not bool(ks[0] == ks[1])
    assert np.asarray(ks == random.split(k, 3)).tolist() == [True] * 3


def test_batched_seeds_and_wrap():
    ks = random.key(jnp.array([1, 2, 3]))
    assert ks.shape == (3,)
    assert _data(ks) == [[0, 1], [0, 2], [0, 3]]
    w = random.wrap_key_data(np.array([[0, 42], [0, 1]], np.uint32))
    assert w.shape == (2,) and _data(w[0]) == [0, 42]
    with pytest.raises(TypeError, match="uint32"):
        random.wrap_key_data(np.array([0, 42], np.int32))
    with pytest.raises(TypeError, match="integer"):
        random.key(1.5)


def test_split_known_answers():
    raw = random.split(random.PRNGKey(0), 3)
    assert raw.dtype == np.uint32  # raw keys in, raw keys out
    assert np.asarray(raw).tolist() == [
        [1797259609, 2579123966],
        [928981903, 3453687069],
        [4146024105, 2718843009],
    ]
    assert _data(random.split(random.key(42), (2, 2))) == [
        [[1832780943, 270669613], [64467757, 2916123636]],
        [[2465931498, 255383827], [3134548294, 894150801]],
    ]


def test_split_of_a_batch_is_an_error():
    with pytest.raises(ValueError, match=r"single key, but was given a key array of shape \(3,\)"):
        random.split(random.split(random.key(0), 3))


def test_fold_in_known_answers():
    assert np.asarray(random.fold_in(random.PRNGKey(0), 7)).tolist() == [2716826189, 292468403]
    assert _data(random.fold_in(random.key(42), 123)) == [2238821533, 719561804]
    with pytest.raises(OverflowError, match="uint32"):
        random.fold_in(random.key(0), -1)


def test_not_a_key():
    with pytest.raises(TypeError, match="raw key data of dtype uint32"):
        random.uniform(np.zeros(3, np.float32))
    with pytest.raises(TypeError, match="single key"):
        random.split("key")


# ---------------------------------------------------------------------------
# Samplers: known answers


def test_bits_known_answers():
    k = random.PRNGKey(0)
    assert np.asarray(random.bits(k, (4,))).tolist() == [
        4070199207,
        4202968722,
        1427181096,
        2012915765,
    ]
    assert np.asarray(random.bits(k, (2, 3))).tolist() == [
        [4070199207, 4202968722, 1427181096],
        [2012915765, 2447653815, 710830403],
    ]
    assert np.asarray(random.bits(k, (4,), np.uint8)).tolist() == [167, 146, 40, 53]
    assert np.asarray(random.bits(k, (2,), np.uint16)).tolist() == [20391, 13970]
    assert np.asarray(random.bits(random.PRNGKey(7), (3,), np.uint16)).tolist() == [
        10507,
        32256,
        10666,
    ]
    with pytest.raises(ValueError, match="unsigned"):
        random.bits(k, (2,), np.int32)


def test_bits_64_under_x64():
    with enable_x64(True):
        out = random.bits(random.PRNGKey(0), (2,), np.uint64)
        assert out.dtype == np.uint64
        assert np.asarray(out).tolist() == [7719171245655871230, 3989946895414531357]
        assert _data(random.PRNGKey(2**32 + 5)) == [1, 5]


def test_uniform_known_answers():
    k = random.PRNGKey(0)
    np.testing.assert_array_equal(
        random.uniform(k, (3,)), np.array([0.947667, 0.9785799, 0.33229148], np.float32)
    )
    np.testing.assert_array_equal(
        random.uniform(random.key(42), (2, 3)),
        np.array(
            [
                [0.48870956897735596, 0.6797971725463867, 0.6162714958190918],
                [0.5610160827636719, 0.4506446123123169, 0.58586585521698],
            ],
            np.float32,
        ),
    )
    f16 = random.uniform(k, (3,), np.float16)
    assert f16.dtype == np.float16
    np.testing.assert_array_equal(f16, np.array([0.3105, 0.2129, 0.0547], np.float16))
    bf16 = random.uniform(k, (3,), "bfloat16")
    np.testing.assert_array_equal(np.asarray(bf16, np.float32), [0.6484375, 0.5703125, 0.15625])
    bounded = random.uniform(random.key(3), (2, 2), minval=-2, maxval=np.array([1.0, 5.0]))
    np.testing.assert_allclose(
        bounded, [[-1.7778423, 4.5670104], [-0.05312896, 4.8293467]], rtol=1e-6
    )


def test_uniform_errors():
    with pytest.raises(ValueError, match="float dtype"):
        random.uniform(random.key(0), (2,), np.int32)
    with pytest.raises(ValueError, match=r"do not broadcast to the requested shape \(2,\)"):
        random.uniform(random.key(0), (2,), minval=np.zeros(3))


def test_normal_known_answers():
    np.testing.assert_array_equal(
        random.normal(random.PRNGKey(0), (3,)),
        np.array([1.6226422, 2.0252647, -0.43359444], np.float32),
    )
    np.testing.assert_allclose(
        random.normal(random.PRNGKey(7), (4,)),
        [0.4512351453304291, 1.9534509181976318, -0.5162394642829895, -0.14094029366970062],
        rtol=1e-6,
    )
    c = random.normal(random.PRNGKey(0), (2,), np.complex64)
    assert c.dtype == np.complex64
    np.testing.assert_allclose(c, [0.70994526 - 1.727077j, -0.6408772 - 1.4394435j], rtol=1e-6)


def test_randint_known_answers():
    k = random.PRNGKey(0)
    assert np.asarray(random.randint(k, (5,), 0, 10)).tolist() == [9, 0, 2, 3, 1]
    assert np.asarray(random.randint(k, (5,), -5, 2**31 - 1)).tolist() == [
        31327072,
        89727307,
        349724607,
        1554082360,
        957939710,
    ]
    k7 = random.PRNGKey(7)
    assert np.asarray(random.randint(k7, (6,), -3, jnp.array([5, 6, 7, 8, 9, 10]))).tolist() == [
        4,
        5,
        -3,
        6,
        3,
        0,
    ]
    u8 = random.randint(k7, (4,), 0, 256, dtype=np.uint8)
    assert u8.dtype == np.uint8 and np.asarray(u8).tolist() == [31, 102, 124, 237]
    assert np.asarray(random.randint(k7, (4,), -100, 100, dtype=np.int8)).tolist() == [
        99,
        -78,
        0,
        -63,
    ]
    with pytest.raises(OverflowError, match="maxval=2147483655 does not fit in int32"):
        random.randint(k, (2,), 0, 2**31 + 7)
    with pytest.raises(TypeError, match="integer dtypes"):
        random.randint(k, (2,), 0, 3, dtype=np.float32)


def test_randint_stays_in_range():
    out = np.asarray(random.randint(random.key(5), (2000,), -7, 13))
    assert out.min() >= -7 and out.max() < 13
    assert set(out.tolist()) == set(range(-7, 13))
    empty_range = np.asarray(random.randint(random.key(5), (10,), 4, 4))
    assert (empty_range == 4).all()


# ---------------------------------------------------------------------------
# Keys under transformations


def test_keys_through_jit_vmap_and_scan():
    k = random.key(42)
    # JAX's values for vmap(uniform)(split(key(42), 3))
    expected = [0.5302608013153076, 0.7276642322540283, 0.6672406196594238]
    keys = random.split(k, 3)
    np.testing.assert_array_equal(
        vmap(lambda kk: random.uniform(kk))(keys), np.array(expected, np.float32)
    )
    np.testing.assert_array_equal(
        jit(vmap(lambda kk: random.uniform(kk)))(keys),
        np.array(expected, np.float32),
    )
    loop = [float(random.uniform(kk)) for kk in keys]
    assert loop == np.array(expected, np.float32).tolist()

    def body(carry, _):
        new, sub = random.split(carry)
        return new, random.normal(sub)

    last, draws = lax.scan(body, k, None, length=4)
    assert draws.shape == (4,) and isinstance(last, random.PRNGKeyArray)
    eager = []
    carry = k
    for _ in range(4):
        carry, sub = random.split(carry)
        eager.append(float(random.normal(sub)))
    np.testing.assert_allclose(draws, eager, rtol=1e-6)
    assert _data(last) == _data(carry)


def test_jit_of_samplers_matches_eager():
    k = random.PRNGKey(3)
    f = jit(
        lambda k: (
            random.uniform(k, (3,)),
            random.normal(k, (2,)),
            random.randint(k, (4,), 0, 9),
            random.bits(k, (2,)),
        )
    )
    for got, want in zip(
        f(k),
        (
            random.uniform(k, (3,)),
            random.normal(k, (2,)),
            random.randint(k, (4,), 0, 9),
            random.bits(k, (2,)),
        ),
        strict=True,
    ):
        np.testing.assert_array_equal(got, want)


def test_traced_seed_and_fold_in_data():
    f = jit(lambda s, d: random.key_data(random.fold_in(random.key(s), d)))
    assert np.asarray(f(42, 123)).tolist() == [2238821533, 719561804]


def test_uniform_grad_wrt_bounds():
    # uniform is affine in its bounds: d/dmaxval of the draw is the unit draw itself.
    k = random.key(0)
    unit = random.uniform(k, ())
    g = grad(lambda hi: random.uniform(k, (), minval=0.0, maxval=hi))(2.0)
    np.testing.assert_allclose(g, unit, rtol=1e-6)


# ---------------------------------------------------------------------------
# zeros_like & co of key arrays give key arrays, as in JAX.


@pytest.mark.parametrize(
    "like, fill",
    [
        (jnp.zeros_like, 0),
        (jnp.ones_like, 1),
        (jnp.empty_like, 0),
        (lambda k: jnp.full_like(k, 5), 5),
    ],
)
def test_like_functions_of_key_arrays(like, fill):
    keys = random.split(random.key(0), 3)
    for out in (like(keys), jit(like)(keys)):
        assert out.dtype == keys.dtype and out.shape == (3,)
        np.testing.assert_array_equal(random.key_data(out), np.full((3, 2), fill, np.uint32))


def test_full_like_of_keys_with_a_key_fill_and_shape():
    keys = random.split(random.key(0), 3)
    out = jnp.full_like(keys, random.key(3), shape=(2, 2))
    assert out.shape == (2, 2) and out.dtype == keys.dtype
    want = np.broadcast_to(np.asarray(random.key_data(random.key(3))), (2, 2, 2))
    np.testing.assert_array_equal(random.key_data(out), want)
    with pytest.raises(TypeError, match="key array"):
        jnp.zeros_like(keys, dtype=np.float32)


# ---------------------------------------------------------------------------
# jax_legacy_prng_key: raw uint32 key data where a key is expected


def test_legacy_prng_key_policy_applies_to_raw_keys_only():
    import warnings

    from polyjax_core.config import legacy_prng_key

    raw = random.PRNGKey(0)
    with legacy_prng_key("error"):
        for use in (random.split, random.normal, random.key_data):
            with pytest.raises(ValueError, match="Legacy uint32 key array"):
                use(raw)
        assert random.normal(random.key(0)).shape == ()
        assert np.asarray(random.PRNGKey(3)).tolist() == [0, 3]  # making raw keys is allowed
    with legacy_prng_key("warn"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        expected = random.normal(random.wrap_key_data(raw))
        assert float(random.normal(raw)) == float(expected)
    assert [w.category for w in caught] == [UserWarning]
    with pytest.raises(ValueError, match="allow"):
        legacy_prng_key("sometimes")
