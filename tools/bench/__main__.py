#!/usr/bin/env python3
"""Measure polyjax's dispatch, import and compile costs next to JAX's figures.

Usage:
    uv run --locked python tools/bench [--quick] [--json PATH] [--jax PYTHON] [--only NAME]
                                       [--cpu-time]

What it measures, on the default backend (set JAX_PLATFORMS to choose another):

- a jitted ``x + y`` on two small f32 arrays, per call after warm-up;
- the same with a dict of 20 small arrays in and out;
- an eager ``x + y`` (Array operators) and an eager ``lax.sin(x)``, per op;
- ``import polyjax`` in a fresh interpreter (the median of several runs, timed
  inside the child so that interpreter start-up is left out), and, for
  information, import plus the first jitted call there (backend start-up,
  tracing, compiling);
- tracing, lowering and compiling a function of 100 operations, with a fresh
  function each run so no cache helps;
- ``make_jaxpr`` of a function of 2,000 elementwise operations, per equation;
- tracing and lowering ``jit(grad(loss))`` of an 8-layer MLP (tanh layers of
  32x32 weights, a batch of 8, mean squared error), a fresh function each run;
- a jitted ``lax.scan`` of 1,000 steps of an RNN cell
  (``h = tanh(W h + U x_t + b)``, hidden and input size 32), per call, and the
  time to trace, lower and compile it, a fresh function each run;
- a jitted ``vmap(lax.dot)`` over 64 pairs of 128x128 f32 matrices, per call;
- a jitted SGD training step (``value_and_grad`` of a softmax cross-entropy,
  then a ``tree_map`` update) of an MLP 784-512-512-10 (relu) on a batch of
  128 f32 images, per step;
- on 8 host devices, in a child process: ``sharded_jit.run`` (``tanh(x @ w) @
  w.T``, x 512x512 ``P('a', 'b')`` and w ``P('b', None)`` on a 2x4 mesh) and
  ``sharded_jit.dispatch`` (``x + 1`` on an 8x8 array sharded over 8 devices),
  per call; with ``--jax PYTHON`` the same code runs with JAX in that Python,
  alternating, and JAX's figures fill the JAX column.

Only with ``--only NAME`` (each starts a dozen fresh processes), side by side
with JAX when ``--jax PYTHON`` is given, alternating fresh children:

- ``dispatch``: issue 16's dispatch rows (jitted small and pytree calls, eager
  ``sin`` and ``x * y + 1``), each measured in both libraries' children;

- ``while_loop_eager``: an eager ``lax.fori_loop`` of 100 steps, called again
  and again with the same body function, per call;
- ``import_time``: ``python -c "import polyjax.numpy as jnp; print(jnp.ones(3)
  + 1)"`` (``jax.numpy`` for JAX), wall-clock time of the whole process;
- ``compile_cache``: the first call of the jitted 100-op function in a second
  fresh process whose persistent compilation cache the first one filled.

These children may write ``.pyc`` files (``PYTHONDONTWRITEBYTECODE`` is
dropped), as installed packages have them: otherwise every fresh polyjax
process would compile its sources, which JAX's wheel never does.

Per-call figures follow ``timeit``: a loop of NUMBER calls is timed REPEAT
times; the median per call is reported (and the minimum, for reference). The
last result of each loop is waited for, so asynchronous dispatch cannot hide
work. The JAX column holds JAX 0.10.2's figures measured on this machine kind
(issue 3); the target column is the issue's bound, and the last column says
whether the measured median meets it. ``--quick`` runs few repetitions, for
checking that the tool works, not for figures worth quoting.

Exit status: 0 (also when a target is missed: this is a measuring tool), 2 on
bad usage.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

# JAX 0.10.2 on this machine kind, and the targets: issue 3, point 13.
JAX_TINY_JIT = 5.4e-6
JAX_DICT_JIT = 40.7e-6
JAX_EAGER_SIN = 5.0e-6
JAX_IMPORT = 0.61
TARGET_IMPORT = 0.3

N_COMPILE_OPS = 100

# JAX 0.10.2 on this machine kind, and the targets (half of each): issue 4, point 11.
JAX_MAKE_JAXPR_PER_EQN = 33.9e-6
JAX_GRAD_MLP_TRACE_LOWER = 21e-3
N_TRACE_OPS = 2000
MLP_LAYERS, MLP_WIDTH, MLP_BATCH = 8, 32, 8

# JAX 0.10.2 on this machine kind; the target is parity within 5%: issue 5, point 9.
JAX_SCAN_RNN = 245e-6
JAX_SCAN_RNN_COMPILE = 80e-3
JAX_VMAP_MATMUL = 3.45e-3
PARITY = 1.05
RNN_STEPS, RNN_HIDDEN, RNN_INPUT = 1000, 32, 32
MATMUL_BATCH, MATMUL_SIZE = 64, 128

# JAX 0.10.2 on this machine kind; the target is parity within 5%: issue 6, point 9.
JAX_SGD_STEP = 2.7e-3
SGD_LAYERS, SGD_BATCH = (784, 512, 512, 10), 128

# Issue 12, point 11: sharded jit on 8 host devices, at most 1.05x (run) and 1.0x
# (dispatch) JAX's, measured side by side (`--jax PYTHON`); these figures are the
# fallback JAX column (JAX 0.10.2, this machine kind, heavily loaded).
JAX_SHARDED_RUN = 5.5e-3
JAX_SHARDED_DISPATCH = 0.2e-3
SHARDED_N = 512
# Issue 13, point 9: at most 1.05x (shard_map_psum) and 1.0x (pmap_dispatch) JAX's,
# side by side; fallback JAX column (JAX 0.10.2, this machine kind, loaded).
JAX_SHARD_MAP_PSUM = 0.5e-3
JAX_PMAP_DISPATCH = 0.3e-3


@dataclass
class Result:
    """One line of the report. Times in seconds; None where there is no figure.

    A benchmark that could not run has no median and says why in ``error``.
    """

    name: str
    median: float | None
    minimum: float | None = None
    jax: float | None = None
    target: float | None = None
    error: str | None = None

    @property
    def status(self) -> str:
        if self.target is None or self.median is None:
            return ""
        return "ok" if self.median <= self.target else "over"


def fmt_time(seconds: float | None) -> str:
    """Three significant figures in a readable unit: ``5.40 us``, ``12.3 ms``, ``1.25 s``."""
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if seconds >= 0.9995 * scale or unit == "ns":  # 999.96 us reads 1.00 ms
            value = seconds / scale
            decimals = max(0, 3 - len(str(int(value))))
            return f"{value:.{decimals}f} {unit}"
    raise AssertionError("unreachable")


# ---------------------------------------------------------------------------
# Timing helpers


def per_call(fn: Callable[[], Any], *, number: int, repeat: int, wait: Callable[[Any], Any]):
    """Median and minimum time per call of ``fn`` over ``repeat`` loops of ``number``."""
    fn()  # warm-up: compile, fill caches
    wait(fn())
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            out = fn()
        wait(out)
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times), min(times)


_CHILD_IMPORT = """
import time
t0 = time.perf_counter()
import polyjax
t1 = time.perf_counter()
print(t1 - t0)
"""

_CHILD_FIRST_CALL = """
import time
t0 = time.perf_counter()
import numpy as np
import polyjax
f = polyjax.jit(lambda x, y: x + y)
x = np.ones(4, np.float32)
f(x, x).block_until_ready()
print(time.perf_counter() - t0)
"""


def in_fresh_process(code: str, runs: int) -> tuple[float, float]:
    """Median and minimum of the time that ``code`` prints, each run a new interpreter."""
    times = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times), min(times)


# ---------------------------------------------------------------------------
# The benchmarks


def bench_dispatch(quick: bool) -> list[Result]:
    import numpy as np

    import polyjax
    import polyjax.lax as lax

    number, repeat = (200, 3) if quick else (20_000, 7)
    wait = polyjax.block_until_ready
    x = polyjax.device_put(np.arange(4, dtype=np.float32))
    y = polyjax.device_put(np.ones(4, np.float32))

    add = polyjax.jit(lambda a, b: a + b)
    tiny = per_call(lambda: add(x, y), number=number, repeat=repeat, wait=wait)

    tree = {f"w{i:02d}": polyjax.device_put(np.full(4, i, np.float32)) for i in range(20)}
    bump = polyjax.jit(lambda d: {k: v + 1.0 for k, v in d.items()})
    many = per_call(lambda: bump(tree), number=max(number // 4, 1), repeat=repeat, wait=wait)

    eager_add = per_call(lambda: x + y, number=number, repeat=repeat, wait=wait)
    eager_sin = per_call(lambda: lax.sin(x), number=number, repeat=repeat, wait=wait)

    return [
        Result("jit x + y, per call", *tiny, jax=JAX_TINY_JIT, target=JAX_TINY_JIT),
        Result(
            "jit dict of 20 arrays in/out, per call",
            *many,
            jax=JAX_DICT_JIT,
            target=JAX_DICT_JIT,
        ),
        Result("eager x + y, per op", *eager_add),
        Result("eager lax.sin(x), per op", *eager_sin, jax=JAX_EAGER_SIN, target=JAX_EAGER_SIN),
    ]


def bench_import(quick: bool) -> list[Result]:
    runs = 3 if quick else 11
    first = in_fresh_process(_CHILD_FIRST_CALL, 1 if quick else 5)
    return [
        Result(
            "import polyjax (fresh process)",
            *in_fresh_process(_CHILD_IMPORT, runs),
            jax=JAX_IMPORT,
            target=TARGET_IMPORT,
        ),
        Result("  import + first jit call (for information)", *first),
    ]


def _sin_cos_chain(n_ops: int) -> Callable[[Any], Any]:
    """A new function object each time (so no cache hits) of `n_ops` elementwise operations."""
    import polyjax.lax as lax

    def f(x):
        for _ in range(n_ops // 4):  # four ops per step
            x = lax.add(lax.mul(lax.sin(x), lax.cos(x)), x)
        return x

    return f


def bench_compile(quick: bool) -> list[Result]:
    import numpy as np

    import polyjax

    x = np.ones((8,), np.float32)
    runs = 1 if quick else 5
    trace, lower, compile_, total = [], [], [], []
    for _ in range(runs):
        jitted = polyjax.jit(_sin_cos_chain(N_COMPILE_OPS))
        t0 = time.perf_counter()
        traced = jitted.trace(x)
        t1 = time.perf_counter()
        lowered = traced.lower()
        t2 = time.perf_counter()
        lowered.compile()
        t3 = time.perf_counter()
        trace.append(t1 - t0)
        lower.append(t2 - t1)
        compile_.append(t3 - t2)
        total.append(t3 - t0)
    n_eqns = len(traced.jaxpr.eqns)
    if n_eqns != N_COMPILE_OPS:
        raise AssertionError(f"the compile benchmark traced {n_eqns} ops, not {N_COMPILE_OPS}")

    def stats(ts):
        return statistics.median(ts), min(ts)

    return [
        Result(f"jit of a {N_COMPILE_OPS}-op function: trace+lower+compile", *stats(total)),
        Result("  trace", *stats(trace)),
        Result("  lower to StableHLO", *stats(lower)),
        Result("  XLA compile", *stats(compile_)),
    ]


def _guarded(name: str, jax: float, target: float, run: Callable[[], tuple[float, float]]):
    """The benchmark's Result, or an "n/a" one naming the error if it cannot run yet."""
    try:
        return Result(name, *run(), jax=jax, target=target)
    except Exception as e:  # a missing rule or transformation: report it, keep going
        return Result(name, None, jax=jax, target=target, error=f"{type(e).__name__}: {e}")


def _mlp_loss() -> Callable[..., Any]:
    """A new function object each time: mean squared error of a tanh MLP."""
    import numpy as np

    import polyjax.lax as lax

    def loss(params, x, y):
        h = x
        for w, b in params:
            b = lax.broadcast_in_dim(b, (MLP_BATCH, MLP_WIDTH), (1,))
            h = lax.tanh(lax.add(lax.dot(h, w), b))
        d = lax.sub(h, y)
        return lax.div(lax.reduce_sum(lax.mul(d, d), (0, 1)), np.float32(d.size))

    return loss


def _grad() -> Callable[..., Any]:
    import polyjax

    grad = getattr(polyjax, "grad", None)
    if grad is None:  # the facade does not export it yet
        from polyjax_interpreters.ad import grad
    return grad


def bench_tracing(quick: bool) -> list[Result]:
    import numpy as np

    import polyjax

    runs = 1 if quick else 7

    def make_jaxpr_per_eqn() -> tuple[float, float]:
        x = np.ones((8,), np.float32)
        polyjax.make_jaxpr(_sin_cos_chain(N_TRACE_OPS))(x)  # warm-up: imports, rule caches
        times = []
        for _ in range(runs):
            f = _sin_cos_chain(N_TRACE_OPS)
            t0 = time.perf_counter()
            jaxpr = polyjax.make_jaxpr(f)(x)
            times.append(time.perf_counter() - t0)
            if len(jaxpr.eqns) != N_TRACE_OPS:
                raise AssertionError(f"traced {len(jaxpr.eqns)} equations, not {N_TRACE_OPS}")
        return statistics.median(times) / N_TRACE_OPS, min(times) / N_TRACE_OPS

    def grad_mlp_trace_lower() -> tuple[float, float]:
        rng = np.random.default_rng(0)
        params = [
            (
                (rng.standard_normal((MLP_WIDTH, MLP_WIDTH)) / np.sqrt(MLP_WIDTH)).astype(
                    np.float32
                ),
                np.zeros(MLP_WIDTH, np.float32),
            )
            for _ in range(MLP_LAYERS)
        ]
        x = rng.standard_normal((MLP_BATCH, MLP_WIDTH)).astype(np.float32)
        y = rng.standard_normal((MLP_BATCH, MLP_WIDTH)).astype(np.float32)
        grad = _grad()
        polyjax.jit(grad(_mlp_loss())).lower(params, x, y)  # warm-up
        times = []
        for _ in range(runs):
            f = polyjax.jit(grad(_mlp_loss()))
            t0 = time.perf_counter()
            f.lower(params, x, y)
            times.append(time.perf_counter() - t0)
        return statistics.median(times), min(times)

    return [
        _guarded(
            f"make_jaxpr of {N_TRACE_OPS} elementwise ops, per equation",
            JAX_MAKE_JAXPR_PER_EQN,
            JAX_MAKE_JAXPR_PER_EQN / 2,
            make_jaxpr_per_eqn,
        ),
        _guarded(
            f"jit(grad(loss)) trace+lower, {MLP_LAYERS}-layer MLP",
            JAX_GRAD_MLP_TRACE_LOWER,
            JAX_GRAD_MLP_TRACE_LOWER / 2,
            grad_mlp_trace_lower,
        ),
    ]


def _rnn() -> Callable[..., Any]:
    """A new function object each time: an RNN cell scanned over the rows of ``xs``."""
    import polyjax.lax as lax

    def run(w, u, b, h0, xs):
        def cell(h, x):
            h = lax.tanh(lax.add(lax.add(lax.dot(w, h), lax.dot(u, x)), b))
            return h, h

        return lax.scan(cell, h0, xs)

    return run


def bench_loops(quick: bool) -> list[Result]:
    import numpy as np

    import polyjax
    import polyjax.lax as lax

    number, repeat, runs = (5, 3, 1) if quick else (200, 9, 7)
    wait = polyjax.block_until_ready
    rng = np.random.default_rng(0)

    def normal(*shape: int, scale: float = 1.0):
        return polyjax.device_put((rng.standard_normal(shape) * scale).astype(np.float32))

    # Weights scaled so that tanh stays out of saturation: every step does real work.
    h, d = RNN_HIDDEN, RNN_INPUT
    rnn_args = (
        normal(h, h, scale=h**-0.5),
        normal(h, d, scale=d**-0.5),
        normal(h),
        normal(h),
        normal(RNN_STEPS, d),
    )

    def scan_per_call() -> tuple[float, float]:
        f = polyjax.jit(_rnn())
        return per_call(lambda: f(*rnn_args), number=number, repeat=repeat, wait=wait)

    def scan_compile() -> tuple[float, float]:
        polyjax.jit(_rnn()).lower(*rnn_args).compile()  # warm-up: imports, rule caches
        times = []
        for _ in range(runs):
            f = polyjax.jit(_rnn())
            t0 = time.perf_counter()
            f.lower(*rnn_args).compile()
            times.append(time.perf_counter() - t0)
        return statistics.median(times), min(times)

    def vmap_matmul() -> tuple[float, float]:
        shape = (MATMUL_BATCH, MATMUL_SIZE, MATMUL_SIZE)
        a, b = normal(*shape), normal(*shape)
        f = polyjax.jit(polyjax.vmap(lax.dot))
        return per_call(lambda: f(a, b), number=max(number // 10, 1), repeat=repeat, wait=wait)

    n = MATMUL_SIZE
    return [
        _guarded(
            f"jit lax.scan of an RNN cell, {RNN_STEPS} steps, per call",
            JAX_SCAN_RNN,
            JAX_SCAN_RNN * PARITY,
            scan_per_call,
        ),
        _guarded(
            "  trace+lower+compile it (a fresh function)",
            JAX_SCAN_RNN_COMPILE,
            JAX_SCAN_RNN_COMPILE * PARITY,
            scan_compile,
        ),
        _guarded(
            f"jit(vmap(dot)), {MATMUL_BATCH} pairs of {n}x{n} f32, per call",
            JAX_VMAP_MATMUL,
            JAX_VMAP_MATMUL * PARITY,
            vmap_matmul,
        ),
    ]


def _sgd_step() -> Callable[..., Any]:
    """One SGD step of an MLP classifier: the function the training benchmark jits."""
    import polyjax
    import polyjax.numpy as jnp
    from polyjax import nn

    def loss(params, images, labels):
        h = images
        for w, b in params[:-1]:
            h = nn.relu(h @ w + b)
        w, b = params[-1]
        log_probs = nn.log_softmax(h @ w + b)
        return -jnp.mean(jnp.sum(log_probs * labels, axis=-1))

    def step(params, images, labels):
        value, grads = polyjax.value_and_grad(loss)(params, images, labels)
        return polyjax.tree.map(lambda p, g: p - 0.01 * g, params, grads), value

    return step


def bench_training(quick: bool) -> list[Result]:
    import numpy as np

    import polyjax

    number, repeat = (3, 3) if quick else (50, 9)
    rng = np.random.default_rng(0)

    def put(x: Any) -> Any:
        return polyjax.device_put(np.asarray(x, np.float32))

    params = [
        (put(rng.standard_normal((n_in, n_out)) * n_in**-0.5), put(np.zeros(n_out)))
        for n_in, n_out in zip(SGD_LAYERS[:-1], SGD_LAYERS[1:], strict=True)
    ]
    images = put(rng.standard_normal((SGD_BATCH, SGD_LAYERS[0])))
    labels = put(np.eye(SGD_LAYERS[-1])[rng.integers(0, SGD_LAYERS[-1], SGD_BATCH)])

    def sgd_per_step() -> tuple[float, float]:
        step = polyjax.jit(_sgd_step())
        state = [params]

        def run() -> Any:
            # The updated parameters feed the next step, as in a training loop.
            state[0], value = step(state[0], images, labels)
            return value

        return per_call(run, number=number, repeat=repeat, wait=polyjax.block_until_ready)

    shape = "-".join(map(str, SGD_LAYERS))
    return [
        _guarded(
            f"jit SGD step, MLP {shape}, batch {SGD_BATCH} f32, per step",
            JAX_SGD_STEP,
            JAX_SGD_STEP * PARITY,
            sgd_per_step,
        )
    ]


# The sharded benchmarks run in a child process with 8 host devices, the same
# code for polyjax and for JAX (``LIB``). Each call is waited for: on a machine
# with few cores, queued calls of an 8-device program whose devices exchange
# data (all-reduce) can stall XLA's CPU collectives, for JAX as for polyjax.
_CHILD_SHARDED = """
import json, os, statistics, sys, time
LIB = sys.argv[1]
if LIB == "jax":
    import jax
    jax.config.update("jax_num_cpu_devices", 8)
    from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P
else:
    import polyjax as jax
    from polyjax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P
import numpy as np
devices = jax.devices()
assert len(devices) == 8, devices
quick = sys.argv[2] == "quick"
# --cpu-time: the process's CPU time, which a loaded machine disturbs far less than wall time
clock = time.process_time if os.environ.get("POLYJAX_BENCH_CLOCK") == "cpu" else time.perf_counter
n = int(sys.argv[3])
mesh = Mesh(np.array(devices).reshape(2, 4), ("a", "b"))
line = Mesh(np.array(devices), ("a",))
rng = np.random.default_rng(0)
x = jax.device_put(rng.standard_normal((n, n)).astype(np.float32), NamedSharding(mesh, P("a", "b")))
w = jax.device_put(
    (rng.standard_normal((n, n)) / n**0.5).astype(np.float32), NamedSharding(mesh, P("b", None))
)
run = jax.jit(lambda x, w: jax.numpy.tanh(x @ w) @ w.T)
small = jax.device_put(np.ones((8, 8), np.float32), NamedSharding(line, P("a")))
tiny = jax.jit(lambda a: a + 1)
auto = Mesh(np.array(devices), ("a",), axis_types=(AxisType.Auto,))
rows = jax.device_put(
    rng.standard_normal((8, 32768)).astype(np.float32), NamedSharding(auto, P("a"))
)
psum_all = jax.jit(
    jax.shard_map(lambda v: jax.lax.psum(v, "a"), mesh=auto, in_specs=P("a"), out_specs=P())
)
pmapped = jax.pmap(lambda v: v * 2 + 1)
state = [pmapped(np.zeros((8, 128), np.float32))]

def pmap_step():
    state[0] = pmapped(state[0])
    return state[0]

def per_call(fn, number, repeat):
    jax.block_until_ready(fn())
    times = []
    for _ in range(repeat):
        t0 = clock()
        for _ in range(number):
            jax.block_until_ready(fn())
        times.append((clock() - t0) / number)
    return statistics.median(times), min(times)

print(json.dumps({
    "run": per_call(lambda: run(x, w), 5 if quick else 50, 3 if quick else 7),
    "dispatch": per_call(lambda: tiny(small), 50 if quick else 1000, 3 if quick else 7),
    "shard_map_psum": per_call(lambda: psum_all(rows), 20 if quick else 300, 3 if quick else 7),
    "pmap_dispatch": per_call(pmap_step, 50 if quick else 1000, 3 if quick else 7),
}))
"""


def _run_child(python: str, lib: str, args: list[str], env: dict) -> dict:
    """The JSON object a benchmark child prints last (`python -c code lib ...`)."""
    out = subprocess.run(
        [python, "-c", *args], capture_output=True, text=True, env=env, timeout=900
    )
    if out.returncode != 0:
        raise RuntimeError(f"the {lib} child failed: {out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _sharded_child(python: str, lib: str, quick: bool) -> dict[str, tuple[float, float]]:
    env = dict(os.environ, JAX_NUM_CPU_DEVICES="8", JAX_PLATFORMS="cpu")
    args = [_CHILD_SHARDED, lib, "quick" if quick else "full", str(SHARDED_N)]
    return _run_child(python, lib, args, env)


Timings = dict[str, list[tuple[float, float]]]


def _alternating_rounds(
    child: Callable[[str, str, bool], dict],
    keys: Sequence[str],
    quick: bool,
    jax_python: str | None,
) -> tuple[Timings, Timings]:
    """Each round runs polyjax's child, then JAX's (if given): their (median, minimum) per key."""
    ours: Timings = {k: [] for k in keys}
    theirs: Timings = {k: [] for k in keys}
    for _ in range(1 if quick else 3):
        for key, value in child(sys.executable, "polyjax", quick).items():
            ours[key].append(value)
        if jax_python:
            for key, value in child(jax_python, "jax", quick).items():
                theirs[key].append(value)
    return ours, theirs


def bench_sharded(quick: bool, jax_python: str | None) -> list[Result]:
    """sharded_jit.run and sharded_jit.dispatch, polyjax and (if given) JAX alternating."""
    keys = ("run", "dispatch", "shard_map_psum", "pmap_dispatch")
    try:
        ours, theirs = _alternating_rounds(_sharded_child, keys, quick, jax_python)
    except Exception as e:  # report it, keep going
        error = f"{type(e).__name__}: {e}"
        names = ("sharded_jit.run", "sharded_jit.dispatch", "shard_map_psum", "pmap_dispatch")
        return [Result(name, None, error=error) for name in names]

    def best(values: list[tuple[float, float]]) -> tuple[float, float]:
        # the best round's median (the machine is shared), and the overall minimum
        return min(m for m, _ in values), min(m for _, m in values)

    jax_run = best(theirs["run"])[0] if theirs["run"] else JAX_SHARDED_RUN
    jax_dispatch = best(theirs["dispatch"])[0] if theirs["dispatch"] else JAX_SHARDED_DISPATCH
    jax_psum = best(theirs["shard_map_psum"])[0] if theirs["shard_map_psum"] else JAX_SHARD_MAP_PSUM
    jax_pmap = best(theirs["pmap_dispatch"])[0] if theirs["pmap_dispatch"] else JAX_PMAP_DISPATCH
    n = SHARDED_N
    return [
        Result(
            f"sharded_jit.run: tanh(x @ w) @ w.T, {n}x{n} on 2x4 devices, per call",
            *best(ours["run"]),
            jax=jax_run,
            target=jax_run * PARITY,
        ),
        Result(
            "sharded_jit.dispatch: x + 1, 8x8 over 8 devices, per call",
            *best(ours["dispatch"]),
            jax=jax_dispatch,
            target=jax_dispatch,
        ),
        Result(
            "shard_map_psum: jit(shard_map(psum)), 8x32768 f32 over 8 devices, per call",
            *best(ours["shard_map_psum"]),
            jax=jax_psum,
            target=jax_psum * PARITY,
        ),
        Result(
            "pmap_dispatch: pmap(x * 2 + 1) on its own output, 8 devices, per call",
            *best(ours["pmap_dispatch"]),
            jax=jax_pmap,
            target=jax_pmap,
        ),
    ]


# Issue 16, point 6: dispatch rows side by side with JAX 0.10.2 (`--jax PYTHON`),
# the same code in both libraries, one child process per library and round.
_CHILD_DISPATCH = """
import json, os, statistics, sys, time
LIB = sys.argv[1]
if LIB == "jax":
    import jax
else:
    import polyjax as jax
import numpy as np
quick = sys.argv[2] == "quick"
# --cpu-time: the process's CPU time, which a loaded machine disturbs far less than wall time
clock = time.process_time if os.environ.get("POLYJAX_BENCH_CLOCK") == "cpu" else time.perf_counter
x = jax.device_put(np.arange(4, dtype=np.float32))
y = jax.device_put(np.ones(4, np.float32))
add = jax.jit(lambda a, b: a + b)
tree = {f"w{i:02d}": jax.device_put(np.full(4, i, np.float32)) for i in range(20)}
bump = jax.jit(lambda d: {k: v + 1.0 for k, v in d.items()})
sin = jax.lax.sin

def per_call(fn, number, repeat):
    jax.block_until_ready(fn())
    times = []
    for _ in range(repeat):
        t0 = clock()
        for _ in range(number):
            out = fn()
        jax.block_until_ready(out)
        times.append((clock() - t0) / number)
    return statistics.median(times), min(times)

n, r = (200, 3) if quick else (10000, 7)
print(json.dumps({
    "jit_dispatch_small": per_call(lambda: add(x, y), n, r),
    "jit_dispatch_pytree": per_call(lambda: bump(tree), n // 4, r),
    "eager_op.sin": per_call(lambda: sin(x), n, r),
    "eager_op.mul_add": per_call(lambda: x * 2.0 + 1, n // 2, r),
}))
"""

DISPATCH_ROWS = {
    "jit_dispatch_small": ("jit x + y, f32[4], per call", 1.0),
    "jit_dispatch_pytree": ("jit dict of 20 f32[4] in/out, per call", 1.0),
    "eager_op.sin": ("eager lax.sin(x), per op", 1.1),
    "eager_op.mul_add": ("eager x * 2.0 + 1, per expression", 1.1),
}


def _dispatch_child(python: str, lib: str, quick: bool) -> dict[str, tuple[float, float]]:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    args = [_CHILD_DISPATCH, lib, "quick" if quick else "full"]
    return {k: tuple(v) for k, v in _run_child(python, lib, args, env).items()}


def bench_dispatch_side_by_side(quick: bool, jax_python: str | None) -> list[Result]:
    """Issue 16's dispatch rows, polyjax and (if given) JAX alternating in children."""
    try:
        ours, theirs = _alternating_rounds(_dispatch_child, DISPATCH_ROWS, quick, jax_python)
    except Exception as e:  # report it, keep going
        error = f"{type(e).__name__}: {e}"
        return [Result(k, None, error=error) for k in DISPATCH_ROWS]
    results = []
    for k, (what, bound) in DISPATCH_ROWS.items():
        jax_median = min(m for m, _ in theirs[k]) if theirs[k] else None
        results.append(
            Result(
                f"{k}: {what}",
                min(m for m, _ in ours[k]),
                min(m for _, m in ours[k]),
                jax=jax_median,
                target=None if jax_median is None else jax_median * bound,
            )
        )
    return results


# ---------------------------------------------------------------------------
# export_roundtrip: export with a symbolic batch, serialize, deserialize, call

_CHILD_EXPORT = r"""
import json, statistics, sys, time
LIB = sys.argv[1]
if LIB == "jax":
    import jax
    from jax import export
else:
    import polyjax as jax
    from polyjax import export
import numpy as np
quick = sys.argv[2] == "quick"
rng = np.random.default_rng(0)
w = (rng.standard_normal((64, 64)) / 8).astype(np.float32)
x = rng.standard_normal((32, 64)).astype(np.float32)
b, = export.symbolic_shape("b")
spec = (jax.ShapeDtypeStruct((b, 64), np.float32), jax.ShapeDtypeStruct((64, 64), np.float32))

counter = [0]

def fresh():  # a new function, closing over a new value: no trace cache hits in either
    counter[0] += 1
    s = float(counter[0])
    return jax.jit(lambda x, w: jax.numpy.tanh(jax.numpy.tanh(x @ w) @ w).sum(axis=1) * s)

def timed(fn, runs):
    times, out = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return (statistics.median(times), min(times)), out

runs = 3 if quick else 15
t_export, exp = timed(lambda: export.export(fresh())(*spec), runs)
t_ser, blob = timed(lambda: exp.serialize(), runs)
t_de, _ = timed(lambda: export.deserialize(blob), runs)
t_first, _ = timed(lambda: jax.block_until_ready(export.deserialize(blob).call(x, w)), runs)
loaded = export.deserialize(blob)
jax.block_until_ready(loaded.call(x, w))
n = 20 if quick else 200
steady = []
for _ in range(3 if quick else 7):
    t0 = time.perf_counter()
    for _ in range(n):
        jax.block_until_ready(loaded.call(x, w))
    steady.append((time.perf_counter() - t0) / n)
print(json.dumps({"export": t_export, "serialize": t_ser, "deserialize": t_de,
                  "first call": t_first,
                  "steady call": (statistics.median(steady), min(steady))}))
"""

EXPORT_PHASES = ("export", "serialize", "deserialize", "first call", "steady call")


def _export_child(python: str, lib: str, quick: bool) -> dict[str, tuple[float, float]]:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    if lib == "jax":
        # JAX's serialization imports flatbuffers, which a scratch venv may lack: give the
        # child the workspace's copy (and nothing else of the workspace).
        import flatbuffers

        env["PYTHONPATH"] = _flatbuffers_only_dir(flatbuffers)
    timings = _run_child(python, lib, [_CHILD_EXPORT, lib, "quick" if quick else "full"], env)
    return {k: tuple(v) for k, v in timings.items()}


def _flatbuffers_only_dir(module: Any) -> str:
    import tempfile

    d = tempfile.mkdtemp(prefix="bench_flatbuffers_")
    os.symlink(os.path.dirname(module.__file__), os.path.join(d, "flatbuffers"))
    return d


def bench_export(quick: bool, jax_python: str | None) -> list[Result]:
    """export_roundtrip: each phase, polyjax and (if given) JAX alternating in children."""
    try:
        ours, theirs = _alternating_rounds(_export_child, EXPORT_PHASES, quick, jax_python)
    except Exception as e:  # report it, keep going
        error = f"{type(e).__name__}: {e}"
        return [Result(f"export_roundtrip.{k}", None, error=error) for k in EXPORT_PHASES]
    results = []
    for k in EXPORT_PHASES:
        median, minimum = min(m for m, _ in ours[k]), min(m for _, m in ours[k])
        jax_median = min(m for m, _ in theirs[k]) if theirs[k] else None
        results.append(
            Result(
                f"export_roundtrip.{k}: tanh MLP, x f32[b,64]",
                median,
                minimum,
                jax=jax_median,
                target=jax_median,
            )
        )
    return results


# ---------------------------------------------------------------------------
# Issue 16, points 3 to 5, side by side with JAX (`--jax PYTHON`), alternating
# fresh children: eager control flow, time to first result, the persistent cache.

_CHILD_WHILE_EAGER = r"""
import json, statistics, sys, time
LIB, QUICK = sys.argv[1], sys.argv[2] == "quick"
if LIB == "jax":
    import jax, jax.numpy as jnp
    from jax import lax
else:
    import polyjax as jax, polyjax.numpy as jnp
    from polyjax import lax

def body(i, x):  # the same function object on every call
    return x * 1.0001 + 0.5

x = jnp.ones(16)
jax.block_until_ready(lax.fori_loop(0, 100, body, x))
number, repeat = (5, 3) if QUICK else (200, 7)
times = []
for _ in range(repeat):
    t0 = time.perf_counter()
    for _ in range(number):
        out = lax.fori_loop(0, 100, body, x)
    jax.block_until_ready(out)
    times.append((time.perf_counter() - t0) / number)
print(json.dumps({"while_loop_eager": [statistics.median(times), min(times)]}))
"""

# The line of issue 16, point 4, in a fresh interpreter, timed from outside
# (interpreter start-up included, as `time python -c ...` does).
_FIRST_OP = "import {lib}.numpy as jnp; print(jnp.ones(3) + 1)"

# The 100-op program of `bench_compile`, jitted and called once: its first call
# (trace, lower, then compile or load from the persistent cache), timed inside.
_CHILD_CACHED_PROGRAM = r"""
import json, sys, time
LIB = sys.argv[1]
if LIB == "jax":
    import jax
    from jax import lax
else:
    import polyjax as jax
    from polyjax import lax
import numpy as np

def f(x):
    for _ in range(N_OPS // 4):
        x = lax.add(lax.mul(lax.sin(x), lax.cos(x)), x)
    return x

x = np.ones((8,), np.float32)
t0 = time.perf_counter()
jax.block_until_ready(jax.jit(f)(x))
print(json.dumps({"first_call": time.perf_counter() - t0}))
"""


def _bytecode_env(**extra: str) -> dict[str, str]:
    """The environment of a child that may write and use ``.pyc`` files, as an
    installed package has them (a ``PYTHONDONTWRITEBYTECODE`` shell would have every
    fresh polyjax process compile its sources, which JAX's wheel never does)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return env | extra


def _while_eager_child(python: str, lib: str, quick: bool) -> dict:
    args = [_CHILD_WHILE_EAGER, lib, "quick" if quick else "full"]
    return {k: tuple(v) for k, v in _run_child(python, lib, args, _bytecode_env()).items()}


def _first_op_child(python: str, lib: str, quick: bool) -> dict:
    code = _FIRST_OP.format(lib="jax" if lib == "jax" else "polyjax")
    env = _bytecode_env()
    times = []
    for _ in range(1 if quick else 3):
        t0 = time.perf_counter()
        subprocess.run([python, "-c", code], capture_output=True, check=True, env=env)
        times.append(time.perf_counter() - t0)
    return {"first_op": (statistics.median(times), min(times))}


def _cached_program_child(python: str, lib: str, quick: bool) -> dict:
    """A first process fills a new cache directory, a second one (timed) uses it."""
    import shutil
    import tempfile

    code = _CHILD_CACHED_PROGRAM.replace("N_OPS", str(N_COMPILE_OPS))
    directory = tempfile.mkdtemp(prefix="bench_compile_cache_")
    env = _bytecode_env(
        JAX_COMPILATION_CACHE_DIR=directory, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0"
    )
    try:
        cold = _run_child(python, lib, [code, lib], env)["first_call"]
        warm = _run_child(python, lib, [code, lib], env)["first_call"]
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return {"warm": (warm, warm), "cold": (cold, cold)}


def _side_by_side(
    child: Callable[[str, str, bool], dict],
    rows: Sequence[tuple[str, str, float]],
    quick: bool,
    jax_python: str | None,
) -> list[Result]:
    """One Result per (key, name, target ratio): polyjax's best round against JAX's."""
    keys = [k for k, _, _ in rows]
    try:
        # A first round of each warms the children's bytecode and disk caches.
        child(sys.executable, "polyjax", True)
        if jax_python:
            child(jax_python, "jax", True)
        ours, theirs = _alternating_rounds(child, keys, quick, jax_python)
    except Exception as e:  # report it, keep going
        error = f"{type(e).__name__}: {e}"
        return [Result(name, None, error=error) for _, name, _ in rows]
    results = []
    for key, name, ratio in rows:
        jax_median = min(m for m, _ in theirs[key]) if theirs[key] else None
        results.append(
            Result(
                name,
                min(m for m, _ in ours[key]),
                min(m for _, m in ours[key]),
                jax=jax_median,
                target=None if jax_median is None else jax_median * ratio,
            )
        )
    return results


def bench_while_loop_eager(quick: bool, jax_python: str | None) -> list[Result]:
    """while_loop_eager: fori_loop of 100 steps called eagerly with the same body."""
    name = "while_loop_eager: eager fori_loop(0, 100, body, f32[16]), same body, per call"
    return _side_by_side(_while_eager_child, [("while_loop_eager", name, 1.0)], quick, jax_python)


def bench_first_op(quick: bool, jax_python: str | None) -> list[Result]:
    """import_time.first_op: a fresh interpreter's import and first jnp result."""
    name = "import_time.first_op: python -c 'import ...numpy as jnp; print(jnp.ones(3) + 1)'"
    return _side_by_side(_first_op_child, [("first_op", name, 1.0)], quick, jax_python)


def bench_compile_cache(quick: bool, jax_python: str | None) -> list[Result]:
    """compile_cache.warm: the 100-op program's first call in a second process, cache warm."""
    n = N_COMPILE_OPS
    rows = [
        ("warm", f"compile_cache.warm: {n}-op jit, first call in a 2nd process, cache warm", 1.0),
        ("cold", "  compile_cache.cold: the same in the 1st process (for information)", 1e9),
    ]
    results = _side_by_side(_cached_program_child, rows, quick, jax_python)
    results[1].target = None
    return results


BENCH_ISSUE16 = {
    "while_loop_eager": bench_while_loop_eager,
    "import_time": bench_first_op,
    "compile_cache": bench_compile_cache,
}


# ---------------------------------------------------------------------------
# Report


def header() -> str:
    import jaxlib
    import numpy as np

    import polyjax

    dev = polyjax.devices()[0]
    return (
        f"polyjax {polyjax.__version__} on jaxlib {jaxlib.__version__}, numpy {np.__version__}, "
        f"Python {platform.python_version()}; backend {polyjax.default_backend()} "
        f"({polyjax.device_count()} device(s), {dev.device_kind}); {os.cpu_count()} CPU cores"
    )


def _short(error: str, limit: int = 60) -> str:
    first = error.splitlines()[0] if error else ""
    return first if len(first) <= limit else first[: limit - 3] + "..."


def render(results: list[Result]) -> str:
    cols = ("benchmark", "polyjax", "(min)", "JAX 0.10.2", "target", "")
    rows = [
        (
            r.name,
            fmt_time(r.median) if r.error is None else f"n/a ({_short(r.error)})",
            fmt_time(r.minimum),
            fmt_time(r.jax),
            "-" if r.target is None else f"<= {fmt_time(r.target)}",
            r.status,
        )
        for r in results
    ]
    widths = [max(len(str(row[i])) for row in (cols, *rows)) for i in range(len(cols))]

    def line(row):
        first = row[0].ljust(widths[0])
        rest = [str(c).rjust(w) for c, w in zip(row[1:-1], widths[1:-1])]
        return "  ".join([first, *rest, row[-1]]).rstrip()

    return "\n".join([line(cols), *(line(r) for r in rows)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tools/bench",
        description="Measure polyjax's dispatch, import and compile costs next to JAX's.",
    )
    parser.add_argument("--quick", action="store_true", help="few repetitions: checks that it runs")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    parser.add_argument(
        "--jax",
        metavar="PYTHON",
        help="a Python with JAX 0.10.2 installed (a scratch venv): the sharded benchmarks "
        "run there too, alternating with polyjax, for the JAX column",
    )
    parser.add_argument(
        "--only",
        choices=["sharded", "export", "dispatch", *BENCH_ISSUE16],
        help="run only these benchmarks",
    )
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="the side-by-side dispatch and sharded rows measure each child's CPU time "
        "(all its threads) instead of wall time: steadier on a machine other work shares",
    )
    args = parser.parse_args(argv)
    if args.cpu_time:
        os.environ["POLYJAX_BENCH_CLOCK"] = "cpu"  # read by the children
    if args.only == "sharded":
        results = bench_sharded(args.quick, args.jax)
        print(header())
        print(render(results))
        return 0
    if args.only == "dispatch":
        results = bench_dispatch_side_by_side(args.quick, args.jax)
        print(header())
        print(render(results))
        return 0
    if args.only == "export":
        results = bench_export(args.quick, args.jax)
        print(header())
        print(render(results))
        return 0
    if args.only in BENCH_ISSUE16:
        results = BENCH_ISSUE16[args.only](args.quick, args.jax)
        print(header())
        print(render(results))
        return 0

    # The import benchmark runs first, so nothing warmed by this process matters;
    # the children are independent interpreters anyway.
    results = bench_import(args.quick)
    results += bench_dispatch(args.quick)
    results += bench_compile(args.quick)
    results += bench_tracing(args.quick)
    results += bench_loops(args.quick)
    results += bench_training(args.quick)
    results += bench_sharded(args.quick, args.jax)
    results += bench_export(args.quick, args.jax)

    print(header())
    if args.quick:
        print("(--quick: few repetitions; do not quote these figures)")
    print(render(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump([asdict(r) | {"status": r.status} for r in results], f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
