"""Primitives whose value is trivial but whose presence means something: `copy_p`,
`dce_sink`, and the exported `stop_gradient_p`.

- `copy_p` is the identity as a primitive: eagerly a new buffer, under `jit` a
  value XLA may alias or not (`jnp.copy` semantics). Linear: its jvp and its
  transpose are `copy` again.
- `dce_sink(x)` binds `dce_sink_p`, which has no outputs and is never removed by
  polyjax's dead-code elimination: a value it takes stays computed in the jaxpr.
  With ``prevent_mlir_dce=True`` it lowers to a side-effecting
  ``stablehlo.custom_call @dce_sink``, which MLIR's and XLA's passes keep too (as
  JAX lowers it); otherwise to nothing.
- `stop_gradient_p` is the interpreters' primitive (its jvp is the AD layer's);
  here it gets its sharding rule, so lax exports it as JAX does.
"""

from __future__ import annotations

from typing import Any

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import aval_sharding
from polyjax_core.abstract_values import ShapedArray
from polyjax_interpreters.ad import stop_gradient_p
from polyjax_numpy.lax._declare import standard_primitive
from polyjax_numpy.lax._sharding_rules import default_rule

__all__ = ["copy_p", "dce_sink", "dce_sink_p", "stop_gradient_p"]

aval_sharding.register_rule(stop_gradient_p, default_rule("stop_gradient"))


# --- copy


def _copy_abstract_eval(x: ShapedArray) -> ShapedArray:
    return x


copy_p = standard_primitive(
    "copy",
    _copy_abstract_eval,
    lambda ctx, x: [x],
    linear_transpose=lambda ct, x: [copy_p.bind(ct)],
    batching="vectorized",
)


# --- dce_sink


def _dce_sink_abstract_eval(x: ShapedArray, *, prevent_mlir_dce: bool) -> list:
    return []


def _dce_sink_lowering(ctx: Any, x: ir.Value, *, prevent_mlir_dce: bool) -> list:
    if prevent_mlir_dce:
        hlo.CustomCallOp(
            [],
            [x],
            call_target_name=ir.StringAttr.get("dce_sink"),
            has_side_effect=ir.BoolAttr.get(True),
            backend_config=ir.DictAttr.get({}),
            api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4),
        )
    return []


def _dce_sink_jvp(primals: list, tangents: list, *, prevent_mlir_dce: bool) -> tuple:
    dce_sink_p.bind(*primals, prevent_mlir_dce=prevent_mlir_dce)
    return [], []


def _dce_sink_batch(args: list, dims: list, *, prevent_mlir_dce: bool) -> tuple:
    dce_sink_p.bind(*args, prevent_mlir_dce=prevent_mlir_dce)
    return [], []


def _dce_sink_keep(used_outputs: list, eqn: Any) -> tuple:
    return [True] * len(eqn.invars), eqn  # kept whatever is used


dce_sink_p = standard_primitive(
    "dce_sink",
    _dce_sink_abstract_eval,
    _dce_sink_lowering,
    multiple_results=True,
    jvp=_dce_sink_jvp,
    batching=_dce_sink_batch,
    dce=_dce_sink_keep,
)


def dce_sink(val: Any, *, prevent_mlir_dce: bool = False) -> None:
    """Keeps `val` computed: its equations survive dead-code elimination.

    Args:
      val: an array (or anything that converts to one).
      prevent_mlir_dce: also keep it through the compiler's own dead-code
        elimination (a side-effecting custom call that takes it).

    Returns:
      None.

    Example:
      >>> import numpy as np
      >>> from polyjax_core.make_jaxpr import make_jaxpr
      >>> print(make_jaxpr(lambda x: dce_sink(x * 2))(np.float32(1)))
      { lambda ; a:f32[]. let
          b:f32[] = mul a 2.0:f32[]
          dce_sink[prevent_mlir_dce=False] b
        in () }
    """
    dce_sink_p.bind(val, prevent_mlir_dce=bool(prevent_mlir_dce))
