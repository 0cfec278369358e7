"""Every public function of `polyjax.numpy`, `jnp.linalg` and `jnp.fft` in one table, checked
four ways:

1. eager against NumPy on the same inputs: values, and the result dtype by JAX's rule. The
   inputs are float32/int32/bool/complex64, so NumPy's dtype is JAX's once 64-bit types are
   canonicalized (x64 is off); where JAX's rule differs otherwise the entry names the dtype;
2. `jit` of the call against eager (static arguments are closed over, arrays are traced);
3. `vmap` over a leading batch axis of the array arguments against a Python loop of eager calls
   (entries where batching has no meaning say why);
4. completeness: every name of the three namespaces has an entry, or is in `EXCLUDED` (not a
   function of arrays) or in `KNOWN_BUGS` (a bug found here, awaiting a fix in a module someone
   else is editing).

Speed: one test per entry runs the three checks (so under pytest-xdist an entry's eager
executables compile on one worker). Each entry compiles once under `jit` and once under
`jit(vmap(...))` (vmap is checked inside `jit`, so its batching rules run once and compile into
one program); its eager loop reuses the eager executables of the unbatched call, because the
batch members have the unbatched shapes. Inputs are tiny and shared. The second member of
each batch is the first with its flattened values reversed: other values, same domain (a
symmetric positive definite matrix stays one, indices stay in range); entries whose inputs must
keep an order (sorted bins) leave those arguments unbatched.

Functions that need concrete values (a data-dependent result shape) are checked to raise
`ConcretizationTypeError` under `jit`, naming the user's line.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from polyjax_core.errors import ConcretizationTypeError
from polyjax_interpreters.array import Array
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_numpy import numpy as jnp

# A breadth sweep: the main test run has it; the isolated re-run of this package skips it.
pytestmark = pytest.mark.sweep

f32, i32, u8, c64 = np.float32, np.int32, np.uint8, np.complex64

# ---------------------------------------------------------------------------
# Shared inputs (size <= 9)

X = np.array([[0.5, -1.25, 2.0], [3.5, -0.75, 1.5]], f32)
Y = np.array([[1.5, 0.25, -2.0], [0.5, 2.75, -1.0]], f32)
P = np.array([[0.5, 1.25, 2.0], [3.5, 0.75, 1.5]], f32)  # positive
U = np.array([[0.1, -0.5, 0.9], [-0.3, 0.7, 0.2]], f32)  # inside (-1, 1)
XN = np.array([[0.5, np.nan, 2.0], [3.5, -0.75, np.nan]], f32)  # with NaNs
Z = np.array([1.0, np.inf, -np.inf, np.nan, -2.0, 0.0], f32)  # the special values
V = np.array([0.5, -1.25, 2.0, 3.5], f32)
W = np.array([1.0, 0.25, -2.0, 0.5], f32)
V3 = np.array([1.0, 2.0, 3.0], f32)
W3 = np.array([-1.0, 0.5, 2.0], f32)
S0 = np.float32(1.5)  # rank 0
X3 = np.arange(6, dtype=f32).reshape(1, 2, 3) * 0.5 - 1.0
I = np.array([[3, -1, 4], [1, -5, 9]], i32)  # noqa: E741
J = np.array([[2, 7, -3], [8, 2, 5]], i32)  # no zeros: a divisor
N = np.array([[0, 1, 2], [3, 1, 0]], i32)  # small, non-negative: shift amounts, counts
IV = np.array([1, 3, 0, 3, 2, 1], i32)
IDX = np.array([2, 0, 1], i32)
B = np.array([[True, False, True], [False, False, True]])
B2 = np.array([[True, True, False], [False, True, True]])
C = np.array([[1 + 2j, -0.5 + 1j, 3 - 1j], [0.5 - 2j, 2 + 0j, -1 - 1j]], c64)
CV = np.array([1 + 2j, -0.5 + 1j, 3 - 1j, 0.5 - 2j], c64)
A = np.array([[4.0, 1.0, -1.0], [2.0, 5.0, 0.5], [-1.0, 1.0, 6.0]], f32)
SPD = (A @ A.T).astype(f32)
TALL = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 4.0]], f32)
RHS = np.array([1.0, -2.0, 0.5], f32)
SORTED = np.array([-1.0, 0.0, 1.5, 3.0], f32)
U8 = np.array([[7, 200, 3], [0, 255, 16]], u8)


class S:
    """A static argument: closed over, never traced (arrays that must stay constants)."""

    def __init__(self, value: Any):
        self.value = value


def _is_traced(v: Any) -> bool:
    return isinstance(v, np.ndarray | np.generic)


def _leaves(obj: Any) -> list[Any]:
    """The traced arrays in an argument structure (lists and tuples are descended)."""
    if isinstance(obj, S):
        return []
    if isinstance(obj, list | tuple):
        return [leaf for item in obj for leaf in _leaves(item)]
    return [obj] if _is_traced(obj) else []


def _fill(obj: Any, it: Any) -> Any:
    """`obj` with its traced arrays replaced by the next values of `it`; statics unwrapped."""
    if isinstance(obj, S):
        return obj.value
    if isinstance(obj, list | tuple):
        return type(obj)(_fill(item, it) for item in obj)
    return next(it) if _is_traced(obj) else obj


def _flat(result: Any) -> list[np.ndarray]:
    """The result's arrays, in order (tuples, lists and named tuples are flattened)."""
    if isinstance(result, list | tuple):
        return [leaf for item in result for leaf in _flat(item)]
    return [np.asarray(result)]


def _resolve(module: Any, name: str) -> Any:
    return functools.reduce(getattr, name.split("."), module)


_NO_VMAP_ARGS = "no array arguments"


@dataclasses.dataclass
class Case:
    """One example call of a public function.

    Attributes:
      id: the test id: the public name, with a suffix when a name has several cases.
      name: the public name, dotted for submodules ("linalg.inv").
      args, kwargs: the call's arguments; NumPy arrays and scalars (`_is_traced`) are traced,
        everything else (and `S(...)`) is static.
      fn: the polyjax function (default: `name` in `jnp`).
      ref: the NumPy oracle, called with the same arguments (default: `name` in `np`); a
        string says why there is none (then only jit and vmap are checked).
      out_dtype: the result dtypes by JAX's rule, one per result array, where they differ from
        NumPy's canonicalized ones (or where there is no oracle).
      vmap: None, or why the function is not batched.
      in_axes: per traced array, 0 (batched) or None; default all batched.
      post: applied to the flat list of result arrays before any comparison (to compare what
        is defined: eigenvector signs, partition order).
      tol: relative and absolute tolerance for inexact results.
      concrete: the function needs concrete values: `jit` must raise ConcretizationTypeError.
    """

    id: str
    name: str
    args: tuple
    kwargs: dict
    fn: Callable[..., Any]
    ref: Callable[..., Any] | str
    out_dtype: tuple | None
    vmap: str | None
    in_axes: tuple | None
    post: Callable[[list], list] | None
    tol: float
    concrete: bool

    @functools.cached_property
    def arrays(self) -> list[Any]:
        return _leaves((self.args, tuple(self.kwargs.values())))

    def call(self, *arrays: Any) -> Any:
        """The polyjax function on `arrays` in place of the traced arguments."""
        args, kwargs = _fill((self.args, tuple(self.kwargs.values())), iter(arrays))
        return self.fn(*args, **dict(zip(self.kwargs, kwargs)))

    def numpy(self) -> Any:
        args, kwargs = _fill((self.args, tuple(self.kwargs.values())), iter(self.arrays))
        return self.ref(*args, **dict(zip(self.kwargs, kwargs)))


def case(
    name: str,
    *args: Any,
    id: str | None = None,  # noqa: A002 - pytest's word
    fn: Callable[..., Any] | None = None,
    ref: Callable[..., Any] | str | None = None,
    out_dtype: Any = None,
    vmap: str | None = None,
    in_axes: tuple | None = None,
    post: Callable[[list], list] | None = None,
    tol: float = 2e-5,
    concrete: bool = False,
    **kwargs: Any,
) -> Case:
    if ref is None:
        ref = _resolve(np, name)  # an AttributeError here: give `ref`
    if out_dtype is not None and not isinstance(out_dtype, tuple):
        out_dtype = (out_dtype,)
    c = Case(
        id or name,
        name,
        args,
        kwargs,
        fn or _resolve(jnp, name),
        ref,
        out_dtype,
        vmap,
        in_axes,
        post,
        tol,
        concrete,
    )
    if vmap is None and not c.arrays:
        c.vmap = _NO_VMAP_ARGS
    return c


def _sort_complex(leaves: list) -> list:
    return [np.sort_complex(np.asarray(x).ravel()) for x in leaves]


def _unit_columns(v: np.ndarray) -> np.ndarray:
    """Columns scaled by a unit number that makes their largest entry real and positive."""
    v = np.asarray(v)
    big = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
    return v * (np.conj(big) / np.abs(big))


def _partition_segments(kth: int) -> Callable[[list], list]:
    """Partition results: the `kth` entry, and the sets before and after it, in sorted order."""

    def post(leaves: list) -> list:
        x = np.asarray(leaves[0])
        return [np.sort(x[..., :kth], -1), x[..., kth], np.sort(x[..., kth + 1 :], -1)]

    return post


def _unary(names: str, x: np.ndarray, **kw: Any) -> list[Case]:
    return [case(n, x, **kw) for n in names.split()]


def _binary(names: str, x: np.ndarray, y: Any, **kw: Any) -> list[Case]:
    return [case(n, x, y, **kw) for n in names.split()]


def _filled(np_fn: Callable[..., Any]) -> Callable[..., Any]:
    """NumPy's in-place `np_fn(a, ...)` as a function returning the updated copy."""

    def ref(a, *args, inplace=None, **kwargs):
        out = np.array(a)
        np_fn(out, *args, **kwargs)
        return out

    return ref


def _vectorized(x, y):
    return x * y + 1


def _along(v):
    return v[::-1] * 2 + v[0]


def _piece_neg(x):
    return -x


def _piece_double(x):
    return x * 2


def _polydiv(u, v):
    """NumPy's quotient, and its remainder with JAX's length: `u`'s, zeros in front."""
    q, r = np.polydiv(u, v)
    return q, np.concatenate([np.zeros(len(u) - len(r), r.dtype), r])


def _lstsq(a, b):
    """NumPy's least squares, with JAX's rank-0 residual for a vector `b`."""
    x, resid, rank, s = np.linalg.lstsq(a, b)
    return x, resid.reshape(()), rank, s


def _searchsorted(a, v, method):
    """NumPy's searchsorted (it has one method)."""
    return np.searchsorted(a, v)


def _eig_values(leaves: list) -> list:
    """Eigenvalues in a defined order (eigenvectors are defined up to a phase: dropped)."""
    return [np.sort_complex(np.asarray(leaves[0]).ravel())]


def _svd_post(leaves: list) -> list:
    """`u`, `s`, and `v = vh^H` with each singular vector's phase fixed."""
    u, s, vh = leaves
    return [_unit_columns(u), s, _unit_columns(np.swapaxes(np.conj(vh), -1, -2))]


# ---------------------------------------------------------------------------
# The table

UFUNC_CASES = [
    *_unary(
        "abs absolute fabs negative positive sign square ceil floor trunc rint cbrt exp "
        "exp2 expm1 sin cos tan sinh cosh tanh arctan arcsinh asinh atan deg2rad degrees "
        "rad2deg radians sinc signbit spacing i0 isfinite isinf isnan isneginf isposinf "
        "nan_to_num iscomplex isreal real imag conj conjugate angle reciprocal modf frexp",
        X,
    ),
    *_unary("isfinite isinf isnan isneginf isposinf nan_to_num", Z),
    *_unary("sqrt log log2 log10 log1p", P),
    *_unary("arcsin arccos arctanh asin acos atanh", U),
    *_unary("arccosh acosh", P + f32(1)),
    *_unary("abs sign square negative", I),
    *_unary("invert bitwise_not bitwise_invert logical_not", B),
    *_unary("invert bitwise_not bitwise_invert bitwise_count", I),
    *_unary("abs sqrt exp log sign conj real imag angle isfinite iscomplex isreal", C),
    *_binary(
        "add subtract multiply divide true_divide maximum minimum fmax fmin arctan2 atan2 "
        "hypot copysign nextafter logaddexp logaddexp2 heaviside equal not_equal less "
        "less_equal greater greater_equal",
        X,
        Y,
    ),
    *_binary("power pow float_power", P, Y),
    *_binary("fmod mod remainder floor_divide divmod", X, Y),
    *_binary("fmod mod remainder floor_divide divmod gcd lcm", I, J),
    *_binary("add multiply maximum", I, X),  # int32 with float32: float32
    *_binary(
        "bitwise_and bitwise_or bitwise_xor left_shift right_shift bitwise_left_shift "
        "bitwise_right_shift power",
        I,
        N,
    ),
    *_binary("logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor", B, B2),
    *_binary("add multiply divide power", C, C[::-1]),
    case("add", X, 2, id="add-weak_int"),
    case("multiply", I, 2.5, id="multiply-weak_float"),
    case("ldexp", X, N),
    *_binary("maximum minimum fmax fmin", XN, X),  # NaNs: propagated, or skipped by fmax/fmin
    case("sign", C, id="sign-complex"),
    case("clip", I, 0, 3, id="clip-int"),
    case("round", I, -1, id="round-int"),
    case("sqrt", I * I, id="sqrt-int"),
    case("true_divide", I, J, id="true_divide-int"),
    case("power", X, 3, id="power-weak_int"),
    case("square", C, id="square-complex"),
    case("fmod", X, f32(0.75), id="fmod-scalar"),
    case("around", X, 1),
    case("round", X * f32(1.7), 0),
    case("clip", X, -1.0, 1.0),
    case("clip", X, Y - 1, Y, id="clip-arrays"),
    case("isclose", X, Y),
    case("isclose", X, X + f32(1e-7), id="isclose-near"),
    case("allclose", X, X + f32(1e-7)),
    case("array_equal", X, Y),
    case("array_equiv", X, X[0]),
]

REDUCTION_CASES = [
    *_unary("sum prod max min amax amin mean all any argmax argmin ptp count_nonzero", X),
    *[case(n, X, axis=1, id=f"{n}-axis1") for n in "sum prod max min mean argmax argmin".split()],
    case("sum", I, axis=0, keepdims=True, id="sum-int-keepdims"),
    case("sum", B, id="sum-bool"),
    case("mean", I, id="mean-int"),
    case("all", B, axis=1),
    case("any", B, axis=0),
    case("count_nonzero", B, axis=1, id="count_nonzero-axis"),
    case("sum", U8, id="sum-uint8"),
    case("prod", I, axis=1, dtype=f32, id="prod-dtype"),
    case("max", X, axis=(0, 1), keepdims=True, id="max-axes"),
    case("mean", X, axis=0, where=B2, id="mean-where"),
    case("sum", X, axis=1, initial=1.0, where=B, id="sum-where"),
    case("argmax", XN, id="argmax-nan"),
    case("cumsum", B, id="cumsum-bool"),
    case("quantile", X, 0.4, method="nearest", id="quantile-nearest"),
    case("quantile", X, 0.4, axis=0, method="midpoint", id="quantile-midpoint"),
    case("percentile", X, 25.0, method="lower", keepdims=True, id="percentile-lower"),
    case("median", X, axis=0, id="median-axis"),
    case("var", C, id="var-complex"),
    case("cov", X, rowvar=False, ddof=0, id="cov-cols"),
    case("cov", V, aweights=np.array([0.5, 1.25, 2.0, 1.0], f32), id="cov-aweights"),
    case("average", X, axis=0, weights=V3[:2], returned=True, id="average-returned"),
    case("diff", X, axis=0, prepend=S0, id="diff-prepend"),
    case("gradient", X, axis=1, id="gradient-axis"),
    *_unary("nansum nanprod nanmax nanmin nanmean nanargmax nanargmin", XN),
    *_unary("nanstd nanvar nanmedian", XN),
    case("nanpercentile", XN, 30.0),
    case("nanquantile", XN, 0.3, axis=1),
    *_unary("std var median", X),
    case("std", X, axis=0, ddof=1, id="std-ddof"),
    case("percentile", X, 30.0),
    case("quantile", X, 0.3, axis=1),
    case("quantile", X, np.array([0.25, 0.75], f32), id="quantile-traced_q"),
    case("average", X, axis=1, weights=P),
    case("cov", X),
    case("corrcoef", X),
    case("cumsum", X, axis=1),
    case("cumprod", X, axis=0),
    case("cumulative_sum", V, include_initial=True),
    case("cumulative_prod", X, axis=1),
    case("nancumsum", XN, axis=1),
    case("nancumprod", XN),
    case("diff", X, axis=1),
    case("diff", V, n=2, id="diff-n2"),
    case("ediff1d", V, to_begin=np.array([9.0], f32)),
    case("gradient", X),
    case("gradient", V, 0.5, id="gradient-spacing"),
    case("trapezoid", X, dx=0.5),
    case("trapezoid", V, W.cumsum(), id="trapezoid-x"),
]

CREATION_CASES = [
    case("arange", 5),
    case("arange", 1.0, 3.0, 0.5, id="arange-float"),
    case("array", X),
    case("array", [V, W], id="array-list"),
    case("asarray", I, dtype=f32),
    case("copy", X),
    case("empty", (2, 3), ref=lambda s: np.zeros(s, f32)),  # JAX fills with zeros
    case("empty_like", X, ref=np.zeros_like),
    case("zeros", (2, 3)),
    case("zeros_like", I),
    case("ones", (3,), dtype=i32),
    case("ones_like", X),
    case("full", (2, 3), S0),
    case("full_like", X, 2),
    case("eye", 3, k=1),
    case("eye", 2, 3, id="eye-rect"),
    case("identity", 3),
    case("tri", 3, 4, k=-1),
    case("linspace", np.float32(0), np.float32(2), 5),
    case(
        "linspace",
        np.float32(0),
        np.float32(2),
        4,
        endpoint=False,
        retstep=True,
        id="linspace-step",
    ),
    case("arange", 6, 0, -2, id="arange-negative_step"),
    case("arange", 5, dtype=f32, id="arange-dtype"),
    case("linspace", V[:2], W[:2], 3, axis=1, id="linspace-arrays"),
    case("logspace", np.float32(0), np.float32(2), 4),
    case("geomspace", np.float32(1), np.float32(8), 4),
    case("indices", (2, 3)),
    case("meshgrid", V, W[:3]),
    case("meshgrid", V3, W3, indexing="ij", id="meshgrid-ij"),
    case(
        "fromfunction",
        lambda i, j: i * 3 + j,
        (2, 3),
        dtype=f32,
    ),
    case("frombuffer", b"\x01\x02\x03\x04", dtype=u8),
    case("fromstring", "1 2 3", dtype=i32, sep=" "),
    case("bartlett", 5),
    case("blackman", 5),
    case("hamming", 5),
    case("hanning", 5),
    case("kaiser", 5, np.float32(1.5)),
]

MANIPULATION_CASES = [
    case("astype", X, i32),
    case("astype", I, np.bool_, id="astype-bool"),
    case("atleast_1d", S0),
    case("atleast_2d", V),
    case("atleast_3d", X),
    case("broadcast_arrays", X, V3),
    case("broadcast_to", V3, (2, 3)),
    case("expand_dims", X, 1),
    case("expand_dims", X, (0, 3), id="expand_dims-tuple"),
    case("flip", X, 1),
    case("flip", X, id="flip-all"),
    case("fliplr", X),
    case("flipud", X),
    case("matrix_transpose", X3),
    case("moveaxis", X3, 0, 2),
    case("permute_dims", X3, (2, 0, 1)),
    case("ravel", X),
    case("ravel", X, order="F", id="ravel-F"),
    case("repeat", X, 2, axis=1),
    case("repeat", V, S(np.array([1, 0, 2, 1])), id="repeat-counts"),
    case("reshape", X, (3, 2)),
    case("reshape", X, (-1,), id="reshape-infer"),
    case("resize", X, (4, 2)),
    case("roll", X, 1, axis=1),
    case("roll", X, -2, id="roll-flat"),
    case("rollaxis", X3, 2),
    case("rot90", X),
    case("rot90", X, 3, id="rot90-k3"),
    case("squeeze", X3),
    case("swapaxes", X3, 0, 2),
    case("tile", X, (2, 1)),
    case("transpose", X3),
    case("transpose", X3, (1, 0, 2), id="transpose-axes"),
    case("append", X, Y, axis=0),
    case("append", V, S0, id="append-flat"),
    case("array_split", V, 3),
    case("block", [[X, Y], [Y, X]]),
    case("column_stack", [V3, W3]),
    case("concat", [X, Y], axis=1),
    case("concatenate", [X, Y]),
    case("concatenate", [X, Y], axis=None, id="concatenate-flat"),
    case("delete", X, 1, axis=1),
    case("delete", V, S(np.array([0, 2])), id="delete-array"),
    case("dsplit", X3, 3),
    case("dstack", [X, Y]),
    case("hsplit", X, 3),
    case("hstack", [V, W]),
    case("insert", V, 1, S0),
    case("insert", X, 2, V3[:2], axis=1, id="insert-axis"),
    case("split", V, 2),
    case("split", X, [1], axis=1, id="split-indices"),
    case("stack", [X, Y], axis=1),
    case("unstack", X, axis=1),
    case("vsplit", X, 2),
    case("vstack", [V3, W3]),
    case("diag", A),
    case("diag", V, 1, id="diag-make"),
    case("diagflat", V3),
    case("diagonal", A, 1),
    case("diagonal", X3, 0, 1, 2, id="diagonal-axes"),
    case("tril", A),
    case("triu", A, 1),
    case("vander", V, 3),
    case("pad", X, ((1, 0), (0, 2))),
    case("pad", X, 1, mode="reflect", id="pad-reflect"),
    case("pad", X, ((0, 1), (2, 1)), mode="edge", id="pad-edge"),
    case("pad", X, 2, mode="wrap", id="pad-wrap"),
    case("pad", X, ((1, 2), (2, 1)), mode="symmetric", id="pad-symmetric"),
    case("pad", X, 1, mode="linear_ramp", end_values=1.0, id="pad-linear_ramp"),
    case("pad", X, ((1, 1), (0, 2)), mode="mean", id="pad-mean"),
    case("roll", X, (1, 2), axis=(0, 1), id="roll-axes"),
    case(
        "repeat",
        V,
        np.array([1, 0, 2, 1], i32),
        total_repeat_length=4,
        ref=lambda a, r, total_repeat_length: np.repeat(a, r),
        id="repeat-traced_counts",
    ),
    case("pad", X, 1, constant_values=S0, id="pad-traced_value", in_axes=(0, 0)),
    case("trim_zeros", np.array([0.0, 0.0, 1.5, 0.0, 2.0, 0.0], f32), concrete=True),
    case("trim_zeros", S(np.array([0, 0, 1, 0, 2, 0], i32)), trim="f", id="trim_zeros-static"),
]

INDEXING_CASES = [
    case("take", X, IDX, axis=1),
    case("take", X, np.array([5, 0, 3], i32), id="take-flat"),
    case("take", X, np.array([4, -1, 1], i32), axis=1, mode="wrap", id="take-wrap"),
    case("take_along_axis", X, np.argsort(X, axis=1).astype(i32), axis=1),
    case(
        "put",
        X,
        np.array([0, 4], i32),
        np.array([9.0, -9.0], f32),
        inplace=False,
        ref=_filled(np.put),
    ),
    case(
        "put_along_axis",
        X,
        np.array([[0], [2]], i32),
        np.array([[9.0], [-9.0]], f32),
        axis=1,
        inplace=False,
        ref=_filled(np.put_along_axis),
    ),
    case("fill_diagonal", A, S0, inplace=False, ref=_filled(np.fill_diagonal)),
    case("place", X, B, np.array([7.0, 8.0], f32), inplace=False, ref=_filled(np.place)),
    # The default mode="raise" needs concrete indices (JAX's rule).
    case("choose", np.array([[0, 1, 1], [1, 0, 0]], i32), [X, Y], mode="clip"),
    case("compress", S(np.array([True, False, True])), X, axis=1),
    case(
        "compress",
        np.array([True, False, True]),
        X,
        axis=1,
        size=2,
        ref=lambda c, a, axis, size: np.compress(c, a, axis=axis),
        id="compress-size",
    ),
    case(
        "extract",
        B,
        X,
        size=3,
        ref=lambda c, a, size: np.extract(c, a),
    ),
    case("select", [X < 0, X > 1], [X, Y], -1.0),
    case("where", B, X, Y),
    case("where", X > 1, X, 0.0, id="where-weak"),
    case(
        "where",
        B,
        size=3,
        ref=lambda c, size: np.where(c),
        id="where-size",
    ),
    case(
        "piecewise",
        X,
        [X < 0, X >= 0],
        S([_piece_neg, _piece_double]),
    ),
    case("nonzero", B, size=3, ref=lambda a, size: np.nonzero(a)),
    case(
        "nonzero",
        B,
        size=5,
        fill_value=-1,
        ref=lambda a, size, fill_value: [
            np.concatenate([i, [-1, -1]]).astype(i32) for i in np.nonzero(a)
        ],
        id="nonzero-padded",
    ),
    case("flatnonzero", B, size=3, ref=lambda a, size: np.flatnonzero(a)),
    case("argwhere", B, size=3, ref=lambda a, size: np.argwhere(a)),
    case("diag_indices", 3),
    case("diag_indices_from", A),
    case("tril_indices", 3),
    case("triu_indices", 3, 1),
    case("tril_indices_from", A, -1),
    case("triu_indices_from", A),
    case(
        "mask_indices", 3, S(jnp.triu), size=6, ref=lambda n, f, size: np.mask_indices(n, np.triu)
    ),
    case("ravel_multi_index", (IDX[:2], np.array([1, 2], i32)), (3, 3), mode="clip"),
    case("unravel_index", IDX, (2, 3)),
    case("ix_", IDX, np.array([0, 1], i32)),
    case("c_", V3, W3, fn=lambda a, b: jnp.c_[a, b], ref=lambda a, b: np.c_[a, b]),
    case("r_", V3, W3, fn=lambda a, b: jnp.r_[a, b], ref=lambda a, b: np.r_[a, b]),
    case("mgrid", fn=lambda: jnp.mgrid[0:2, 0:3], ref=lambda: np.mgrid[0:2, 0:3]),
    case("ogrid", fn=lambda: jnp.ogrid[0:2, 0:3], ref=lambda: np.ogrid[0:2, 0:3]),
]

SORTING_CASES = [
    case("sort", X, axis=1),
    case("sort", X, axis=None, id="sort-flat"),
    case("argsort", X, axis=1),
    case("argsort", np.array([2, 1, 2, 1, 0], i32), stable=True, id="argsort-stable"),
    case("lexsort", [np.array([1, 0, 1, 0], i32), np.array([2, 2, 1, 1], i32)]),
    case("partition", V, 1, post=_partition_segments(1)),
    case("argpartition", V, 2, post=_partition_segments(2)),
    case("searchsorted", SORTED, V, in_axes=(None, 0)),
    case("searchsorted", SORTED, V, side="right", id="searchsorted-right", in_axes=(None, 0)),
    case("sort_complex", CV),
    case("sort", XN, axis=1, id="sort-nan"),
    case("argsort", XN, axis=1, id="argsort-nan"),
    case(
        "sort",
        X,
        axis=0,
        descending=True,
        ref=lambda a, axis, descending: -np.sort(-a, axis),
        id="sort-descending",
    ),
    case(
        "searchsorted",
        SORTED,
        V,
        method="sort",
        ref=_searchsorted,
        id="searchsorted-sort",
        in_axes=(None, 0),
    ),
    case(
        "searchsorted",
        SORTED,
        V,
        method="compare_all",
        ref=_searchsorted,
        id="searchsorted-compare_all",
        in_axes=(None, 0),
    ),
    case(
        "unique",
        np.array([[1, 2], [0, 5], [1, 2]], i32),
        axis=0,
        size=2,
        ref=lambda a, axis, size: np.unique(a, axis=axis),
        id="unique-axis",
    ),
    case("isin", IV, np.array([1, 3], i32), invert=True, id="isin-invert"),
    case("unique", IV, size=4, ref=lambda a, size: np.unique(a)),
    case(
        "unique",
        IV,
        return_index=True,
        return_inverse=True,
        return_counts=True,
        size=4,
        ref=lambda a, size, **kw: np.unique(a, **kw),
        id="unique-all_outputs",
    ),
    # NumPy 2.4 leaves unique_values unsorted; JAX sorts.
    case("unique_values", IV, size=4, ref=lambda a, size: np.unique(a)),
    case("unique_counts", IV, size=4, ref=lambda a, size: np.unique_counts(a)),
    case("unique_inverse", IV, size=4, ref=lambda a, size: np.unique_inverse(a)),
    case("unique_all", IV, size=4, ref=lambda a, size: np.unique_all(a)),
    case("isin", IV, np.array([1, 3], i32)),
    case(
        "intersect1d",
        IV,
        np.array([3, 5, 1], i32),
        size=2,
        ref=lambda a, b, size: np.intersect1d(a, b),
    ),
    case("union1d", IV[:3], np.array([5, 1], i32), size=4, ref=lambda a, b, size: np.union1d(a, b)),
    case("setdiff1d", IV, np.array([3, 5], i32), size=3, ref=lambda a, b, size: np.setdiff1d(a, b)),
    case(
        "setxor1d", IV[:3], np.array([3, 5], i32), size=3, ref=lambda a, b, size: np.setxor1d(a, b)
    ),
    case("bincount", IV, length=5, ref=lambda a, length: np.bincount(a, minlength=length)),
    case(
        "bincount",
        IV,
        V[[0, 1, 2, 3, 0, 1]],
        length=4,
        ref=lambda a, w, length: np.bincount(a, w, minlength=length),
        id="bincount-weights",
    ),
    case("digitize", V, S(SORTED)),
    case("digitize", V, SORTED, right=True, in_axes=(0, None), id="digitize-traced_bins"),
    # JAX counts in floats.
    case("histogram", V, bins=3, range=(-2.0, 4.0), out_dtype=(f32, f32)),
    case("histogram", V, S(SORTED), id="histogram-edges", out_dtype=(f32, f32)),
    case("histogram_bin_edges", V, bins=3),
    case("histogram", V, bins=3, density=True, id="histogram-density"),
    case(
        "interp",
        V,
        SORTED,
        np.array([1.0, 0.0, 2.0, -1.0], f32),
        left=-5.0,
        right=5.0,
        in_axes=(0, None, 0),
        id="interp-left_right",
    ),
    case("histogram2d", V, W, bins=2, range=[[-2, 4], [-2, 2]]),
    case("histogramdd", np.stack([V, W], 1), bins=(2, 2), range=[(-2, 4), (-2, 2)]),
    case("interp", V, SORTED, np.array([1.0, 0.0, 2.0, -1.0], f32), in_axes=(0, None, 0)),
]

PRODUCT_CASES = [
    case("dot", X, Y.T),
    case("dot", V, W, id="dot-vectors"),
    case("matmul", X, Y.T),
    case("matmul", X3, A, id="matmul-batch"),
    case("inner", X, Y),
    case("outer", V, W3),
    case("vdot", C, C[::-1]),
    case("vecdot", X, Y),
    case("matvec", A, V3),
    case("vecmat", V3, A),
    case("tensordot", X3, Y.T, axes=1),
    case("kron", X[:, :2], Y[:2, :2]),
    case("cross", V3, W3),
    case("cross", X, Y, id="cross-batch"),
    case("trace", A),
    case("trace", X3, 0, 1, 2, id="trace-axes"),
    case("einsum", "ij,kj->ik", X, Y),
    case("einsum", "ii", A, id="einsum-trace"),
    case("einsum", "ij,jk,k->i", X, A, V3, id="einsum-three"),
    case("einsum", "...j,j", X3, V3, id="einsum-ellipsis"),
    case("tensordot", X, Y, axes=([1], [1]), id="tensordot-lists"),
    case("outer", I[0], B[0], id="outer-int_bool"),
    case("convolve", V, W3, mode="same", id="convolve-same"),
    case("matmul", I, J.T, id="matmul-int"),
    case("convolve", V, W3),
    case("convolve", V, W3, mode="valid", id="convolve-valid"),
    case("correlate", V, W3),
    case("correlate", V, W3, mode="full", id="correlate-full"),
    case("packbits", B),
    case("packbits", B, axis=1, bitorder="little", id="packbits-axis"),
    case("unpackbits", U8),
    case("unpackbits", U8, axis=1, count=5, id="unpackbits-count"),
    case("unwrap", np.array([0.0, 3.0, 6.5, -0.5, 2.0], f32)),
    case("i0", S0, id="i0-scalar"),
]

POLYNOMIAL_CASES = [
    case("poly", V3),
    case("polyadd", V3, W),
    case("polysub", V3, W),
    case("polymul", V3, W3),
    case("polydiv", V, W3, ref=_polydiv),
    case("polyder", V, 2),
    case("polyint", V3, 1, k=2.0),
    case("polyval", V3, X),
    case("polyfit", V, W, 2),
    case(
        "roots",
        np.array([1.0, 0.0, 1.0, 2.0], f32),  # (x + 1)(x^2 - x + 2): complex roots
        strip_zeros=False,
        ref=lambda p, strip_zeros: np.roots(p),
        post=_sort_complex,
        tol=1e-4,
    ),
]

FUNCTIONAL_CASES = [
    case(
        "vectorize",
        X,
        Y,
        fn=lambda a, b: jnp.vectorize(_vectorized)(a, b),
        ref=_vectorized,
    ),
    case(
        "vectorize",
        X,
        fn=lambda a: jnp.vectorize(_along, signature="(n)->(n)")(a),
        ref=lambda a: np.vectorize(_along, signature="(n)->(n)")(a),
        id="vectorize-signature",
    ),
    case(
        "frompyfunc",
        X,
        Y,
        fn=lambda a, b: jnp.frompyfunc(_vectorized, 2, 1)(a, b),
        ref=_vectorized,
    ),
    case(
        "apply_along_axis",
        S(_along),
        1,
        X,
    ),
    case(
        "apply_over_axes",
        X3,
        fn=lambda a: jnp.apply_over_axes(jnp.sum, a, [0, 2]),
        ref=lambda a: np.apply_over_axes(np.sum, a, [0, 2]),
    ),
]

LINALG_CASES = [
    case("linalg.cholesky", SPD, tol=1e-4),
    case("linalg.cond", A, tol=1e-4),
    case("linalg.cross", V3, W3),
    case("linalg.det", A, tol=1e-4),
    case("linalg.diagonal", A),
    case("linalg.eig", A, post=_eig_values, tol=1e-4),
    case(
        "linalg.eigh",
        SPD,
        post=lambda leaves: [leaves[0], _unit_columns(leaves[1])],
        tol=1e-4,
    ),
    case("linalg.eigvals", A, post=_eig_values, tol=1e-4),
    case("linalg.eigvalsh", SPD, tol=1e-4),
    case("linalg.inv", A, tol=1e-4),
    case("linalg.lstsq", TALL, RHS, ref=_lstsq, tol=1e-4),
    case("linalg.matmul", X, Y.T),
    case("linalg.matrix_norm", A, tol=1e-4),
    case("linalg.matrix_norm", A, ord=2, id="linalg.matrix_norm-2", tol=1e-4),
    case("linalg.matrix_power", A, 3, tol=1e-4),
    case("linalg.matrix_rank", A),
    case("linalg.matrix_transpose", X3),
    case("linalg.multi_dot", [A, A[:, :2], Y[:, :2].T], tol=1e-4),
    case("linalg.norm", X),
    case("linalg.norm", X, ord=1, axis=1, id="linalg.norm-1"),
    case("linalg.norm", A, ord="nuc", id="linalg.norm-nuc", tol=1e-4),
    case("linalg.norm", A, ord=-np.inf, id="linalg.norm-neg_inf"),
    case("linalg.norm", C, id="linalg.norm-complex"),
    case("linalg.det", np.array([[1.0, 2.0], [2.0, 4.0]], f32), id="linalg.det-singular"),
    case(
        "linalg.matrix_rank",
        np.array([[1.0, 2.0], [2.0, 4.0]], f32),
        id="linalg.matrix_rank-deficient",
    ),
    case("linalg.inv", C[:, :2], id="linalg.inv-complex", tol=1e-4),
    case("linalg.solve", A, X.T, id="linalg.solve-matrix", tol=1e-4),
    case(
        "linalg.qr",
        TALL,
        mode="r",
        post=lambda leaves: [np.abs(leaves[0])],
        id="linalg.qr-r",
        tol=1e-4,
    ),
    case("linalg.svd", A, compute_uv=False, id="linalg.svd-values", tol=1e-4),
    case("linalg.outer", V, W3),
    case("linalg.pinv", TALL, tol=1e-4),
    case(
        "linalg.qr",
        A,
        # Q's columns and R's rows are defined up to one sign each.
        post=lambda leaves: [
            np.abs(leaves[0]),
            np.abs(leaves[1]),
            leaves[0] @ leaves[1],
        ],
        tol=1e-4,
    ),
    case("linalg.slogdet", A, tol=1e-4),
    case("linalg.solve", A, RHS, tol=1e-4),
    case("linalg.svd", A, post=_svd_post, tol=1e-4),
    # LAPACK rejects matrices without rows or columns (no singular values, identity vectors).
    case("linalg.svd", np.zeros((3, 0), f32), id="linalg.svd-empty"),
    case("linalg.svdvals", A, tol=1e-4),
    case("linalg.tensordot", X, Y, axes=2),
    case("linalg.tensorinv", A.reshape(3, 3), ind=1, tol=1e-4),
    case("linalg.tensorsolve", A, RHS, tol=1e-4),
    case("linalg.trace", A),
    case("linalg.vecdot", X, Y),
    case("linalg.vector_norm", X),
    case("linalg.vector_norm", X, ord=np.inf, axis=0, id="linalg.vector_norm-inf"),
]

FFT_CASES = [
    case("fft.fft", V),
    case("fft.fft", CV, n=6, id="fft.fft-n"),
    case("fft.ifft", CV),
    case("fft.fft2", X),
    case("fft.ifft2", C),
    case("fft.fftn", X3),
    case("fft.ifftn", C, norm="ortho"),
    case("fft.rfft", V),
    case("fft.irfft", CV[:3]),
    case("fft.rfft2", X),
    case("fft.irfft2", C),
    case("fft.rfftn", X3),
    case("fft.irfftn", C, s=(2, 4), axes=(0, 1)),
    case("fft.fft", V, norm="forward", id="fft.fft-forward"),
    case("fft.rfft2", X, norm="ortho", id="fft.rfft2-ortho"),
    case("fft.hfft", CV[:3]),
    case("fft.ihfft", V),
    case("fft.fftfreq", 6, d=0.5),
    case("fft.rfftfreq", 6),
    case("fft.fftshift", X),
    case("fft.ifftshift", X, axes=1),
]

# Calls whose result is their input unchanged: it must still be an array of the canonical
# dtype (a NumPy input is never handed back; see the 64-bit host input sweep below).
NOOP_CASES = [
    case("moveaxis", X3, 1, 1, id="moveaxis-noop"),
    case("flip", X, (), id="flip-noop"),
    case("diff", X, n=0, id="diff-noop"),
    case("rot90", X, 0, id="rot90-noop"),
    case("roll", X, 0, id="roll-noop"),
    case("pad", X, 0, id="pad-noop"),
    case("einsum", "ij", X, id="einsum-noop"),
    case("transpose", X, (0, 1), id="transpose-noop"),
    case("swapaxes", X, 1, 1, id="swapaxes-noop"),
    case("squeeze", X, (), id="squeeze-noop"),
    case("expand_dims", X, (), id="expand_dims-noop"),
    case("reshape", X, (2, 3), id="reshape-noop"),
    case("broadcast_to", X, (2, 3), id="broadcast_to-noop"),
    case("atleast_2d", X, id="atleast_2d-noop"),
    case("delete", V, [], id="delete-noop", fn=lambda a, o: jnp.delete(a, np.array(o, i32))),
    case("astype", X, f32, id="astype-noop"),
    case("asarray", X, id="asarray-noop"),
    case("round", I, 0, id="round-int-noop"),
    case("round", B, id="round-bool-noop", out_dtype=np.bool_),  # NumPy: float16
    case("floor", I, id="floor-int-noop"),
    case("ceil", B, id="ceil-bool-noop"),
    case("trunc", U8, id="trunc-uint-noop"),
    case("real", I, id="real-int-noop"),
    case("conj", B, id="conj-bool-noop", out_dtype=np.bool_),  # NumPy: int8
    case("abs", U8, id="abs-uint-noop"),
    case("sign", U8, id="sign-uint-noop"),
    case("nan_to_num", I, id="nan_to_num-int-noop"),
    case("fft.fftshift", X, axes=(), id="fftshift-noop"),
    case("sort", I, axis=None, id="sort-flat"),
    case("cumsum", X, id="cumsum-flat"),
]

CASES: list[Case] = [
    *NOOP_CASES,
    *UFUNC_CASES,
    *REDUCTION_CASES,
    *CREATION_CASES,
    *MANIPULATION_CASES,
    *INDEXING_CASES,
    *SORTING_CASES,
    *PRODUCT_CASES,
    *POLYNOMIAL_CASES,
    *FUNCTIONAL_CASES,
    *LINALG_CASES,
    *FFT_CASES,
]


def _dedupe_ids(cases: list[Case]) -> list[Case]:
    """Suffixes -2, -3 ... on repeated ids (the same name on other inputs)."""
    seen: dict[str, int] = {}
    for c in cases:
        n = seen.get(c.id, 0) + 1
        seen[c.id] = n
        if n > 1:
            c.id = f"{c.id}-{n}"
    return cases


CASES = _dedupe_ids(CASES)
_BY_ID = {c.id: c for c in CASES}

# Functions whose value is a Python value about shapes or dtypes, not an array: checked
# against NumPy eagerly, and on tracers inside `jit` and `vmap` (where shapes and dtypes are
# known, so the answer must not change).
PYTHON_VALUED = {
    "ndim": (X,),
    "shape": (X3,),
    "size": (X,),
    "isscalar": (X,),
    "iscomplexobj": (C,),
    "isrealobj": (X,),
    "iterable": (X,),
}

# Public names that are not functions of arrays, or whose work is on the host: they have no
# meaning under jit/vmap and are tested in the named test files.
EXCLUDED = {
    # Constants (test_jnp_dtypes.py).
    *"e euler_gamma inf nan newaxis pi".split(),
    # Scalar types and dtype classes (test_jnp_dtypes.py).
    *"""
    bfloat16 bool bool_ cdouble character complex128 complex64 complex_ complexfloating csingle
    double flexible float16 float32 float4_e2m1fn float64 float6_e2m3fn float6_e3m2fn
    float8_e3m4 float8_e4m3 float8_e4m3b11fnuz float8_e4m3fn float8_e4m3fnuz float8_e5m2
    float8_e5m2fnuz float8_e8m0fnu float_ floating generic inexact int1 int16 int2 int32 int4
    int64 int8 int_ integer number object_ signedinteger single uint uint1 uint16 uint2 uint32
    uint4 uint64 uint8 unsignedinteger
    """.split(),
    # Classes (dtypes, limits, the array type, ufunc objects, a warning).
    *"ComplexWarning dtype finfo iinfo ndarray ufunc".split(),
    # Dtype queries: functions of dtypes, not of array values (test_jnp_dtypes.py).
    *"can_cast isdtype issubdtype promote_types result_type".split(),
    # Shape arithmetic and einsum planning on static shapes (test_jnp_manipulation.py,
    # test_jnp_products.py).
    *"broadcast_shapes einsum_path".split(),
    # Printing and its configuration (test_jnp_misc.py).
    *"array_repr array_str get_printoptions printoptions set_printoptions".split(),
    # Host I/O and interop: files, iterators, DLPack (test_jnp_misc.py, test_jnp_creation.py).
    # `fromiter` raises NotImplementedError, as in JAX.
    *"fromfile fromiter from_dlpack load save savez".split(),
    # Index expressions: Python objects building slices (test_jnp_indexing.py).
    *"index_exp s_".split(),
    # The submodules: their names are checked as "linalg.*" and "fft.*".
    *"fft linalg".split(),
}

# Bugs the sweep found in modules being edited by others, to be fixed there. Each is keyed by
# the id its case would have ("name" or "name-variant"); the case stays out of the table until
# the fix lands (then move it back in). Write each as `# BUG: ...` above its line.
KNOWN_BUGS: dict[str, str] = {}


def _bug_name(case_id: str) -> str:
    return case_id.split("-")[0]


def _public_names() -> set[str]:
    names = set(jnp.__all__)
    for sub in ("linalg", "fft"):
        module = getattr(jnp, sub, None)
        if module is not None:
            names |= {f"{sub}.{n}" for n in module.__all__}
    return names


# ---------------------------------------------------------------------------
# Checks

_CANONICAL = {
    np.dtype(np.float64): np.dtype(f32),
    np.dtype(np.int64): np.dtype(i32),
    np.dtype(np.uint64): np.dtype(np.uint32),
    np.dtype(np.complex128): np.dtype(c64),
}


def _canonical(dtype: np.dtype) -> np.dtype:
    return _CANONICAL.get(np.dtype(dtype), np.dtype(dtype))


def _assert_close(got: list, want: list, tol: float, what: str) -> None:
    assert len(got) == len(want), f"{what}: {len(got)} results, expected {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"{what}, result {k}: shape {g.shape} != {w.shape}"
        if g.dtype.kind in "fc" or w.dtype.kind in "fc":
            np.testing.assert_allclose(
                g.astype(np.complex128 if g.dtype.kind == "c" else np.float64),
                w,
                rtol=tol,
                atol=tol,
                err_msg=f"{what}, result {k}",
            )
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"{what}, result {k}")


def _post(c: Case, leaves: list) -> list:
    return c.post(leaves) if c.post else leaves


def _check_numpy(c: Case, eager: list) -> None:
    """(1) Eager values and JAX's result dtypes against NumPy."""
    want = _flat(c.numpy())
    want_dtypes = c.out_dtype or tuple(_canonical(w.dtype) for w in want)
    assert tuple(g.dtype for g in eager) == tuple(np.dtype(d) for d in want_dtypes), (
        f"result dtypes {[g.dtype for g in eager]}, expected {list(want_dtypes)}"
    )
    _assert_close(_post(c, eager), _post(c, want), c.tol, "eager vs NumPy")


def _check_jit(c: Case, eager: list) -> None:
    """(2) `jit` (static arguments closed over) against eager."""
    if c.concrete:
        with pytest.raises(ConcretizationTypeError):
            jit(c.call)(*c.arrays)
        return
    got = _flat(jit(c.call)(*c.arrays))
    assert [g.dtype for g in got] == [w.dtype for w in eager]
    _assert_close(_post(c, got), _post(c, eager), c.tol, "jit vs eager")


def _second(x: Any) -> np.ndarray:
    """Other values in the same domain: the flattened values reversed."""
    x = np.asarray(x)
    return x.ravel()[::-1].reshape(x.shape)


def _check_vmap(c: Case, eager: list) -> None:
    """(3) `vmap` over a leading batch of two against a loop of eager calls."""
    if c.vmap is not None or c.concrete:
        return
    in_axes = c.in_axes or (0,) * len(c.arrays)
    assert len(in_axes) == len(c.arrays), "one in_axes entry per traced array"
    members = [
        [a if ax is None else (a, _second(a))[k] for a, ax in zip(c.arrays, in_axes)]
        for k in range(2)
    ]
    batched = [
        a if ax is None else np.stack([m[i] for m in members])
        for i, (a, ax) in enumerate(zip(c.arrays, in_axes))
    ]
    out = _flat(jit(vmap(c.call, in_axes=tuple(in_axes)))(*batched))
    for k, member in enumerate(members):
        want = eager if k == 0 else _flat(c.call(*member))
        got = [o[k] for o in out]
        assert [g.dtype for g in got] == [w.dtype for w in want]
        _assert_close(_post(c, got), _post(c, want), c.tol, f"vmap vs loop, member {k}")


# One test per entry runs the three checks, so that under pytest-xdist an entry's eager
# executables are compiled on one worker only. Every check runs; the failures are reported
# together.
@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_function(c: Case):
    eager = _flat(c.call(*c.arrays))
    checks = {"jit": _check_jit, "vmap": _check_vmap}
    if callable(c.ref):
        checks = {"NumPy": _check_numpy, **checks}
    failures = []
    for what, check in checks.items():
        try:
            check(c, eager)
        except Exception as e:  # every check runs; the failures are reported together
            failures.append(f"[{what}] {type(e).__name__}: {e}")
    if failures:
        pytest.fail(f"{c.id}:\n\n" + "\n\n".join(failures), pytrace=False)


@pytest.mark.parametrize("name", sorted(PYTHON_VALUED))
def test_python_valued(name: str):
    args = PYTHON_VALUED[name]
    want = getattr(np, name)(*args)
    assert getattr(jnp, name)(*args) == want
    seen = []

    def record(*xs):
        seen.append(getattr(jnp, name)(*xs))
        return xs[0]

    jit(record)(*args)
    vmap(record)(*[np.stack([a, a]) for a in args])
    assert seen == [want, want], (name, seen)


def test_every_public_name_is_covered():
    names = _public_names()
    bugs = {_bug_name(i) for i in KNOWN_BUGS}
    covered = {c.name for c in CASES} | set(PYTHON_VALUED) | EXCLUDED | bugs
    missing = sorted(names - covered)
    assert not missing, f"public names without an entry in test_jnp_transforms.py: {missing}"
    stale = sorted(covered - names)
    assert not stale, f"entries for names that are not public: {stale}"
    both = sorted(({c.name for c in CASES} | bugs) & EXCLUDED)
    assert not both, f"names both tested and excluded: {both}"
    fixed = sorted(set(KNOWN_BUGS) & set(_BY_ID))
    assert not fixed, f"known bugs whose case is in the table (remove from KNOWN_BUGS): {fixed}"


def test_every_case_is_checked():
    """Each entry runs at least the jit check; cases without batching say why."""
    for c in CASES:
        assert c.arrays or c.vmap == _NO_VMAP_ARGS, c.id
        if not callable(c.ref):
            assert c.out_dtype is not None, f"{c.id}: without an oracle, give the result dtypes"


# ---------------------------------------------------------------------------
# Functions that need concrete values raise the concretization error at the user's line.


def _nonzero(x):
    return jnp.nonzero(x)


def _unique(x):
    return jnp.unique(x)


def _arange(n):
    return jnp.arange(n)


def _bincount(x):
    return jnp.bincount(x)


@pytest.mark.parametrize(
    "f, arg",
    [(_nonzero, B), (_unique, IV), (_arange, np.int32(3)), (_bincount, IV)],
    ids=["nonzero", "unique", "arange", "bincount"],
)
def test_concretization_error_names_the_users_line(f, arg):
    with pytest.raises(ConcretizationTypeError) as info:
        jit(f)(arg)
    assert type(info.value).__module__ == "polyjax_core.errors"
    line = inspect.getsourcelines(f)[1] + 1  # the body's only line
    assert f"test_jnp_transforms.py:{line}" in str(info.value), str(info.value)


# ---------------------------------------------------------------------------
# Host inputs of 64-bit types are canonicalized: with x64 off, no result is 64-bit.

_WIDE = {
    np.dtype(f32): np.dtype(np.float64),
    np.dtype(i32): np.dtype(np.int64),
    np.dtype(c64): np.dtype(np.complex128),
    np.dtype(np.uint32): np.dtype(np.uint64),
}
_WIDE_DTYPES = frozenset(_WIDE.values())


def _widen(v: Any) -> Any:
    """A traced host value of a 32-bit type (or a static dtype) as its 64-bit counterpart."""
    if isinstance(v, np.ndarray | np.generic):
        return v.astype(_WIDE.get(v.dtype, v.dtype))
    if isinstance(v, type) and issubclass(v, np.generic) or isinstance(v, np.dtype):
        return _WIDE.get(np.dtype(v), v)
    return v


# The same calls on other kinds of host values: float32 inputs as int32 (rounded), uint32
# (their magnitudes, rounded) or bool (positive), so that integer-only paths (the
# pass-throughs of `round`, `real`, `abs` ...) are reached too.
def _finite_rounded(a: np.ndarray) -> np.ndarray:
    return np.round(np.nan_to_num(a, posinf=7.0, neginf=-7.0))


_KINDS = {
    "float": lambda a: a,
    "int": lambda a: _finite_rounded(a).astype(i32),
    "uint": lambda a: np.abs(_finite_rounded(a)).astype(np.uint32),
    "bool": lambda a: a > 0.6,
}


def _as_kind(kind: str, v: Any) -> Any:
    if isinstance(v, np.ndarray | np.generic) and v.dtype == f32:
        return _KINDS[kind](v)
    return v


def _raw_leaves(result: Any) -> list[Any]:
    if isinstance(result, list | tuple):
        return [leaf for item in result for leaf in _raw_leaves(item)]
    return [result]


def _outcome(c: Case, arrays: list) -> Any:
    """The result's leaves, or the type of the exception the call raises."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # 64-bit dtypes asked for; NaN-producing inputs
            return _raw_leaves(c.call(*arrays))
    except Exception as e:  # the narrow and the wide call must fail alike
        return type(e)


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_64_bit_host_inputs_are_canonicalized(c: Case):
    """With x64 off, float64/int64/uint64/complex128 host inputs (and dtype arguments) act as
    their 32-bit counterparts, as in JAX: the result is a polyjax array of the dtype that the
    32-bit inputs give, never a 64-bit one, and never the caller's host array handed back.
    Each case runs on its own inputs and on int, uint and bool versions of its float ones."""
    kinds = ["float"]
    if any(isinstance(a, np.ndarray | np.generic) and a.dtype == f32 for a in c.arrays):
        kinds += ["int", "uint", "bool"]
    # Dtype arguments (positional or keyword) widened too; traced slots are filled below.
    wide = dataclasses.replace(
        c, args=tuple(map(_widen, c.args)), kwargs={k: _widen(v) for k, v in c.kwargs.items()}
    )
    failures = []
    for kind in kinds:
        narrow = [_as_kind(kind, a) for a in c.arrays]
        want = _outcome(c, narrow)
        got = _outcome(wide, [_widen(a) for a in narrow])
        if isinstance(want, type) or isinstance(got, type):
            if want != got:
                failures.append(f"{kind}: 32-bit inputs give {want}, 64-bit ones {got}")
            continue
        types = [type(g).__name__ for g in got if not isinstance(g, Array)]
        got_dtypes = [g.dtype for g in got if isinstance(g, Array)]
        want_dtypes = [np.asarray(w).dtype for w in want]
        if types or got_dtypes != want_dtypes:
            failures.append(f"{kind}: results {types or got_dtypes}, expected {want_dtypes}")
    assert not failures, failures
