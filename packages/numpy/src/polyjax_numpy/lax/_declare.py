"""Declaring a lax primitive: its abstract evaluation, impl, lowering and rules in one call.

Every lax primitive is declared through `standard_primitive` (or, for a primitive
object that must exist before its rules, `define_rules`). The call names each
rule the primitive has, so a newcomer finds all of them in one place:

    sin_p = standard_primitive(
        "sin", _sin_abstract_eval, _sin_lowering,
        jvp=_sin_jvp, batching="vectorized",
    )

The eager implementation is a compiled one-primitive executable
(`dispatch.apply_primitive`) unless `impl=` gives another. Each rule goes into
the table of the transformation that owns it (ARCHITECTURE decision 3), where a
missing one is a `NotImplementedError` naming the primitive and the
transformation. Rules that need the primitive object itself are named by their
parts too: `jvp_terms` (one tangent term per input, `ad.defjvp`),
`jvp_ans_terms` (terms that also see the output, `ad.defjvp2`) and
`linear_transpose` (a linear primitive's transpose, `ad.deflinear2`).

Example:
  >>> import numpy as np
  >>> from jaxlib.mlir.dialects import stablehlo as hlo
  >>> from polyjax_core.abstract_values import ShapedArray
  >>> my_neg_p = standard_primitive(
  ...     "my_neg",
  ...     lambda x: ShapedArray(x.shape, x.dtype),
  ...     lambda ctx, x: [hlo.negate(x)],
  ...     batching="vectorized",
  ... )
  >>> my_neg_p.bind(np.float32(2.0))
  Array(-2., dtype=float32)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Literal

from polyjax_core import aval_sharding
from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad, dispatch, mlir
from polyjax_interpreters import batching as _vmap  # `batching` names a keyword below
from polyjax_interpreters import discharge as _discharge
from polyjax_interpreters import partial_eval as pe
from polyjax_numpy.lax._sharding_rules import REDUCTION_RULES, default_rule

__all__ = ["define_rules", "standard_primitive"]

Rule = Callable[..., Any]


def standard_primitive(
    name: str,
    abstract_eval: Rule | None = None,
    lowering: Rule | None = None,
    *,
    multiple_results: bool = False,
    **rules: Any,
) -> Primitive:
    """A new primitive `name` with its rules (see `define_rules` for the keywords).

    Args:
      name: the primitive's name, as printed in jaxprs.
      abstract_eval: `rule(*avals, **params) -> aval(s)`.
      lowering: the default StableHLO lowering, `rule(ctx, *values, **params)`.
      multiple_results: whether the primitive returns a list of outputs.
      **rules: the other rules, by the keywords of `define_rules`.

    Returns:
      The primitive.
    """
    prim = Primitive(name)
    prim.multiple_results = multiple_results
    return define_rules(prim, abstract_eval, lowering, **rules)


def define_rules(
    prim: Primitive,
    abstract_eval: Rule | None = None,
    lowering: Rule | None = None,
    *,
    effectful: bool = False,
    impl: Rule | None = None,
    lowering_platform: str | None = None,
    print_params: Rule | None = None,
    jvp: Rule | Literal["zero"] | None = None,
    jvp_terms: Sequence[Rule | None] | None = None,
    jvp_ans_terms: Sequence[Rule | None] | None = None,
    transpose: Rule | None = None,
    linear_transpose: Rule | None = None,
    batching: Rule | Literal["vectorized", "broadcasting"] | None = None,
    axis_batching: Rule | None = None,
    partial_eval: Rule | None = None,
    dce: Rule | None = None,
    sharding: Rule | None = None,
    discharge: Rule | None = None,
) -> Primitive:
    """Gives `prim` its eager impl and the rules named, each in its transformation's table.

    Args:
      prim: the primitive.
      abstract_eval: its abstract evaluation; with `effectful`, one returning
        `(avals, effects)`.
      impl: the eager implementation, when it is not the usual compiled
        one-primitive executable.
      lowering: its StableHLO lowering, for every platform unless
        `lowering_platform` names one (`"cpu"`).
      print_params: which params a printed jaxpr shows (`Primitive.print_params`).
      jvp: `rule(primals, tangents, **params) -> (primals_out, tangents_out)`, or
        `"zero"` for outputs with zero tangents.
      jvp_terms: the jvp as a sum of one term per input,
        `term(tangent, *primals, **params)` (None for an input without one).
      jvp_ans_terms: as `jvp_terms`, each term also given the output:
        `term(tangent, ans, *primals, **params)`.
      transpose: `rule(cts, *args, **params) -> cts_in`.
      linear_transpose: for a primitive linear in its inputs, the transpose
        `rule(ct, *args, **params) -> cts_in` of a nonzero cotangent; the jvp
        applies the primitive to the tangents, unless a `jvp` form gives another.
      batching: `rule(args, dims, **params) -> (out, out_dims)`, or
        `"vectorized"` (the operation applies to a stacked operand as it is) or
        `"broadcasting"` (elementwise with rank broadcasting).
      axis_batching: a batching rule that also gets the axis data.
      partial_eval: the known/unknown split rule of `partial_eval_jaxpr_custom`.
      dce: the dead-code elimination rule.
      sharding: the sharding rule, `rule(out_avals, in_avals, **params) -> spec(s)`
        (explicit mode); default: the one `_sharding_rules.DEFAULT_RULES` names
        for the primitive, if any (add a new primitive's name there, or pass one).
      discharge: the state-discharge rule of a primitive using mutable
        references, `rule(eqn, values, is_ref) -> (outs, new_contents)`
        (`polyjax_interpreters.discharge`).

    Returns:
      `prim`.
    """
    if sum(form is not None for form in (jvp, jvp_terms, jvp_ans_terms)) > 1:
        raise TypeError(
            f"define_rules({prim.name}): give at most one of jvp, jvp_terms and jvp_ans_terms."
        )
    if transpose is not None and linear_transpose is not None:
        raise TypeError(f"define_rules({prim.name}): give transpose or linear_transpose, not both.")
    if abstract_eval is not None:
        if effectful:
            prim.def_effectful_abstract_eval(abstract_eval)
        else:
            prim.def_abstract_eval(abstract_eval)
    prim.def_impl(impl or functools.partial(dispatch.apply_primitive, prim))
    if lowering is not None:
        mlir.register_lowering(prim, lowering, platform=lowering_platform)
    if print_params is not None:
        prim.print_params = print_params
    if linear_transpose is not None:
        ad.deflinear2(prim, linear_transpose)
    if jvp == "zero":
        ad.defjvp_zero(prim)
    elif jvp is not None:
        ad.primitive_jvps[prim] = jvp
    if jvp_terms is not None:
        ad.defjvp(prim, *jvp_terms)
    if jvp_ans_terms is not None:
        ad.defjvp2(prim, *jvp_ans_terms)
    if transpose is not None:
        ad.primitive_transposes[prim] = transpose
    if batching == "vectorized":
        _vmap.defvectorized(prim)
    elif batching == "broadcasting":
        _vmap.defbroadcasting(prim)
    elif batching is not None:
        _vmap.primitive_batchers[prim] = batching
    if axis_batching is not None:
        _vmap.axis_primitive_batchers[prim] = axis_batching
    if partial_eval is not None:
        pe.partial_eval_jaxpr_custom_rules[prim] = partial_eval
    if dce is not None:
        pe.dce_rules[prim] = dce
    if discharge is not None:
        _discharge.discharge_rules[prim] = discharge
    sharding = sharding or default_rule(prim.name)
    if sharding is not None:
        aval_sharding.register_rule(prim, sharding)
    if prim.name in REDUCTION_RULES:
        aval_sharding.register_reduction_rule(prim, REDUCTION_RULES[prim.name])
    return prim


# add_any (autodiff's sum of tangents, declared in interpreters) is typed as lax's
# add: explicit shardings and unreduced axes flow through gradients' sums.
aval_sharding.register_rule(ad.add_any_p, default_rule("add_any"))
aval_sharding.register_reduction_rule(ad.add_any_p, REDUCTION_RULES["add_any"])
