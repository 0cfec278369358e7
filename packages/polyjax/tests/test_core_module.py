"""polyjax.core: the public names of ``jax.core``, as polyjax's own types."""

from __future__ import annotations

import numpy as np
import pytest

import polyjax
import polyjax.core as core
import polyjax.numpy as jnp


def test_names_match_jax_core():
    expected = {
        "AbstractValue", "Atom", "ParamDict", "ShapedArray", "Trace", "Tracer", "Value",
        "ensure_compile_time_eval", "eval_context", "eval_jaxpr", "max_dim", "min_dim",
    }  # fmt: skip
    assert set(core.__all__) == expected


@pytest.mark.parametrize("transform", ["jit", "grad", "vmap"])
def test_tracer_is_the_type_of_every_traced_value(transform):
    seen = []

    def f(x):
        seen.append(isinstance(x, core.Tracer))
        return jnp.sum(x * x)

    getattr(polyjax, transform)(f)(jnp.ones(3) if transform != "grad" else jnp.ones(3))
    assert seen == [True]
    assert not isinstance(jnp.ones(3), core.Tracer)


def test_shaped_array_takes_jaxlibs_positional_arguments():
    aval = core.ShapedArray((2, 3), np.dtype("float32"), True)
    assert aval.shape == (2, 3) and aval.dtype == np.float32 and aval.weak_type
    assert isinstance(aval, core.AbstractValue)


def test_max_and_min_dim_of_constants():
    assert core.max_dim(3, 5) == 5 and core.min_dim(3, 5) == 3
