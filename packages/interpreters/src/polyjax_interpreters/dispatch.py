"""Running programs: compiling jaxprs to executables, and eager primitives.

Everything polyjax runs goes through an :class:`Executable`: a jaxpr lowered
to StableHLO (:mod:`polyjax_interpreters.mlir`), compiled by the PJRT client of
a backend, plus what it takes to call it with polyjax values (the input types
it was compiled for, which inputs survived pruning, how to wrap its outputs).
`jit` builds one per function and input signature; eager execution builds one
per primitive, params and input signature (:func:`apply_primitive`), so that
``lax.sin(x)`` outside any trace is compiled once and then only dispatched.

Placement rule (as JAX's): an array is *committed* to a device when the user
put it there explicitly (``device_put(x, dev)``, or it came out of a
computation with committed inputs). A computation runs on the device its
committed inputs share (two different ones are an error), else on the default
device; uncommitted inputs elsewhere are moved, and outputs are committed iff
some input was.

SPMD: when an input is spread over several devices, or `jit` is given
shardings over several devices (:func:`spmd_placement`), the computation is
one program for all of those devices. The module carries each input's
sharding (and each explicit output sharding), XLA's partitioner splits it
(``num_partitions`` = the number of devices), and the shardings it chose for
the other outputs are read back from the executable. Inputs without a sharding
of their own (host values, uncommitted single-device arrays) are replicated.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

import numpy as np
from jaxlib import _jax, xla_client

from polyjax_core import config, monitoring
from polyjax_core.abstract_values import (
    AbstractToken,
    ShapedArray,
    ShapeDtypeStruct,
    Token,
    get_aval,
)
from polyjax_core.aval_sharding import concrete_mesh_for
from polyjax_core.caching import weakref_lru_cache
from polyjax_core.dce import dce_jaxpr
from polyjax_core.jaxpr import ClosedJaxpr, Jaxpr
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.mesh import AbstractMesh
from polyjax_core.mesh_context import spec_to_sharding
from polyjax_core.primitive import Primitive
from polyjax_core.state import Ref
from polyjax_core.wrapped_fun import DebugInfo
from polyjax_interpreters import (
    _debug_nans,
    _guards,
    backends,
    compilation_cache,
    discharge,
    mlir,
)
from polyjax_interpreters import array as _array
from polyjax_interpreters.array import Array, put_value
from polyjax_interpreters.sharding import GSPMDSharding, SingleDeviceSharding
from polyjax_interpreters.sharding import Sharding as _Sharding

__all__ = [
    "effects_barrier",
    "Executable",
    "LoweredModule",
    "Placement",
    "apply_primitive",
    "device_scalar",
    "arg_placement",
    "body_shardings",
    "replicated_sharding",
    "spmd_placement",
    "compile_lowered",
    "lower_jaxpr",
]

logger = logging.getLogger("polyjax")


# ---------------------------------------------------------------------------
# Placement


def _arg_device(x: Any) -> tuple[Any, bool] | None:
    """(device, committed) of an argument that lives on a device, else None."""
    if type(x) is Array:
        sharding = x._impl._sharding
        if type(sharding) is SingleDeviceSharding:
            return sharding._device, x._committed
        # any other sharding over one device (e.g. a NamedSharding of a 1-device mesh)
        return sharding._device_assignment[0], x._committed
    return None


def arg_placement(
    args: Sequence[Any],
    arg_names: Sequence[str] | None = None,
    fun_name: str = "",
    device: Any = None,
    backend: str | None = None,
) -> tuple[Any, bool]:
    """The device a computation on ``args`` runs on, and whether its outputs are committed.

    Args:
      args: the flat arguments.
      arg_names: their names, for the error message.
      fun_name: the computation's name, for the error message.
      device: a device the user asked for (``jit(device=...)``): it wins, committed.
      backend: a platform name the user asked for (``jit(backend=...)``).

    Raises:
      ValueError: two committed arguments live on different devices.
    """
    if device is not None:
        return device, True
    committed_dev, committed_i = None, -1
    for i, x in enumerate(args):
        placed = _arg_device(x)
        if placed is None or not placed[1]:
            continue
        dev = placed[0]
        if committed_dev is None:
            committed_dev, committed_i = dev, i
        elif dev != committed_dev:
            names = list(arg_names) if arg_names else [f"args[{j}]" for j in range(len(args))]
            what = fun_name or "the computation"
            raise ValueError(
                "Received incompatible devices for jitted computation. Got "
                f"{_describe_placed(names[committed_i], what, args[committed_i], committed_dev)} "
                f"and {_describe_placed(names[i], what, x, dev)}"
            )
    if committed_dev is not None:
        if backend is not None and committed_dev.platform != backends.get_backend(backend).platform:
            raise ValueError(
                f"Outer-jit backend specification {backend} must match explicit inner-jit "
                f"device placement {committed_dev.platform}."
            )
        return committed_dev, True
    if backend is not None:
        return backends.get_backend(backend).local_devices()[0], False
    return backends.default_device(), False


def _describe_placed(name: str, fun_name: str, x: Any, device: Any) -> str:
    return (
        f"argument {name} of {fun_name} with shape {x.aval.str_short(short_dtypes=False)} "
        f"and device ids [{device.id}] on platform {device.platform.upper()}"
    )


# ---------------------------------------------------------------------------
# Lowering and compiling


class Placement(NamedTuple):
    """Where an SPMD computation runs and how its inputs and outputs are laid out.

    Attributes:
      devices: the device assignment (XLA's logical device order).
      in_shardings: one sharding per flat input.
      out_shardings: one sharding per output, or ``None`` where the partitioner
        chooses (or ``None`` altogether: it chooses every output's).
      committed: whether the outputs are committed.
      namer: the sharding whose ``_from_hlo_sharding`` names the layouts the
        partitioner chooses (a named one if any sharding involved has a name),
        or None for `GSPMDSharding`s.
    """

    devices: tuple[Any, ...]
    in_shardings: tuple[Any, ...]
    out_shardings: tuple[Any, ...] | None
    committed: bool
    namer: Any = None


_replicated_cache: dict[tuple[Any, ...], GSPMDSharding] = {}


def replicated_sharding(devices: Sequence[Any]) -> GSPMDSharding:
    """The fully replicated sharding over ``devices`` (cached)."""
    devices = tuple(devices)
    out = _replicated_cache.get(devices)
    if out is None:
        out = _replicated_cache[devices] = GSPMDSharding(
            devices, xla_client.HloSharding.replicate()
        )
    return out


def _is_multi(sharding: Any) -> bool:
    return type(sharding) is not SingleDeviceSharding and len(sharding._device_assignment) > 1


def _ids(sharding: Any) -> list[int]:
    return [d.id for d in sharding._device_assignment]


def _equivalent(a: Any, b: Any, ndim: int) -> bool:
    if a == b:
        return True
    check = getattr(a, "is_equivalent_to", None)
    return bool(check is not None and check(b, ndim))


def spmd_placement(
    args: Sequence[Any],
    arg_names: Sequence[str] | None = None,
    fun_name: str = "",
    in_shardings: Sequence[Any] | None = None,
    out_shardings: Sequence[Any] | None = None,
    out_ndims: Sequence[int] | None = None,
    body_shardings: Sequence[Any] = (),
) -> Placement | None:
    """The SPMD placement of a computation, or ``None`` if it runs on one device.

    It is SPMD when a sharding in ``in_shardings``/``out_shardings`` or an
    argument's sharding spans several devices. Every input then gets a sharding:
    its explicit one, else its own if it is a committed (or multi-device) array,
    else replicated.

    Args:
      args: the flat arguments.
      arg_names: their names, for messages.
      fun_name: the computation's name, for messages.
      in_shardings: per flat argument, an explicit sharding or ``None``.
      out_shardings: per output, an explicit sharding or ``None``.
      out_ndims: the outputs' ranks (needed with ``out_shardings``).
      body_shardings: shardings that the computation's body constrains values
        to: if nothing else spans several devices, the first that does decides
        the devices.

    A sharding whose devices come in another order than the computation's is
    replaced by the equivalent `GSPMDSharding` in that order (XLA numbers
    devices by their position in the assignment).

    Raises:
      ValueError: a committed argument's sharding differs from its explicit
        one, or shardings span different sets of devices.
    """
    n = len(args)
    ins = tuple(in_shardings) if in_shardings is not None else (None,) * n
    outs = tuple(out_shardings) if out_shardings is not None else None
    first = next((s for s in (*ins, *(outs or ())) if s is not None and _is_multi(s)), None)
    owns = [_own_sharding(x) for x in args]
    if first is None:
        first = next((o[0] for o in owns if o is not None and _is_multi(o[0])), None)
        if first is None:
            first = next((s for s in body_shardings if _is_multi(s)), None)
        if first is None:
            return None
    devices = tuple(first._device_assignment)
    device_set = set(devices)
    names = list(arg_names) if arg_names else [f"args[{j}]" for j in range(n)]
    what = fun_name or "the computation"
    resolved = []
    for i, (x, s, o) in enumerate(zip(args, ins, owns)):
        own, committed = o if o is not None else (None, False)
        if s is not None:
            if committed and not _equivalent(own, s, len(getattr(x, "shape", ()))):
                raise ValueError(
                    "Sharding passed to jit does not match the sharding on the respective "
                    f"arg. Got jit sharding: {s},\narg sharding: {own} for arg type: "
                    f"{_shaped_str(x)} (argument {names[i]} of {what})"
                )
            chosen = s
        elif own is not None and (committed or _is_multi(own)):
            chosen = own
        else:
            chosen = replicated_sharding(devices)
        if set(chosen._device_assignment) != device_set:
            raise ValueError(
                "Received incompatible devices for jitted computation. Got argument "
                f"{names[i]} of {what} with shape {_shaped_str(args[i])} and device ids "
                f"{_ids(chosen)} on platform {devices[0].platform.upper()}, while the "
                f"computation runs on device ids {[d.id for d in devices]}"
            )
        resolved.append(_in_order(chosen, devices, len(getattr(x, "shape", ()))))
    for j, s in enumerate(outs or ()):
        if s is not None and set(s._device_assignment) != device_set:
            raise ValueError(
                "Received incompatible devices for jitted computation. Got explicit output "
                f"sharding {j} with device ids {_ids(s)} on platform "
                f"{devices[0].platform.upper()}, while the computation runs on device ids "
                f"{[d.id for d in devices]}"
            )
    candidates = [
        s
        for s in (*(outs or ()), *(o[0] for o in owns if o is not None), *ins, *body_shardings)
        if s is not None and hasattr(s, "_from_hlo_sharding") and set(s.device_set) == device_set
    ]
    namer = next((s for s in candidates if hasattr(s, "_to_sdy_sharding")), None)
    if outs is not None:
        assert out_ndims is not None  # given with `out_shardings`, as documented
        outs = tuple(
            None if s is None else _in_order(s, devices, out_ndims[j]) for j, s in enumerate(outs)
        )
    return Placement(devices, tuple(resolved), outs, True, namer)


@weakref_lru_cache(maxsize=1024)
def _with_devices(sharding: Any) -> Any:
    """A sharding over devices: ``sharding``, or for one over an abstract mesh (an
    explicit-mode ``out_sharding``) the same over the concrete mesh it stands for."""
    mesh = getattr(sharding, "mesh", None)
    if not isinstance(mesh, AbstractMesh):
        return sharding
    concrete = concrete_mesh_for(mesh)
    return None if concrete is None else spec_to_sharding(sharding.spec, concrete)


def body_shardings(closed: ClosedJaxpr) -> tuple[Any, ...]:
    """The shardings that equations of ``closed`` (and its sub-jaxprs) carry as params.

    A sharding constraint in the body decides where a computation runs when
    nothing else does (all inputs on one device, no explicit shardings).
    """
    found: list[Any] = []

    def visit(jaxpr: Any) -> None:
        for eqn in jaxpr.eqns:
            for v in eqn.params.values():
                for item in v if isinstance(v, (tuple, list)) else (v,):
                    if isinstance(item, _Sharding):
                        item = _with_devices(item)
                        if item is not None:
                            found.append(item)
                    elif isinstance(item, ClosedJaxpr):
                        visit(item.jaxpr)
                    elif isinstance(item, Jaxpr):
                        visit(item)

    visit(closed.jaxpr)
    return tuple(found)


def _in_order(sharding: Any, devices: tuple[Any, ...], ndim: int) -> Any:
    """``sharding``, or its equivalent over ``devices`` in that order."""
    own = tuple(sharding._device_assignment)
    if own == devices:
        return sharding
    hlo = mlir.hlo_sharding_in(sharding, ndim, devices)
    return GSPMDSharding(devices, hlo, memory_kind=sharding.memory_kind)


def _own_sharding(x: Any) -> tuple[Any, bool] | None:
    """(sharding, committed) of an argument that has one: an Array, or a
    `ShapeDtypeStruct` with a sharding (ahead-of-time lowering)."""
    if type(x) is Array:
        return x._impl._sharding, x._committed
    if type(x) is ShapeDtypeStruct and x.sharding is not None:
        return x.sharding, True
    return None


def _shaped_str(x: Any) -> str:
    """``float32[8,8]``: the type of an argument, for messages."""
    aval = x if type(x) is ShapeDtypeStruct else get_aval(x)
    if isinstance(aval, ShapeDtypeStruct):
        aval = ShapedArray(aval.shape, aval.dtype)
    return aval.str_short(short_dtypes=False)


# ---------------------------------------------------------------------------
# Lowering and compiling


class LoweredModule:
    """A jaxpr lowered to a StableHLO module, not compiled yet.

    Attributes:
      module: the ``ir.Module``.
      name: the computation's name (the module is ``jit_<name>``).
      in_avals: the avals of *all* flat inputs (pruned ones included).
      out_avals: the avals of the outputs.
      kept_var_idx: the inputs the module takes (others were unused and pruned).
      device: where it will run (the first device of an SPMD module).
      out_committed: whether outputs are committed to ``device``.
      donated_invars: one bool per flat input.
      placement: the SPMD placement, or ``None`` for a single-device module.
      shardy: whether the module's shardings are Shardy attributes.
    """

    def __init__(
        self,
        module: Any,
        name: str,
        in_avals: tuple[ShapedArray, ...],
        out_avals: tuple[ShapedArray, ...],
        kept_var_idx: tuple[int, ...],
        device: Any,
        out_committed: bool,
        donated_invars: tuple[bool, ...],
        keepalive: Any = None,
        placement: Placement | None = None,
        shardy: bool = True,
    ):
        self.module = module
        self.name = name
        self.in_avals = in_avals
        self.out_avals = out_avals
        self.kept_var_idx = kept_var_idx
        self.device = device
        self.out_committed = out_committed
        self.donated_invars = donated_invars
        self.keepalive = keepalive
        self.placement = placement
        self.shardy = shardy

    def as_text(self, debug_info: bool = False) -> str:
        return mlir.module_to_string(self.module, enable_debug_info=debug_info)


def lower_jaxpr(
    closed: ClosedJaxpr,
    *,
    name: str,
    device: Any,
    out_committed: bool,
    donated_invars: Sequence[bool] | None = None,
    keep_unused: bool = False,
    arg_names: Sequence[str] | None = None,
    result_names: Sequence[str] | None = None,
    placement: Placement | None = None,
) -> LoweredModule:
    """Lowers a closed jaxpr to a module running on ``device`` (or as ``placement`` says).

    Unused inputs are pruned from the module unless ``keep_unused``; the
    executable still takes every flat input and drops the pruned ones.
    """
    jaxpr = closed.jaxpr
    n_in = len(jaxpr.invars)
    donated = tuple(donated_invars) if donated_invars is not None else (False,) * n_in
    new_jaxpr, used = dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars), instantiate=keep_unused)
    kept = tuple(i for i, u in enumerate(used) if u)
    if not keep_unused and len(kept) == n_in:
        new_jaxpr = jaxpr  # nothing pruned: keep the original (and its equations' identity)
    # What lowers is a program on arrays: its inputs' abstract values are ShapedArrays.
    in_avals = cast(tuple[ShapedArray, ...], tuple(v.aval for v in jaxpr.invars))
    out_avals = tuple(closed.out_avals)
    shardy = bool(config.use_shardy_partitioner.value)
    spmd: dict[str, Any] = {"device": device}
    if placement is not None:
        device, out_committed = placement.devices[0], placement.committed
        spmd = dict(
            device=None,
            device_assignment=placement.devices,
            shardy=shardy,
            arg_shardings=[placement.in_shardings[i] for i in kept],
            result_shardings=placement.out_shardings,
        )
    platform = device.platform
    result = mlir.lower_jaxpr_to_module(
        ClosedJaxpr(new_jaxpr, closed.consts),
        module_name=f"jit_{name}",
        name_stack=(f"jit({name})",),
        platforms=(platform,),
        backend_platform=platform,
        donated_args=[donated[i] for i in kept],
        arg_names=[arg_names[i] for i in kept] if arg_names else None,
        result_names=list(result_names) if result_names else None,
        **spmd,
    )
    return LoweredModule(
        result.module,
        name,
        in_avals,
        out_avals,
        kept,
        device,
        out_committed,
        donated,
        keepalive=result,
        placement=placement,
        shardy=shardy,
    )


def _compile_options(lowered: LoweredModule) -> Any:
    options = xla_client.CompileOptions()
    placement = lowered.placement
    devices = placement.devices if placement is not None else (lowered.device,)
    options.device_assignment = xla_client.DeviceAssignment.create(
        np.array([[d.id for d in devices]])
    )
    build = options.executable_build_options
    build.num_replicas = 1
    build.num_partitions = len(devices)
    if placement is not None:
        build.use_spmd_partitioning = True
        build.use_shardy_partitioner = lowered.shardy
        outs = placement.out_shardings
        n_out = len(lowered.out_avals)
        build.allow_spmd_sharding_propagation_to_output = (
            [True] * n_out if outs is None else [s is None for s in outs]
        )
    return options


def backend_compile_and_load(
    client: Any, module: Any, devices: Any, options: Any, host_callbacks: Sequence[Any] = ()
) -> Any:
    """Compiles ``module`` with PJRT ``client`` for ``devices``: every compile ends here."""
    if host_callbacks:
        return client.compile_and_load(module, devices, options, list(host_callbacks))
    return client.compile_and_load(module, devices, options)


_compile_function: Callable[..., Any] = backend_compile_and_load


def set_compile_function(function: Callable[..., Any] | None) -> Callable[..., Any]:
    """Routes every compile through ``function`` (None: the default); returns the previous one.

    ``function`` takes the arguments of `backend_compile_and_load` and must
    compile (usually by calling it). polyjax.as_jax routes compiles through
    ``jax._src.compiler`` with this, so that a library wrapping JAX's compile
    function (chex's ``restrict_backends``) sees polyjax's compiles.
    """
    global _compile_function
    previous = _compile_function
    _compile_function = backend_compile_and_load if function is None else function
    return previous


def log_compile(name: str, in_avals: Sequence[Any], reason: str) -> None:
    """The `jax_log_compiles` line announcing a compile: what, for which types, and why."""
    types = ", ".join(a.str_short(short_dtypes=False) for a in in_avals)
    logger.warning(
        "Compiling jit(%s) with global shapes and types (%s). Reason: %s", name, types, reason
    )


def compile_lowered(lowered: LoweredModule) -> Executable:
    """Compiles a lowered module with its device's PJRT client."""
    device = lowered.device
    placement = lowered.placement
    devices = placement.devices if placement is not None else (device,)
    t0 = time.perf_counter()
    code = mlir.module_to_bytecode(lowered.module)
    host_callbacks = list(getattr(lowered.keepalive, "host_callbacks", None) or [])
    client = device.client
    options = _compile_options(lowered)
    if host_callbacks:
        # Passed as an MLIR module, which jaxlib needs to attach the callbacks;
        # never cached (the callbacks live in this process).
        xla_exe = _compile_function(
            client, lowered.module, _jax.DeviceList(devices), options, host_callbacks
        )
    else:
        # The one place a module without host callbacks gets compiled: through
        # the persistent cache when one is set (`compilation_cache`).
        xla_exe, _ = compilation_cache.compile_or_get_cached(
            client, code, devices, options, lowered.name, compile_fn=_compile_function
        )
    monitoring.record_event_duration_secs(
        "/jax/core/compile/backend_compile_duration",
        time.perf_counter() - t0,
        fun_name=f"jit({lowered.name})",
    )
    if config.log_compiles.value:  # (also after a persistent-cache hit, as JAX logs it)
        seconds = time.perf_counter() - t0
        shapes = ", ".join(a.str_short(short_dtypes=False) for a in lowered.in_avals)
        # The structured fields let a handler (polyjax.as_jax) restate the
        # message in another wording without parsing it.
        logger.warning(
            "Finished compiling %s with input types (%s) in %.3f s",
            lowered.name,
            shapes,
            seconds,
            extra={"compiled": (lowered.name, tuple(lowered.in_avals), seconds)},
        )
    exe = (SPMDExecutable if placement is not None else Executable)(xla_exe, lowered)
    if any(type(a) is AbstractToken for a in (*lowered.in_avals, *lowered.out_avals)):
        return _TokenBoundary(exe, lowered)  # type: ignore[return-value]  # an Executable's face
    return exe


class _TokenBoundary:
    """An executable whose inputs or outputs include tokens.

    The compiled program takes and returns each token as an empty `bool[0]`
    placeholder (`mlir.lower_jaxpr_to_module`): a `Token` argument becomes the
    placeholder, a placeholder result a `Token`. Everything else is the
    wrapped executable's.
    """

    __slots__ = ("_exe", "_in_tokens", "_out_tokens", "__weakref__")
    token_boundary = True  # (jit's C++ fast path never runs it: it takes no Tokens)

    def __init__(self, exe: Executable, lowered: LoweredModule):
        self._exe = exe
        self._in_tokens = {i for i, a in enumerate(lowered.in_avals) if type(a) is AbstractToken}
        self._out_tokens = {i for i, a in enumerate(lowered.out_avals) if type(a) is AbstractToken}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._exe, name)

    def call(self, args: Sequence[Any]) -> list[Any]:
        placeholder = np.zeros((0,), bool)
        args = [placeholder if i in self._in_tokens else x for i, x in enumerate(args)]
        outs = self._exe.call(args)
        return [Token() if i in self._out_tokens else x for i, x in enumerate(outs)]

    def __call__(self, *args: Any) -> list[Any]:
        return self.call(args)


# ---------------------------------------------------------------------------
# Executables


def check_alive(x: Array, i: int | None = None) -> None:
    """Raises a clear error if ``x`` was deleted (or donated to an earlier call)."""
    if x._impl.is_deleted():
        where = "" if i is None else f" (flat argument {i})"
        raise RuntimeError(
            f"Array has been deleted with shape={x.aval.str_short(short_dtypes=False)}{where}: "
            "it was deleted with .delete() or donated to an earlier computation "
            "(donate_argnums), so its buffer is gone."
        )


def effects_barrier() -> None:
    """Waits until the effects of every computation dispatched so far have happened.

    A computation with host callbacks (prints, `io_callback`, ...) runs to
    completion before its call returns (see `Executable._execute_effectful`),
    so when this is called every effect already dispatched has happened and it
    returns at once; programs written for JAX, where effects run
    asynchronously, call it before reading what callbacks wrote.

    Example:
      >>> effects_barrier()
    """


def _set_effect_flags(exe: Executable, lowered: LoweredModule) -> None:
    result = lowered.keepalive
    exe.has_host_callbacks = bool(getattr(result, "host_callbacks", None))
    exe.ordered_effects = bool(getattr(result, "ordered_effects", False))


class Executable:
    """A compiled computation, callable on flat polyjax values.

    ``call(args)`` takes every flat input (pruned ones too), moves what must be
    moved, runs, and wraps the outputs as :class:`Array`\\ s.

    ``has_host_callbacks`` (the program calls back into Python) and
    ``ordered_effects`` (it threads a token through ordered effects) mark the
    executables a fast call path must not take: they run through `call`,
    which runs them to completion (`_execute_effectful`).
    """

    __slots__ = (
        "xla",
        "lowered",
        "name",
        "in_avals",
        "out_avals",
        "kept_var_idx",
        "device",
        "sharding",
        "out_committed",
        "_handlers",
        "_donated_idx",
        "_all_kept",
        "has_host_callbacks",
        "ordered_effects",
        "host_scalars",
        "__weakref__",
    )
    has_host_callbacks: bool
    ordered_effects: bool

    def __init__(self, xla_exe: Any, lowered: LoweredModule):
        self.xla = xla_exe
        self.lowered = lowered
        _set_effect_flags(self, lowered)
        self.name = lowered.name
        self.in_avals = [*map(mlir.boundary_aval, lowered.in_avals)]
        self.out_avals = [*map(mlir.boundary_aval, lowered.out_avals)]
        self.kept_var_idx = lowered.kept_var_idx
        self.device = lowered.device
        self.sharding: SingleDeviceSharding | None = SingleDeviceSharding(lowered.device)
        self.out_committed = lowered.out_committed
        self._handlers = [
            _jax.array_result_handler(a, self.sharding, lowered.out_committed, _skip_checks=True)
            for a in self.out_avals
        ]
        self._donated_idx = tuple(i for i, d in enumerate(lowered.donated_invars) if d)
        self._all_kept = self.kept_var_idx == tuple(range(len(self.in_avals)))
        # Inputs that are host scalars in this eager signature (set by apply_primitive).
        self.host_scalars: tuple[int, ...] = ()

    def _buffer(self, x: Any, i: int) -> Any:
        """The device buffer for flat input ``i``: ``x`` itself, moved, or transferred
        (a host scalar from the device-scalar cache)."""
        if type(x) is Array:
            impl = x._impl
            if impl._sharding._device != self.device:
                check_alive(x)
                impl = put_value(x, self.in_avals[i], self.sharding, committed=False)._impl
            return impl
        return host_scalar_or_put(x, self.in_avals[i], self.sharding)._impl

    def call(self, args: Sequence[Any]) -> list[Array]:
        """Runs on flat ``args`` (one per flat input, pruned ones included)."""
        # The hot path of every jitted call and eager op: when every input is an
        # Array, their buffers go to XLA as they are. PJRT itself checks that
        # each is on our device and alive; if not, `_buffers` redoes the inputs
        # the careful way (moving, transferring, or explaining the problem).
        if self.has_host_callbacks:
            # Never the retry below: it would run the callbacks a second time.
            results = self._execute_effectful(self._buffers(args))
        else:
            try:
                if self._all_kept:
                    bufs = [x._impl for x in args]
                else:
                    bufs = [args[i]._impl for i in self.kept_var_idx]
                results = self.xla.execute_sharded(bufs)
            except (AttributeError, _jax.JaxRuntimeError):
                results = self.xla.execute_sharded(self._buffers(args))
        outs = results.consume_with_handlers(self._handlers)
        make, committed = Array._make, self.out_committed
        result = [make(o, a, committed) for o, a in zip(outs, self.out_avals)]
        for i in self._donated_idx:
            x = args[i]
            if type(x) is Array and not x._impl.is_deleted():
                x._impl.delete()
        return result

    def _execute_effectful(self, bufs: list[Any]) -> Any:
        """Runs a program that calls back into Python, to completion.

        Calls with host callbacks are synchronous: each call's effects have
        happened when it returns (so ordered effects keep their order across
        calls, and `effects_barrier` has nothing left to wait for), and a
        callback that raised surfaces here, chained to its own exception and
        traceback, rather than later on some output.
        """
        try:
            results = self.xla.execute_sharded(bufs, with_tokens=True)
            results.consume_token().block_until_ready()
        except _jax.JaxRuntimeError as e:
            raise e from mlir.pop_callback_error()
        return results

    def _buffers(self, args: Sequence[Any]) -> list[Any]:
        """The input buffers, each checked: moved or transferred to our device as needed."""
        bufs = []
        for i in self.kept_var_idx:
            x = args[i]
            if type(x) is Array:
                check_alive(x, i)
            bufs.append(self._buffer(x, i))
        return bufs

    def __call__(self, *args: Any) -> list[Array]:
        return self.call(args)


def _output_shardings(xla_exe: Any, lowered: LoweredModule) -> list[Any]:
    """The sharding of each output: the explicit one, else what the partitioner chose.

    A chosen ``HloSharding`` becomes a sharding of the kind the user gave (the
    first explicit or input sharding with a ``_from_hlo_sharding`` hook, e.g. a
    NamedSharding over the same mesh), else a :class:`GSPMDSharding`.
    """
    placement = lowered.placement
    assert placement is not None  # an SPMD program was lowered with its placement
    devices = placement.devices
    explicit = placement.out_shardings or (None,) * len(lowered.out_avals)
    if all(s is not None for s in explicit):
        return [_with_reductions(s, a) for s, a in zip(explicit, lowered.out_avals)]
    chosen = xla_exe.get_output_shardings()
    ref = placement.namer
    out = []
    for s, op, aval in zip(explicit, chosen, lowered.out_avals):
        if s is not None:
            out.append(s)
            continue
        hlo = xla_client.HloSharding.from_proto(op)
        if ref is None:
            out.append(GSPMDSharding(devices, hlo))
        else:
            hlo = mlir._remap_hlo(hlo, devices, ref._device_assignment)
            out.append(ref._from_hlo_sharding(hlo, len(aval.shape)))
    return [_with_reductions(s, a) for s, a in zip(out, lowered.out_avals)]


def _with_reductions(sharding: Any, aval: Any) -> Any:
    """An output typed unreduced/reduced (explicit mode) keeps those axes in its
    array's sharding, hence its type. Its buffers hold the full value: a program's
    results are always reduced on the way out (docs/explicit-sharding.md)."""
    typed = getattr(aval, "aval_sharding", None)
    spec = getattr(sharding, "spec", None)
    if typed is None or spec is None or not (typed.unreduced or typed.reduced):
        return sharding
    if (spec.unreduced, spec.reduced) == (typed.unreduced, typed.reduced):
        return sharding
    return spec_to_sharding(
        spec.update(unreduced=typed.unreduced, reduced=typed.reduced), sharding.mesh
    )


class SPMDExecutable(Executable):
    """A compiled program over several devices (see :class:`Placement`).

    ``in_shardings`` and ``out_shardings`` hold one sharding per flat input and
    output. An input laid out otherwise is moved first (device to device).
    """

    __slots__ = ("in_shardings", "out_shardings")

    def __init__(self, xla_exe: Any, lowered: LoweredModule):
        placement = lowered.placement
        assert placement is not None  # an SPMD program was lowered with its placement
        self.xla = xla_exe
        self.lowered = lowered
        _set_effect_flags(self, lowered)
        self.name = lowered.name
        self.in_avals = [*map(mlir.boundary_aval, lowered.in_avals)]
        self.out_avals = [*map(mlir.boundary_aval, lowered.out_avals)]
        self.kept_var_idx = lowered.kept_var_idx
        self.device = placement.devices[0]
        self.sharding = None
        self.out_committed = placement.committed
        self.in_shardings = placement.in_shardings
        self.out_shardings = tuple(_output_shardings(xla_exe, lowered))
        self._handlers = [
            _jax.array_result_handler(a, s, placement.committed, _skip_checks=True)
            for a, s in zip(self.out_avals, self.out_shardings)
        ]
        self._donated_idx = tuple(i for i, d in enumerate(lowered.donated_invars) if d)
        self._all_kept = self.kept_var_idx == tuple(range(len(self.in_avals)))
        self.host_scalars = ()

    def call(self, args: Sequence[Any]) -> list[Array]:
        shardings, avals = self.in_shardings, self.in_avals
        bufs = []
        for i in self.kept_var_idx:
            x, s = args[i], shardings[i]
            if type(x) is Array:
                impl = x._impl
                if impl.is_deleted():  # (PJRT aborts on a deleted sharded buffer)
                    check_alive(x, i)
                own = impl._sharding
                if own is not s and own != s:
                    impl = put_value(x, avals[i], s, committed=True)._impl
                bufs.append(impl)
            else:
                bufs.append(put_value(x, avals[i], s, committed=True)._impl)
        if self.has_host_callbacks:
            results = self._execute_effectful(bufs)
        else:
            results = self.xla.execute_sharded(bufs)
        outs = results.consume_with_handlers(self._handlers)
        make, committed = Array._make, self.out_committed
        result = [make(o, a, committed) for o, a in zip(outs, self.out_avals)]
        for i in self._donated_idx:
            x = args[i]
            if type(x) is Array and not x._impl.is_deleted():
                x._impl.delete()
        return result


# ---------------------------------------------------------------------------
# Resharding between layouts on the same devices


@functools.lru_cache(maxsize=1024)
def _reshard_executable(aval: ShapedArray, src: Any, dst: Any) -> SPMDExecutable:
    devices = tuple(dst._device_assignment)
    debug = DebugInfo("reshard", "reshard", ("x",))
    closed = trace_to_jaxpr(lambda x: [x], [aval], debug)
    placement = Placement(devices, (src,), (dst,), True)
    lowered = lower_jaxpr(
        closed, name="reshard", device=devices[0], out_committed=True, placement=placement
    )
    return compile_lowered(lowered)  # type: ignore[return-value]  # placed: an SPMDExecutable


def _reshard(impl: Any, aval: ShapedArray, dst: Any) -> Any:
    """``impl`` laid out as ``dst`` over the same devices, by an SPMD copy program."""
    devices = tuple(dst._device_assignment)
    src = _in_order(impl._sharding, devices, len(aval.shape))
    if src is not impl._sharding:
        impl = _array._reorder(impl, aval, src)
    exe = _reshard_executable(aval, src, dst)
    (out,) = exe.xla.execute_sharded([impl]).consume_with_handlers(exe._handlers)
    return out


_array._set_resharder(_reshard)


# ---------------------------------------------------------------------------
# Eager execution of one primitive


class _LRU:
    """A small thread-safe LRU dict (eager executables, one per primitive signature)."""

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self._d: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        d = self._d
        value = d.get(key)
        # Least recently *used* goes first; the order only matters once eviction
        # is near (half full), so hits skip this upkeep before that.
        if value is not None and len(d) > self.maxsize // 2:
            try:
                d.move_to_end(key)
            except KeyError:  # evicted by another thread meanwhile
                pass
        return value

    def put(self, key: Any, value: Any) -> Any:
        with self._lock:
            old = self._d.get(key)
            if old is not None:
                return old
            self._d[key] = value
            if len(self._d) > self.maxsize:
                self._d.popitem(last=False)
            return value

    def clear(self) -> None:
        with self._lock:
            self._d.clear()

    def __len__(self) -> int:
        return len(self._d)


_eager_cache = _LRU(maxsize=4096)
_eager_lock = threading.RLock()

# Host scalars on their way into a computation (``x * 2.0``, ``jit(f)(x, 1)``),
# already on a device: one transfer per distinct value, type and placement, not
# one per call. Keyed by the value's bytes (so -0.0 and NaNs stay exact).
_device_scalars = _LRU(maxsize=1024)


def device_scalar(value: int | float, aval: ShapedArray, sharding: Any) -> Array:
    """Python scalar ``value`` as an uncommitted rank-0 Array of type ``aval`` on
    ``sharding``'s device, from the device-scalar cache (``x * 2.0`` outside jit)."""
    # 0.0 == -0.0 (and hash alike): the sign joins the key for zeros.
    key = (aval, sharding, type(value), value, value == 0 and math.copysign(1.0, value))
    out = _device_scalars.get(key)
    if out is None:
        host = np.asarray(value, dtype=aval.dtype)
        out = _device_scalars.put(key, put_value(host, aval, sharding, committed=False))
    return out


def host_scalar_or_put(x: Any, aval: ShapedArray, sharding: Any) -> Array:
    """Host value ``x`` on the devices of ``sharding`` as type ``aval`` (uncommitted);
    scalars come from a cache of device scalars."""
    if aval.shape != ():
        return put_value(x, aval, sharding, committed=False)
    host = np.asarray(x, dtype=aval.dtype)
    key = (aval, host.tobytes(), sharding)
    out = _device_scalars.get(key)
    if out is None:
        out = _device_scalars.put(key, put_value(host, aval, sharding, committed=False))
    return out


def arg_signature(x: Any) -> Any:
    """What an argument contributes to a dispatch cache key: its type, placement and commitment."""
    t = type(x)
    if t is Array:
        return (x.aval, x._impl._sharding, x._committed)
    if t is np.ndarray:
        return (t, x.dtype, x.shape)
    if t in _SCALAR_TYPES:
        return t
    return get_aval(x)


_SCALAR_TYPES = frozenset({bool, int, float, complex})


def apply_primitive(prim: Primitive, *args: Any, **params: Any) -> Any:
    """Evaluates a primitive on concrete values with a cached one-primitive executable.

    This is the ``impl`` of every lax primitive: ``prim.def_impl(partial(apply_primitive,
    prim))``. The executable is compiled once per (primitive, params, input types,
    placement, config context) and reused.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy import lax
      >>> apply_primitive(lax.sin_p, np.float32(0.5), accuracy=None)
      Array(0.47942555, dtype=float32)
    """
    try:
        key = (prim, tuple(params.items()), config.trace_context(), *map(arg_signature, args))
        exe = _eager_cache.get(key)
    except TypeError:  # an unhashable param: compile without caching
        key, exe = None, None
    if exe is None:
        exe = _compile_primitive(prim, params, args, key)
    # Host scalars come from the device-scalar cache (no transfer per call).
    outs = exe.call(_with_device_scalars(exe, args) if exe.host_scalars else args)
    return outs if prim.multiple_results else outs[0]


def _with_device_scalars(exe: Executable, args: Sequence[Any]) -> list[Any]:
    out = list(args)
    for i in exe.host_scalars:
        sharding = exe.sharding if exe.sharding is not None else exe.in_shardings[i]  # type: ignore[attr-defined]  # no single sharding: an SPMDExecutable
        out[i] = host_scalar_or_put(out[i], exe.in_avals[i], sharding)
    return out


def _compile_primitive(prim: Primitive, params: dict, args: tuple, key: Any) -> Executable:
    with _eager_lock:  # compile each signature once, even when threads race on it
        if key is not None:
            exe = _eager_cache.get(key)
            if exe is not None:
                return exe
        _guards.check_tracing_allowed(prim.name, "for an eager operation")
        _guards.check_execution_allowed(f"jit({prim.name})")
        avals = [get_aval(x) for x in args]
        if config.log_compiles.value:
            log_compile(prim.name, avals, "the first eager call with these types and parameters")

        def one_primitive(*xs: Any) -> list[Any]:
            out = prim.bind(*xs, **params)
            return list(out) if prim.multiple_results else [out]

        debug = DebugInfo("eager", prim.name, tuple(f"args[{i}]" for i in range(len(args))))
        closed = trace_to_jaxpr(one_primitive, avals, debug)
        if discharge.has_state(closed):
            exe = _compile_with_refs(prim, closed, args)
            return exe if key is None else _eager_cache.put(key, exe)
        # A body (e.g. of `scan`) may hold a sharding that decides the devices.
        placement = spmd_placement(args, fun_name=prim.name, body_shardings=body_shardings(closed))
        if placement is None:
            device, committed = arg_placement(args, fun_name=prim.name)
        else:
            device, committed = placement.devices[0], True
        lowered = lower_jaxpr(
            closed,
            name=prim.name,
            device=device,
            out_committed=committed,
            keep_unused=True,
            placement=placement,
        )
        exe = compile_lowered(lowered)
        exe.host_scalars = tuple(
            i for i, x in enumerate(args) if type(x) is not Array and np.ndim(x) == 0
        )
        exe = _debug_nans.maybe_checked(exe, prim.name)
        return exe if key is None else _eager_cache.put(key, exe)


def _compile_with_refs(prim: Primitive, closed: ClosedJaxpr, args: tuple) -> Any:
    """The eager executable of a primitive reading or writing references."""
    values = [a._value if type(a) is Ref else a for a in args]
    device, committed = arg_placement(values, fun_name=prim.name)

    def compile_pure(pure: ClosedJaxpr, donate: tuple[bool, ...]) -> Executable:
        lowered = lower_jaxpr(
            pure,
            name=prim.name,
            device=device,
            out_committed=committed,
            donated_invars=donate,
            keep_unused=True,
        )
        return compile_lowered(lowered)

    return discharge.compile_with_refs(closed, compile_pure)


def clear_eager_cache() -> None:
    """Drops every cached one-primitive executable and device scalar."""
    _eager_cache.clear()
    _device_scalars.clear()
