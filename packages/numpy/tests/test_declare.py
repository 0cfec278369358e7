"""`standard_primitive`/`define_rules`: the jvp forms it takes, and the pairs it refuses."""

import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core.abstract_values import ShapedArray
from polyjax_interpreters import ad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax
from polyjax_numpy.lax._declare import standard_primitive


def _same(x):
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _unary(name, op, **rules):
    return standard_primitive(name, _same, lambda ctx, x: [op(x)], batching="vectorized", **rules)


_test_sin_p = _unary("test_sin", hlo.sine, jvp_terms=(lambda g, x: lax.mul(g, lax.cos(x)),))
_test_exp_p = _unary(
    "test_exp", hlo.exponential, jvp_ans_terms=(lambda g, ans, x: lax.mul(g, ans),)
)
_test_neg_p = _unary("test_neg", hlo.negate, linear_transpose=lambda ct, x: [lax.neg(ct)])

X = np.array([0.3, -1.2, 2.0], np.float32)


@pytest.mark.parametrize(
    "prim, oracle",
    [(_test_sin_p, np.sin), (_test_exp_p, np.exp), (_test_neg_p, np.negative)],
    ids=["jvp_terms", "jvp_ans_terms", "linear_transpose"],
)
def test_declared_rules_give_values_derivatives_and_batching(prim, oracle):
    np.testing.assert_allclose(prim.bind(X), oracle(X), rtol=1e-6)
    np.testing.assert_allclose(vmap(prim.bind)(X[:, None]), oracle(X)[:, None], rtol=1e-6)
    check_grads(prim.bind, (X,), order=2, modes=["fwd", "rev"])


def test_a_jvp_given_with_linear_transpose_replaces_the_linear_one():
    def doubled_jvp(primals, tangents):
        return _test_scale_p.bind(*primals), lax.mul(2.0, tangents[0])

    _test_scale_p = _unary(
        "test_scale", hlo.negate, linear_transpose=lambda ct, x: [ct], jvp=doubled_jvp
    )
    assert ad.primitive_jvps[_test_scale_p] is doubled_jvp
    assert _test_scale_p in ad.primitive_transposes


@pytest.mark.parametrize(
    "rules",
    [
        {"jvp": "zero", "jvp_terms": (None,)},
        {"jvp_terms": (None,), "jvp_ans_terms": (None,)},
        {"transpose": lambda ct, x: [ct], "linear_transpose": lambda ct, x: [ct]},
    ],
    ids=["jvp+jvp_terms", "jvp_terms+jvp_ans_terms", "transpose+linear_transpose"],
)
def test_two_forms_of_one_rule_are_refused(rules):
    with pytest.raises(TypeError, match=r"define_rules\(test_twice\): give"):
        _unary("test_twice", hlo.negate, **rules)
