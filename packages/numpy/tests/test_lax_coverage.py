"""Coverage of JAX's `jax.lax` API: which public names polyjax implements.

`JAX_LAX` lists the names of JAX's `jax.lax` API reference (the sections of its
`jax.lax` documentation page; `linalg.*` names live in `jax.lax.linalg`), as
data: JAX is never imported. `IMPLEMENTED` is the subset polyjax has. The tests
fail when an implemented name stops being exported, and when `docs/lax.md` (the
table generated from these two by `tools/api_coverage.py`) is out of date.
A newly implemented name is added to `IMPLEMENTED` and the table regenerated:

    uv run --no-sync python tools/api_coverage.py lax
"""

from __future__ import annotations

import pathlib

import pytest

from polyjax_numpy import lax

# Section -> names, in the order of JAX's `jax.lax` API reference.
JAX_LAX: dict[str, tuple[str, ...]] = {
    "Operators": tuple(
        """
        abs acos acosh add after_all approx_max_k approx_min_k argmax argmin asin asinh atan
        atan2 atanh batch_matmul bessel_i0e bessel_i1e betainc bitcast_convert_type bitwise_and
        bitwise_not bitwise_or bitwise_xor population_count broadcast broadcast_in_dim
        broadcast_shapes broadcast_to_rank broadcasted_iota cbrt ceil clamp clz collapse complex
        composite concatenate conj conv convert_element_type conv_dimension_numbers
        conv_general_dilated conv_general_dilated_local conv_general_dilated_patches
        conv_transpose conv_with_general_padding cos cosh cumlogsumexp cummax cummin cumprod
        cumsum digamma div dot dot_general dynamic_index_in_dim dynamic_slice
        dynamic_slice_in_dim dynamic_update_index_in_dim dynamic_update_slice
        dynamic_update_slice_in_dim empty eq erf erfc erf_inv exp exp2 expand_dims expm1 fft
        floor full full_like gather ge gt igamma igamma_grad_a igammac imag index_in_dim
        index_take integer_pow iota is_finite le lgamma log log1p logistic lt max min mul ne neg
        nextafter optimization_barrier pad platform_dependent polygamma pow random_gamma_grad
        ragged_all_to_all ragged_dot ragged_dot_general real reciprocal reduce reduce_and
        reduce_max reduce_min reduce_or reduce_precision reduce_prod reduce_sum reduce_window
        reduce_xor rem reshape rev rng_bit_generator rng_uniform round rsqrt scatter scatter_add
        scatter_apply scatter_max scatter_min scatter_mul scatter_sub shift_left
        shift_right_arithmetic shift_right_logical sign sin sinh slice slice_in_dim sort
        sort_key_val split sqrt square squeeze sub tan tanh top_k transpose zeta
        """.split()
    ),
    "Control flow operators": tuple(
        "associative_scan cond fori_loop map scan select select_n switch while_loop".split()
    ),
    "Custom gradient operators": ("stop_gradient", "custom_linear_solve", "custom_root"),
    "Parallel operators": tuple(
        """
        all_gather all_to_all psum psum_scatter pmax pmin pmean ppermute pshuffle pswapaxes
        axis_index axis_size psend precv
        """.split()
    ),
    "Sharding-related operators": ("with_sharding_constraint",),
    "Linear algebra operators (jax.lax.linalg)": tuple(
        f"linalg.{n}"
        for n in """
        cholesky cholesky_update eig eigh hessenberg householder_product lu
        lu_pivots_to_permutation qdwh qr schur svd SvdAlgorithm symmetric_product
        triangular_solve tridiagonal tridiagonal_solve EigImplementation EighImplementation
        """.split()
    ),
    "Argument classes": tuple(
        """
        AccuracyMode ConvDimensionNumbers ConvGeneralDilatedDimensionNumbers DotAlgorithm
        DotAlgorithmPreset DotDimensionNumbers FftType GatherDimensionNumbers GatherScatterMode
        Precision PrecisionLike RaggedDotDimensionNumbers RandomAlgorithm RoundingMethod
        ScatterDimensionNumbers Tolerance
        """.split()
    ),
}

# The names of JAX_LAX that polyjax implements (with JAX's signature and semantics).
IMPLEMENTED: frozenset[str] = frozenset(
    """
    abs acos acosh add all_gather all_to_all argmax argmin asin asinh associative_scan atan
    atan2 atanh axis_index axis_size batch_matmul bessel_i0e bessel_i1e betainc
    bitcast_convert_type bitwise_and bitwise_not bitwise_or bitwise_xor broadcast
    broadcast_in_dim broadcast_to_rank broadcasted_iota cbrt ceil clamp clz complex concatenate
    cond conj conv conv_dimension_numbers conv_general_dilated conv_transpose
    conv_with_general_padding convert_element_type cos cosh cumlogsumexp cummax cummin cumprod
    cumsum custom_linear_solve custom_root digamma div dot dot_general dynamic_index_in_dim
    dynamic_slice dynamic_slice_in_dim
    dynamic_update_index_in_dim dynamic_update_slice dynamic_update_slice_in_dim eq erf erf_inv
    erfc exp exp2 expand_dims expm1 fft floor fori_loop full full_like gather ge gt igamma
    igamma_grad_a igammac imag index_in_dim integer_pow iota is_finite le lgamma log log1p
    logistic lt map max min mul ne neg nextafter pad pmax pmean pmin polygamma population_count
    pow ppermute pshuffle psum psum_scatter random_gamma_grad real reciprocal reduce reduce_and
    reduce_max reduce_min reduce_or reduce_precision reduce_prod reduce_sum reduce_window
    reduce_xor rem reshape rev rng_bit_generator round rsqrt scan scatter scatter_add
    scatter_apply scatter_max scatter_min scatter_mul select select_n shift_left
    shift_right_arithmetic shift_right_logical sign sin sinh slice slice_in_dim sort sqrt square
    squeeze stop_gradient sub switch tan tanh top_k transpose while_loop zeta AccuracyMode
    ConvDimensionNumbers FftType GatherDimensionNumbers GatherScatterMode Precision
    RandomAlgorithm RoundingMethod ScatterDimensionNumbers Tolerance linalg.cholesky
    linalg.eigh linalg.householder_product linalg.lu linalg.lu_pivots_to_permutation linalg.qr
    linalg.triangular_solve linalg.svd linalg.tridiagonal_solve linalg.eig linalg.SvdAlgorithm
    linalg.EigImplementation linalg.EighImplementation collapse sort_key_val split scatter_sub
    with_sharding_constraint
    broadcast_shapes index_take empty optimization_barrier DotDimensionNumbers PrecisionLike
    ConvGeneralDilatedDimensionNumbers
    approx_max_k approx_min_k conv_general_dilated_local conv_general_dilated_patches
    platform_dependent ragged_dot ragged_dot_general RaggedDotDimensionNumbers DotAlgorithm
    DotAlgorithmPreset pswapaxes rng_uniform composite
    ragged_all_to_all
    linalg.cholesky_update linalg.qdwh linalg.symmetric_product linalg.tridiagonal
    linalg.schur linalg.hessenberg
    after_all psend precv
    """.split()
)

DOC = pathlib.Path(__file__).resolve().parents[3] / "docs" / "lax.md"


def _lookup(name: str) -> bool:
    module = lax
    if name.startswith("linalg."):
        module, name = getattr(lax, "linalg", None), name.removeprefix("linalg.")
        if module is None:
            return False
    return name in getattr(module, "__all__", ()) and hasattr(module, name)


COVERAGE = dict(
    title="`polyjax.lax` against `jax.lax`",
    intro=(
        "Which names of JAX's `jax.lax` API reference polyjax implements, section by",
        "section (`linalg.*` is `jax.lax.linalg`). Generated by `tools/api_coverage.py`",
        "from the lists in `packages/numpy/tests/test_lax_coverage.py`, which also checks",
        "that every implemented name stays exported. Primitive objects (`<name>_p`) are",
        "not listed.",
        "",
        "Left out on purpose, with the reason:",
        "",
        "- Tokens (`create_token`, `after_all`, type `Tok`): a token carries no data.",
        "  Eagerly these return a `Token` without computing; under `jit` they lower to",
        "  `stablehlo.create_token`/`after_all`. A jitted function takes and returns",
        "  tokens, but its executable sees each as an empty `bool[0]` placeholder:",
        "  `main` makes a fresh token of a token argument and returns `bool[0]` for a",
        "  token result (JAX passes `!stablehlo.token` itself; `lower(...).as_text()`",
        "  differs there). Ordering thus holds inside one executable, and across",
        "  calls by their order, as polyjax's ordered effects (docs/debugging.md).",
        "  Tokens have no tangent (their tangents stay symbolic zeros) and are never",
        "  batched; they need no sharding rule (nothing to shard).",
        "- `psend`, `precv` (with `psend_p`/`precv_p`, which JAX does not export):",
        "  single-sided transfers inside `shard_map`. As in JAX 0.10.2, compiling them",
        "  for CPU raises `NotImplementedError: psend is currently only implemented on",
        "  GPU`. For `cuda`/`rocm` they lower to `stablehlo.send`/`recv` with the",
        "  permutation's source-target pairs, the ops JAX emits (an export for",
        "  `cuda` is compared in tests_integration); never run: no GPU in the tests.",
        "  They carry no effect, so an unused receive is removed with its send.",
        "- `ragged_all_to_all`: XLA:CPU has no such instruction; polyjax emulates it",
        "  with all-gathers inside `shard_map` (and over a vmapped axis).",
        "- `approx_max_k`/`approx_min_k` are exact on CPU (their `approx_top_k` primitive",
        "  is lowered as `top_k` or a sort); `tile`, `stack`, `unstack` bind primitives",
        "  lowered as structural ones; `ragged_dot(_general)` is composed from masked",
        "  `dot_general`s, so `ragged_dot_general_p` does not exist. It supports",
        "  JAX's three modes (ragged free, contracting or batch dimension) with 1-D",
        "  `group_sizes`, not `group_offset`.",
        "- `scaled_dot` is composed (bfloat16 dequantization, then `dot_general`, as",
        "  JAX computes it on CPU); `qdwh` is a function, as in JAX.",
        "- `device_put_p`: polyjax's `device_put` is not a primitive (eagerly a transfer,",
        "  under `jit` the identity or a sharding constraint: packages/sharding).",
        "",
        "Primitive objects of issue 20, each with every rule (abstract evaluation,",
        "lowering, jvp/transpose where JAX has them, batching, a sharding rule, a",
        "case in test_rules_coverage.py): `approx_top_k_p`, `tile_p`, `stack_p`,",
        "`unstack_p`, `copy_p`, `dce_sink_p`, `eq_to_p`, `le_to_p`, `lt_to_p`,",
        "`ragged_all_to_all_p`, `select_and_scatter_p` (the general form, select and",
        "scatter jaxprs as params; no jvp, as in JAX), `stop_gradient_p` (the AD",
        "layer's), `linear_solve_p`",
        "(`custom_linear_solve`'s, as in JAX), and in `linalg` `cholesky_update_p`,",
        "`ormqr_p`, `symmetric_product_p`, `tridiagonal_p`, `lu_pivots_to_permutation_p`",
        "(the linalg ones have no jvp, as in JAX).",
        "- `DotAlgorithm`/`DotAlgorithmPreset`: XLA:CPU runs the presets `DEFAULT`,",
        "  `F16_F16_F16`, `BF16_BF16_F32(_X3, _X6)`, `F32_F32_F32`, `F64_F64_F64`; the",
        "  others, and explicit `DotAlgorithm`s, raise `ValueError` as in JAX on CPU.",
    ),
    sections=JAX_LAX,
    implemented=IMPLEMENTED,
    lookup=_lookup,
    doc=DOC,
)


def test_lists_are_consistent():
    every = [n for names in JAX_LAX.values() for n in names]
    assert len(set(every)) == len(every)
    assert IMPLEMENTED <= set(every), sorted(IMPLEMENTED - set(every))


@pytest.mark.parametrize("name", sorted(IMPLEMENTED))
def test_implemented_name_is_exported(name):
    assert _lookup(name), f"lax.{name} is listed as implemented but is not exported"


def test_doc_table_is_current(api_coverage):
    coverage = api_coverage.Coverage(**COVERAGE)
    assert api_coverage.is_current(coverage), "docs/lax.md is stale: run tools/api_coverage.py lax"
