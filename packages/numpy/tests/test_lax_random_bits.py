"""Random bits: `threefry2x32` (bit-exact against a NumPy reference written from
the published algorithm and the Random123 known-answer vectors) and
`rng_bit_generator` (types, determinism, vmap over keys)."""

from __future__ import annotations

import numpy as np
import pytest

from polyjax_core import config, dtypes, make_jaxpr
from polyjax_interpreters import ad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax

_M = 0xFFFFFFFF


def _threefry_reference(k1, k2, x1, x2):
    """Threefry-2x32, 20 rounds, on uint64 NumPy arrays holding 32-bit words."""
    k1, k2, x1, x2 = (np.asarray(v, np.uint64) for v in (k1, k2, x1, x2))
    rotations = (13, 15, 26, 6, 17, 29, 16, 24)
    ks = (k1, k2, k1 ^ k2 ^ np.uint64(0x1BD11BDA))
    x1, x2 = (x1 + ks[0]) & _M, (x2 + ks[1]) & _M
    for block in range(5):
        for r in rotations[4 * (block % 2) : 4 * (block % 2) + 4]:
            x1 = (x1 + x2) & _M
            x2 = (((x2 << np.uint64(r)) | (x2 >> np.uint64(32 - r))) & _M) ^ x1
        x1 = (x1 + ks[(block + 1) % 3]) & _M
        x2 = (x2 + ks[(block + 2) % 3] + np.uint64(block + 1)) & _M
    return x1.astype(np.uint32), x2.astype(np.uint32)


# Known-answer tests of Random123 (Threefry-2x32, 20 rounds).
KAT = [
    ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
    ((_M, _M), (_M, _M), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


@pytest.mark.parametrize("key, x, expected", KAT)
def test_threefry_known_answers(key, x, expected):
    assert tuple(int(v) for v in _threefry_reference(*key, *x)) == expected
    args = [np.uint32(v) for v in (*key, *x)]
    assert tuple(int(v) for v in lax.threefry2x32(*args)) == expected


_threefry_jit = jit(lax.threefry2x32)


@pytest.mark.parametrize("shape", [(), (0,), (7,), (2, 3)])
def test_threefry_matches_reference(shape):
    rng = np.random.default_rng(0)
    args = [rng.integers(0, 2**32, shape, dtype=np.uint32) for _ in range(4)]
    want = _threefry_reference(*args)
    for fn in (lax.threefry2x32, _threefry_jit):
        got = fn(*args)
        for g, w in zip(got, want):
            assert g.dtype == np.uint32 and g.shape == shape
            np.testing.assert_array_equal(np.asarray(g), w)


def test_threefry_scalar_key_broadcasts_and_vmap():
    rng = np.random.default_rng(1)
    x1, x2 = (rng.integers(0, 2**32, (4, 3), dtype=np.uint32) for _ in range(2))
    keys = rng.integers(0, 2**32, (4,), dtype=np.uint32)
    k2 = np.uint32(7)
    got = vmap(lambda k, a, b: lax.threefry2x32(k, k2, a, b))(keys, x1, x2)
    for i in range(4):
        want = _threefry_reference(keys[i], k2, x1[i], x2[i])
        np.testing.assert_array_equal(np.asarray(got[0])[i], want[0])
        np.testing.assert_array_equal(np.asarray(got[1])[i], want[1])
    # Batched along a non-leading axis of the counters only.
    got = vmap(lambda a: lax.threefry2x32(k2, k2, a, a), in_axes=1)(x1)
    want = _threefry_reference(k2, k2, x1.T, x1.T)
    np.testing.assert_array_equal(np.asarray(got[0]), want[0])


def test_threefry_types_and_errors():
    u = np.zeros(3, np.uint32)
    assert "threefry2x32" in str(make_jaxpr(lax.threefry2x32)(u, u, u, u))
    with pytest.raises(TypeError, match="threefry2x32"):
        lax.threefry2x32(u, u, u, np.zeros(3, np.int32))
    with pytest.raises(TypeError):
        lax.threefry2x32(u, u, u, np.zeros(4, np.uint32))


def test_threefry_has_zero_tangent():
    u = np.ones(3, np.uint32)
    t = np.zeros(3, dtypes.float0)
    out, tangents = ad.jvp(lambda a: lax.threefry2x32(u, u, a, u), (u,), (t,))
    np.testing.assert_array_equal(np.asarray(out[0]), _threefry_reference(u, u, u, u)[0])
    assert all(np.asarray(g).dtype == dtypes.float0 for g in tangents)


_KEY = np.array([1, 2, 3, 4], np.uint32)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32])
@pytest.mark.parametrize("algorithm", list(lax.RandomAlgorithm))
def test_rng_bit_generator(dtype, algorithm):
    new_key, bits = lax.rng_bit_generator(_KEY, (3, 5), dtype, algorithm)
    assert new_key.dtype == np.uint32 and new_key.shape == (4,)
    assert bits.dtype == dtype and bits.shape == (3, 5)
    assert not np.array_equal(np.asarray(new_key), _KEY)
    again = lax.rng_bit_generator(_KEY, (3, 5), dtype, algorithm)[1]
    np.testing.assert_array_equal(np.asarray(bits), np.asarray(again))
    assert len(np.unique(np.asarray(bits))) > 3


def test_rng_bit_generator_canonicalizes_dtype():
    with config.enable_x64(False):
        new_key, bits = lax.rng_bit_generator(_KEY, (2,), np.uint64)
        assert bits.dtype == np.uint32 and new_key.dtype == np.uint32
    with config.enable_x64(True):
        assert lax.rng_bit_generator(_KEY, (2,), np.uint64)[1].dtype == np.uint64


def test_rng_bit_generator_vmap_and_errors():
    keys = np.stack([_KEY, _KEY + 1, _KEY])
    new_keys, bits = vmap(lambda k: lax.rng_bit_generator(k, (6,)))(keys)
    assert bits.shape == (3, 6) and new_keys.shape == (3, 4)
    for i in range(3):
        want = lax.rng_bit_generator(keys[i], (6,))
        np.testing.assert_array_equal(np.asarray(bits)[i], np.asarray(want[1]))
        np.testing.assert_array_equal(np.asarray(new_keys)[i], np.asarray(want[0]))
    with pytest.raises(TypeError, match="uint32"):
        lax.rng_bit_generator(np.zeros(4, np.int32), (2,))
    with pytest.raises(TypeError, match="unsigned"):
        lax.rng_bit_generator(_KEY, (2,), np.int32)
