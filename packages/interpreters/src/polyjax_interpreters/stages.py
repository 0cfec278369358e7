"""Ahead-of-time stages of a jitted function: `Traced` → `Lowered` → `Compiled`.

``jit(f).trace(*args)`` stops after tracing, ``.lower()`` after lowering to
StableHLO, ``.compile()`` after XLA compilation. Each stage can be inspected
(the jaxpr, the StableHLO text, the compiled HLO and its cost and memory
analyses), and the last one called. The arguments given to ``trace``/``lower``
may be arrays or `ShapeDtypeStruct`\\ s: only their types matter.

A `Compiled` is called without the static arguments (they are baked in), and
checks its arguments as JAX does: the same pytree structure, and the same
shapes and dtypes as it was compiled for.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from polyjax_core.abstract_values import ShapeDtypeStruct, shaped_abstractify
from polyjax_core.jaxpr import ClosedJaxpr
from polyjax_core.tree_util import PyTreeDef, tree_flatten, tree_unflatten
from polyjax_interpreters import _guards, discharge, dispatch, mlir

__all__ = ["ArgInfo", "Compiled", "Lowered", "Traced", "TracedCall"]


class TracedCall:
    """A jitted function traced for one call: what every stage starts from.

    Attributes:
      wrapped: the `jit` object (its options: name, device, donation...).
      leaves: the flat dynamic arguments (arrays or `ShapeDtypeStruct`s).
      in_tree: the structure of ``(dynamic args, dynamic kwargs)``.
      jaxpr: the traced `ClosedJaxpr`.
      out_tree: the structure of the result.
      donated: one bool per flat argument.
      debug: the `DebugInfo` (argument names for messages).
    """

    __slots__ = (
        "wrapped",
        "leaves",
        "in_tree",
        "jaxpr",
        "out_tree",
        "donated",
        "debug",
        "args",
        "kwargs",
    )

    def __init__(self, wrapped, leaves, in_tree, jaxpr, out_tree, donated, debug, args, kwargs):
        self.wrapped = wrapped
        self.leaves = leaves
        self.in_tree = in_tree
        self.jaxpr = jaxpr
        self.out_tree = out_tree
        self.donated = donated
        self.debug = debug
        self.args = args
        self.kwargs = kwargs


class ArgInfo(NamedTuple):
    """What a stage knows of one flat argument: its type and whether it is donated."""

    aval: Any
    donated: bool

    @property
    def shape(self) -> tuple:
        return self.aval.shape

    @property
    def dtype(self) -> Any:
        return self.aval.dtype


def _args_info(t: TracedCall) -> Any:
    infos = [ArgInfo(shaped_abstractify(x), d) for x, d in zip(t.leaves, t.donated)]
    return tree_unflatten(t.in_tree, infos)


def _out_info(t: TracedCall) -> Any:
    outs = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in t.jaxpr.out_avals]
    return tree_unflatten(t.out_tree, outs)


class _Stage:
    """What all stages share: the traced call they come from."""

    def __init__(self, traced: TracedCall):
        self._t = traced

    @property
    def fun_name(self) -> str:
        return self._t.wrapped._name

    @property
    def in_tree(self) -> PyTreeDef:
        """The pytree structure of ``(args, kwargs)`` (dynamic arguments only)."""
        return self._t.in_tree

    @property
    def out_tree(self) -> PyTreeDef:
        return self._t.out_tree

    @property
    def args_info(self) -> Any:
        """A pytree like ``(args, kwargs)`` of `ArgInfo` (type + donation) per argument."""
        return _args_info(self._t)

    @property
    def out_info(self) -> Any:
        """A pytree of `ShapeDtypeStruct` with the structure of the function's result."""
        return _out_info(self._t)


class Traced(_Stage):
    """A function traced for one signature: its jaxpr, before lowering."""

    @property
    def jaxpr(self) -> ClosedJaxpr:
        return self._t.jaxpr

    def lower(self) -> Lowered:
        """Lowers the jaxpr to a StableHLO module for this call's device."""
        t = self._t
        wrapped = t.wrapped
        params = wrapped._params(t)
        placed = [x for x in t.leaves if not isinstance(x, ShapeDtypeStruct)]
        placement = wrapped._placement(t, t.leaves)
        if placement is None:
            device, committed = dispatch.arg_placement(
                placed, None, wrapped._name, params["device"], wrapped._backend
            )
        else:
            device, committed = placement.devices[0], True
        jaxpr, donated, refs = t.jaxpr, t.donated, None
        names = list(t.debug.safe_arg_names(len(t.leaves)))
        if discharge.has_state(jaxpr):
            # References: their contents in, the written ones' new contents out.
            hoisted, ref_consts = discharge.hoist_ref_consts(jaxpr)
            jaxpr, written = discharge.discharge_state(hoisted)
            asked = (False,) * len(ref_consts) + tuple(donated)
            donated = tuple(d or i in written for i, d in enumerate(asked))
            names = [""] * len(ref_consts) + names
            refs = (ref_consts, written, len(t.jaxpr.out_avals))
        lowered = dispatch.lower_jaxpr(
            jaxpr,
            name=wrapped._name,
            device=device,
            out_committed=committed,
            donated_invars=donated,
            keep_unused=wrapped._keep_unused,
            arg_names=names,
            placement=placement,
        )
        return Lowered(t, lowered, refs)


class Lowered(_Stage):
    """A function lowered to StableHLO, ready to compile."""

    def __init__(self, traced: TracedCall, lowered: dispatch.LoweredModule, refs: Any = None):
        super().__init__(traced)
        self._lowered = lowered
        self._refs = refs  # (closed-over refs, written, outputs) of a program with references

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The module as text: StableHLO (default), or ``dialect="hlo"`` for XLA HLO.

        Args:
          dialect: ``"stablehlo"`` or ``"hlo"``.
          debug_info: include source locations.
        """
        if dialect in (None, "stablehlo"):
            return self._lowered.as_text(debug_info=debug_info)
        if dialect == "hlo":
            from jaxlib import _jax  # noqa: PLC0415

            bytecode = dispatch.mlir.module_to_bytecode(self._lowered.module)
            return _jax.mlir.mlir_module_to_xla_computation(bytecode).as_hlo_text()
        raise ValueError(f"unknown dialect {dialect!r}: expected 'stablehlo' or 'hlo'")

    def compiler_ir(self, dialect: str | None = None) -> Any:
        """The lowered program: the StableHLO ``ir.Module`` (``dialect`` None or
        ``"stablehlo"``), or XLA's ``XlaComputation`` (``dialect="hlo"``), whose
        ``as_hlo_text()`` is the HLO that XLA receives.

        Raises:
          ValueError: for any other dialect.
        """
        if dialect in (None, "stablehlo"):
            return self._lowered.module
        if dialect == "hlo":
            return mlir.module_to_xla_computation(self._lowered.module)
        raise ValueError(f"unknown dialect: {dialect}")

    def compile(self) -> Compiled:
        """Compiles with XLA."""
        exe = dispatch.compile_lowered(self._lowered)
        if self._refs is not None:
            exe = discharge.RefCall(exe, *self._refs)  # type: ignore[assignment]  # calls alike
        return Compiled(self._t, exe)


class Compiled(_Stage):
    """A compiled function: call it with the dynamic arguments it was compiled for."""

    def __init__(self, traced: TracedCall, executable: dispatch.Executable):
        super().__init__(traced)
        self._exe = executable

    def as_text(self) -> str:
        """The optimized HLO that XLA compiled."""
        return "\n\n".join(m.to_string() for m in self._exe.xla.hlo_modules())

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost estimate (``flops``, ``bytes accessed``, ...)."""
        return dict(self._exe.xla.cost_analysis())

    @property
    def input_shardings(self) -> Any:
        """The sharding of each argument, as ``(args, kwargs)`` pytrees."""
        return tree_unflatten(self._t.in_tree, self._exe_shardings(True))

    @property
    def output_shardings(self) -> Any:
        """The sharding of each output, in the output's pytree structure."""
        return tree_unflatten(self._t.out_tree, self._exe_shardings(False))

    def _exe_shardings(self, inputs: bool) -> list[Any]:
        exe = self._exe
        if isinstance(exe, dispatch.SPMDExecutable):
            return list(exe.in_shardings if inputs else exe.out_shardings)
        n = len(exe.in_avals) if inputs else len(exe.out_avals)
        return [exe.sharding] * n

    def memory_analysis(self) -> Any:
        """XLA's memory statistics (argument, output, temp, generated code sizes)."""
        return self._exe.xla.get_compiled_memory_stats()

    def runtime_executable(self) -> Any:
        """jaxlib's loaded executable behind this function (for debugging, as JAX's).

        Example:
          >>> import polyjax, polyjax.numpy as jnp
          >>> exe = polyjax.jit(jnp.sin).lower(jnp.ones(3)).compile().runtime_executable()
          >>> type(exe).__name__
          'LoadedExecutable'
        """
        return self._exe.xla

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves, in_tree = tree_flatten((args, kwargs))
        if in_tree != self._t.in_tree:
            raise TypeError(
                "Function compiled with input pytree does not match the input pytree it was "
                f"called with: compiled for {self._t.in_tree}, called with {in_tree}"
            )
        names = self._t.debug.safe_arg_names(len(leaves))
        mismatches = []
        for name, x, expected in zip(names, leaves, self._exe.in_avals):
            got = shaped_abstractify(x)
            if got.shape != expected.shape or got.dtype != expected.dtype:
                mismatches.append(
                    f"Argument {name!r} compiled with {expected.str_short(short_dtypes=False)} "
                    f"and called with {got.str_short(short_dtypes=False)}"
                )
        if mismatches:
            raise TypeError(
                "Argument types differ from the types for which this computation was "
                "compiled. The mismatches are:\n" + "\n".join(mismatches)
            )
        _guards.check_execution_allowed(f"jit({self._exe.name})")
        return tree_unflatten(self._t.out_tree, self._exe.call(leaves))
