"""The Box-Cox transforms `boxcox` and `boxcox1p`.

`boxcox(x, l) = (x^l - 1) / l`, computed as `expm1(l log x) / l` so that small
`l` keeps its precision, and `log x` at `l = 0`; `boxcox1p` is the same of `1 + x`
(through `log1p`). Negative `x` gives NaN (SciPy's real functions).
"""

from __future__ import annotations

from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special._common import inexact_args


def _transform(log_x: Any, lmbda: Any) -> Any:
    zero = lmbda == 0
    # The other branch is evaluated at a safe lambda so no 0 / 0 reaches the gradient.
    safe = jnp.where(zero, jnp.ones_like(lmbda), lmbda)
    return jnp.where(zero, log_x, jnp.expm1(safe * log_x) / safe)


def boxcox(x: ArrayLike, lmbda: ArrayLike) -> Any:
    """The Box-Cox transform `(x^lmbda - 1) / lmbda` (`log x` at `lmbda = 0`), elementwise.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import special
      >>> special.boxcox(np.array([0.5, 2.0]), 0.0)
      Array([-0.6931472,  0.6931472], dtype=float32)
    """
    x, lmbda = inexact_args("boxcox", x, lmbda)
    return _transform(jnp.log(x), lmbda)


def boxcox1p(x: ArrayLike, lmbda: ArrayLike) -> Any:
    """The Box-Cox transform of `1 + x`, accurate for small `x`, elementwise.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import special
      >>> special.boxcox1p(np.array([1e-8, 1.0]), 0.5)
      Array([1.000000e-08, 8.284271e-01], dtype=float32)
    """
    x, lmbda = inexact_args("boxcox1p", x, lmbda)
    return _transform(jnp.log1p(x), lmbda)
