"""The optional key-reuse checker (``jax_debug_key_reuse``): JAX's errors for a
consumed key used again, eagerly and within one traced function; off by default."""

from __future__ import annotations

import numpy as np
import pytest

from polyjax_core import config
from polyjax_core.errors import KeyReuseError
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_numpy import random


@pytest.fixture
def checking():
    with config.debug_key_reuse(True):
        yield


def test_reuse_raises(checking):
    k = random.key(0)
    random.normal(k)
    with pytest.raises(KeyReuseError, match="Previously-consumed key passed to normal"):
        random.normal(k)
    k2 = random.key(1)
    a, _ = random.split(k2)
    with pytest.raises(KeyReuseError, match="split"):
        random.split(k2)
    random.uniform(a)
    random.uniform(random.clone(a))  # a clone is a fresh key

    @jit
    def twice(k):
        return random.normal(k) + random.normal(k)

    with pytest.raises(KeyReuseError):
        twice(random.key(2))


def test_single_use_passes(checking):
    keys = random.split(random.key(3), 3)
    out = vmap(random.normal)(keys)
    assert out.shape == (3,)
    # Samplers built on other samplers (one key, used once by the caller) pass.
    sub = random.split(random.key(4), 2)
    perm = random.permutation(sub[0], 4)
    assert sorted(np.asarray(perm).tolist()) == [0, 1, 2, 3]
    assert 0 <= int(random.categorical(sub[1], np.zeros(3, np.float32))) < 3


def test_off_by_default():
    k = random.key(0)
    np.testing.assert_array_equal(np.asarray(random.normal(k)), np.asarray(random.normal(k)))
