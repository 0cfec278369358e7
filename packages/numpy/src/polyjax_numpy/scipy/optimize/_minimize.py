"""`minimize`: SciPy's entry point to the unconstrained minimizers, as JAX has it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from polyjax_numpy import numpy as jnp
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.scipy.optimize._bfgs import minimize_bfgs
from polyjax_numpy.scipy.optimize._lbfgs import minimize_lbfgs

__all__ = ["OptimizeResults", "minimize"]

_LBFGS = "l-bfgs-experimental-do-not-rely-on-this"


class OptimizeResults(NamedTuple):
    """The result of `minimize`.

    Attributes:
      x: the final point.
      success: whether the method converged.
      status: the method's status code (for BFGS: 0 converged, 1 maximum
        iterations reached, 3 zoom failed, 4 not a descent direction, 5 line
        search ran out of evaluations).
      fun: the function's value at `x`.
      jac: its gradient at `x`.
      hess_inv: the final inverse Hessian approximation (None for L-BFGS).
      nfev: function evaluations.
      njev: gradient evaluations.
      nit: iterations.
    """

    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def minimize(
    fun: Callable[..., Any],
    x0: Any,
    args: tuple = (),
    *,
    method: str,
    tol: float | None = None,
    options: Mapping[str, Any] | None = None,
) -> OptimizeResults:
    """Minimizes a scalar function of a vector, as `scipy.optimize.minimize`.

    Gradients come from automatic differentiation. The whole minimization is
    one `lax.while_loop`, so `minimize` works under `jit` (it is not itself
    differentiable).

    Args:
      fun: the objective, `fun(x, *args) -> scalar`, differentiable in `x`.
      x0: the starting point, a vector of shape `(n,)`.
      args: extra arguments of `fun`.
      method: "BFGS" (case-insensitive), or "l-bfgs-experimental-do-not-rely-on-this".
      tol: the gradient-norm tolerance (sets the `gtol` option unless given).
      options: solver options: `maxiter` for every method; BFGS also takes
        `norm`, `gtol` and `line_search_maxiter`; L-BFGS takes `norm`, `maxcor`,
        `ftol`, `gtol`, `maxfun`, `maxgrad` and `maxls`.

    Returns:
      An `OptimizeResults`.

    Raises:
      ValueError: an unknown method, or `x0` that is not a vector.
      TypeError: an unknown option.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy.optimize import minimize
      >>> res = minimize(lambda x: ((x - 3.0) ** 2).sum(), np.zeros(2), method="BFGS")
      >>> res.x, res.success
      (Array([3., 3.], dtype=float32), Array(True, dtype=bool))
    """
    if not isinstance(args, tuple):
        raise TypeError(f"minimize: args must be a tuple, got {type(args).__name__}.")
    _u.check_arraylike("minimize", x0)
    (x0,) = _u.promote_dtypes_inexact(jnp.asarray(x0))
    if x0.ndim != 1:
        raise ValueError(f"minimize: x0 must be a vector (shape (n,)), got shape {x0.shape}.")
    options = dict(options or {})
    if tol is not None:
        options.setdefault("gtol", tol)

    def objective(x: Any) -> Any:
        return fun(x, *args)

    name = method.lower()
    if name not in ("bfgs", _LBFGS):
        raise ValueError(f"minimize: method {method!r} is not supported (use 'BFGS').")
    if "norm" in options:
        options["norm_order"] = options.pop("norm")
    if name == "bfgs":
        r = minimize_bfgs(objective, x0, **options)
        hess_inv = r.H_k
    else:  # L-BFGS keeps no inverse Hessian, only its recent updates.
        r = minimize_lbfgs(objective, x0, **options)
        hess_inv = None
    return OptimizeResults(
        x=r.x_k,
        success=r.converged & ~r.failed,
        status=r.status,
        fun=r.f_k,
        jac=r.g_k,
        hess_inv=hess_inv,
        nfev=r.nfev,
        njev=r.ngev,
        nit=r.k,
    )
