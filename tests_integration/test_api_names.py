"""Sweeps of JAX's public API beyond the names of its modules.

Whether every module-level name exists is `test_api_coverage.py`'s business
(from ../shared/jax_api_names.txt, with reasons for what is left out). Swept
here: the keyword parameters of JAX's functions, the attributes of JAX's
`Array` on polyjax's arrays and tracers, `isinstance(x, polyjax.Array)` for
tracers of every transformation, and JAX's top-level configuration context
managers called with no argument.
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

_SHARDING = "issue 12 (sharding and multiple devices)"
_REFS = "mutable array references: abstract references as ShapeDtypeStruct (not yet)"
_REF_BOX = "a Ref holds its contents (Ref(value)); references are made with new_ref"


def _module(jax_name: str):
    return importlib.import_module("polyjax" + jax_name.removeprefix("jax"))


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
# What JAX's tracers do with the names that need a concrete array.
TRACER_CONCRETIZATION = set(
    "addressable_shards committed global_shards is_fully_addressable is_fully_replicated".split()
)
TRACER_CONCRETIZATION_ON_CALL = {"item", "addressable_data"}
TRACER_ATTRIBUTE_ERROR = {"copy_to_host_async", "device", "sharding"}
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
        elif name in TRACER_ATTRIBUTE_ERROR:
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
    "allow_f16_reductions check_tracer_leaks debug_infs debug_key_reuse debug_nans "
    "enable_checks enable_x64 explain_cache_misses log_compiles no_execution no_tracing "
    "softmax_custom_jvp thread_guard threefry_partitionable".split()
)
JAX_VALUE_CONTEXT_MANAGERS = (
    "array_garbage_collection_guard default_device default_matmul_precision "
    "default_prng_impl legacy_prng_key numpy_dtype_promotion numpy_rank_promotion "
    "transfer_guard transfer_guard_device_to_device transfer_guard_device_to_host "
    "transfer_guard_host_to_device".split()
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
    "jax.Ref": {"aval": _REF_BOX, "refs": _REF_BOX},
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
