"""Eager control flow traces and compiles once per function and argument types.

Outside any transformation, `cond`, `switch`, `while_loop`, `fori_loop`,
`scan`, `map`, `associative_scan`, `custom_linear_solve` and `custom_root`
called again with the same functions and argument types trace nothing and
compile nothing: the traces are cached on the user's functions (held weakly)
and the eager executables on the resulting jaxprs. (`associative_scan` calls
its function on arrays, op by op, as JAX's does: each op's executable is the
eager cache's.) Traces are counted at
`trace_to_jaxpr` in the tracing helper, compiles with `jax_log_compiles`.
"""

from __future__ import annotations

import gc
import logging
import weakref

import numpy as np
import pytest

from polyjax_core import config
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax
from polyjax_numpy.lax import _loop_helpers

f32 = np.float32
X = np.arange(4, dtype=f32)


def _body(i, x):
    return x * 0.5 + 1.0


def _cond_fun(c):
    return c[0] < 5


def _while_body(c):
    return c[0] + 1, c[1] * 2.0


def _scan_body(c, x):
    return c + x, c * x


def _plus(a):
    return a + 1.0


def _minus(a):
    return a - 1.0


def _double(a):
    return a * 2.0


def _add(a, b):
    return a + b


def _matvec(v):
    return 2.0 * v


def _solve(matvec, b):
    return b / 2.0


def _square_minus_two(v):
    return v * v - 2.0


def _newton(f, g):
    return lax.full_like(g, np.sqrt(2.0))


CASES = {
    "cond": (lambda: lax.cond(True, _plus, _minus, X), X + 1),
    "switch": (lambda: lax.switch(2, [_plus, _minus, _double], X), X * 2),
    "while_loop": (lambda: lax.while_loop(_cond_fun, _while_body, (0, X))[1], X * 32),
    "fori_loop": (lambda: lax.fori_loop(0, 3, _body, X), ((X * 0.5 + 1) * 0.5 + 1) * 0.5 + 1),
    "scan": (lambda: lax.scan(_scan_body, X, np.ones((3, 4), f32))[0], X + 3),
    "map": (lambda: lax.map(_double, np.ones((3, 4), f32)), np.full((3, 4), 2, f32)),
    "associative_scan": (lambda: lax.associative_scan(_add, X[:2]), np.cumsum(X[:2])),
    "custom_linear_solve": (
        lambda: lax.custom_linear_solve(_matvec, X, _solve, symmetric=True),
        X / 2,
    ),
    "custom_linear_solve_transpose": (
        lambda: lax.custom_linear_solve(_matvec, X, _solve, _solve),
        X / 2,
    ),
    "custom_root": (
        lambda: lax.custom_root(_square_minus_two, X, _newton, _newton),
        np.full(4, np.sqrt(2.0), f32),
    ),
}


class _Compiles(logging.Handler):
    def __init__(self):
        super().__init__()
        self.count = 0

    def emit(self, record):
        # (A load from a warm persistent compilation cache is logged so too.)
        if record.getMessage().startswith("Finished compiling"):
            self.count += 1


@pytest.fixture
def counters(monkeypatch):
    traces = []
    real = _loop_helpers.trace_to_jaxpr

    def counting(*args, **kwargs):
        traces.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_loop_helpers, "trace_to_jaxpr", counting)
    handler = _Compiles()
    logger = logging.getLogger("polyjax")
    logger.addHandler(handler)
    try:
        with config.log_compiles(True):
            yield traces, handler
    finally:
        logger.removeHandler(handler)


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_eager_call_traces_and_compiles_nothing(name, counters):
    run, expected = CASES[name]
    traces, compiles = counters
    np.testing.assert_allclose(np.asarray(run()), expected, rtol=1e-6)
    first = (len(traces), compiles.count)
    # The functions here are this module's own, so their first call traces and
    # compiles; associative_scan runs op by op (as JAX's), each op's executable
    # possibly compiled by an earlier test already.
    assert first[1] > 0 or name == "associative_scan"
    np.testing.assert_allclose(np.asarray(run()), expected, rtol=1e-6)
    assert (len(traces), compiles.count) == first


def test_new_argument_types_trace_again(counters):
    traces, _ = counters
    lax.fori_loop(0, 3, _body, X)
    n = len(traces)
    lax.fori_loop(0, 3, _body, X.astype(np.float16))
    assert len(traces) > n


def test_under_jit_closed_over_tracers_are_not_cached():
    # Inside a transformation the body closes over tracers: each trace sees its own.
    @jit
    def f(y):
        return lax.fori_loop(0, 2, lambda i, x: x + y, X)

    np.testing.assert_allclose(np.asarray(f(f32(1))), X + 2)
    np.testing.assert_allclose(np.asarray(f(f32(3))), X + 6)


def test_the_function_is_held_weakly():
    def body(i, x):
        return x + 1.0

    ref = weakref.ref(body)
    lax.fori_loop(0, 2, body, X)
    del body
    gc.collect()
    assert ref() is None
