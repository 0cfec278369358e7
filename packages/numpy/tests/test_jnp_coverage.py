"""Coverage of JAX's `jax.numpy` API: which public names polyjax implements.

`JAX_NUMPY` lists the public names of JAX's `jax.numpy` (0.10.2), as data: JAX
is never imported. They are the 416 names of /work/shared/JAXLIB.md section 1.1:
its 344 functions are NumPy 2.4's functions but 47 (I/O and text, datetimes,
error state, memory layout, formatting, matrices, `fix`, `real_if_close`,
`row_stack`, `min_scalar_type`, `mintypecode`, `common_type`, `info`, `test`,
`asanyarray`, `asarray_chkfinite`, `get_include`, `isfortran`, `nested_iters`,
`show_config`, `show_runtime`, `typename`) plus `vectorize`; then 58 types and
14 constants, index helpers and submodules. The names of `jax.numpy.fft` and
`jax.numpy.linalg` (NumPy's, without `test`) follow as `fft.*` and `linalg.*`.

`IMPLEMENTED` is the subset polyjax has, with JAX's signature and semantics.
The tests fail when an implemented name stops being exported, and when the
coverage table of `docs/numpy.md` (generated from these lists) is out of date.
After implementing a name, add it to `IMPLEMENTED` and regenerate the table:

    uv run --no-sync python tools/api_coverage.py numpy

(which also prints the names `polyjax.numpy` exports that `IMPLEMENTED` lacks).
"""

from __future__ import annotations

import importlib
import pathlib
from types import ModuleType

import pytest

from polyjax_numpy import numpy as jnp

# Section -> names.
JAX_NUMPY: dict[str, tuple[str, ...]] = {
    "Functions": tuple(
        """
        abs absolute acos acosh add all allclose amax amin angle any append apply_along_axis
        apply_over_axes arange arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax
        argmin argpartition argsort argwhere around array array_equal array_equiv array_repr
        array_split array_str asarray asin asinh astype atan atan2 atanh atleast_1d
        atleast_2d atleast_3d average bartlett bincount bitwise_and bitwise_count
        bitwise_invert bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift
        bitwise_xor blackman block broadcast_arrays broadcast_shapes broadcast_to can_cast
        cbrt ceil choose clip column_stack compress concat concatenate conj conjugate
        convolve copy copysign corrcoef correlate cos cosh count_nonzero cov cross cumprod
        cumsum cumulative_prod cumulative_sum deg2rad degrees delete diag diag_indices
        diag_indices_from diagflat diagonal diff digitize divide divmod dot dsplit dstack
        ediff1d einsum einsum_path empty empty_like equal exp exp2 expand_dims expm1 extract
        eye fabs fill_diagonal flatnonzero flip fliplr flipud float_power floor floor_divide
        fmax fmin fmod frexp from_dlpack frombuffer fromfile fromfunction fromiter
        frompyfunc fromstring full full_like gcd geomspace get_printoptions gradient greater
        greater_equal hamming hanning heaviside histogram histogram2d histogram_bin_edges
        histogramdd hsplit hstack hypot i0 identity imag indices inner insert interp
        intersect1d invert isclose iscomplex iscomplexobj isdtype isfinite isin isinf isnan
        isneginf isposinf isreal isrealobj isscalar issubdtype iterable ix_ kaiser kron lcm
        ldexp left_shift less less_equal lexsort linspace load log log10 log1p log2
        logaddexp logaddexp2 logical_and logical_not logical_or logical_xor logspace
        mask_indices matmul matrix_transpose matvec max maximum mean median meshgrid min
        minimum mod modf moveaxis multiply nan_to_num nanargmax nanargmin nancumprod
        nancumsum nanmax nanmean nanmedian nanmin nanpercentile nanprod nanquantile nanstd
        nansum nanvar ndim negative nextafter nonzero not_equal ones ones_like outer
        packbits pad partition percentile permute_dims piecewise place poly polyadd polyder
        polydiv polyfit polyint polymul polysub polyval positive pow power printoptions prod
        promote_types ptp put put_along_axis quantile rad2deg radians ravel
        ravel_multi_index real reciprocal remainder repeat reshape resize result_type
        right_shift rint roll rollaxis roots rot90 round save savez searchsorted select
        set_printoptions setdiff1d setxor1d shape sign signbit sin sinc sinh size sort
        sort_complex spacing split sqrt square squeeze stack std subtract sum swapaxes take
        take_along_axis tan tanh tensordot tile trace transpose trapezoid tri tril
        tril_indices tril_indices_from trim_zeros triu triu_indices triu_indices_from
        true_divide trunc union1d unique unique_all unique_counts unique_inverse
        unique_values unpackbits unravel_index unstack unwrap vander var vdot vecdot vecmat
        vectorize vsplit vstack where zeros zeros_like
        """.split()
    ),
    "Types": tuple(
        """
        ComplexWarning bfloat16 bool bool_ cdouble character complex128 complex64 complex_
        complexfloating csingle double dtype finfo flexible float16 float32 float4_e2m1fn
        float64 float6_e2m3fn float6_e3m2fn float8_e3m4 float8_e4m3 float8_e4m3b11fnuz
        float8_e4m3fn float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz float8_e8m0fnu float_
        floating generic iinfo inexact int1 int16 int2 int32 int4 int64 int8 int_ integer
        ndarray number object_ signedinteger single ufunc uint uint1 uint16 uint2 uint32
        uint4 uint64 uint8 unsignedinteger
        """.split()
    ),
    "Constants, index helpers and submodules": tuple(
        "e euler_gamma inf nan newaxis pi c_ r_ s_ index_exp mgrid ogrid fft linalg".split()
    ),
    "jax.numpy.fft": tuple(
        f"fft.{n}"
        for n in """
        fft fft2 fftfreq fftn fftshift hfft ifft ifft2 ifftn ifftshift ihfft irfft irfft2
        irfftn rfft rfft2 rfftfreq rfftn
        """.split()
    ),
    "jax.numpy.linalg": tuple(
        f"linalg.{n}"
        for n in """
        cholesky cond cross det diagonal eig eigh eigvals eigvalsh inv lstsq matmul
        matrix_norm matrix_power matrix_rank matrix_transpose multi_dot norm outer pinv qr
        slogdet solve svd svdvals tensordot tensorinv tensorsolve trace vecdot vector_norm
        """.split()
    ),
}
MAIN_SECTIONS = ("Functions", "Types", "Constants, index helpers and submodules")

# The names of JAX_NUMPY that polyjax implements.
IMPLEMENTED: frozenset[str] = frozenset(
    """
    ComplexWarning abs absolute acos acosh add all allclose amax amin angle any append
    apply_along_axis apply_over_axes arange arccos arccosh arcsin arcsinh arctan arctan2
    arctanh argmax argmin argpartition argsort argwhere around array array_equal array_equiv
    array_repr array_split array_str asarray asin asinh astype atan atan2 atanh atleast_1d
    atleast_2d atleast_3d average bartlett bfloat16 bincount bitwise_and bitwise_count
    bitwise_invert bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor
    blackman block bool bool_ broadcast_arrays broadcast_shapes broadcast_to c_ can_cast
    cbrt cdouble ceil character choose clip column_stack complex128 complex64 complex_
    complexfloating compress concat concatenate conj conjugate convolve copy copysign
    corrcoef correlate cos cosh count_nonzero cov cross csingle cumprod cumsum
    cumulative_prod cumulative_sum deg2rad degrees delete diag diag_indices
    diag_indices_from diagflat diagonal diff digitize divide divmod dot double dsplit dstack
    dtype e ediff1d einsum einsum_path empty empty_like equal euler_gamma exp exp2
    expand_dims expm1 extract eye fabs fill_diagonal finfo flatnonzero flexible flip fliplr
    flipud float16 float32 float4_e2m1fn float64 float6_e2m3fn float6_e3m2fn float8_e3m4
    float8_e4m3 float8_e4m3b11fnuz float8_e4m3fn float8_e4m3fnuz float8_e5m2 float8_e5m2fnuz
    float8_e8m0fnu float_ float_power floating floor floor_divide fmax fmin fmod frexp
    from_dlpack frombuffer fromfile fromfunction fromiter frompyfunc fromstring full
    full_like gcd generic geomspace get_printoptions gradient greater greater_equal hamming
    hanning heaviside histogram histogram2d histogram_bin_edges histogramdd hsplit hstack
    hypot i0 identity iinfo imag index_exp indices inexact inf inner insert int1 int16 int2
    int32 int4 int64 int8 int_ integer interp intersect1d invert isclose iscomplex
    iscomplexobj isdtype isfinite isin isinf isnan isneginf isposinf isreal isrealobj
    isscalar issubdtype iterable ix_ kaiser kron lcm ldexp left_shift less less_equal
    lexsort linspace load log log10 log1p log2 logaddexp logaddexp2 logical_and logical_not
    logical_or logical_xor logspace mask_indices matmul matrix_transpose matvec max maximum
    mean median meshgrid mgrid min minimum mod modf moveaxis multiply nan nan_to_num
    nanargmax nanargmin nancumprod nancumsum nanmax nanmean nanmedian nanmin nanpercentile
    nanprod nanquantile nanstd nansum nanvar ndarray ndim negative newaxis nextafter nonzero
    not_equal number object_ ogrid ones ones_like outer packbits pad partition percentile
    permute_dims pi piecewise place poly polyadd polyder polydiv polyfit polyint polymul
    polysub polyval positive pow power printoptions prod promote_types ptp put
    put_along_axis quantile r_ rad2deg radians ravel ravel_multi_index real reciprocal
    remainder repeat reshape resize result_type right_shift rint roll rollaxis roots rot90
    round s_ save savez searchsorted select set_printoptions setdiff1d setxor1d shape sign
    signbit signedinteger sin sinc single sinh size sort sort_complex spacing split sqrt
    square squeeze stack std subtract sum swapaxes take take_along_axis tan tanh tensordot
    tile trace transpose trapezoid tri tril tril_indices tril_indices_from trim_zeros triu
    triu_indices triu_indices_from true_divide trunc ufunc uint uint1 uint16 uint2 uint32
    uint4 uint64 uint8 union1d unique unique_all unique_counts unique_inverse unique_values
    unpackbits unravel_index unsignedinteger unstack unwrap vander var vdot vecdot vecmat
    vectorize vsplit vstack where zeros zeros_like
    fft linalg
    fft.fft fft.fft2 fft.fftfreq fft.fftn fft.fftshift fft.hfft fft.ifft fft.ifft2 fft.ifftn
    fft.ifftshift fft.ihfft fft.irfft fft.irfft2 fft.irfftn fft.rfft fft.rfft2 fft.rfftfreq
    fft.rfftn
    linalg.cholesky linalg.cond linalg.cross linalg.det linalg.diagonal linalg.eig
    linalg.eigh linalg.eigvals linalg.eigvalsh linalg.inv linalg.lstsq linalg.matmul
    linalg.matrix_norm linalg.matrix_power linalg.matrix_rank linalg.matrix_transpose
    linalg.multi_dot linalg.norm linalg.outer linalg.pinv linalg.qr linalg.slogdet
    linalg.solve linalg.svd linalg.svdvals linalg.tensordot linalg.tensorinv
    linalg.tensorsolve linalg.trace linalg.vecdot linalg.vector_norm
    """.split()
)

DOC = pathlib.Path(__file__).resolve().parents[3] / "docs" / "numpy.md"
_SUBMODULES = ("fft", "linalg")


def _submodule(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"polyjax_numpy.numpy.{name}")
    except ModuleNotFoundError:
        return None


def _lookup(name: str) -> bool:
    if name in _SUBMODULES:
        return _submodule(name) is not None
    module: ModuleType | None = jnp
    if "." in name:
        prefix, name = name.split(".", 1)
        module = _submodule(prefix)
    return module is not None and name in getattr(module, "__all__", ()) and hasattr(module, name)


COVERAGE = dict(
    title="Coverage of `jax.numpy`",
    intro=(
        "Which public names of JAX's `jax.numpy` polyjax implements: its functions, types,",
        "constants and submodules (the 416 names of JAX 0.10.2), then `jax.numpy.fft` and",
        "`jax.numpy.linalg`. Generated by `tools/api_coverage.py numpy` from the lists in",
        "`packages/numpy/tests/test_jnp_coverage.py`, which also checks that every",
        "implemented name stays exported.",
    ),
    sections=JAX_NUMPY,
    implemented=IMPLEMENTED,
    lookup=_lookup,
    doc=DOC,
    headline=MAIN_SECTIONS,
    embedded=True,
)


def test_lists_are_consistent():
    every = [n for names in JAX_NUMPY.values() for n in names]
    assert len(set(every)) == len(every)
    main = [n for s in MAIN_SECTIONS for n in JAX_NUMPY[s]]
    # JAXLIB.md 1.1: 416 public names, 344 of them functions.
    assert (len(main), len(JAX_NUMPY["Functions"])) == (416, 344)
    assert IMPLEMENTED <= set(every), sorted(IMPLEMENTED - set(every))


def test_exports_are_jax_names():
    """`polyjax.numpy` exports no public name that `jax.numpy` lacks."""
    main = {n for s in MAIN_SECTIONS for n in JAX_NUMPY[s]}
    assert set(jnp.__all__) <= main, sorted(set(jnp.__all__) - main)


@pytest.mark.parametrize("name", sorted(IMPLEMENTED))
def test_implemented_name_is_exported(name):
    assert _lookup(name), f"jnp.{name} is listed as implemented but is not exported"


def test_doc_table_is_current(api_coverage):
    coverage = api_coverage.Coverage(**COVERAGE)
    assert api_coverage.is_current(coverage), (
        "the table of docs/numpy.md is stale: run tools/api_coverage.py numpy"
    )
