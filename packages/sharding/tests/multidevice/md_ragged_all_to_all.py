"""ragged_all_to_all inside shard_map on 8 host devices: values against a NumPy model of
JAX's documented semantics (XLA:CPU has no instruction for it: polyjax emulates it)."""

import numpy as np
import pytest

from polyjax_interpreters import ad, backends
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax
from polyjax_sharding import Mesh, shard_map
from polyjax_sharding import PartitionSpec as P

N_DEV, ROWS, PER = 8, 6, 2  # devices, rows of operand and output per device, slots per pair


def _tables(rng):
    """Per device: slot tables that send disjoint slices and write disjoint windows."""
    k = N_DEV * PER
    send = rng.integers(0, 2, (N_DEV, k))  # at most 1 row per slot: 16 slots x 1 <= fits
    in_off = np.zeros((N_DEV, k), np.int32)
    for d in range(N_DEV):
        in_off[d] = rng.integers(0, ROWS - 1, k)
    # Receiver r's windows: the slots addressed to it, laid out one after another.
    out_off = np.zeros((N_DEV, k), np.int32)
    recv = np.zeros((N_DEV, k), np.int32)
    for r in range(N_DEV):
        pos = 0
        for j in range(N_DEV):
            for s in range(PER):
                i = r * PER + s
                size = int(send[j, i])
                if pos + size > ROWS:
                    send[j, i], size = 0, 0
                out_off[j, i] = pos
                recv[r, j * PER + s] = size
                pos += size
    return in_off, send.astype(np.int32), out_off, recv


def _model(operand, output, in_off, send, out_off):
    result = output.copy()
    for r in range(N_DEV):
        for j in range(N_DEV):
            for s in range(PER):
                i = r * PER + s
                a, n, o = in_off[j, i], send[j, i], out_off[j, i]
                result[r, o : o + n] = operand[j, a : a + n]
    return result


def test_matches_the_numpy_model():
    rng = np.random.default_rng(0)
    mesh = Mesh(np.array(backends.devices()), ("x",))
    operand = rng.normal(size=(N_DEV, ROWS, 2)).astype(np.float32)
    output = np.full((N_DEV, ROWS, 2), -1.0, np.float32)

    def body(x, o, *t):
        t = [v[0] for v in t]
        out = lax.ragged_all_to_all(x[0], o[0], *t, axis_name="x")
        return out[None]

    specs = (P("x"),) * 6
    f = jit(shard_map(body, mesh=mesh, in_specs=specs, out_specs=P("x")))
    # The tables are run-time values: one compilation serves every raggedness.
    for _ in range(3):
        tables = _tables(rng)
        got = f(operand, output, *tables)
        np.testing.assert_array_equal(np.asarray(got), _model(operand, output, *tables[:3]))
    # Linear in operand and output: the jvp moves the tangents the same way.
    _, t_out = ad.jvp(lambda x: f(x, output, *tables), (operand,), (operand * 2,))
    want = _model(operand * 2, np.zeros_like(output), *tables[:3])
    np.testing.assert_allclose(np.asarray(t_out), want)


def test_bad_tables_are_refused():
    mesh = Mesh(np.array(backends.devices()), ("x",))
    x = np.zeros((N_DEV, ROWS), np.float32)
    t = np.zeros((N_DEV, 3), np.int32)  # 3 slots: not a multiple of the axis size

    def body(x, t):
        return lax.ragged_all_to_all(x[0], x[0], t[0], t[0], t[0], t[0], axis_name="x")[None]

    with pytest.raises(ValueError, match="not a multiple of the size 8"):
        shard_map(body, mesh=mesh, in_specs=(P("x"), P("x")), out_specs=P("x"))(x, t)
