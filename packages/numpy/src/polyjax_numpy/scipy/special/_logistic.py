"""The logistic function and its inverse, and SciPy's forms of softmax.

`softmax` and `log_softmax` are `polyjax.nn`'s, with SciPy's default of
normalizing over all axes (`axis=None`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import lax, nn
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special._common import inexact_args


def expit(x: ArrayLike) -> Any:
    """The logistic sigmoid `1 / (1 + exp(-x))`, elementwise.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import special
      >>> special.expit(np.array([0.0, 2.0]))
      Array([0.5     , 0.880797], dtype=float32)
    """
    (x,) = inexact_args("expit", x)
    return lax.logistic(x)


def logit(x: ArrayLike) -> Any:
    """The inverse of `expit`, `log(x / (1 - x))`, elementwise.

    `-inf` at 0, `inf` at 1, NaN outside `[0, 1]`.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import special
      >>> special.logit(np.array([0.5, 0.75]))
      Array([0.       , 1.0986123], dtype=float32)
    """
    (x,) = inexact_args("logit", x)
    # log1p keeps the precision of 1 - x for x near 0.
    return jnp.log(x) - jnp.log1p(-x)


def softmax(x: ArrayLike, /, *, axis: int | Sequence[int] | None = None) -> Any:
    """`exp(x) / sum(exp(x))` over `axis` (all axes by default), without overflow.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import special
      >>> special.softmax(np.array([[0.0, 0.0], [0.0, 0.0]]))
      Array([[0.25, 0.25],
             [0.25, 0.25]], dtype=float32)
    """
    return nn.softmax(x, axis=axis)


def log_softmax(x: ArrayLike, /, *, axis: int | Sequence[int] | None = None) -> Any:
    """`x - logsumexp(x)` over `axis` (all axes by default).

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import special
      >>> special.log_softmax(np.array([0.0, 0.0]))
      Array([-0.6931472, -0.6931472], dtype=float32)
    """
    return nn.log_softmax(x, axis=axis)
