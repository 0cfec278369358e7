"""Computing symbolic dimension expressions in StableHLO, from the dimension variables.

A `DimExpr` is a polynomial over dimension variables whose factors may be opaque
`floordiv`/`mod`/`max`/`min` atoms. Lowering evaluates it on `tensor<i32>`
values: the variables are the leading arguments of the function being built,
and each sum, product and atom becomes one StableHLO integer op. `floordiv` and
`mod` follow Python's floor semantics (StableHLO's `divide`/`remainder`
truncate toward zero), so results agree with `DimExpr.evaluate`.

This walks the polynomial representation core keeps in `DimExpr._poly`: a tuple
of `(monomial, coefficient)` pairs, each monomial a tuple of `(factor,
exponent)` pairs, each factor with `op` (`"var"` or an operation name) and
`args` (`(name,)` or two polynomials).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

__all__ = ["eval_dim"]

Const = Callable[[int], ir.Value]


def eval_dim(values: Mapping[str, ir.Value], dim: Any, const: Const) -> ir.Value:
    """The `tensor<i32>` value of the dimension expression `dim`.

    Args:
      values: dimension variable name -> its `tensor<i32>` value.
      dim: a `DimExpr`.
      const: makes a `tensor<i32>` constant from an int.

    Raises:
      KeyError: a variable of `dim` has no value (the function has no such
        dimension argument).
    """
    return _poly(values, dim._poly, const)


def _poly(values: Mapping[str, ir.Value], poly: tuple, const: Const) -> ir.Value:
    total: ir.Value | None = None
    for monomial, coeff in poly:
        term: ir.Value | None = None
        for factor, exponent in monomial:
            v = _factor(values, factor, const)
            for _ in range(exponent):
                term = v if term is None else hlo.multiply(term, v)
        first = total is None
        # Later terms are added or subtracted, so they need only the magnitude.
        c = coeff if first else abs(coeff)
        if term is None:  # the constant term
            term = const(c)
        elif c != 1:
            term = hlo.multiply(term, const(c))
        if total is None:
            total = term
        elif coeff < 0:
            total = hlo.subtract(total, term)
        else:
            total = hlo.add(total, term)
    return total if total is not None else const(0)


def _factor(values: Mapping[str, ir.Value], factor: Any, const: Const) -> ir.Value:
    if factor.op == "var":
        name = factor.args[0]
        try:
            return values[name]
        except KeyError:
            raise KeyError(
                f"Dimension variable '{name}' has no value here; the function's dimension "
                f"arguments are {sorted(values)}."
            ) from None
    x = _poly(values, factor.args[0], const)
    y = _poly(values, factor.args[1], const)
    if factor.op == "max":
        return hlo.maximum(x, y)
    if factor.op == "min":
        return hlo.minimum(x, y)
    if factor.op in ("floordiv", "mod"):
        return _floor_divmod(x, y, const, factor.op == "mod")
    raise NotImplementedError(f"Lowering of dimension operation '{factor.op}'")


def _cmp(x: ir.Value, y: ir.Value, direction: str) -> ir.Value:
    return hlo.compare(
        x,
        y,
        hlo.ComparisonDirectionAttr.get(direction),
        compare_type=hlo.ComparisonTypeAttr.get("SIGNED"),
    )


def _floor_divmod(x: ir.Value, y: ir.Value, const: Const, want_mod: bool) -> ir.Value:
    # Truncated quotient and remainder, corrected when the remainder is non-zero
    # and its sign differs from the divisor's: then q -= 1 and r += y.
    q = hlo.divide(x, y)
    r = hlo.remainder(x, y)
    zero = const(0)
    # The sign test is a comparison of booleans, not `xor`: shape refinement folds
    # comparisons of constants but not `xor`, and must fold this to a constant.
    signs_differ = hlo.compare(
        _cmp(r, zero, "LT"),
        _cmp(y, zero, "LT"),
        hlo.ComparisonDirectionAttr.get("NE"),
        compare_type=hlo.ComparisonTypeAttr.get("UNSIGNED"),
    )
    fix = hlo.and_(_cmp(r, zero, "NE"), signs_differ)
    if want_mod:
        return hlo.select(fix, hlo.add(r, y), r)
    return hlo.select(fix, hlo.subtract(q, const(1)), q)
