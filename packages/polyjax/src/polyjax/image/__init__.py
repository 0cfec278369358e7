"""polyjax.image: resizing, scaling and translating images, as in ``jax.image``.

`scale_and_translate` resamples an image along chosen axes: output pixel `o`
along an axis of input size `n` samples the input at the continuous
coordinate ``s = (o + 0.5 - translation) / scale - 0.5`` (pixel centers at
integers), as a weighted sum of input pixels ``i`` with weights
``kernel((i - s) / k)``, normalized to sum to one, where the kernel's width
factor ``k`` is ``max(1 / scale, 1)`` with antialiasing (a downscaling
kernel is widened so that it averages) and 1 without. Outputs whose
sample falls outside ``[-0.5, n - 0.5]`` are 0. Kernels: `linear`
(triangle), `cubic` (Keys, a = -0.5), `lanczos3`, `lanczos5`.

`resize` maps the whole image onto a new shape (scale ``out / in`` per axis,
no translation); `nearest` takes input pixel ``floor((o + 0.5) * in / out)``.
Each axis is one matrix product (`HIGHEST` precision by default), so resizing
differentiates and batches.

Example:
  >>> import numpy as np
  >>> from polyjax import image
  >>> image.resize(np.array([0.0, 1.0], np.float32), (4,), "linear")
  Array([0.  , 0.25, 0.75, 1.  ], dtype=float32)
"""

from polyjax.image._resize import ResizeMethod, resize, scale_and_translate

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
