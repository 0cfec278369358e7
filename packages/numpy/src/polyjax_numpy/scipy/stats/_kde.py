"""`gaussian_kde`: a Gaussian kernel density estimate, as `scipy.stats.gaussian_kde`.

The estimate at `x` is `sum_i w_i N(x; data_i, C)`: one Gaussian per data
point, all with the covariance `C = factor^2 cov(data)`, where the weighted
sample covariance is scaled by Scott's (`neff^(-1/(d+4))`) or Silverman's
(`(neff (d+2)/4)^(-1/(d+4))`) factor, a given number, or a function of the
estimate; `neff = 1 / sum(w_i^2)` is the effective sample size.

Densities, integrals and samples all whiten with the Cholesky factor of the
relevant covariance. The estimate is a pytree (its arrays are the leaves), so
it can be passed through `jit` and `vmap`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from polyjax_core.tree_util import register_pytree_node_class
from polyjax_numpy import nn, random
from polyjax_numpy import numpy as jnp
from polyjax_numpy.lax import linalg as lax_linalg
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.scipy.special import ndtr

__all__ = ["gaussian_kde"]


def _as_points(name: str, points: Any, d: int) -> Any:
    """`points` as a `(d, m)` array (a vector is `m` points when `d == 1`, else one point)."""
    points = jnp.atleast_2d(jnp.asarray(points))
    if points.shape[0] != d:
        if points.shape == (1, d):
            return points.T
        raise ValueError(
            f"gaussian_kde.{name}: points have dimension {points.shape[0]}, the data {d}."
        )
    return points


def _log_gauss(diff: Any, cov: Any) -> Any:
    """`log N(diff; 0, cov)` for `diff` of shape `(d, ...)`."""
    d = cov.shape[0]
    chol = jnp.linalg.cholesky(cov)
    flat = jnp.reshape(diff, (d, -1))
    z = lax_linalg.triangular_solve(chol, flat, left_side=True, lower=True)
    z = jnp.reshape(z, diff.shape)
    log_det = jnp.sum(jnp.log(jnp.diagonal(chol)))
    return -0.5 * jnp.sum(z * z, axis=0) - log_det - 0.5 * d * math.log(2 * math.pi)


@register_pytree_node_class
class gaussian_kde:  # noqa: N801 (SciPy's name)
    """A Gaussian kernel density estimate of `d`-dimensional data.

    Args:
      dataset: the data, of shape `(d, n)` (a vector is `n` scalars).
      bw_method: "scott" (default), "silverman", a number (the factor itself),
        or a function of the estimate returning the factor.
      weights: optional non-negative weights of the data points (normalized).

    Attributes:
      dataset, weights, d, n, neff, factor, covariance, inv_cov: as in SciPy.

    Raises:
      ValueError: fewer than two data points, weights of the wrong shape, or an
        unknown `bw_method`.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy.stats import gaussian_kde
      >>> kde = gaussian_kde(np.array([0.0, 1.0, 2.0]))
      >>> kde.evaluate(np.array([1.0]))
      Array([0.31815624], dtype=float32)
    """

    def __init__(
        self,
        dataset: Any,
        bw_method: str | float | Callable[[Any], Any] | None = None,
        weights: Any = None,
    ):
        _u.check_arraylike("gaussian_kde", dataset)
        (dataset,) = _u.promote_dtypes_inexact(jnp.atleast_2d(jnp.asarray(dataset)))
        d, n = dataset.shape
        if n < 2:
            raise ValueError(
                f"gaussian_kde: dataset needs more than one point, got shape {dataset.shape}."
            )
        if weights is None:
            weights = jnp.full((n,), 1.0 / n, dataset.dtype)
        else:
            _u.check_arraylike("gaussian_kde", weights)
            weights = jnp.asarray(weights, dataset.dtype)
            if weights.shape != (n,):
                raise ValueError(
                    f"gaussian_kde: weights must have shape ({n},), got {weights.shape}."
                )
            weights = weights / jnp.sum(weights)
        self.dataset = dataset
        self.weights = weights
        self.d, self.n = d, n
        self.neff = 1 / jnp.sum(weights * weights)
        if bw_method is None or bw_method == "scott":
            factor = self.neff ** (-1.0 / (d + 4))
        elif bw_method == "silverman":
            factor = (self.neff * (d + 2) / 4.0) ** (-1.0 / (d + 4))
        elif callable(bw_method):
            factor = bw_method(self)
        elif isinstance(bw_method, str):
            raise ValueError(
                "gaussian_kde: bw_method must be 'scott', 'silverman', a number or a "
                f"callable, got {bw_method!r}."
            )
        else:
            factor = bw_method
        self.factor = jnp.asarray(factor, dataset.dtype)
        data_cov = jnp.atleast_2d(jnp.cov(dataset, rowvar=True, bias=False, aweights=weights))
        self.covariance = data_cov * self.factor**2
        self.inv_cov = jnp.linalg.inv(self.covariance)

    # Pytree: the arrays are leaves; the dimensions are static.
    _LEAVES = ("dataset", "weights", "neff", "factor", "covariance", "inv_cov")

    def tree_flatten(self) -> tuple[tuple, tuple]:
        return tuple(getattr(self, name) for name in self._LEAVES), (self.d, self.n)

    @classmethod
    def tree_unflatten(cls, aux: tuple, children: tuple) -> gaussian_kde:
        kde = object.__new__(cls)
        for name, value in zip(cls._LEAVES, children):
            setattr(kde, name, value)
        kde.d, kde.n = aux
        return kde

    def _log_terms(self, points: Any, cov: Any) -> Any:
        """`log(w_i N(point_j; data_i, cov))`, of shape `(n, m)`."""
        diff = self.dataset[:, :, None] - points[:, None, :]
        return _log_gauss(diff, cov) + jnp.log(self.weights)[:, None]

    def evaluate(self, points: Any) -> Any:
        """The estimated density at `points` (shape `(d, m)`, or `m` scalars when `d == 1`)."""
        return jnp.exp(self.logpdf(points))

    __call__ = evaluate
    pdf = evaluate

    def logpdf(self, points: Any) -> Any:
        """The log of the estimated density at `points`, without underflow far from the data."""
        points = _as_points("logpdf", points, self.d)
        return nn.logsumexp(self._log_terms(points, self.covariance), axis=0)

    def integrate_gaussian(self, mean: Any, cov: Any) -> Any:
        """The integral of the estimate times the Gaussian density `N(mean, cov)`."""
        mean = jnp.reshape(jnp.asarray(mean, self.dataset.dtype), (self.d, 1))
        cov = jnp.reshape(jnp.asarray(cov, self.dataset.dtype), (self.d, self.d))
        return jnp.exp(nn.logsumexp(self._log_terms(mean, self.covariance + cov)))

    def integrate_box_1d(self, low: Any, high: Any) -> Any:
        """The integral of a one-dimensional estimate over `[low, high]`.

        Raises:
          ValueError: the estimate is not one-dimensional.
        """
        if self.d != 1:
            raise ValueError("gaussian_kde.integrate_box_1d: the estimate must be 1-D.")
        sigma = jnp.sqrt(self.covariance[0, 0])
        data = self.dataset[0]
        mass = ndtr((high - data) / sigma) - ndtr((low - data) / sigma)
        return jnp.sum(self.weights * mass)

    def integrate_kde(self, other: gaussian_kde) -> Any:
        """The integral of the product of this estimate and `other`.

        Raises:
          ValueError: the estimates have different dimensions.
        """
        if other.d != self.d:
            raise ValueError(
                f"gaussian_kde.integrate_kde: dimensions differ ({self.d} and {other.d})."
            )
        log_terms = self._log_terms(other.dataset, self.covariance + other.covariance)
        log_terms = log_terms + jnp.log(other.weights)[None, :]
        return jnp.exp(nn.logsumexp(log_terms))

    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Any:
        """Draws samples from the estimate: a data point (by weight) plus Gaussian noise.

        Args:
          key: a PRNG key.
          shape: the batch shape of the samples.

        Returns:
          Samples of shape `(d, *shape)`.
        """
        shape = tuple(shape)
        key_index, key_noise = random.split(key)
        index = random.choice(key_index, self.n, shape, p=self.weights)
        noise = random.normal(key_noise, (self.d, *shape), self.dataset.dtype)
        chol = jnp.linalg.cholesky(self.covariance)
        flat = jnp.reshape(noise, (self.d, -1))
        noise = jnp.reshape(chol @ flat, noise.shape)
        return self.dataset[:, index] + noise

    def integrate_box(self, *args: Any, **kwargs: Any) -> Any:
        """Not implemented (as in JAX)."""
        raise NotImplementedError("gaussian_kde.integrate_box is not implemented.")

    def set_bandwidth(self, *args: Any, **kwargs: Any) -> Any:
        """Not implemented (as in JAX): build a new estimate with another `bw_method`."""
        raise NotImplementedError("gaussian_kde.set_bandwidth is not implemented.")
