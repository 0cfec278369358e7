"""`polyjax.experimental.sparse`: sparse arrays, their primitives, and `sparsify`.

Formats (each a pytree whose leaves are its buffers, so it crosses `jit`,
`vmap` and `grad`):

- `BCOO` (module `bcoo`): batched coordinate format, ``data`` of shape
  ``batch + (nse,) + dense`` and ``indices`` of shape ``batch + (nse, n_sparse)``;
  the format the other operations use;
- `BCSR` (module `bcsr`): batched compressed-row matrices;
- `COO`, `CSR`, `CSC` (modules `coo`, `csr`): the legacy matrix formats.

Module map:

- `_base`: `JAXSparse`, the base class;
- `_primitive`: declares a sparse primitive from its `polyjax.numpy`
  implementation (abstract evaluation, lowering, jvp, transpose, batching);
- `util`: `SparseInfo` and the efficiency warning/error classes;
- `bcoo`, `bcsr`, `coo`, `csr`: one format each, with its primitives;
- `api`: `empty`, `eye`, `todense` (any format);
- `transform`: `sparsify`;
- `ad`: sparse-aware `grad`, `value_and_grad`, `jacfwd`, `jacrev`, `jacobian`;
- `random`: `random_bcoo`;
- `linalg`: `spsolve`, `lobpcg_standard`.

Example:
  >>> import polyjax.numpy as jnp
  >>> from polyjax.experimental import sparse
  >>> m = sparse.BCOO.fromdense(jnp.array([[0.0, 1.0], [2.0, 0.0]]))
  >>> m @ jnp.array([1.0, 10.0])
  Array([10.,  2.], dtype=float32)
"""

from polyjax.experimental.sparse import (
    ad,
    api,
    bcoo,
    bcsr,
    coo,
    csr,
    linalg,
    random,
    transform,
    util,
)
from polyjax.experimental.sparse._base import JAXSparse
from polyjax.experimental.sparse.ad import grad, jacfwd, jacobian, jacrev, value_and_grad
from polyjax.experimental.sparse.api import empty, eye, todense, todense_p
from polyjax.experimental.sparse.bcoo import (
    BCOO,
    bcoo_broadcast_in_dim,
    bcoo_concatenate,
    bcoo_conv_general_dilated,
    bcoo_dot_general,
    bcoo_dot_general_p,
    bcoo_dot_general_sampled,
    bcoo_dot_general_sampled_p,
    bcoo_dynamic_slice,
    bcoo_extract,
    bcoo_extract_p,
    bcoo_fromdense,
    bcoo_fromdense_p,
    bcoo_gather,
    bcoo_multiply_dense,
    bcoo_multiply_sparse,
    bcoo_reduce_sum,
    bcoo_reshape,
    bcoo_rev,
    bcoo_slice,
    bcoo_sort_indices,
    bcoo_sort_indices_p,
    bcoo_spdot_general_p,
    bcoo_squeeze,
    bcoo_sum_duplicates,
    bcoo_sum_duplicates_p,
    bcoo_todense,
    bcoo_todense_p,
    bcoo_transpose,
    bcoo_transpose_p,
    bcoo_update_layout,
)
from polyjax.experimental.sparse.bcsr import (
    BCSR,
    bcsr_broadcast_in_dim,
    bcsr_concatenate,
    bcsr_dot_general,
    bcsr_dot_general_p,
    bcsr_extract,
    bcsr_extract_p,
    bcsr_fromdense,
    bcsr_fromdense_p,
    bcsr_sum_duplicates,
    bcsr_todense,
    bcsr_todense_p,
)
from polyjax.experimental.sparse.coo import (
    COO,
    coo_fromdense,
    coo_fromdense_p,
    coo_matmat,
    coo_matmat_p,
    coo_matvec,
    coo_matvec_p,
    coo_todense,
    coo_todense_p,
)
from polyjax.experimental.sparse.csr import (
    CSC,
    CSR,
    csr_fromdense,
    csr_fromdense_p,
    csr_matmat,
    csr_matmat_p,
    csr_matvec,
    csr_matvec_p,
    csr_todense,
    csr_todense_p,
)
from polyjax.experimental.sparse.random import random_bcoo
from polyjax.experimental.sparse.transform import sparsify
from polyjax.experimental.sparse.util import (
    CuSparseEfficiencyWarning,
    SparseEfficiencyError,
    SparseEfficiencyWarning,
)

__all__ = [
    "BCOO",
    "BCSR",
    "COO",
    "CSC",
    "CSR",
    "CuSparseEfficiencyWarning",
    "JAXSparse",
    "SparseEfficiencyError",
    "SparseEfficiencyWarning",
    "ad",
    "api",
    "bcoo",
    "bcoo_broadcast_in_dim",
    "bcoo_concatenate",
    "bcoo_conv_general_dilated",
    "bcoo_dot_general",
    "bcoo_dot_general_p",
    "bcoo_dot_general_sampled",
    "bcoo_dot_general_sampled_p",
    "bcoo_dynamic_slice",
    "bcoo_extract",
    "bcoo_extract_p",
    "bcoo_fromdense",
    "bcoo_fromdense_p",
    "bcoo_gather",
    "bcoo_multiply_dense",
    "bcoo_multiply_sparse",
    "bcoo_reduce_sum",
    "bcoo_reshape",
    "bcoo_rev",
    "bcoo_slice",
    "bcoo_sort_indices",
    "bcoo_sort_indices_p",
    "bcoo_spdot_general_p",
    "bcoo_squeeze",
    "bcoo_sum_duplicates",
    "bcoo_sum_duplicates_p",
    "bcoo_todense",
    "bcoo_todense_p",
    "bcoo_transpose",
    "bcoo_transpose_p",
    "bcoo_update_layout",
    "bcsr",
    "bcsr_broadcast_in_dim",
    "bcsr_concatenate",
    "bcsr_dot_general",
    "bcsr_dot_general_p",
    "bcsr_extract",
    "bcsr_extract_p",
    "bcsr_fromdense",
    "bcsr_fromdense_p",
    "bcsr_sum_duplicates",
    "bcsr_todense",
    "bcsr_todense_p",
    "coo",
    "coo_fromdense",
    "coo_fromdense_p",
    "coo_matmat",
    "coo_matmat_p",
    "coo_matvec",
    "coo_matvec_p",
    "coo_todense",
    "coo_todense_p",
    "csr",
    "csr_fromdense",
    "csr_fromdense_p",
    "csr_matmat",
    "csr_matmat_p",
    "csr_matvec",
    "csr_matvec_p",
    "csr_todense",
    "csr_todense_p",
    "empty",
    "eye",
    "grad",
    "jacfwd",
    "jacobian",
    "jacrev",
    "linalg",
    "random",
    "random_bcoo",
    "sparsify",
    "todense",
    "todense_p",
    "transform",
    "util",
    "value_and_grad",
]
