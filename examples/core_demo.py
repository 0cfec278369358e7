"""polyjax-core demo: declare primitives, trace a function to a jaxpr, check it,
evaluate it, and write a small transformation (forward-mode derivatives) on
polyjax-core alone, without XLA. docs/core-api.md walks through it.

It registers its own toy primitives and tracer operators, so it runs in a
process of its own (the real ones are in polyjax.lax; see examples/demo.py):
    uv run --locked python examples/core_demo.py
"""

import numpy as np

import polyjax_core as core
from polyjax_core.dtypes import result_type

# -- 1. Declare primitives: a name, an impl on NumPy values, a shape rule. ----


def elementwise(name, impl, nargs):
    prim = core.Primitive(name)
    prim.def_impl(impl)

    def shape_rule(*avals):
        shape = np.broadcast_shapes(*(a.shape for a in avals))
        return core.ShapedArray(shape, result_type(*avals), all(a.weak_type for a in avals))

    prim.def_abstract_eval(shape_rule)
    return prim


sin_p = elementwise("sin", np.sin, 1)
cos_p = elementwise("cos", np.cos, 1)
mul_p = elementwise("mul", np.multiply, 2)
add_p = elementwise("add", np.add, 2)
neg_p = elementwise("neg", np.negative, 1)

# Operators on tracers, so user code can write `x * y`.
core.register_tracer_method("__mul__", mul_p.bind)
core.register_tracer_method("__rmul__", lambda x, y: mul_p.bind(y, x))
core.register_tracer_method("__add__", add_p.bind)
core.register_tracer_method("__radd__", lambda x, y: add_p.bind(y, x))


# -- 2. Trace a Python function with pytree inputs to a jaxpr. ----------------


def predict(params, x):
    return sin_p.bind(params["w"] * x) + params["b"] * 2.0


params = {"w": np.float32(1.5), "b": np.ones(3, np.float32)}
x = np.linspace(0.0, 1.0, 3, dtype=np.float32)

closed = core.make_jaxpr(predict)(params, x)
print("The jaxpr of predict:")
print(closed)

core.check_jaxpr(closed)  # every equation's types re-derived: well typed
print("\nEvaluated:", core.jaxpr_as_fun(closed)(params["b"], params["w"], x)[0])
print("NumPy:    ", np.sin(params["w"] * x) + params["b"] * 2.0)


# -- 3. A transformation: forward-mode differentiation as a Trace. ------------


class JVPTracer(core.Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        super().__init__(trace)
        self.primal, self.tangent = primal, tangent

    @property
    def aval(self):
        return core.get_aval(self.primal)


jvp_rules = core.RuleTable("jvp")
jvp_rules[sin_p] = lambda x, dx: (sin_p.bind(x), mul_p.bind(cos_p.bind(x), dx))
jvp_rules[cos_p] = lambda x, dx: (cos_p.bind(x), neg_p.bind(mul_p.bind(sin_p.bind(x), dx)))
jvp_rules[add_p] = lambda x, y, dx, dy: (add_p.bind(x, y), add_p.bind(dx, dy))
jvp_rules[mul_p] = lambda x, y, dx, dy: (
    mul_p.bind(x, y),
    add_p.bind(mul_p.bind(dx, y), mul_p.bind(x, dy)),
)


class JVPTrace(core.Trace):
    def lift(self, x):
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        return x, np.zeros_like(x)  # a constant: zero tangent

    def process_primitive(self, prim, args, params):
        primals, tangents = zip(*(self.lift(x) for x in args))
        # The rule runs under the parent trace: nested transformations compose.
        with core.set_current_trace(self.parent):
            out, dout = jvp_rules[prim](*primals, *tangents, **params)
        return JVPTracer(self, out, dout)


def jvp(f, primal, tangent):
    with JVPTrace() as trace:
        out = f(JVPTracer(trace, primal, tangent))
        return trace.lift(out)


def f(x):
    return sin_p.bind(sin_p.bind(x) * x)


y, dy = jvp(f, np.float32(0.7), np.float32(1.0))
eps = 1e-3
print(f"\nd/dx sin(sin(x) * x) at 0.7 = {dy:.5f}")
fd = (f(np.float32(0.7 + eps)) - f(np.float32(0.7 - eps))) / (2 * eps)
print(f"finite differences         = {fd:.5f}")

# Transformations compose with tracing: the jaxpr of the derivative.
print("\nThe jaxpr of the derivative:")
print(core.make_jaxpr(lambda x: jvp(f, x, np.float32(1.0))[1])(np.float32(0.7)))
