"""Modified Bessel functions of the first kind of orders 0 and 1, plain and scaled.

The exponentially scaled forms `i0e(x) = exp(-|x|) I0(x)` and `i1e` are lax
primitives; the plain ones multiply back by `exp(|x|)` (and overflow to inf
where the true value does, near |x| = 89 in float32).
"""

from __future__ import annotations

from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special._common import inexact_args


def i0e(x: ArrayLike) -> Any:
    """Exponentially scaled modified Bessel function of order 0, `exp(-|x|) I0(x)`.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import special
      >>> special.i0e(np.array([0.0, 1.0]))
      Array([1.        , 0.46575963], dtype=float32)
    """
    (x,) = inexact_args("i0e", x)
    return lax.bessel_i0e(x)


def i0(x: ArrayLike) -> Any:
    """Modified Bessel function of the first kind of order 0, `I0(x)`, elementwise.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import special
      >>> special.i0(np.array([0.0, 1.0]))
      Array([1.      , 1.266066], dtype=float32)
    """
    (x,) = inexact_args("i0", x)
    return jnp.i0(x)


def i1e(x: ArrayLike) -> Any:
    """Exponentially scaled modified Bessel function of order 1, `exp(-|x|) I1(x)`.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import special
      >>> special.i1e(np.array([0.0, 1.0]))
      Array([0.        , 0.20791042], dtype=float32)
    """
    (x,) = inexact_args("i1e", x)
    return lax.bessel_i1e(x)


def i1(x: ArrayLike) -> Any:
    """Modified Bessel function of the first kind of order 1, `I1(x)`, elementwise.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import special
      >>> special.i1(np.array([0.0, 1.0]))
      Array([0.        , 0.5651591], dtype=float32)
    """
    (x,) = inexact_args("i1", x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i1e(x)
