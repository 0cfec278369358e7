"""Sweeps of JAX's public names: every name of a covered JAX module exists in polyjax.

JAX's names are data here (taken from JAX 0.10.2's modules; JAX is never
imported). Names polyjax does not have yet are listed in `NOT_YET`, grouped by
why, so that this test is an honest account: a name missing from polyjax and
from `NOT_YET` fails. A name that gets implemented may simply be dropped from
`NOT_YET`.

Also swept: the attributes of JAX's `Array` on polyjax's arrays and tracers,
`isinstance(x, polyjax.Array)` for tracers of every transformation, and JAX's
top-level configuration context managers called with no argument.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pathlib

import numpy as np
import pytest

import polyjax
import polyjax.numpy as jnp
from polyjax import errors

JAX_NAMES: dict[str, str] = {
    "jax": """
        Array Device NamedSharding P Ref ShapeDtypeStruct Shard ad allow_f16_reductions
        api_util array_garbage_collection_guard auto_pcast block_until_ready
        check_tracer_leaks checking_leaks checkpoint checkpoint_policies clear_caches
        closure_convert config copy_to_host_async core custom_batching
        custom_derivatives custom_gradient custom_jvp custom_vjp debug debug_infs
        debug_key_reuse debug_nans default_backend default_device
        default_matmul_precision default_prng_impl device_count device_get device_put
        devices disable_jit distributed dlpack ds dtypes effects_barrier empty_ref
        enable_checks enable_custom_prng enable_x64 ensure_compile_time_eval errors
        eval_shape experimental explain_cache_misses export ffi float0 free_ref freeze
        fwd_and_bwd grad hessian host_count host_id host_ids image interpreters jacfwd
        jacobian jacrev jax2tf_associative_scan_reductions jit jvp lax legacy_prng_key
        lib linear_transpose linearize live_arrays local_device_count local_devices
        log_compiles make_array_from_callback make_array_from_process_local_data
        make_array_from_single_device_arrays make_jaxpr make_mesh make_user_context
        memory monitoring named_call named_scope new_ref nn no_execution no_tracing
        numpy numpy_dtype_promotion numpy_rank_promotion ops pmap print_environment_info
        process_count process_index process_indices profiler pure_callback random ref
        remat remove_size_one_mesh_axis_from_type reshard scipy set_mesh shard_map
        sharding smap softmax_custom_jvp stages thread_guard threefry_partitionable
        transfer_guard transfer_guard_device_to_device transfer_guard_device_to_host
        transfer_guard_host_to_device tree tree_util typeof typing value_and_grad
        version vjp vmap
    """,
    "jax.tree_util": """
        DictKey FlattenedIndexKey GetAttrKey KeyEntry KeyPath Partial PyTreeDef
        SequenceKey all_leaves default_registry flatten_one_level
        flatten_one_level_with_keys is_tree_node keystr register_dataclass
        register_pytree_node register_pytree_node_class register_pytree_with_keys
        register_pytree_with_keys_class register_static tree_all tree_broadcast
        tree_flatten tree_flatten_with_path tree_leaves tree_leaves_with_path tree_map
        tree_map_with_path tree_reduce tree_reduce_associative tree_structure
        tree_transpose tree_unflatten treedef_children treedef_is_leaf treedef_tuple
    """,
    "jax.tree": """
        all broadcast flatten flatten_with_path leaves leaves_with_path map
        map_with_path reduce reduce_associative static structure transpose unflatten
    """,
    "jax.errors": """
        ConcretizationTypeError InconclusiveDimensionOperation JAXIndexError
        JAXTypeError JaxRuntimeError JaxprTypeError KeyReuseError
        NonConcreteBooleanIndexError TracerArrayConversionError
        TracerBoolConversionError TracerIntegerConversionError UnexpectedTracerError
    """,
    "jax.dtypes": """
        TypePromotionError bfloat16 canonicalize_dtype extended finfo float0 iinfo
        issubdtype itemsize_bits prng_key result_type scalar_type_of
    """,
    "jax.stages": """
        ArgInfo Compiled CompilerOptions Lowered Traced Wrapped
    """,
    "jax.custom_derivatives": """
        CustomVJPPrimal SymbolicZero closure_convert custom_gradient custom_jvp
        custom_jvp_call_p custom_vjp custom_vjp_call_p custom_vjp_primal_tree_values
        linear_call remat_opt_p zero_from_primal
    """,
    "jax.ad_checkpoint": """
        Offloadable Recompute Saveable checkpoint_name checkpoint_policies
        print_saved_residuals
    """,
    "jax.dlpack": """
        from_dlpack is_supported_dtype
    """,
    "jax.nn": """
        celu dot_product_attention elu gelu get_scaled_dot_general_config glu
        hard_sigmoid hard_silu hard_swish hard_tanh identity initializers leaky_relu
        log1mexp log_sigmoid log_softmax logmeanexp logsumexp mish one_hot relu relu6
        scaled_dot_general scaled_matmul selu sigmoid silu soft_sign softmax softplus
        sparse_plus sparse_sigmoid squareplus standardize swish tanh
    """,
    "jax.nn.initializers": """
        Initializer constant delta_orthogonal glorot_normal glorot_uniform he_normal
        he_uniform kaiming_normal kaiming_uniform lecun_normal lecun_uniform normal ones
        orthogonal truncated_normal uniform variance_scaling xavier_normal
        xavier_uniform zeros
    """,
    "jax.random": """
        PRNGKey ball bernoulli beta binomial bits categorical cauchy chisquare choice
        clone dirichlet double_sided_maxwell exponential f fold_in gamma
        generalized_normal geometric gumbel key key_data key_dtype key_impl laplace
        loggamma logistic lognormal maxwell multinomial multivariate_normal normal
        orthogonal pareto permutation poisson rademacher randint random_gamma_p rayleigh
        split t triangular truncated_normal uniform wald weibull_min wrap_key_data
    """,
    "jax.test_util": """
        check_grads check_jvp check_vjp
    """,
    "jax.typing": "ArrayLike DTypeLike",
}

_SHARDING = "issue 12 (sharding and multiple devices)"
_REFS = "mutable array references (not planned yet)"
_INTERNAL = "JAX's internal or extension modules (not planned yet)"
_FLAGS = "configuration options not implemented yet"
_TRANSFORMS = "transformations and utilities not implemented yet"
_EXPORT = "polyjax-export (not implemented yet)"
_CALLBACKS = "host callbacks, debugging and effects (not implemented yet)"

# module -> {name: reason}
NOT_YET: dict[str, dict[str, str]] = {
    "jax": {
        **dict.fromkeys(
            "NamedSharding P Shard auto_pcast distributed host_count host_id host_ids "
            "make_array_from_callback make_array_from_process_local_data "
            "make_array_from_single_device_arrays make_mesh pmap process_indices "
            "remove_size_one_mesh_axis_from_type reshard set_mesh shard_map smap".split(),
            _SHARDING,
        ),
        **dict.fromkeys("Ref empty_ref free_ref freeze new_ref ref".split(), _REFS),
        **dict.fromkeys(
            "ad api_util core custom_batching ds experimental image interpreters lib memory "
            "monitoring ops profiler version".split(),
            _INTERNAL,
        ),
        **dict.fromkeys(
            "allow_f16_reductions array_garbage_collection_guard checking_leaks debug_key_reuse "
            "enable_custom_prng jax2tf_associative_scan_reductions legacy_prng_key no_execution "
            "no_tracing thread_guard transfer_guard_device_to_device transfer_guard_device_to_host "
            "transfer_guard_host_to_device".split(),
            _FLAGS,
        ),
        **dict.fromkeys(
            "closure_convert custom_gradient ensure_compile_time_eval fwd_and_bwd named_call "
            "named_scope copy_to_host_async live_arrays make_user_context "
            "print_environment_info".split(),
            _TRANSFORMS,
        ),
        **dict.fromkeys("debug effects_barrier ffi pure_callback".split(), _CALLBACKS),
        "export": _EXPORT,
    },
    "jax.stages": {"CompilerOptions": _TRANSFORMS},
    "jax.custom_derivatives": dict.fromkeys(
        "closure_convert custom_gradient custom_vjp_primal_tree_values linear_call "
        "remat_opt_p".split(),
        _TRANSFORMS,
    ),
    "jax.ad_checkpoint": dict.fromkeys(
        "Offloadable Recompute Saveable print_saved_residuals".split(), _TRANSFORMS
    ),
    "jax.dlpack": {"is_supported_dtype": _TRANSFORMS},
    "jax.nn": dict.fromkeys(
        "get_scaled_dot_general_config scaled_dot_general scaled_matmul".split(),
        _TRANSFORMS,
    ),
}


def _module(jax_name: str):
    return importlib.import_module("polyjax" + jax_name.removeprefix("jax"))


def test_not_yet_lists_only_jax_names():
    for module, missing in NOT_YET.items():
        assert set(missing) <= set(JAX_NAMES[module].split()), module


@pytest.mark.parametrize("module", sorted(JAX_NAMES))
def test_every_jax_name_exists_or_is_listed_as_not_yet(module):
    ours = _module(module)
    allowed = NOT_YET.get(module, {})
    missing = [n for n in JAX_NAMES[module].split() if n not in allowed and not hasattr(ours, n)]
    assert not missing, f"{module}: missing {missing}"


def test_names_of_issue_11_point_8():
    assert polyjax.float0 is polyjax.dtypes.float0
    assert isinstance(polyjax.devices()[0], polyjax.Device)
    assert issubclass(polyjax.dtypes.TypePromotionError, ValueError)
    assert issubclass(errors.JaxprTypeError, TypeError)
    assert issubclass(errors.KeyReuseError, errors.JAXTypeError)
    assert issubclass(errors.InconclusiveDimensionOperation, Exception)
    assert polyjax.typing.ArrayLike.__args__[0] is polyjax.Array


# ---------------------------------------------------------------------------
# JAX's `Array` attributes, on arrays and on tracers.

ARRAY_NAMES = """
    T addressable_data addressable_shards all any argmax argmin argpartition argsort astype at
    byteswap choose clip committed compress conj conjugate copy copy_to_host_async cumprod cumsum
    device diagonal dot dtype flat flatten global_shards imag is_fully_addressable
    is_fully_replicated item itemsize mT max mean min nbytes ndim nonzero prod ptp ravel real
    repeat reshape round searchsorted shape sharding size sort squeeze std sum swapaxes take
    to_device trace transpose var view
""".split()
ARRAY_NOT_YET = dict.fromkeys(
    "addressable_data addressable_shards global_shards".split(), _SHARDING
)
# What JAX's tracers do with the names that need a concrete array.
TRACER_CONCRETIZATION = set(
    "addressable_shards committed global_shards is_fully_addressable is_fully_replicated".split()
)
TRACER_CONCRETIZATION_ON_CALL = {"item", "addressable_data"}
TRACER_ATTRIBUTE_ERROR = {"copy_to_host_async", "device", "sharding"}
# JAX's tracers have `to_device` (it fails when called); polyjax's do not yet.
TRACER_NOT_YET = {"to_device": _TRANSFORMS}
NOT_AN_ATTRIBUTE = {"flat"}  # JAX raises NotImplementedError, pointing to flatten()


def _has(x, name: str) -> bool:
    try:
        getattr(x, name)
    except AttributeError:
        return False
    return True


@pytest.mark.parametrize("name", ARRAY_NAMES)
def test_jax_array_attributes_exist_on_arrays(name):
    x = jnp.ones((2, 3))
    if name in ARRAY_NOT_YET:
        return
    if name in NOT_AN_ATTRIBUTE:
        with pytest.raises(NotImplementedError):
            getattr(x, name)
        return
    assert _has(x, name), name


@pytest.mark.parametrize("transform", ["jit", "vmap", "grad", "make_jaxpr"])
def test_jax_array_attributes_on_tracers_behave_as_in_jax(transform):
    results = {}

    def probe(t):
        for name in ARRAY_NAMES:
            try:
                value = getattr(t, name)
                if name in TRACER_CONCRETIZATION_ON_CALL:
                    value(0) if name == "addressable_data" else value()
                results[name] = "ok"
            except errors.ConcretizationTypeError:
                results[name] = "concretization"
            except AttributeError:
                results[name] = "attribute"
            except NotImplementedError:
                results[name] = "not implemented"
        return t.sum()

    x = jnp.ones((2, 3))
    getattr(polyjax, transform)(probe)(x if transform != "vmap" else x[None])
    assert set(results) == set(ARRAY_NAMES)
    for name, got in results.items():
        if name in TRACER_CONCRETIZATION | TRACER_CONCRETIZATION_ON_CALL:
            assert got == "concretization", name
        elif name in TRACER_ATTRIBUTE_ERROR or name in TRACER_NOT_YET:
            assert got == "attribute", name
        elif name in NOT_AN_ATTRIBUTE:
            assert got == "not implemented", name
        else:
            assert got == "ok", name


# ---------------------------------------------------------------------------
# Tracers are arrays (issue 11 point 10).

TRANSFORMS = {
    "jit": lambda f, x: polyjax.jit(f)(x),
    "grad": lambda f, x: polyjax.grad(lambda y: f(y).sum())(x),
    "vmap": lambda f, x: polyjax.vmap(f)(x),
    "make_jaxpr": lambda f, x: polyjax.make_jaxpr(f)(x),
    "jvp": lambda f, x: polyjax.jvp(f, (x,), (x,)),
    "vjp": lambda f, x: polyjax.vjp(f, x),
    "linearize": lambda f, x: polyjax.linearize(f, x),
    "jacfwd": lambda f, x: polyjax.jacfwd(f)(x),
    "hessian": lambda f, x: polyjax.hessian(lambda y: f(y).sum())(x),
    "checkpoint": lambda f, x: polyjax.grad(lambda y: polyjax.checkpoint(f)(y).sum())(x),
    "eval_shape": lambda f, x: polyjax.eval_shape(f, x),
}


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
def test_tracers_of_every_transformation_are_arrays(transform):
    seen = []

    def f(y):
        seen.append(
            (
                isinstance(y, polyjax.Array),
                isinstance(y, jnp.ndarray),
                isinstance(y, np.ndarray),
                type(y) is polyjax.Array,
            )
        )
        return y * 2.0

    TRANSFORMS[transform](f, jnp.ones(3))
    assert seen and all(s == (True, True, False, False) for s in seen), seen


def test_concrete_arrays_and_keys_are_arrays_and_host_values_are_not():
    assert isinstance(jnp.ones(2), polyjax.Array) and isinstance(jnp.ones(2), jnp.ndarray)
    assert isinstance(polyjax.random.key(0), polyjax.Array)
    for host in (np.ones(2), np.float32(1), 1.0, [1.0]):
        assert not isinstance(host, polyjax.Array)


# ---------------------------------------------------------------------------
# JAX's top-level configuration context managers, called with no argument.

JAX_BOOL_CONTEXT_MANAGERS = (
    "check_tracer_leaks debug_infs debug_nans enable_checks enable_x64 explain_cache_misses "
    "log_compiles softmax_custom_jvp threefry_partitionable".split()
)
JAX_VALUE_CONTEXT_MANAGERS = (
    "default_device default_matmul_precision default_prng_impl numpy_dtype_promotion "
    "numpy_rank_promotion transfer_guard".split()
)


@pytest.mark.parametrize("name", JAX_BOOL_CONTEXT_MANAGERS)
def test_bool_context_managers_without_argument_mean_true(name):
    state = getattr(polyjax, name)
    with state():
        assert getattr(polyjax.config, f"jax_{name}") is True
    with polyjax.disable_jit():
        assert polyjax.config.jax_disable_jit is True


@pytest.mark.parametrize("name", JAX_VALUE_CONTEXT_MANAGERS)
def test_value_context_managers_need_their_value(name):
    with pytest.raises(TypeError, match=f"Context manager for {name} config option requires"):
        getattr(polyjax, name)()


# ---------------------------------------------------------------------------
# Call forms: every parameter JAX lets a caller pass by keyword is accepted by
# keyword. `data/jax_keyword_parameters.json` holds, per JAX function, those
# parameter names (JAX 0.10.2's signatures).

_POSITIONAL_ONLY = "positional-only in polyjax (JAX also takes it by keyword)"
_DEPRECATED = "deprecated in JAX"
_FEATURE = "parameter not implemented yet"
_EVERYWHERE: dict[str, str] = {}
KEYWORDS_NOT_YET: dict[str, dict[str, str]] = {
    "jax.numpy.i0": {"x": _POSITIONAL_ONLY},
    "jax.numpy.trunc": {"x": _POSITIONAL_ONLY},
    "jax.checkpoint": {"concrete": _DEPRECATED},
    "jax.remat": {"concrete": _DEPRECATED},
    "jax.vjp": {"reduce_axes": _DEPRECATED},
    "jax.local_devices": {"host_id": _DEPRECATED},
    "jax.ShapeDtypeStruct": {"manual_axis_type": _SHARDING, "is_ref": _REFS},
    "jax.lax.all_gather": {"to": _SHARDING},
    "jax.jit": {"compiler_options": _FEATURE},
    "jax.vmap": {"sum_match": _FEATURE},
    "jax.lax.conv_transpose": {"use_consistent_padding": _FEATURE},
    **{
        f"jax.lax.{f}": {"allow_negative_indices": _FEATURE}
        for f in (
            "dynamic_index_in_dim",
            "dynamic_update_index_in_dim",
            "dynamic_update_slice",
            "dynamic_update_slice_in_dim",
        )
    },
    "jax.lax.mul": {"out_dtype": _FEATURE},
    "jax.lax.top_k": {"axis": _FEATURE},
    "jax.nn.dot_product_attention": {"return_residual": _FEATURE},
    "jax.nn.standardize": {"algorithm": _FEATURE},
    **{f"jax.numpy.{f}": {"dtype": _FEATURE} for f in ("argsort", "corrcoef", "cov")},
    **{f"jax.numpy.{f}": {"mean": _FEATURE} for f in ("std", "var", "nanstd", "nanvar")},
    "jax.numpy.ravel_multi_index": {"dtype": _FEATURE},
    "jax.numpy.reshape": {"copy": _FEATURE},
    "jax.numpy.take_along_axis": {"wrap_negative_indices": _FEATURE},
    "jax.numpy.trim_zeros": {"axis": _FEATURE},
    "jax.random.key": {"dtype": _FEATURE},
    "jax.random.wrap_key_data": {"dtype": _FEATURE},
}


def _jax_keyword_parameters() -> dict[str, list[str]]:
    path = pathlib.Path(__file__).parent / "data" / "jax_keyword_parameters.json"
    return {k: v.split() for k, v in json.loads(path.read_text()).items()}


def _ours(qualname: str):
    module, _, attr = qualname.rpartition(".")
    try:
        return getattr(_module(module), attr, None)
    except ImportError:
        return None


@pytest.mark.parametrize(
    "module", sorted({q.rpartition(".")[0] for q in _jax_keyword_parameters()})
)
def test_jax_keyword_parameters_are_accepted(module):
    # Functions polyjax lacks are the business of the name sweeps and coverage tables.
    problems = []
    for qualname, names in _jax_keyword_parameters().items():
        if qualname.rpartition(".")[0] != module or (fun := _ours(qualname)) is None:
            continue
        try:
            params = inspect.signature(fun).parameters.values()
        except (TypeError, ValueError):
            continue
        if any(p.kind is p.VAR_KEYWORD for p in params):
            continue
        ours = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        allowed = {**_EVERYWHERE, **KEYWORDS_NOT_YET.get(qualname, {})}
        missing = [n for n in names if n not in ours and n not in allowed]
        if missing:
            problems.append(f"{qualname}: {missing}")
    assert not problems, "\n".join(problems)


def test_keywords_not_yet_lists_only_jax_parameters():
    jax_params = _jax_keyword_parameters()
    for qualname, names in KEYWORDS_NOT_YET.items():
        assert set(names) <= set(jax_params[qualname]), qualname


# ---------------------------------------------------------------------------
# Printed forms (issue 11 point 4): JAX 0.10.2's text, character for character.

PRINTED_JAXPRS = [
    (
        lambda x: polyjax.lax.scan(lambda c, a: (c + a, c), np.float32(0), x),
        np.ones(3, np.float32),
        """{ lambda ; a:f32[3]. let
    b:f32[] c:f32[3] = scan[
      jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = add d e in (f, d) }
      length=3
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] 0.0:f32[] a
  in (b, c) }""",
    ),
    (
        lambda x: polyjax.jit(lambda y: y + 1.0)(x) * 2.0,
        np.float32(1),
        """{ lambda ; a:f32[]. let
    b:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let b:f32[] = add a 1.0:f32[] in (b,) }
    ] a
    c:f32[] = mul b 2.0:f32[]
  in (c,) }""",
    ),
    (
        lambda x: polyjax.jit(lambda y: y)(x),
        np.float32(1),
        """{ lambda ; a:f32[]. let
    b:f32[] = jit[name=<lambda> jaxpr={ lambda ; a:f32[]. let  in (a,) }] a
  in (b,) }""",
    ),
    (
        lambda x: jnp.tanh(jnp.exp(x)),
        1.0,
        "{ lambda ; a:f32[]. let b:f32[] = exp a; c:f32[] = tanh b in (c,) }",
    ),
    (
        lambda x: jnp.ones((2, 3)) + x,
        np.ones(3, np.float32),
        """{ lambda ; a:f32[3]. let
    b:f32[2,3] = broadcast_in_dim 1.0:f32[]
    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a
    d:f32[2,3] = add b c
  in (d,) }""",
    ),
]


@pytest.mark.parametrize("case", range(len(PRINTED_JAXPRS)))
def test_jaxprs_print_as_in_jax(case):
    fun, arg, text = PRINTED_JAXPRS[case]
    assert str(polyjax.make_jaxpr(fun)(arg)) == text


def test_tracers_and_avals_print_as_in_jax():
    seen = []
    record = lambda x: seen.append(repr(x)) or x  # noqa: E731
    polyjax.make_jaxpr(record)(1.0)
    polyjax.jit(record)(jnp.ones(2))
    polyjax.jvp(record, (1.0,), (2.0,))
    polyjax.jvp(record, (jnp.ones(2),), (jnp.ones(2),))
    polyjax.linearize(record, 1.0)
    polyjax.vjp(record, 1.0)
    polyjax.vmap(record)(jnp.ones((2, 3)))
    polyjax.vmap(record, in_axes=1)(jnp.ones((2, 3)))
    polyjax.grad(polyjax.grad(record))(1.0)
    polyjax.vmap(polyjax.vmap(record))(jnp.ones((2, 3)))
    assert seen == [
        "JitTracer(~float32[])",
        "JitTracer(float32[2])",
        "JVPTracer(primal=1.0, tangent=2.0)",
        "JVPTracer(primal=[1. 1.], tangent=[1. 1.])",
        "GradTracer(primal=1.0, typeof(tangent)=f32[])",
        "GradTracer(primal=1.0, typeof(tangent)=f32[])",
        "VmapTracer(aval=float32[3], batched=float32[2,3])",
        "VmapTracer(aval=float32[2], batched=float32[2,3])",
        "GradTracer(primal=GradTracer(primal=1.0, typeof(tangent)=f32[]), typeof(tangent)=f32[])",
        "VmapTracer(aval=float32[], batched=float32[3])",
    ]
    assert str(polyjax.typeof(jnp.ones(3))) == "float32[3]"
    assert repr(polyjax.typeof(jnp.ones(3))) == "ShapedArray(float32[3])"
    assert str(polyjax.typeof(1.0)) == "~float32[]"
