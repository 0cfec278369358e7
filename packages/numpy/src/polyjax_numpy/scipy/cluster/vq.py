"""`polyjax.scipy.cluster.vq`: assign observations to their nearest code.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.cluster.vq import vq
  >>> vq(np.float32([[0, 0], [2, 2.1]]), np.float32([[0, 0], [2, 2]]))
  (Array([0, 1], dtype=int32), Array([0.       , 0.0999999], dtype=float32))
"""

from __future__ import annotations

from typing import Any

from polyjax_numpy import numpy as jnp
from polyjax_numpy.numpy import _util as _u

__all__ = ["vq"]


def vq(obs: Any, code_book: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """The index of the nearest code of each observation, and the Euclidean distance to it.

    Args:
      obs: ``[M, N]`` observations (or ``[M]`` scalars).
      code_book: ``[K, N]`` codes (or ``[K]``).
      check_finite: accepted and ignored (no value checks under `jit`).

    Returns:
      ``(codes, distances)``: int32 indices (the first nearest on ties) and distances.

    Raises:
      ValueError: when the observations and codes differ in rank or dimension.
    """
    del check_finite
    _u.check_arraylike("vq", obs, code_book)
    obs, code_book = _u.promote_dtypes_inexact(jnp.asarray(obs), jnp.asarray(code_book))
    if obs.ndim != code_book.ndim or obs.ndim not in (1, 2):
        raise ValueError(
            f"vq: obs and code_book must both be 1-D or 2-D, got {obs.shape} and {code_book.shape}."
        )
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.shape[1] != code_book.shape[1]:
        raise ValueError(
            f"vq: observation and code dimensions differ: {obs.shape} and {code_book.shape}."
        )
    dist = jnp.sqrt(jnp.sum((obs[:, None, :] - code_book[None, :, :]) ** 2, axis=-1))
    codes = jnp.argmin(dist, axis=1).astype(jnp.int32)
    return codes, jnp.take_along_axis(dist, codes[:, None], axis=1)[:, 0]
