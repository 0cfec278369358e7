"""One process of the multi-process tests: runs a scenario, prints its results as JSON.

Started by `polyjax_sharding.launch.launch` from test_multiprocess.py with the
``JAX_*`` variables set; ``argv[1]`` names the scenario. The last line of
stdout is a JSON object.
"""

import json
import os
import sys
import time

import numpy as np

import polyjax
import polyjax.numpy as jnp
from polyjax.sharding import Mesh, NamedSharding
from polyjax.sharding import PartitionSpec as P


def _error(fn):
    try:
        fn()
    except Exception as e:
        return [type(e).__name__, str(e)]
    return None


def basics(heartbeat: int) -> dict:
    polyjax.distributed.initialize(initialization_timeout=60, heartbeat_timeout_seconds=heartbeat)
    out = {"twice": _error(lambda: polyjax.distributed.initialize())}
    devices = polyjax.devices()
    pid, count = polyjax.process_index(), polyjax.process_count()
    mesh = Mesh(np.array(devices), ("x",))
    s = NamedSharding(mesh, P("x"))
    # Each process holds 3 rows: global rows 3 * pid .. 3 * pid + 2.
    local = np.arange(3, dtype=np.float32) + 3 * pid
    x = polyjax.make_array_from_process_local_data(s, local)
    n = len(devices)
    y = polyjax.make_array_from_callback(
        (2 * n,), s, lambda idx: np.arange(2 * n, dtype=np.float32)[idx] ** 2
    )
    replicated = NamedSharding(mesh, P())
    total = polyjax.jit(lambda a, b: jnp.sum(a) + jnp.sum(b), out_shardings=replicated)(x, y)

    # A data-parallel step: each process holds its part of the batch.
    w = polyjax.device_put(np.array([0.5, -1.0], np.float32), replicated)
    rng = np.random.default_rng(0)
    batch = rng.normal(size=(4 * count, 2)).astype(np.float32)
    xs = polyjax.make_array_from_process_local_data(
        NamedSharding(mesh, P("x", None)), batch[4 * pid : 4 * pid + 4]
    )

    def loss(w, xs):
        return jnp.mean((xs @ w - 1.0) ** 2)

    grad = polyjax.jit(polyjax.grad(loss), out_shardings=replicated)(w, xs)
    out.update(
        process_index=pid,
        process_count=count,
        process_indices=polyjax.process_indices(),
        device_count=len(devices),
        device_processes=[d.process_index for d in devices],
        local_device_processes=[d.process_index for d in polyjax.local_devices()],
        mesh_multi_process=mesh.is_multi_process,
        local_mesh_size=mesh.local_mesh.size,
        sharding_fully_addressable=s.is_fully_addressable,
        x_shape=list(x.shape),
        x_fully_addressable=x.is_fully_addressable,
        x_local=[np.asarray(sh.data).tolist() for sh in x.addressable_shards],
        y_local=[np.asarray(sh.data).tolist() for sh in y.addressable_shards],
        asarray_error=_error(lambda: np.asarray(x)),
        total=float(np.asarray(total)),
        grad=np.asarray(grad).tolist(),
    )
    return out


def collectives(heartbeat: int) -> dict:
    """shard_map collectives and every multihost_utils function across the processes."""
    from polyjax.experimental import multihost_utils as mu

    polyjax.distributed.initialize(initialization_timeout=60, heartbeat_timeout_seconds=heartbeat)
    pid, count = polyjax.process_index(), polyjax.process_count()
    mesh = Mesh(np.array(polyjax.devices()), ("x",))
    x = polyjax.make_array_from_process_local_data(
        NamedSharding(mesh, P("x")), np.array([pid + 1.0], np.float32)
    )
    shift = [(i, (i + 1) % count) for i in range(count)]

    def body(block):
        return polyjax.lax.psum(block, "x"), polyjax.lax.ppermute(block, "x", shift)

    total, moved = polyjax.jit(
        polyjax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=(P(), P("x")))
    )(x)
    out = {
        "psum": np.asarray(total).tolist(),
        "ppermute_local": np.asarray(moved.addressable_data(0)).tolist(),
        "allgather": mu.process_allgather(np.array([pid, 10 * pid], np.int32)).tolist(),
        "allgather_tiled": mu.process_allgather({"k": np.float32(pid)}, tiled=True)["k"].tolist(),
        "allgather_global": mu.process_allgather(x, tiled=True).tolist(),
        "allgather_global_untiled": _error(lambda: mu.process_allgather(x)),
        "broadcast": {
            k: [type(v).__name__, str(v.dtype), np.asarray(v).tolist()]
            for k, v in mu.broadcast_one_to_all(
                {"a": np.arange(2) * (pid + 1), "b": 3.0 + pid}
            ).items()
        },
        "broadcast_from_last": int(mu.broadcast_one_to_all(np.int32(pid), pid == count - 1)),
        "sync": mu.sync_global_devices("step 1"),
        "equal": mu.assert_equal({"a": np.arange(3)}),
        "unequal": _error(lambda: mu.assert_equal({"a": np.arange(2) + pid}, "custom msg")),
        "sync_mismatch": _error(lambda: mu.sync_global_devices(f"name {pid}")),
    }
    g = mu.host_local_array_to_global_array(np.arange(2.0) + 10 * pid, mesh, P("x"))
    local = mu.global_array_to_host_local_array(g, mesh, P("x"))
    out.update(
        h2g_shape=list(g.shape),
        h2g_local=[np.asarray(s.data).tolist() for s in g.addressable_shards],
        g2h_shape=list(local.shape),
        g2h_value=np.asarray(local).tolist(),
        g2h_mesh_size=local.sharding.mesh.size,
    )
    with mu.live_devices(polyjax.devices()) as live:
        out["live"] = sorted(d.process_index for d in live)
    others = [d for d in polyjax.devices() if d.process_index != pid]
    out["live_no_local"] = _error(lambda: mu.live_devices(others).__enter__())
    out["preemption"] = [mu.reached_preemption_sync_point(step) for step in range(3)]
    return out


def _local(a) -> list:
    """This process's blocks of a pmap result, one per local device in device order."""
    by_device = {s.device: np.asarray(s.data)[0].tolist() for s in a.addressable_shards}
    return [by_device[d] for d in polyjax.local_devices()]


def _others() -> list:
    return [dev for dev in polyjax.devices() if dev.process_index != polyjax.process_index()]


def pmap_(heartbeat: int) -> dict:
    """pmap over the devices of every process: collectives, a training step, errors."""
    polyjax.distributed.initialize(initialization_timeout=60, heartbeat_timeout_seconds=heartbeat)
    pid, k = polyjax.process_index(), polyjax.local_device_count()
    d = polyjax.device_count()
    lax = polyjax.lax
    # The global data has one row per device; this process holds rows pid*k .. pid*k+k-1.
    data = np.random.default_rng(1).normal(size=(d, 3)).astype(np.float32)
    mine = data[pid * k : pid * k + k]
    shift = [(i, (i + 1) % d) for i in range(d)]

    def body(v, c):
        return {
            "psum": lax.psum(v, "i"),
            "index": lax.axis_index("i"),
            "gather": lax.all_gather(v, "i"),
            "permute": lax.ppermute(v, "i", shift),
            "scaled": lax.psum(v * c, "i"),
        }

    out = polyjax.pmap(body, axis_name="i", in_axes=(0, None))(mine, np.float32(pid + 1))
    result = {k2: _local(v) for k2, v in out.items()}
    psum = out["psum"]
    result.update(
        shape=list(psum.shape),
        addressable=psum.is_fully_addressable,
        spec=str(psum.sharding.spec),
        sharding_devices=[dev.id for dev in psum.sharding.mesh.devices.flat],
        asarray=np.asarray(psum).tolist(),
        # Results of one pmap go into the next one (as they lie); an Array on one
        # device is this process's part too.
        chained=_local(polyjax.pmap(lambda v: lax.psum(v, "i"), "i")(out["index"])),
        one_device=_local(polyjax.pmap(lambda v: lax.psum(v, "i"), "i")(jnp.asarray(mine))),
        global_input=_local(
            polyjax.pmap(lambda v: lax.psum(v, "i"), "i")(
                polyjax.make_array_from_process_local_data(
                    NamedSharding(Mesh(np.array(polyjax.devices()), ("x",)), P("x")), mine
                )
            )
        ),
        out_axes=np.asarray(
            polyjax.pmap(lambda v: jnp.stack([v, -v]), "i", out_axes=1)(mine)
        ).tolist(),
        # A pmap over this process's devices only, and one inside jit, stay local (as JAX's).
        local_devices=_local(
            polyjax.pmap(lambda v: lax.axis_index("i"), "i", devices=polyjax.local_devices())(mine)
        ),
        in_jit=np.asarray(
            polyjax.jit(polyjax.pmap(lambda v: lax.psum(v, "i"), "i"))(mine)
        ).tolist(),
        nested=np.asarray(
            polyjax.pmap(polyjax.pmap(lambda v: lax.psum(v, "j"), "j"), "i")(mine)
        ).tolist(),
        wrong_size=_error(lambda: polyjax.pmap(lambda v: v, "i")(np.ones(k + 1))),
        others_devices=_error(
            lambda: polyjax.pmap(lambda v: v, "i", devices=_others())(np.ones((k, 1)))
        ),
        no_mapped=_error(lambda: polyjax.pmap(lambda: lax.axis_index("i"), "i", axis_size=k)()),
    )

    # Data-parallel SGD: each device gets 2 examples; gradients averaged with pmean.
    batch = np.random.default_rng(2).normal(size=(d, 2, 3)).astype(np.float32)
    targets = batch.sum(-1)

    def loss(w, xs, ys):
        return jnp.mean((xs @ w - ys) ** 2)

    def step(w, xs, ys):
        return w - 0.1 * lax.pmean(polyjax.grad(loss)(w, xs, ys), "i")

    w = np.zeros((k, 3), np.float32)  # the weights, replicated: one copy per local device
    sgd = polyjax.pmap(step, "i")
    for _ in range(3):
        w = sgd(w, batch[pid * k : pid * k + k], targets[pid * k : pid * k + k])
    # The same steps in this process alone, on the whole batch.
    single = jnp.zeros(3)
    one_step = polyjax.jit(lambda w, xs, ys: w - 0.1 * polyjax.grad(loss)(w, xs, ys))
    for _ in range(3):
        single = one_step(single, batch.reshape(-1, 3), targets.reshape(-1))
    result.update(sgd=_local(w), single=np.asarray(single).tolist())
    return result


def dies(heartbeat: int) -> dict:
    polyjax.distributed.initialize(initialization_timeout=60, heartbeat_timeout_seconds=heartbeat)
    mesh = Mesh(np.array(polyjax.devices()), ("x",))
    s = NamedSharding(mesh, P("x"))
    x = polyjax.make_array_from_process_local_data(s, np.ones(2, np.float32))
    if polyjax.process_index() == 1:
        os._exit(3)  # dies without a word to the others
    start = time.monotonic()
    f = polyjax.jit(jnp.sum, out_shardings=NamedSharding(mesh, P()))
    for _ in range(1000):  # a collective that needs the dead process
        f(x).block_until_ready()
        time.sleep(0.05)
    return {"survived": time.monotonic() - start}


if __name__ == "__main__":
    scenario, heartbeat = sys.argv[1], int(sys.argv[2])
    result = {
        "basics": basics,
        "collectives": collectives,
        "pmap": pmap_,
        "dies": dies,
    }[scenario](heartbeat)
    print(json.dumps(result), flush=True)
