"""Without x64, no result is a 64-bit type: `lax`, `random`, `nn` and `scipy` entry points
given 64-bit host arrays, scalars or dtype arguments canonicalize them (int64 -> int32,
uint64 -> uint32, float64 -> float32, complex128 -> complex64), as JAX does.

(`jnp` is swept the same way, entry by entry, in test_jnp_transforms.py.)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from polyjax_core.config import enable_x64
from polyjax_core.tree_util import tree_leaves
from polyjax_interpreters import ad
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax, nn, random
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy import linalg as sp_linalg
from polyjax_numpy.scipy import signal as sp_signal
from polyjax_numpy.scipy import special as sp_special
from polyjax_numpy.scipy import stats as sp_stats

I64 = np.arange(1, 4, dtype=np.int64)
U64 = np.arange(1, 4, dtype=np.uint64)
F64 = np.array([0.25, 0.5, 2.0])
C128 = np.array([1 + 2j, -1j, 0.5])
M64 = np.eye(2) * 2.0


def _key():
    return random.key(0)


CALLS: dict[str, Callable[[], Any]] = {
    # lax: host operands and dtype arguments.
    "lax.add": lambda: lax.add(I64, I64),
    "lax.mul-float": lambda: lax.mul(F64, F64),
    "lax.neg-complex": lambda: lax.neg(C128),
    "lax.convert_element_type": lambda: lax.convert_element_type(I64, np.float64),
    "lax.iota": lambda: lax.iota(np.int64, 3),
    "lax.broadcasted_iota": lambda: lax.broadcasted_iota(np.uint64, (2,), 0),
    "lax.full": lambda: lax.full((2,), 3, np.int64),
    "lax.full-host_fill": lambda: lax.full((2,), np.float64(3)),
    "lax.dot-preferred": lambda: lax.dot(F64, F64, preferred_element_type=np.float64),
    "lax.reduce": lambda: lax.reduce(I64, np.int64(0), lax.add, (0,)),
    "lax.sort": lambda: lax.sort(U64),
    "lax.cumsum": lambda: lax.cumsum(I64),
    "lax.clamp": lambda: lax.clamp(np.int64(0), I64, np.int64(2)),
    "lax.select": lambda: lax.select(np.array([True, False, True]), I64, I64),
    "lax.dynamic_slice": lambda: lax.dynamic_slice(I64, (np.int64(1),), (2,)),
    "lax.pad": lambda: lax.pad(F64, np.float64(0), [(1, 1, 0)]),
    "lax.top_k": lambda: lax.top_k(I64, 2),
    "lax.fori_loop": lambda: lax.fori_loop(0, 3, lambda i, c: c + 1, np.int64(0)),
    "lax.scan": lambda: lax.scan(lambda c, x: (c + x, x), np.int64(0), I64),
    "lax.rng_bit_generator": lambda: lax.rng_bit_generator(np.zeros(4, np.uint32), (2,), np.uint64),
    "lax.stop_gradient": lambda: ad.stop_gradient(I64),
    "lax.complex": lambda: lax.complex(np.float64(1), np.float64(2)),
    # random: dtype arguments and host parameters.
    "random.uniform": lambda: random.uniform(_key(), (2,), np.float64),
    "random.normal": lambda: random.normal(_key(), (2,), np.float64),
    "random.randint": lambda: random.randint(_key(), (2,), np.int64(0), np.int64(5)),
    "random.randint-dtype": lambda: random.randint(_key(), (2,), 0, 5, np.int64),
    "random.bits": lambda: random.bits(_key(), (2,), np.uint64),
    "random.choice": lambda: random.choice(_key(), I64),
    "random.permutation": lambda: random.permutation(_key(), I64),
    "random.permutation-int": lambda: random.permutation(_key(), np.int64(3)),
    "random.categorical": lambda: random.categorical(_key(), F64),
    "random.bernoulli": lambda: random.bernoulli(_key(), np.float64(0.5), (2,)),
    "random.gamma": lambda: random.gamma(_key(), F64),
    "random.poisson": lambda: random.poisson(_key(), F64, dtype=np.int64),
    "random.multivariate_normal": lambda: random.multivariate_normal(_key(), np.zeros(2), M64),
    "random.exponential": lambda: random.exponential(_key(), (2,), np.float64),
    "random.key": lambda: random.key_data(random.key(np.int64(3))),
    "random.fold_in": lambda: random.key_data(random.fold_in(_key(), np.int64(3))),
    # nn and scipy: host arrays.
    "nn.softmax": lambda: nn.softmax(F64),
    "nn.one_hot": lambda: nn.one_hot(I64, 4, dtype=np.float64),
    "nn.gelu": lambda: nn.gelu(F64),
    "special.gammaln": lambda: sp_special.gammaln(F64),
    "special.logsumexp": lambda: sp_special.logsumexp(F64),
    "special.xlogy": lambda: sp_special.xlogy(F64, F64),
    "special.factorial": lambda: sp_special.factorial(I64),
    "special.expit": lambda: sp_special.expit(I64),
    "stats.norm.logpdf": lambda: sp_stats.norm.logpdf(F64),
    "stats.poisson.pmf": lambda: sp_stats.poisson.pmf(I64, np.float64(1)),
    "linalg.expm": lambda: sp_linalg.expm(M64),
    "linalg.solve": lambda: sp_linalg.solve(M64, F64[:2]),
    "signal.convolve": lambda: sp_signal.convolve(F64, F64),
    # jnp methods and dtype arguments not in the jnp table.
    "Array.astype": lambda: jnp.asarray(I64).astype(np.float64),
    "Array.sum-dtype": lambda: jnp.asarray(I64).sum(dtype=np.uint64),
    "jit-host_args": lambda: jit(lambda x, y: (x, y))(I64, C128),
}

_WIDE = {np.dtype(t) for t in (np.int64, np.uint64, np.float64, np.complex128)}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_no_64_bit_results_without_x64(name):
    with enable_x64(False), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # 64-bit dtypes asked for explicitly
        leaves = tree_leaves(CALLS[name]())
    dts = [np.asarray(leaf).dtype for leaf in leaves]
    assert dts and not set(dts) & _WIDE, dts


def test_64_bit_results_with_x64():
    # The sweep's point is canonicalization, not narrowing: with x64 the types stay.
    with enable_x64(True):
        assert lax.iota(np.int64, 3).dtype == np.int64
        assert random.uniform(_key(), (2,), np.float64).dtype == np.float64
        assert lax.add(I64, I64).dtype == np.int64
