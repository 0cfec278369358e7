"""Lowering jaxprs to StableHLO: the bridge from traced programs to XLA.

`lower_jaxpr_to_module(closed_jaxpr, ...)` turns a `ClosedJaxpr` into an MLIR
module whose public `func.func @main` takes the jaxpr's inputs and returns its
outputs:

    module @jit_f attributes {mhlo.num_partitions = 1 : i32, ...} {
      func.func public @main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = ...}) {
        %0 = stablehlo.sine %arg0 : tensor<3xf32>  loc("f.py":12:0)
        return %0 : tensor<3xf32>
      }
    }

Each equation is lowered by the *lowering rule* registered for its primitive
(`register_lowering`), looked up first in the table of the platform being
compiled for and then in the default table. A rule receives a
`LoweringRuleContext` (input/output avals, platform, module context, values of
the dimension variables) and the `ir.Value`s of the inputs, emits StableHLO
ops at the current insertion point and returns the output values.

Shape polymorphism (ARCHITECTURE decision 4): when input shapes hold symbolic
dimensions, each dimension variable becomes a leading `tensor<i32>` argument of
`main` (and of every private function), sorted by name; tensor types use `?` for
symbolic sizes, and the helpers `eval_dynamic_shape`, `shape_tensor`,
`broadcast_in_dim`, `reshape`, `iota` and `full_like_aval` compute sizes from
those arguments and emit the dynamic StableHLO ops. The module can then be
specialized to static shapes with `jaxlib._jax.mlir.refine_polymorphic_shapes`.

Sub-jaxprs called with `call_jaxpr` are lowered once per module as private
functions; every op carries the user's `file:line` as its location.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import itertools
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import ml_dtypes
import numpy as np
from jaxlib import _jax, xla_client
from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jaxlib.mlir.dialects import chlo, func, sdy
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes, symbolic_dims
from polyjax_core import effects as core_effects
from polyjax_core import source_info as si
from polyjax_core.abstract_values import AbstractToken, AbstractValue, ShapedArray
from polyjax_core.aval_sharding import concrete_mesh_for
from polyjax_core.jaxpr import ClosedJaxpr, DropVar, Jaxpr, Literal
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.mesh_context import spec_to_sharding
from polyjax_core.rules import RuleTable
from polyjax_core.symbolic_dims import DimExpr
from polyjax_interpreters import _mlir_dims

__all__ = [
    "LoweringResult",
    "LoweringRuleContext",
    "ModuleContext",
    "aval_to_ir_type",
    "boundary_aval",
    "broadcast_in_dim",
    "call_jaxpr",
    "compare_hlo",
    "convert_hlo",
    "emit_python_callback",
    "has_ordered_effects",
    "isolated_token",
    "pop_callback_error",
    "token_type",
    "dtype_to_ir_type",
    "eval_dynamic_shape",
    "extend_name_stack",
    "full_like_aval",
    "iota",
    "ir_constant",
    "jaxpr_subcomp",
    "lower_fun",
    "lower_jaxpr_to_module",
    "lowering_rules",
    "make_ir_context",
    "module_to_bytecode",
    "module_to_string",
    "register_lowering",
    "reshape",
    "shape_tensor",
]

LoweringRule = Callable[..., Any]

# ---------------------------------------------------------------------------
# The MLIR context: one per thread, reused across lowerings.
#
# Creating and loading a context costs ~4.5 ms, more than lowering a small
# function, so each thread keeps one. A context never frees the attributes it
# interns (the data of every constant embedded in a module), so after a lot of
# constant data the thread starts a fresh one; old modules keep the old
# context alive as long as they live.

_CONTEXT_CONSTANT_BYTES_LIMIT = 1 << 28  # 256 MiB of constants per context

_thread_pool: Any = None
_thread_pool_lock = threading.Lock()


def _shared_thread_pool() -> Any:
    # One thread pool for every context (a context otherwise creates its own
    # threads); it also keeps each context's uniquing tables thread-safe.
    global _thread_pool
    if _thread_pool is None:
        with _thread_pool_lock:
            if _thread_pool is None:
                _thread_pool = ir.ThreadPool()
    return _thread_pool


def _new_context() -> ir.Context:
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx = ir.Context()
    ctx.enable_multithreading(False)
    ctx.set_thread_pool(_shared_thread_pool())
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    hlo.register_dialect(ctx)
    chlo.register_dialect(ctx)
    sdy.register_dialect(ctx)
    return ctx


class _ThreadState(threading.local):
    context: ir.Context | None = None
    constant_bytes: int = 0
    types: dict | None = None  # caches of ir types, valid for `context` only


_state = _ThreadState()


def make_ir_context() -> ir.Context:
    """The MLIR context of this thread, with every dialect polyjax emits loaded.

    The context is created on first use in a thread and reused afterwards
    (building one costs milliseconds). It has the upstream dialects (`func`,
    `arith`, `tensor`...) plus `stablehlo`, `chlo` and `sdy`.

    Returns:
      An `ir.Context`. Use it with `with ctx, ir.Location.unknown(): ...`.
    """
    ctx = _state.context
    if ctx is None or _state.constant_bytes > _CONTEXT_CONSTANT_BYTES_LIMIT:
        ctx = _state.context = _new_context()
        _state.constant_bytes = 0
        _state.types = {}
    return ctx


def _type_cache() -> dict:
    """The ir-type cache of the current context (a throwaway one for foreign contexts)."""
    if _state.context is not None and ir.Context.current is _state.context:
        return _state.types  # type: ignore[return-value]  # set along with `context`
    return {}


# ---------------------------------------------------------------------------
# Lowering rule tables

# Rule tables like those of the other transformations (ARCHITECTURE decision 3); the
# lookup (`_find_rule`) reports a missing rule with the platform and the user's line.
_default_lowerings: RuleTable = RuleTable("MLIR lowering")
_platform_lowerings: dict[str, RuleTable] = {}

# Platform names that stand for several backends' platform names.
_PLATFORM_ALIASES: dict[str, tuple[str, ...]] = {"gpu": ("cuda", "rocm")}


def _canonical_platforms(platform: str) -> tuple[str, ...]:
    platform = platform.lower()
    return _PLATFORM_ALIASES.get(platform, (platform,))


# Custom-call targets bound lazily (jaxlib's LAPACK kernels are bound at their first
# use): a module that names one, lowered here or deserialized (export), must have it
# bound before it compiles. Target-name prefix -> the function that binds them.
_custom_call_initializers: dict[str, Callable[[], None]] = {}


def register_custom_call_initializer(prefix: str, initialize: Callable[[], None]) -> None:
    """Registers ``initialize`` to run before compiling a module naming a target ``prefix*``."""
    _custom_call_initializers[prefix] = initialize


def initialize_custom_call_targets(module_text: bytes) -> None:
    """Binds every lazily bound custom-call target that ``module_text`` (any form) names."""
    for prefix, initialize in _custom_call_initializers.items():
        if prefix.encode() in module_text:
            initialize()


def register_lowering(prim: Any, rule: LoweringRule, platform: str | None = None) -> LoweringRule:
    """Registers the StableHLO lowering rule of a primitive.

    Args:
      prim: the `Primitive`.
      rule: `rule(ctx: LoweringRuleContext, *args: ir.Value, **params) ->
        Sequence[ir.Value]`, one value per output. For a primitive with
        `multiple_results=False` a bare `ir.Value` may be returned.
      platform: `None` for the default rule, or a platform name (`"cpu"`,
        `"cuda"`, `"rocm"`, `"tpu"`; `"gpu"` means both `cuda` and `rocm`).
        A platform rule wins over the default one.

    Returns:
      `rule`, so this can be used as a decorator body.

    Example:
      >>> from jaxlib.mlir.dialects import stablehlo as hlo
      >>> from polyjax_core.primitive import Primitive
      >>> my_sin_p = Primitive("my_sin")
      >>> rule = register_lowering(my_sin_p, lambda ctx, x: [hlo.sine(x)])
    """
    if platform is None:
        _default_lowerings[prim] = rule
    else:
        for p in _canonical_platforms(platform):
            _platform_lowerings.setdefault(p, RuleTable(f"MLIR lowering ({p})"))[prim] = rule
    return rule


def lowering_rules(platform: str | None = None) -> dict[Any, LoweringRule]:
    """A copy of the rule table of `platform` (the default table for `None`)."""
    if platform is None:
        return dict(_default_lowerings)
    return dict(_platform_lowerings.get(platform.lower(), {}))


def _find_rule(prim: Any, platforms: Sequence[str], source_info: Any) -> LoweringRule:
    rules = []
    for platform in platforms:
        rule = _platform_lowerings.get(platform, {}).get(prim) or _default_lowerings.get(prim)
        if rule is None:
            where = ""
            if source_info is not None and si.user_frame(source_info) is not None:
                where = f" (for the operation at {si.summarize(source_info)})"
            raise NotImplementedError(
                f"MLIR lowering rule for primitive '{prim}' not found for platform "
                f"'{platform}'{where}."
            )
        rules.append(rule)
    if any(r is not rules[0] for r in rules[1:]):
        return _per_platform_rule(prim, tuple(platforms), rules)
    return rules[0]


# The leading argument that holds the index of the platform a multi-platform module
# runs on (into `ModuleContext.platforms`), as JAX's export names it.
PLATFORM_INDEX = "_platform_index"


def platform_index_value(ctx: LoweringRuleContext) -> ir.Value | None:
    """The `tensor<i32>` index into the module's platforms; None for a single-platform module."""
    if len(ctx.module_context.platforms) == 1:
        return None
    try:
        return ctx.dim_var_values[PLATFORM_INDEX]
    except KeyError:
        raise NotImplementedError(
            f"Lowering for several platforms {ctx.module_context.platforms} needs the platform "
            f"index as a leading '{PLATFORM_INDEX}' argument (as export passes it)."
        ) from None


def case_on_platform(
    ctx: LoweringRuleContext,
    branch_of_platform: Sequence[int],
    result_types: Sequence[ir.Type],
    emit: Callable[[int], Sequence[ir.Value]],
) -> list[ir.Value]:
    """A `stablehlo.case` choosing, by the module's platform index, among emitted branches.

    Args:
      ctx: the rule context (its module has several platforms).
      branch_of_platform: for each module platform, the branch it runs.
      result_types: the types of the results.
      emit: ``emit(k)`` emits branch ``k`` at the current insertion point.
    """
    index = platform_index_value(ctx)
    n = max(branch_of_platform) + 1
    if index is None or n == 1:
        return list(emit(branch_of_platform[0] if index is None else 0))
    if list(branch_of_platform) != list(range(len(branch_of_platform))):
        remap = hlo.CaseOp([index.type], index, len(branch_of_platform))
        for i, k in enumerate(branch_of_platform):
            with ir.InsertionPoint(remap.regions[i].blocks.append()):
                hlo.return_([_i32_constant(k)])
        index = remap.result
    case = hlo.CaseOp(list(result_types), index, n)
    for k in range(n):
        with ir.InsertionPoint(case.regions[k].blocks.append()):
            hlo.return_(list(emit(k)))
    return list(case.results)


def _per_platform_rule(
    prim: Any, platforms: tuple[str, ...], rules: Sequence[LoweringRule]
) -> LoweringRule:
    """A rule that lowers with each platform's rule inside a case on the platform index."""
    distinct: list[LoweringRule] = []
    for r in rules:
        if all(r is not d for d in distinct):
            distinct.append(r)
    branch_of = [next(k for k, d in enumerate(distinct) if d is r) for r in rules]
    first_platform = [platforms[branch_of.index(k)] for k in range(len(distinct))]

    def rule(ctx: LoweringRuleContext, *args: ir.Value, **params: Any) -> list[ir.Value]:
        types = [aval_to_ir_type(a) for a in ctx.avals_out]

        def emit(k: int) -> list[ir.Value]:
            out = distinct[k](ctx.replace(platform=first_platform[k]), *args, **params)
            return list(_rule_outputs(prim, out, len(ctx.avals_out)))

        return case_on_platform(ctx, branch_of, types, emit)

    return rule


# ---------------------------------------------------------------------------
# Contexts


@dataclasses.dataclass(eq=False)
class ModuleContext:
    """What every lowering rule of one module shares.

    Attributes:
      context: the `ir.Context` the module lives in.
      module: the `ir.Module` being built.
      symbol_table: the module's `ir.SymbolTable` (inserting renames clashes).
      platforms: the platforms lowered for, e.g. `("cpu",)`.
      backend_platform: the platform of the backend that will compile it.
      axis_context: sharding/axis information for collectives; `None` for a
        single-device module (filled in by polyjax-sharding).
      num_devices: the number of devices the module runs on.
      cached_calls: private functions already emitted for sub-jaxprs, by
        (jaxpr identity, consts identities, name).
      host_callbacks: Python callbacks the executable must be given.
      keepalives: objects that must live as long as the executable.
      dim_vars: names of the dimension variables (leading args of functions).
      device_assignment: the devices of an SPMD module, in the order XLA
        numbers them (logical ids); empty for a single-device module.
      device: the device a single-device module runs on, when the caller says
        (rules that report placement, e.g. `debug.inspect_array_sharding`).
      shardy: whether shardings are emitted as Shardy (`sdy`) attributes
        rather than GSPMD `mhlo.sharding` strings.
      token: the `!stablehlo.token` that orders the ordered effects of the
        function (or region) being emitted; None where it has none. Every
        ordered effect consumes it and leaves its successor here, so effects
        happen in program order (see `emit_python_callback`). A region or
        private function whose jaxpr has ordered effects takes the token in
        and hands the final one back out (`while`, `case`, `call_jaxpr`).
    """

    context: ir.Context
    module: ir.Module
    symbol_table: ir.SymbolTable
    platforms: tuple[str, ...]
    backend_platform: str | None = None
    axis_context: Any = None
    num_devices: int = 1
    cached_calls: dict = dataclasses.field(default_factory=dict)
    host_callbacks: list = dataclasses.field(default_factory=list)
    keepalives: list = dataclasses.field(default_factory=list)
    dim_vars: tuple[str, ...] = ()
    device_assignment: tuple[Any, ...] = ()
    shardy: bool = True
    token: ir.Value | None = None
    name_stack: tuple[str, ...] = ()
    device: Any = None
    _locations: dict = dataclasses.field(default_factory=dict)
    _rules: dict = dataclasses.field(default_factory=dict)  # primitive -> rule found
    _meshes: dict = dataclasses.field(default_factory=dict)  # (axes, ids) -> symbol
    _known_meshes: list = dataclasses.field(default_factory=list)  # (axes, ids) in use

    def mesh_symbol(
        self, axes: Sequence[tuple[str, int]], logical_ids: Sequence[int] | None = None
    ) -> str:
        """The symbol of an `sdy.mesh` with these axes, declared in the module on first use.

        This is the lowering's axis-context hook: it knows axis names, sizes and
        device order, not any sharding class.

        Args:
          axes: ``(name, size)`` of each mesh axis, major to minor.
          logical_ids: the logical device id (position in the device assignment)
            at each mesh position, row-major; ``None`` for the identity order.
        """
        axes = tuple((str(n), int(k)) for n, k in axes)
        ids = None if logical_ids is None else tuple(int(i) for i in logical_ids)
        if ids is not None and ids == tuple(range(len(ids))):
            ids = None
        key = (axes, ids)
        name = self._meshes.get(key)
        if name is None:
            name = "mesh" if not self._meshes else f"mesh_{len(self._meshes)}"
            self._meshes[key] = name
            body = ", ".join(f'"{n}"={k}' for n, k in axes)
            extra = "" if ids is None else f", device_ids=[{', '.join(map(str, ids))}]"
            attr = ir.Attribute.parse(f"#sdy.mesh<[{body}]{extra}>")
            with ir.InsertionPoint.at_block_begin(self.module.body), ir.Location.unknown():
                op = sdy.MeshOp(name, attr)
            self.symbol_table.insert(op)
        return name

    def location(self, source_info: Any, name: str) -> ir.Location:
        """The location of an op named `name` created at `source_info`."""
        # Keyed by identity (core memoizes SourceInfo objects, and hashing the
        # dataclass costs more); the entry keeps `source_info` alive and checks it.
        key = (id(source_info), name, self.name_stack)
        entry = self._locations.get(key)
        if entry is None or entry[0] is not source_info:
            entry = self._locations[key] = (
                source_info,
                _make_location(source_info, name, self.name_stack),
            )
        return entry[1]


@contextlib.contextmanager
def extend_name_stack(ctx: LoweringRuleContext, name: str) -> Iterator[None]:
    """Names the ops lowered inside after the equation's scopes, then ``name``.

    For call-like primitives (`jit`): their body's ops are named
    ``<module names>/<call site's scopes>/name/<body's scopes>/<primitive>``.
    """
    mctx = ctx.module_context
    saved = mctx.name_stack
    stack = ctx.source_info.name_stack if ctx.source_info is not None else ()
    mctx.name_stack = (*saved, *stack, name)
    try:
        yield
    finally:
        mctx.name_stack = saved


def _make_location(source_info: Any, name: str, prefix: tuple[str, ...] = ()) -> ir.Location:
    frame = si.user_frame(source_info) if source_info is not None else None
    stack = (*prefix, *source_info.name_stack) if source_info is not None else prefix
    full_name = "/".join((*stack, name)) if name else "/".join(stack)
    child: ir.Location
    if frame is None:
        child = ir.Location.unknown()
    else:
        # A name location around the file location prints like JAX's:
        # loc("jit(f)/sin"("f.py":12:0)); the Python frame records no column.
        child = ir.Location.file(frame.file_name, frame.line, 0)
    return ir.Location.name(full_name, childLoc=child) if full_name else child


class LoweringRuleContext:
    """What a lowering rule knows about the equation it lowers.

    Attributes:
      module_context: the `ModuleContext` of the module being built.
      primitive: the primitive lowered (None for helper code).
      avals_in: the abstract values of the inputs.
      avals_out: the abstract values of the outputs.
      platform: the platform lowered for.
      dim_var_values: dimension variable name -> its `tensor<i32>` value.
      source_info: the user's source info of the equation.
    """

    __slots__ = (
        "module_context",
        "primitive",
        "avals_in",
        "avals_out",
        "platform",
        "dim_var_values",
        "source_info",
    )

    def __init__(
        self,
        module_context: ModuleContext,
        primitive: Any,
        avals_in: Sequence[AbstractValue],
        avals_out: Sequence[AbstractValue],
        platform: str | None = None,
        dim_var_values: dict[str, ir.Value] | None = None,
        source_info: Any = None,
    ):
        self.module_context = module_context
        self.primitive = primitive
        self.avals_in = avals_in
        self.avals_out = avals_out
        self.platform = platform if platform is not None else module_context.platforms[0]
        self.dim_var_values = dim_var_values if dim_var_values is not None else {}
        self.source_info = source_info

    def replace(self, **changes: Any) -> LoweringRuleContext:
        """A copy with some attributes replaced."""
        fields = {k: getattr(self, k) for k in self.__slots__}
        fields.update(changes)
        return LoweringRuleContext(**fields)

    def __repr__(self) -> str:
        return (
            f"LoweringRuleContext(primitive={self.primitive}, avals_in={self.avals_in}, "
            f"avals_out={self.avals_out}, platform={self.platform!r})"
        )


@dataclasses.dataclass
class LoweringResult:
    """What `lower_jaxpr_to_module` returns.

    Attributes:
      module: the `ir.Module`, with a public `@main`.
      keepalives: objects to keep alive as long as the compiled executable.
      host_callbacks: callbacks to pass to `compile_and_load`.
      dim_vars: the names of the leading dimension-variable arguments of main.
      ordered_effects: whether main threads a token through ordered effects
        (its executable must then run each call to completion, in order).
    """

    module: ir.Module
    keepalives: list
    host_callbacks: list
    dim_vars: tuple[str, ...] = ()
    ordered_effects: bool = False


# ---------------------------------------------------------------------------
# Types


def _element_type_factories() -> dict[np.dtype, Callable[[], ir.Type]]:
    f: dict[np.dtype, Callable[..., ir.Type]] = {
        np.dtype(np.bool_): lambda: ir.IntegerType.get_signless(1),
        np.dtype(np.float16): ir.F16Type.get,
        np.dtype(np.float32): ir.F32Type.get,
        np.dtype(np.float64): ir.F64Type.get,
        np.dtype(ml_dtypes.bfloat16): ir.BF16Type.get,
        np.dtype(np.complex64): lambda: ir.ComplexType.get(ir.F32Type.get()),
        np.dtype(np.complex128): lambda: ir.ComplexType.get(ir.F64Type.get()),
    }
    for bits in (8, 16, 32, 64):
        f[np.dtype(f"int{bits}")] = lambda b=bits: ir.IntegerType.get_signless(b)
        f[np.dtype(f"uint{bits}")] = lambda b=bits: ir.IntegerType.get_unsigned(b)
    for name, bits in (("int1", 1), ("int2", 2), ("int4", 4)):
        if hasattr(ml_dtypes, name):
            f[np.dtype(getattr(ml_dtypes, name))] = lambda b=bits: ir.IntegerType.get_signless(b)
        if hasattr(ml_dtypes, "u" + name):
            f[np.dtype(getattr(ml_dtypes, "u" + name))] = lambda b=bits: (
                ir.IntegerType.get_unsigned(b)
            )
    small_floats = {
        "float8_e4m3fn": "Float8E4M3FNType",
        "float8_e4m3fnuz": "Float8E4M3FNUZType",
        "float8_e4m3b11fnuz": "Float8E4M3B11FNUZType",
        "float8_e5m2": "Float8E5M2Type",
        "float8_e5m2fnuz": "Float8E5M2FNUZType",
        "float8_e4m3": "Float8E4M3Type",
        "float8_e3m4": "Float8E3M4Type",
        "float8_e8m0fnu": "Float8E8M0FNUType",
        "float4_e2m1fn": "Float4E2M1FNType",
        "float6_e2m3fn": "Float6E2M3FNType",
        "float6_e3m2fn": "Float6E3M2FNType",
    }
    for np_name, ir_name in small_floats.items():
        if hasattr(ml_dtypes, np_name) and hasattr(ir, ir_name):
            f[np.dtype(getattr(ml_dtypes, np_name))] = getattr(ir, ir_name).get
    # float0 (tangents of integers) has no data; JAX lowers it as a bool.
    f[dtypes.float0] = lambda: ir.IntegerType.get_signless(1)
    return f


_ELEMENT_TYPES = _element_type_factories()
_DYNAMIC = ir.ShapedType.get_dynamic_size()


def dtype_to_ir_type(dtype: Any) -> ir.Type:
    """The MLIR element type of a dtype: `float32` -> `f32`, `bool` -> `i1`, `uint8` -> `ui8`.

    Must be called with an active `ir.Context`.

    Raises:
      TypeError: the dtype has no StableHLO element type.
    """
    cache = _type_cache()
    key = ("dtype", dtype)
    t = cache.get(key)
    if t is None:
        try:
            factory = _ELEMENT_TYPES[np.dtype(dtype)]
        except (KeyError, TypeError):
            raise TypeError(f"No StableHLO element type for dtype {dtype!r}.") from None
        t = cache[key] = factory()
    return t


def _dims_to_ir(shape: Sequence[Any]) -> list[int]:
    return [
        d if type(d) is int else (_DYNAMIC if isinstance(d, DimExpr) else int(d)) for d in shape
    ]


def aval_to_ir_type(aval: AbstractValue) -> ir.Type:
    """The MLIR tensor type of an abstract value; symbolic dimensions become `?`.

    A token's type (`AbstractToken`) is `!stablehlo.token`.

    Example:
      `ShapedArray((b, 3), float32)` -> `tensor<?x3xf32>`.
    """
    if type(aval) is AbstractToken:
        return token_type()
    cache = _type_cache()
    key = ("aval", aval.shape, aval.dtype)
    t = cache.get(key)
    if t is None:
        if not isinstance(aval, ShapedArray):
            raise TypeError(f"No MLIR type for abstract value {aval!r}.")
        t = cache[key] = ir.RankedTensorType.get(
            _dims_to_ir(aval.shape), dtype_to_ir_type(aval.dtype)
        )
    return t


def _scalar_i32_type() -> ir.Type:
    cache = _type_cache()
    t = cache.get("i32[]")
    if t is None:
        t = cache["i32[]"] = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    return t


# ---------------------------------------------------------------------------
# Constants


def scalar_attribute(value: Any, api: str) -> ir.Attribute:
    """The MLIR attribute of a Python or NumPy scalar (a bool, str, int or float), as
    custom calls' backend configs and composites' attributes take them.

    Raises:
      TypeError: ``value`` is of another type; the message names ``api``.
    """
    if isinstance(value, bool | np.bool_):
        return ir.BoolAttr.get(bool(value))
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    if isinstance(value, int):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
    if isinstance(value, float):
        return ir.FloatAttr.get(ir.F64Type.get(), value)
    if isinstance(value, np.generic):
        ir_type = dtype_to_ir_type(value.dtype)
        if value.dtype.kind in "iu":
            return ir.IntegerAttr.get(ir_type, int(value))
        return ir.FloatAttr.get(ir_type, float(value))
    raise TypeError(f"{api}: unsupported attribute value {value!r} of type {type(value)}.")


def _dense_attr(x: np.ndarray) -> ir.DenseElementsAttr:
    """A DenseElementsAttr holding `x` (a splat when all elements are equal)."""
    elt = dtype_to_ir_type(x.dtype)
    shape = x.shape
    # Strided views (`q[::2]`, `q[::-1]`, Fortran order) are copied to C order first:
    # the bytes are reinterpreted below, and the attribute reads a C-ordered buffer.
    x = np.ascontiguousarray(x)
    if x.size > 1:
        flat = x.reshape(-1)
        # Compare bit patterns, so NaNs and -0.0 splat correctly.
        raw = flat.view(np.uint8).reshape(flat.size, -1)
        if (raw == raw[0]).all():
            x = flat[:1]
    # The buffer must be bit-castable to the element type: reinterpret every
    # dtype as unsigned integers of its width (complex128 as float64 pairs).
    if x.dtype == np.complex128:
        buf = x.view(np.float64)
    elif x.dtype.itemsize in (1, 2, 4, 8):
        buf = x.view(f"uint{x.dtype.itemsize * 8}")
    else:
        buf = x
    if x.dtype == dtypes.float0:
        buf = np.zeros(x.shape, np.uint8)
    _state.constant_bytes += buf.nbytes
    # An ndarray is a Buffer, which NumPy's stubs say only from Python 3.12.
    return ir.DenseElementsAttr.get(buf, type=elt, shape=list(shape))  # type: ignore[call-overload]  # see above


def ir_constant(value: Any, dtype: Any = None) -> ir.Value:
    """A `stablehlo.constant` holding `value`.

    Args:
      value: a NumPy array or scalar, a Python scalar, or an object with
        `__array__` (such as a polyjax `Array`).
      dtype: the dtype to give it; by default the value's own dtype, with
        Python scalars and 64-bit dtypes canonicalized as JAX does.

    Returns:
      The constant's `ir.Value`.
    """
    if dtype is None:
        if isinstance(value, bool | int | float | complex):
            dtype = dtypes.canonicalize_dtype(type(value))
        else:
            dtype = dtypes.canonicalize_dtype(np.asarray(value).dtype)
    x = np.asarray(value, dtype=dtype)
    return hlo.constant(_dense_attr(x))


def _i32_constant(value: int) -> ir.Value:
    return hlo.constant(
        ir.DenseElementsAttr.get(  # type: ignore[call-overload]  # an ndarray: see _dense_attr
            np.asarray(value, np.int32).reshape(1), type=ir.IntegerType.get_signless(32), shape=[]
        )
    )


# ---------------------------------------------------------------------------
# Shapes, possibly dynamic


def eval_dynamic_shape(ctx: LoweringRuleContext, shape: Sequence[Any]) -> tuple[Any, ...]:
    """The dimensions of `shape`: ints stay ints, symbolic ones become `tensor<i32>` values.

    Symbolic dimensions are computed from `ctx.dim_var_values`.
    """
    return tuple(
        d
        if type(d) is int
        else _mlir_dims.eval_dim(ctx.dim_var_values, d, _i32_constant)
        if isinstance(d, DimExpr)
        else int(d)
        for d in shape
    )


def eval_dim(dim_var_values: dict[str, ir.Value], dim: Any) -> ir.Value:
    """The `tensor<i32>` value of a dimension (an int or a `DimExpr`) from the variables' values."""
    if symbolic_dims.is_symbolic_dim(dim):
        return _mlir_dims.eval_dim(dim_var_values, dim, _i32_constant)
    return _i32_constant(int(dim))


def _is_static(shape: Sequence[Any]) -> bool:
    return not any(isinstance(d, DimExpr) for d in shape)


def shape_tensor(ctx: LoweringRuleContext, shape: Sequence[Any]) -> ir.Value:
    """A 1-D `tensor<Nxi32>` holding the sizes of `shape` (symbolic ones computed)."""
    dims = eval_dynamic_shape(ctx, shape)
    if all(type(d) is int for d in dims):
        return ir_constant(np.asarray(dims, np.int32))
    one = ir.RankedTensorType.get([1], ir.IntegerType.get_signless(32))
    pieces = [
        ir_constant(np.asarray([d], np.int32)) if type(d) is int else hlo.reshape(one, d)
        for d in dims
    ]
    return pieces[0] if len(pieces) == 1 else hlo.concatenate(pieces, 0)


def broadcast_in_dim(
    ctx: LoweringRuleContext,
    x: ir.Value,
    aval_out: ShapedArray,
    broadcast_dimensions: Sequence[int],
) -> ir.Value:
    """Broadcasts `x` to `aval_out`, mapping its dims to `broadcast_dimensions`.

    Emits `stablehlo.broadcast_in_dim`, or `dynamic_broadcast_in_dim` when the
    output shape is symbolic.
    """
    out_type = aval_to_ir_type(aval_out)
    if _is_static(aval_out.shape):
        return hlo.broadcast_in_dim(out_type, x, list(broadcast_dimensions))
    return hlo.dynamic_broadcast_in_dim(
        out_type, x, shape_tensor(ctx, aval_out.shape), list(broadcast_dimensions)
    )


def reshape(ctx: LoweringRuleContext, x: ir.Value, aval_out: ShapedArray) -> ir.Value:
    """Reshapes `x` to `aval_out` (`stablehlo.reshape`, or `dynamic_reshape` if symbolic)."""
    out_type = aval_to_ir_type(aval_out)
    if _is_static(aval_out.shape):
        if x.type == out_type:
            return x
        return hlo.reshape(out_type, x)
    return hlo.dynamic_reshape(out_type, x, shape_tensor(ctx, aval_out.shape))


def iota(ctx: LoweringRuleContext, aval_out: ShapedArray, dimension: int) -> ir.Value:
    """`stablehlo.iota` along `dimension` (or `dynamic_iota` when the shape is symbolic)."""
    out_type = aval_to_ir_type(aval_out)
    if _is_static(aval_out.shape):
        return hlo.iota(out_type, dimension)
    return hlo.dynamic_iota(out_type, shape_tensor(ctx, aval_out.shape), dimension)


def full_like_aval(ctx: LoweringRuleContext, value: Any, aval: ShapedArray) -> ir.Value:
    """An array of type `aval` filled with the scalar `value`."""
    zero_d = ir_constant(np.asarray(value, aval.dtype))
    if aval.shape == ():
        return zero_d
    return broadcast_in_dim(ctx, zero_d, aval, ())


# ---------------------------------------------------------------------------
# Small op helpers


def _comparison_type(dtype: np.dtype) -> str:
    # The `compare_type` of `stablehlo.compare` for operands of `dtype`.
    if dtypes.issubdtype(dtype, np.inexact):
        return "FLOAT"
    if dtypes.issubdtype(dtype, np.signedinteger):
        return "SIGNED"
    return "UNSIGNED"  # unsigned integers and bool


def compare_hlo(
    x: ir.Value, y: ir.Value, direction: str, comparison_type: str | None = None
) -> ir.Value:
    """`stablehlo.compare` of `x` and `y`.

    Args:
      direction: `"EQ"`, `"NE"`, `"LT"`, `"LE"`, `"GT"` or `"GE"`.
      comparison_type: `"FLOAT"`, `"TOTALORDER"`, `"SIGNED"` or `"UNSIGNED"`;
        by default chosen from the element type of `x`.
    """
    if comparison_type is None:
        comparison_type = _comparison_type_of_ir(ir.RankedTensorType(x.type).element_type)
    return hlo.compare(
        x,
        y,
        hlo.ComparisonDirectionAttr.get(direction),
        compare_type=hlo.ComparisonTypeAttr.get(comparison_type),
    )


def _comparison_type_of_ir(t: ir.Type) -> str:
    if isinstance(t, ir.IntegerType):
        return "UNSIGNED" if t.is_unsigned or t.width == 1 else "SIGNED"
    return "FLOAT"


def convert_hlo(
    ctx: LoweringRuleContext, x: ir.Value, aval_in: ShapedArray, aval_out: ShapedArray
) -> ir.Value:
    """Converts `x` from `aval_in`'s dtype to `aval_out`'s, with NumPy's semantics.

    Conversion to bool compares with zero (`stablehlo.convert` would truncate);
    complex to real takes the real part first.
    """
    din, dout = aval_in.dtype, aval_out.dtype
    if din == dout:
        return x
    if dout == np.bool_ and din != np.bool_:
        zero = full_like_aval(ctx, 0, aval_in)
        return compare_hlo(x, zero, "NE", _comparison_type(din))
    if dtypes.issubdtype(din, np.complexfloating) and not dtypes.issubdtype(
        dout, np.complexfloating
    ):
        real_dtype = np.finfo(din).dtype
        x = hlo.real(x)
        if real_dtype == dout:
            return x
    return hlo.convert(aval_to_ir_type(aval_out), x)


# ---------------------------------------------------------------------------
# Lowering jaxprs


def _rule_outputs(prim: Any, out: Any, n_out: int) -> Sequence[ir.Value]:
    if isinstance(out, ir.Value):
        out = (out,)
    elif isinstance(out, ir.OpView | ir.Operation):
        out = tuple(out.results)
    if len(out) != n_out:
        raise ValueError(
            f"The lowering rule of primitive '{prim}' returned {len(out)} values for "
            f"{n_out} outputs."
        )
    return out


def jaxpr_subcomp(
    ctx: ModuleContext,
    jaxpr: Jaxpr,
    consts: Sequence[Any],
    args: Sequence[ir.Value],
    dim_var_values: dict[str, ir.Value] | None = None,
) -> list[ir.Value]:
    """Lowers the equations of `jaxpr` at the current insertion point.

    Args:
      ctx: the module context.
      jaxpr: an open jaxpr.
      consts: values of its constvars: NumPy-like values (embedded as
        constants) or `ir.Value`s.
      args: the `ir.Value`s of its invars.
      dim_var_values: values of the dimension variables.

    Returns:
      The `ir.Value`s of the jaxpr's outputs.
    """
    if dim_var_values is None:
        dim_var_values = {}
    env: dict[Any, ir.Value] = {}
    for v, c in zip(jaxpr.constvars, consts, strict=True):
        env[v] = c if isinstance(c, ir.Value) else ir_constant(c, v.aval.dtype)
    for v, a in zip(jaxpr.invars, args, strict=True):
        env[v] = a
    # Literals repeat (`mul x 2.0` in a loop body); emit each one once. Every
    # equation here goes into the same block, after the first use, so reuse is
    # valid. Keyed by bit pattern: 0.0 and -0.0 differ, NaNs match.
    literals: dict[tuple[Any, bytes], ir.Value] = {}

    def read(x: Any) -> ir.Value:
        if type(x) is Literal:
            val = np.asarray(x.val, x.aval.dtype)
            key = (val.dtype, val.tobytes())
            out = literals.get(key)
            if out is None:
                out = literals[key] = hlo.constant(_dense_attr(val))
            return out
        return env[x]

    platforms = ctx.platforms
    platform = platforms[0]
    rules = ctx._rules
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        src = eqn.source_info
        rule = rules.get(prim)
        if rule is None:
            rule = rules[prim] = _find_rule(prim, platforms, src)
        rule_ctx = LoweringRuleContext(
            ctx,
            prim,
            [x.aval for x in eqn.invars],
            [v.aval for v in eqn.outvars],
            platform,
            dim_var_values,
            src,
        )
        with ctx.location(src, prim.name):
            in_vals = [read(x) for x in eqn.invars]
            try:
                out = rule(rule_ctx, *in_vals, **eqn.params)
            except Exception as e:
                if src is not None and si.user_frame(src) is not None:
                    e.add_note(f"while lowering primitive '{prim}' at {si.summarize(src)}")
                raise
        out = _rule_outputs(prim, out, len(eqn.outvars))
        if ctx.device_assignment and prim.name != "sharding_constraint":  # (pins itself)
            out = _pin_typed(rule_ctx, eqn.outvars, out)
        for v, o in zip(eqn.outvars, out):
            if type(v) is not DropVar:
                env[v] = o
    return [read(x) for x in jaxpr.outvars]


def _pin_typed(rule_ctx: Any, outvars: Sequence[Any], out: Sequence[Any]) -> list[Any]:
    """Explicit mode: each output whose type carries a sharding is constrained to it,
    so that the compiled program lays values out as the types say."""
    pinned = list(out)
    for i, v in enumerate(outvars):
        typed = getattr(v.aval, "aval_sharding", None)
        if typed is None or not isinstance(pinned[i], ir.Value):
            continue
        sharding = _typed_sharding(rule_ctx.module_context, typed)
        if sharding is None:
            continue
        fresh = _fresh_unreduced(rule_ctx, typed)
        if fresh:
            # A whole value typed unreduced (a broadcast asked for {U:b}, say): pinned
            # whole first, so that Shardy converts it to partial sums rather than
            # letting every device compute it as its partial sum.
            whole = typed.with_reductions(typed.unreduced - fresh, typed.reduced)
            whole_sharding = (
                None if whole is None else _typed_sharding(rule_ctx.module_context, whole)
            )
            if whole_sharding is not None:
                pinned[i] = sharding_constraint(rule_ctx, pinned[i], whole_sharding, v.aval)
        pinned[i] = sharding_constraint(rule_ctx, pinned[i], sharding, v.aval)
    return pinned


def _fresh_unreduced(rule_ctx: Any, typed: Any) -> frozenset:
    """The unreduced axes of an output that no operand has and that the operation
    does not make by summing (only ``dot_general`` contracts into partial sums)."""
    if not typed.unreduced or rule_ctx.primitive.name == "dot_general":
        return frozenset()
    had: frozenset = frozenset()
    for a in rule_ctx.avals_in:
        s = getattr(a, "aval_sharding", None)
        if s is not None:
            had = had | s.unreduced
    return typed.unreduced - had


def _typed_sharding(mctx: ModuleContext, typed: Any) -> Any:
    """A concrete sharding for a type's `AvalSharding` over this module's devices."""
    mesh = concrete_mesh_for(typed.mesh)
    if mesh is None or mesh.size != len(mctx.device_assignment):
        return None
    if set(mesh._flat_devices_tuple) != set(mctx.device_assignment):
        return None
    return spec_to_sharding(typed.spec, mesh)


def _closed_parts(jaxpr: ClosedJaxpr | Jaxpr) -> tuple[Jaxpr, list[Any]]:
    if isinstance(jaxpr, ClosedJaxpr):
        return jaxpr.jaxpr, jaxpr.consts
    return jaxpr, []


def _dim_var_arg_attrs(names: Sequence[str]) -> list[ir.DictAttr]:
    # `jax.global_constant` tells shape refinement these args hold dimension sizes.
    return [ir.DictAttr.get({"jax.global_constant": ir.StringAttr.get(n)}) for n in names]


def call_jaxpr(
    ctx: LoweringRuleContext,
    name: str,
    closed_jaxpr: ClosedJaxpr | Jaxpr,
    args: Sequence[ir.Value],
) -> list[ir.Value]:
    """Calls `closed_jaxpr`, lowered once per module as a private function.

    The function is emitted on first use (named after `name`, renamed if the
    name is taken) and reused for later calls of the same jaxpr object; it
    takes the module's dimension variables as leading `tensor<i32>` arguments.

    Returns:
      The results of the `func.call`.
    """
    mctx = ctx.module_context
    jaxpr, consts = _closed_parts(closed_jaxpr)
    key = (id(jaxpr), tuple(id(c) for c in consts), name)
    entry = mctx.cached_calls.get(key)
    if entry is None:
        fn = _lower_private_function(mctx, name, jaxpr, consts)
        # Holding the jaxpr keeps its id (the key) from being reused.
        entry = mctx.cached_calls[key] = (fn, jaxpr, consts)
    fn = entry[0]
    dim_args = [ctx.dim_var_values[n] for n in mctx.dim_vars]
    ordered = has_ordered_effects(jaxpr)
    tokens = [_current_token(mctx)] if ordered else []
    # jaxlib's func.py redefines FuncOp and CallOp with friendlier constructors and
    # methods, which mypy does not see past the generated classes of the same names.
    call = func.CallOp(fn, [*dim_args, *tokens, *args])  # type: ignore[call-arg, arg-type]  # see above
    results: list[ir.Value] = list(call.results)
    if ordered:
        mctx.token = results.pop(0)
    return results


def _lower_private_function(
    mctx: ModuleContext, name: str, jaxpr: Jaxpr, consts: Sequence[Any]
) -> func.FuncOp:
    dim_type = _scalar_i32_type()
    # A body with ordered effects takes the caller's token first and returns its last one.
    tok = [token_type()] if has_ordered_effects(jaxpr) else []
    in_types = (
        [dim_type] * len(mctx.dim_vars) + tok + [aval_to_ir_type(v.aval) for v in jaxpr.invars]
    )
    out_types = tok + [aval_to_ir_type(a) for a in jaxpr.out_avals]
    with ir.InsertionPoint(mctx.module.body):
        fn = func.FuncOp(name, ir.FunctionType.get(in_types, out_types), visibility="private")  # type: ignore[call-arg]  # see call_jaxpr
    mctx.symbol_table.insert(fn)  # renames on clash
    if mctx.dim_vars:
        n = len(mctx.dim_vars)
        fn.arg_attrs = ir.ArrayAttr.get(
            _dim_var_arg_attrs(mctx.dim_vars)
            + [ir.DictAttr.get({})] * (len(tok) + len(jaxpr.invars))
        )
    else:
        n = 0
    entry = fn.add_entry_block()  # type: ignore[attr-defined]  # see call_jaxpr
    with ir.InsertionPoint(entry):
        block_args = list(entry.arguments)
        dim_values = dict(zip(mctx.dim_vars, block_args[:n]))
        outer = mctx.token
        mctx.token = block_args[n] if tok else None
        outs = jaxpr_subcomp(mctx, jaxpr, consts, block_args[n + len(tok) :], dim_values)
        func.ReturnOp([_current_token(mctx), *outs] if tok else outs)
        mctx.token = outer
    return fn


def lower_fun(fun: Callable[..., Any], multiple_results: bool = True) -> LoweringRule:
    """A lowering rule that traces `fun` on the equation's input avals and inlines it.

    Lets a primitive be lowered in terms of other primitives:
    `register_lowering(p, lower_fun(lambda x, **params: ...))`.

    Args:
      fun: called as `fun(*args, **params)` on tracers of `ctx.avals_in`;
        returns a list of outputs, or one output when `multiple_results=False`.
      multiple_results: whether `fun` returns a list.

    Returns:
      A lowering rule.
    """

    def rule(ctx: LoweringRuleContext, *args: ir.Value, **params: Any) -> list[ir.Value]:
        def traced(*xs: Any) -> list[Any]:
            out = fun(*xs, **params)
            return list(out) if multiple_results else [out]

        # The inner equations report the user's line of the equation lowered.
        with si.user_context(ctx.source_info):
            closed = trace_to_jaxpr(traced, ctx.avals_in)
        return jaxpr_subcomp(
            ctx.module_context, closed.jaxpr, closed.consts, args, ctx.dim_var_values
        )

    return rule


def _sanitize_module_name(name: str) -> str:
    # As JAX names modules: characters other than letters, digits, "_", "." and
    # "-" become "_", and trailing underscores go (``jit__lambda`` for a lambda).
    out = "".join(c if c.isalnum() or c in "_.-" else "_" for c in name).rstrip("_")
    return out or "module"


def _sharding_attr(sharding: Any, ndim: int) -> ir.Attribute | None:
    """`mhlo.sharding` string of a Sharding (or HloSharding); None when absent."""
    if sharding is None:
        return None
    if hasattr(sharding, "_to_xla_hlo_sharding"):
        sharding = sharding._to_xla_hlo_sharding(ndim)
    return ir.StringAttr.get(
        sharding.to_string() if hasattr(sharding, "to_string") else str(sharding)
    )


def _remap_hlo(hs: Any, devices: Sequence[Any], assignment: Sequence[Any]) -> Any:
    """``hs`` (numbering ``devices``) renumbered for the device order ``assignment``."""
    if tuple(devices) == tuple(assignment) or not hs.is_tiled() or hs.is_replicated():
        return hs
    position = {d: i for i, d in enumerate(assignment)}
    tiles = np.array(
        [position[devices[i]] for i in hs.tile_assignment_devices()], dtype=np.int64
    ).reshape(hs.tile_assignment_dimensions())
    if hs.replicate_on_last_tile_dim():
        subgroups = [xla_client.OpSharding.Type.REPLICATED]
    else:
        subgroups = list(hs.subgroup_types())
    return xla_client.HloSharding.subgroup_with_device_ordering(tiles, subgroups)


def hlo_sharding_in(sharding: Any, ndim: int, assignment: Sequence[Any]) -> Any:
    """The XLA sharding of ``sharding`` for rank ``ndim``, numbering ``assignment``."""
    hs = sharding._to_xla_hlo_sharding(ndim)
    devices = getattr(sharding, "_device_assignment", None)
    if devices is None or len(devices) <= 1:
        return hs
    return _remap_hlo(hs, devices, assignment)


SdyParts = tuple[tuple[tuple[str, int], ...], tuple[int, ...] | None, list]


def sdy_parts(mctx: ModuleContext, sharding: Any, ndim: int) -> SdyParts:
    """(mesh axes, logical device ids, axes of each dimension) of a sharding.

    Shardings with a ``_to_sdy_sharding`` hook (e.g. NamedSharding) give their
    mesh; others get a mesh with one axis (``"_k"``) per tiled dimension of their
    ``HloSharding``, whose device order is the tile assignment's. A dimension's
    entry is a tuple of mesh axes (``()``: replicated) or ``None``
    (unconstrained).
    """
    assignment = mctx.device_assignment
    meshes = mctx._known_meshes
    to_sdy = getattr(sharding, "_to_sdy_sharding", None)
    if to_sdy is not None:
        axes, device_ids, dims = to_sdy(ndim)
        position = {d.id: i for i, d in enumerate(assignment)}
        mesh = (tuple(axes), tuple(position[i] for i in device_ids))
        if mesh not in meshes:
            meshes.append(mesh)
        return (*mesh, list(dims))
    hs = hlo_sharding_in(sharding, ndim, assignment)
    if hs.is_manual():
        raise NotImplementedError(f"a manual sharding ({hs}) cannot be lowered here")
    # On a mesh the module uses already if possible: shardings on one mesh
    # partition better than the same layouts on several.
    for axes, ids in meshes:
        dims = _express(hs, axes, ids, ndim)
        if dims is not None:
            return axes, ids, dims
    if hs.is_replicated() or not hs.is_tiled():
        axes = (("_r", len(assignment)),) if len(assignment) > 1 else ()
        return axes, None, [()] * ndim
    tiles = hs.tile_assignment_dimensions()
    axes = tuple((f"_{k}", t) for k, t in enumerate(tiles) if t > 1)
    dims = [(f"_{k}",) if tiles[k] > 1 else () for k in range(ndim)]
    ids = tuple(hs.tile_assignment_devices())
    meshes.append((axes, ids))
    return axes, ids, dims


def _express(hs: Any, axes: tuple, ids: Any, ndim: int) -> list | None:
    """Axes of each dimension that lay out a rank-``ndim`` array on the mesh as ``hs``."""
    if hs.is_replicated() or not hs.is_tiled():
        return [()] * ndim
    if len(axes) > 6:  # (ndim + 1) ** len(axes) candidates: keep it small
        return None
    for choice in itertools.product(range(ndim + 1), repeat=len(axes)):
        dims = [tuple(a for (a, _), c in zip(axes, choice) if c == k) for k in range(ndim)]
        if parts_to_hlo((axes, ids, dims)) == hs:
            return dims
    return None


def _insert_dims(parts: SdyParts, inserted: Sequence[tuple[int, Any]]) -> SdyParts:
    """``parts`` with new dimensions (position, mesh axes or None) inserted in order."""
    axes, ids, dims = parts
    dims = list(dims)
    names = {n for n, _ in axes}
    for pos, entry in inserted:
        for a in entry or ():
            if a not in names:
                raise ValueError(
                    f"spmd_axis_name {a!r} is not an axis of the mesh of the sharding "
                    f"constraint (axes {sorted(names)})."
                )
        dims.insert(pos, None if entry is None else tuple(entry))
    return axes, ids, dims


def parts_to_hlo(parts: SdyParts) -> Any:
    """The `HloSharding` of Shardy parts (unconstrained dimensions replicated)."""
    axes, ids, dims = parts
    names = [n for n, _ in axes]
    sizes = [k for _, k in axes]
    total = int(np.prod(sizes)) if sizes else 1
    devices = np.arange(total) if ids is None else np.asarray(ids)
    devices = devices.reshape(sizes) if sizes else devices.reshape(())
    used = [names.index(a) for d in dims for a in (d or ())]
    rest = [i for i in range(len(names)) if i not in used]
    tile_dims = [int(np.prod([sizes[names.index(a)] for a in (d or ())])) for d in dims]
    replicas = int(np.prod([sizes[i] for i in rest])) if rest else 1
    if all(t == 1 for t in tile_dims):
        return xla_client.HloSharding.replicate()
    tiles = np.transpose(devices, used + rest).reshape(
        tile_dims + ([replicas] if replicas > 1 else [])
    )
    subgroups = [xla_client.OpSharding.Type.REPLICATED] if replicas > 1 else []
    return xla_client.HloSharding.subgroup_with_device_ordering(tiles.astype(np.int64), subgroups)


def _sdy_attr_of_parts(
    mctx: ModuleContext, parts: SdyParts, unreduced: Sequence[str] = ()
) -> ir.Attribute:
    axes, ids, dims = parts
    mesh = mctx.mesh_symbol(axes, ids)
    extra = ""
    if unreduced:  # (mesh order, as Shardy wants them)
        names = [n for n, _ in axes if n in set(unreduced)]
        extra = ", unreduced={" + ", ".join(f'"{a}"' for a in names) + "}"
    return ir.Attribute.parse(f"#sdy.sharding<@{mesh}, {_sdy_dims_text(dims)}{extra}>")


def _sdy_dims_text(dims: Sequence[tuple[str, ...] | None]) -> str:
    def one(axes: tuple[str, ...] | None) -> str:
        if axes is None:
            return "{?}"
        return "{" + ", ".join(f'"{a}"' for a in axes) + "}"

    return "[" + ", ".join(one(d) for d in dims) + "]"


def sdy_sharding_attr(mctx: ModuleContext, sharding: Any, ndim: int) -> ir.Attribute:
    """The `#sdy.sharding<@mesh, [...]>` attribute of a sharding for rank ``ndim``."""
    return _sdy_attr_of_parts(mctx, sdy_parts(mctx, sharding, ndim))


def sharding_attribute(mctx: ModuleContext, sharding: Any, ndim: int) -> tuple[str, ir.Attribute]:
    """(name, value) of the argument/result attribute placing a value as ``sharding``.

    Shardy (`sdy.sharding`) or GSPMD (`mhlo.sharding`), as the module context says.
    """
    if mctx.shardy:
        return "sdy.sharding", sdy_sharding_attr(mctx, sharding, ndim)
    hs = hlo_sharding_in(sharding, ndim, mctx.device_assignment)
    return "mhlo.sharding", ir.StringAttr.get(str(hs))


def sharding_constraint(
    ctx: LoweringRuleContext,
    x: ir.Value,
    sharding: Any,
    aval: Any,
    inserted: Sequence[tuple[int, Any]] = (),
) -> ir.Value:
    """Emits a sharding constraint on ``x`` (Shardy or GSPMD, as the module says).

    Args:
      ctx: the rule's context.
      x: the value.
      sharding: the sharding, for rank ``aval.ndim - len(inserted)``.
      aval: ``x``'s aval.
      inserted: dimensions that `vmap` added since: ``(position, mesh axes)``,
        the axes ``None`` for an unconstrained dimension.

    Dimensions left unconstrained (``None``) are the partitioner's choice. A
    spec's unreduced axes (explicit mode) become Shardy's ``unreduced={...}``: the
    value is left as partial sums over them. GSPMD has no such annotation: there
    the value is reduced at once (the same values; docs/explicit-sharding.md).
    """
    mctx = ctx.module_context
    ndim = len(aval.shape)
    parts = sdy_parts(mctx, sharding, ndim - len(inserted))
    if inserted:
        parts = _insert_dims(parts, inserted)
    if mctx.shardy:
        unreduced = getattr(getattr(sharding, "spec", None), "unreduced", ())
        return sdy.sharding_constraint(x, _sdy_attr_of_parts(mctx, parts, unreduced))
    if inserted or any(d is None for d in parts[2]):
        hs = parts_to_hlo(parts)  # (parts number devices by logical id already)
    else:
        hs = hlo_sharding_in(sharding, ndim, mctx.device_assignment)
    attrs = {"mhlo.sharding": ir.StringAttr.get(str(hs))}
    unconstrained = [i for i, d in enumerate(parts[2]) if d is None]
    if unconstrained:
        attrs["backend_config"] = ir.StringAttr.get(
            "unspecified_dims=[" + ",".join(map(str, unconstrained)) + "]"
        )
    return hlo_custom_call("Sharding", [x], [x.type], attrs)


def hlo_custom_call(
    target: str, operands: Sequence[ir.Value], result_types: Sequence[ir.Type], attrs: dict
) -> ir.Value:
    """A `stablehlo.custom_call @target` with extra attributes; its single result."""
    op = hlo.CustomCallOp(
        list(result_types),
        list(operands),
        call_target_name=ir.StringAttr.get(target),
        has_side_effect=ir.BoolAttr.get(False),
    )
    for k, v in attrs.items():
        op.attributes[k] = v
    return op.result


# ---------------------------------------------------------------------------
# Ordered effects and host callbacks


def token_type() -> ir.Type:
    """`!stablehlo.token`: the type of the value that orders side effects."""
    return hlo.TokenType.get()


def has_ordered_effects(*jaxprs: Jaxpr | ClosedJaxpr) -> bool:
    """Whether any of the jaxprs has an ordered effect (it then threads a token)."""
    return any(core_effects.ordered_effects.filter_in(j.effects) for j in jaxprs)


@contextlib.contextmanager
def isolated_token(mctx: ModuleContext, jaxpr: Jaxpr | ClosedJaxpr) -> Iterator[None]:
    """Lowers a region that cannot see the outer token (``sdy.manual_computation``
    is isolated from above) with a token of its own: its ordered effects keep
    their order among themselves, on each device."""
    outer = mctx.token
    mctx.token = hlo.create_token() if has_ordered_effects(jaxpr) else None
    try:
        yield
    finally:
        mctx.token = outer


def _current_token(mctx: ModuleContext) -> ir.Value:
    if mctx.token is None:
        # Reached only by a rule that lowers an ordered effect outside any jaxpr
        # announcing it (a hand-built module): order it after nothing.
        mctx.token = hlo.create_token()
    return mctx.token


# The exception each failing host callback raised, newest last; the executable
# that ran it takes it back to chain it to the runtime error (callbacks run on
# XLA's threads, so this is shared, not thread-local).
_callback_errors: list[BaseException] = []
_callback_errors_lock = threading.Lock()


def pop_callback_error() -> BaseException | None:
    """The exception of the latest failed host callback not yet reported, if any."""
    with _callback_errors_lock:
        return _callback_errors.pop() if _callback_errors else None


def _host_entry(callback: Callable[..., Sequence[Any]], ordered: bool) -> Callable[..., Any]:
    """What XLA calls: strips/returns the token and records the callback's exception."""

    def entry(*args: Any) -> tuple:
        try:
            outs = tuple(callback(*(args[1:] if ordered else args)))
        except BaseException as e:
            with _callback_errors_lock:
                del _callback_errors[:-7]  # keep a few: unreported ones must not pile up
                _callback_errors.append(e)
            raise
        return (None, *outs) if ordered else outs

    return entry


def emit_python_callback(
    ctx: LoweringRuleContext,
    callback: Callable[..., Sequence[Any]],
    operands: Sequence[ir.Value],
    result_avals: Sequence[AbstractValue],
    *,
    ordered: bool = False,
    has_side_effect: bool = True,
) -> list[ir.Value]:
    """Emits a call from the compiled program back into Python on the host.

    `callback(*numpy_arrays)` gets the operands' values as NumPy arrays and
    returns a sequence of NumPy arrays matching `result_avals`. It becomes a
    `stablehlo.custom_call @xla_ffi_python_cpu_callback` whose `index` picks it
    from the executable's host callbacks. An `ordered` callback consumes the
    module context's token and produces the next one.

    Returns:
      The results' `ir.Value`s.
    """
    mctx = ctx.module_context
    if ctx.platform != "cpu":
        raise NotImplementedError(
            "Host callbacks are only implemented on CPU in polyjax "
            f"(lowering for {ctx.platform!r})."
        )
    index = len(mctx.host_callbacks)
    mctx.host_callbacks.append(_host_entry(callback, ordered))
    result_types = [aval_to_ir_type(a) for a in result_avals]
    operands = list(operands)
    if ordered:
        operands = [_current_token(mctx), *operands]
        result_types = [token_type(), *result_types]
    op = hlo.CustomCallOp(
        result_types,
        operands,
        call_target_name=ir.StringAttr.get("xla_ffi_python_cpu_callback"),
        has_side_effect=ir.BoolAttr.get(has_side_effect or ordered),
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4),
        backend_config=ir.DictAttr.get(
            {"index": ir.IntegerAttr.get(ir.IntegerType.get_unsigned(64), index)}
        ),
    )
    if len(mctx.device_assignment) > 1 and mctx.axis_context is None:
        # In a program partitioned over several devices, the callback runs once,
        # on the first device, with whole values (as in JAX).
        _on_first_device(mctx, op, len(result_types))
    results: list[ir.Value] = list(op.results)
    if ordered:
        mctx.token = results.pop(0)
    return results


def _on_first_device(mctx: ModuleContext, op: Any, n_results: int) -> None:
    """Gives `op` a maximal sharding on logical device 0 (Shardy or GSPMD)."""
    if not mctx.shardy:
        one = "{maximal device=0}"
        text = one if n_results <= 1 else "{" + ", ".join([one] * n_results) + "}"
        op.attributes["mhlo.sharding"] = ir.StringAttr.get(text)
        return
    name = mctx._meshes.get("maximal")
    if name is None:
        attr = ir.Attribute.parse("#sdy.mesh<[], device_ids=[0]>")
        with ir.InsertionPoint.at_block_begin(mctx.module.body), ir.Location.unknown():
            mesh = sdy.MeshOp("maximal_mesh_0", attr)
        name = mctx._meshes["maximal"] = ir.StringAttr(mctx.symbol_table.insert(mesh)).value
    per_value = ", ".join([f"<@{name}, []>"] * max(n_results, 1))
    op.attributes["sdy.sharding"] = ir.Attribute.parse(f"#sdy.sharding_per_value<[{per_value}]>")


def _placement_attr(
    mctx: ModuleContext, sharding: Any, ndim: int
) -> tuple[str, ir.Attribute] | None:
    if sharding is None:
        return None
    if mctx.device_assignment:
        return sharding_attribute(mctx, sharding, ndim)
    attr = _sharding_attr(sharding, ndim)
    return None if attr is None else ("mhlo.sharding", attr)


def _donation_attrs(
    donated_args: Sequence[bool], in_avals: Sequence[Any], out_avals: Sequence[Any]
) -> list[tuple[str, ir.Attribute] | None]:
    """For each input: `tf.aliasing_output` to a matching unclaimed output, else a donor mark."""
    claimed = [False] * len(out_avals)
    result: list[tuple[str, ir.Attribute] | None] = []
    i32 = ir.IntegerType.get_signless(32)
    for donated, aval in zip(donated_args, in_avals):
        if not donated:
            result.append(None)
            continue
        for j, out in enumerate(out_avals):
            if not claimed[j] and out.shape == aval.shape and out.dtype == aval.dtype:
                claimed[j] = True
                result.append(("tf.aliasing_output", ir.IntegerAttr.get(i32, j)))
                break
        else:
            result.append(("jax.buffer_donor", ir.BoolAttr.get(True)))
    return result


# A token crosses an executable's boundary as an empty `bool[0]` array (a
# `Token` holds no data): `main` takes and returns the placeholder, and makes a
# fresh token of each token input (docs/lax.md, "Tokens").
_TOKEN_PLACEHOLDER = ShapedArray((0,), np.dtype(bool))


def boundary_aval(aval: AbstractValue) -> Any:
    """The type a value of type `aval` has at an executable's boundary: its own,
    or for a token the `bool[0]` placeholder."""
    return _TOKEN_PLACEHOLDER if type(aval) is AbstractToken else aval


def _from_boundary(aval: AbstractValue, value: ir.Value) -> ir.Value:
    return hlo.create_token() if type(aval) is AbstractToken else value


def _to_boundary(aval: AbstractValue, value: ir.Value) -> ir.Value:
    if type(aval) is AbstractToken:
        return ir_constant(np.zeros((0,), bool))
    return value


def lower_jaxpr_to_module(
    closed_jaxpr: ClosedJaxpr,
    *,
    module_name: str,
    platforms: Sequence[str],
    backend_platform: str | None = None,
    donated_args: Sequence[bool] | None = None,
    arg_shardings: Sequence[Any] | None = None,
    result_shardings: Sequence[Any] | None = None,
    arg_names: Sequence[str | None] | None = None,
    result_names: Sequence[str | None] | None = None,
    num_devices: int = 1,
    axis_context: Any = None,
    device_assignment: Sequence[Any] | None = None,
    shardy: bool = True,
    dim_vars: Sequence[str] | None = None,
    name_stack: Sequence[str] = (),
    device: Any = None,
) -> LoweringResult:
    """Lowers a closed jaxpr to a StableHLO module with a public `@main`.

    Args:
      closed_jaxpr: the program; its consts become `stablehlo.constant`s.
      module_name: the module's `sym_name` (XLA's HloModule name).
      platforms: the platforms to lower for (rules are looked up for each).
      backend_platform: the platform of the compiling backend.
      donated_args: per input, whether its buffer is donated: matched to an
        output of the same type (`tf.aliasing_output`) or else marked
        `jax.buffer_donor`.
      arg_shardings, result_shardings: per input/output, a `Sharding` or None
        (left to the partitioner). With a ``device_assignment`` they are
        emitted as Shardy `sdy.sharding` attributes (declaring the `sdy.mesh`es
        they use) or, if not ``shardy``, as GSPMD `mhlo.sharding` strings;
        without one, as `mhlo.sharding` (an `HloSharding` is accepted too).
      arg_names, result_names: `jax.arg_info` / `jax.result_info` attributes.
      num_devices: number of devices (`mhlo.num_partitions`); taken from
        ``device_assignment`` when that is given.
      axis_context: sharding context for collectives (None for now).
      device_assignment: the devices of an SPMD module in XLA's order (the
        shardings' device numbers refer to it).
      shardy: emit Shardy attributes rather than GSPMD ones.
      dim_vars: the names of the leading `i32` arguments of every function;
        by default the dimension variables of the input avals, sorted. Export
        passes more (variables of pruned inputs, the platform index).
      name_stack: names put in front of every op's location name, as JAX's
        ``jit(f)`` (``loc("jit(f)/outer/sin"(...))``).
      device: the device of a single-device module (`ModuleContext.device`).

    Returns:
      A `LoweringResult`. When the input avals have symbolic dimensions, main
      takes one leading `tensor<i32>` argument per dimension variable, sorted
      by name (`result.dim_vars`).
    """
    jaxpr = closed_jaxpr.jaxpr
    in_avals = [v.aval for v in jaxpr.invars]
    out_avals = closed_jaxpr.out_avals
    platforms = tuple(p.lower() for p in platforms)
    if not platforms:
        raise ValueError("lower_jaxpr_to_module: at least one platform is needed")
    if dim_vars is None:
        dim_vars = symbolic_dims.shape_vars(boundary_aval(a).shape for a in in_avals)
    dim_vars = tuple(dim_vars)
    assignment = tuple(device_assignment or ())
    if assignment:
        num_devices = len(assignment)
    ctx = make_ir_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.create()
        module.operation.attributes["sym_name"] = ir.StringAttr.get(
            _sanitize_module_name(module_name)
        )
        i32 = ir.IntegerType.get_signless(32)
        module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, num_devices)
        module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)
        mctx = ModuleContext(
            context=ctx,
            module=module,
            symbol_table=ir.SymbolTable(module.operation),
            platforms=platforms,
            backend_platform=backend_platform,
            axis_context=axis_context,
            num_devices=num_devices,
            dim_vars=dim_vars,
            device_assignment=assignment,
            device=device,
            shardy=shardy,
            name_stack=tuple(name_stack),
        )
        n_dims = len(dim_vars)
        # (attributes and types at main's boundary see tokens' placeholders)
        b_ins, b_outs = [*map(boundary_aval, in_avals)], [*map(boundary_aval, out_avals)]
        in_types = [_scalar_i32_type()] * n_dims + [aval_to_ir_type(a) for a in b_ins]
        out_types = [aval_to_ir_type(a) for a in b_outs]
        with ir.InsertionPoint(module.body):
            main = func.FuncOp("main", ir.FunctionType.get(in_types, out_types))
        main.attributes["sym_visibility"] = ir.StringAttr.get("public")
        mctx.symbol_table.insert(main)

        # Argument attributes.
        arg_attrs: list[dict[str, ir.Attribute]] = [
            {"jax.global_constant": ir.StringAttr.get(n)} for n in dim_vars
        ]
        arg_attrs += [{} for _ in in_avals]
        if donated_args is not None:
            for i, a in enumerate(_donation_attrs(donated_args, b_ins, b_outs)):
                if a is not None:
                    arg_attrs[n_dims + i][a[0]] = a[1]
        if arg_shardings is not None:
            for i, (s, aval) in enumerate(zip(arg_shardings, b_ins)):
                named = _placement_attr(mctx, s, aval.ndim)
                if named is not None:
                    arg_attrs[n_dims + i][named[0]] = named[1]
        if arg_names is not None:
            for i, name in enumerate(arg_names):
                if name:
                    arg_attrs[n_dims + i]["jax.arg_info"] = ir.StringAttr.get(name)
        if any(arg_attrs):
            main.arg_attrs = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in arg_attrs])

        # Result attributes.
        res_attrs: list[dict[str, ir.Attribute]] = [{} for _ in out_avals]
        for i in range(len(out_avals)):
            name = result_names[i] if result_names is not None else None
            if name is None:
                name = "result" if len(out_avals) == 1 else f"result[{i}]"
            res_attrs[i]["jax.result_info"] = ir.StringAttr.get(name)
        if result_shardings is not None:
            for i, (s, aval) in enumerate(zip(result_shardings, b_outs)):
                named = _placement_attr(mctx, s, aval.ndim)
                if named is not None:
                    res_attrs[i][named[0]] = named[1]
        if res_attrs:
            main.result_attrs = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in res_attrs])  # type: ignore[attr-defined]  # see call_jaxpr

        entry = main.add_entry_block()  # type: ignore[attr-defined]  # see call_jaxpr
        ordered = has_ordered_effects(jaxpr)
        with ir.InsertionPoint(entry):
            block_args = list(entry.arguments)
            dim_values = dict(zip(dim_vars, block_args[:n_dims]))
            # One token per call orders the effects inside it; the executable
            # runs calls one after another, which orders them across calls.
            mctx.token = hlo.create_token() if ordered else None
            ins = [_from_boundary(a, v) for a, v in zip(in_avals, block_args[n_dims:])]
            outs = jaxpr_subcomp(mctx, jaxpr, closed_jaxpr.consts, ins, dim_values)
            func.ReturnOp([_to_boundary(a, v) for a, v in zip(out_avals, outs)])

        try:
            module.operation.verify()
        except ir.MLIRError as e:
            raise ValueError(
                f"Lowering produced an invalid module: {e}\n"
                f"{module.operation.get_asm(enable_debug_info=True, large_elements_limit=20)}"
            ) from None
    return LoweringResult(module, mctx.keepalives, mctx.host_callbacks, dim_vars, ordered)


# ---------------------------------------------------------------------------
# Serialization


def module_to_string(module: ir.Module, enable_debug_info: bool = False) -> str:
    """The textual form of a module (with `loc(...)` locations if `enable_debug_info`)."""
    # `get_asm` is typed `object` (it returns bytes when asked for binary); here it is text.
    return str(module.operation.get_asm(enable_debug_info=enable_debug_info))


def module_to_bytecode(module: ir.Module) -> bytes:
    """MLIR bytecode of a module, as `compile_and_load` accepts it."""
    out = io.BytesIO()
    module.operation.write_bytecode(file=out)
    return out.getvalue()


def module_to_xla_computation(module: ir.Module) -> Any:
    """The module converted to XLA's HLO (a jaxlib ``XlaComputation``)."""
    return _jax.mlir.mlir_module_to_xla_computation(
        module_to_bytecode(module), use_tuple_args=False, return_tuple=False
    )
