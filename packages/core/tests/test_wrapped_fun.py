"""Tests for polyjax_core.wrapped_fun: cache identity, composition, debug info."""

import functools

from polyjax_core.wrapped_fun import DebugInfo, debug_info, wrap_init


def _make_adder(n):
    return lambda x: x + n


def test_two_lambdas_on_one_line_differ():
    f, g = (lambda x: x + 1), (lambda x: x + 1)  # same text, same line, two code objects
    assert f.__code__ is not g.__code__
    assert wrap_init(f) != wrap_init(g)


def test_same_lambda_with_different_cells_differs():
    add1, add2 = _make_adder(1), _make_adder(2)
    assert add1.__code__ is add2.__code__
    assert wrap_init(add1) != wrap_init(add2)
    # Equal contents are still different bindings: each call makes a new cell.
    assert wrap_init(_make_adder(1)) != wrap_init(_make_adder(1))


def test_same_code_and_same_cells_are_equal():
    n = 3
    fs = [lambda x: x + n for _ in range(2)]  # one code object, one shared cell
    assert fs[0] is not fs[1]
    assert fs[0].__closure__[0] is fs[1].__closure__[0]
    assert wrap_init(fs[0]) == wrap_init(fs[1])
    assert hash(wrap_init(fs[0])) == hash(wrap_init(fs[1]))
    # Without a closure too.
    gs = [lambda x: 2 * x for _ in range(2)]
    assert wrap_init(gs[0]) == wrap_init(gs[1])


def test_defaults_and_globals_are_part_of_identity():
    def mk(d):
        def f(x, y=d):
            return x + y

        return f

    assert wrap_init(mk(1)) == wrap_init(mk(1))
    assert wrap_init(mk(1)) != wrap_init(mk(2))
    # Unhashable defaults fall back to identity instead of crashing.
    a, b = mk([1]), mk([1])
    assert hash(wrap_init(a)) == hash(wrap_init(a))
    assert wrap_init(a) != wrap_init(b)
    # Same code object run in two global namespaces.
    src = "def h(x):\n    return x + K\n"
    ns1, ns2 = {"K": 1}, {"K": 1}
    exec(compile(src, "<same>", "exec"), ns1)
    exec(compile(src, "<same>", "exec"), ns2)
    assert wrap_init(ns1["h"]) != wrap_init(ns2["h"])


def test_partials():
    def f(a, b, c=0):
        return a + b + c

    assert wrap_init(functools.partial(f, 1)) == wrap_init(functools.partial(f, 1))
    assert wrap_init(functools.partial(f, 1)) != wrap_init(functools.partial(f, 2))
    assert wrap_init(functools.partial(f, 1, c=2)) == wrap_init(functools.partial(f, 1, c=2))
    assert wrap_init(functools.partial(f, 1, c=2)) != wrap_init(functools.partial(f, 1, c=3))
    assert wrap_init(functools.partial(f, 1)) != wrap_init(f)
    # Partials of different closures differ; unhashable arguments go by identity.
    add1, add2 = _make_adder(1), _make_adder(2)
    assert wrap_init(functools.partial(add1)) != wrap_init(functools.partial(add2))
    lst = [1]
    p = wrap_init(functools.partial(f, lst))
    assert p == wrap_init(functools.partial(f, lst))
    assert p != wrap_init(functools.partial(f, [1]))
    assert p.f.args[0] is lst


def test_other_callables_use_their_own_equality():
    class Scale:
        def __init__(self, k):
            self.k = k

        def __call__(self, x):
            return self.k * x

        def __eq__(self, other):
            return isinstance(other, Scale) and other.k == self.k

        def __hash__(self):
            return hash(self.k)

    class Plain:
        def __call__(self, x):
            return x

    assert wrap_init(Scale(2)) == wrap_init(Scale(2))
    assert wrap_init(Scale(2)) != wrap_init(Scale(3))
    p = Plain()
    assert wrap_init(p) == wrap_init(p)
    assert wrap_init(p) != wrap_init(Plain())

    class Unhashable:
        __hash__ = None

        def __call__(self, x):
            return x

    u = Unhashable()
    assert wrap_init(u) == wrap_init(u)
    assert wrap_init(u) != wrap_init(Unhashable())
    # Bound methods: same object and function are equal.
    obj = Plain()
    assert wrap_init(obj.__call__) == wrap_init(obj.__call__)
    assert wrap_init(obj.__call__) != wrap_init(Plain().__call__)


def test_transforms_compose_in_order():
    def add(inner, k):
        return lambda x: inner(x) + k

    def mul(inner, k):
        return lambda x: inner(x) * k

    base = wrap_init(lambda x: x)
    assert base.wrap(add, 1).wrap(mul, 10).call_wrapped(2) == 30  # (2 + 1) * 10
    assert base.wrap(mul, 10).wrap(add, 1).call_wrapped(2) == 21  # 2 * 10 + 1
    assert base.call_wrapped(2) == 2  # wrap does not mutate
    assert base.wrap(add, 1) == base.wrap(add, 1)
    assert base.wrap(add, 1) != base.wrap(add, 2)
    assert base.wrap(add, 1).wrap(mul, 2) != base.wrap(mul, 2).wrap(add, 1)
    assert base.wrap(add, 1) != base
    # Unhashable params do not crash.
    store = []
    w = base.wrap(lambda inner, s: inner, store)
    assert hash(w) == hash(w)


def test_kwargs_pass_through():
    w = wrap_init(lambda x, *, y: x - y)
    assert w.call_wrapped(5, y=2) == 3


def test_hash_is_stable_and_object_is_immutable():
    f = _make_adder(1)
    w = wrap_init(f)
    assert hash(w) == hash(w) == hash(wrap_init(f))
    assert {w: 1}[wrap_init(f)] == 1
    try:
        w.f = None
    except AttributeError:
        pass
    else:
        raise AssertionError("WrappedFun should be immutable")
    assert w.f is f


def test_debug_info_not_in_identity():
    f = _make_adder(1)
    d = debug_info("jit", f, (1,), {})
    assert wrap_init(f, d) == wrap_init(f)
    assert wrap_init(f, d).debug_info is d
    assert wrap_init(f).with_debug_info(d).debug_info is d


def test_debug_info_names():
    def f(x, y, *rest, z=0, **kw):
        return x

    d = debug_info("jit", f, (1, {"b": 2, "a": [3, 4]}, 5, 6), {"z": 7, "w": (8,)})
    assert d.traced_for == "jit"
    assert d.func_src_info.startswith("f at ")
    assert d.func_src_info.endswith(f":{f.__code__.co_firstlineno}")
    assert d.func_name == "f"
    assert d.arg_names == (
        "x",
        "y['a'][0]",
        "y['a'][1]",
        "y['b']",
        "rest[0]",
        "rest[1]",
        "w[0]",
        "z",
    )
    assert d.result_paths is None
    assert d.with_result_paths(("result",)).result_paths == ("result",)


def test_debug_info_static_args_and_fallbacks():
    def f(x, n, *, flag=False):
        return x

    d = debug_info("jit", f, (1, 2), {"flag": True}, static_argnums=(1,), static_argnames=("flag",))
    assert d.arg_names == ("x",)
    d = debug_info("jit", f, (1, 2), {}, static_argnums=(-1,))
    assert d.arg_names == ("x",)
    # A call that does not bind falls back to positional names, without raising.
    d = debug_info("vmap", f, (1, 2, 3), {})
    assert d.arg_names == ("args[0]", "args[1]", "args[2]")
    # Builtins and partials.
    assert debug_info("jit", abs, (1,), {}).func_src_info == "abs at <unknown>"
    p = debug_info("jit", functools.partial(f, 1), (2,), {})
    assert p.func_src_info.startswith("f at ") and p.arg_names == ("n",)
    assert DebugInfo("jit", None, ()).func_name == "<unknown>"
    assert d.safe_arg_names(3) == d.arg_names
    assert d.safe_arg_names(2) == ("", "")


def test_debug_info_is_cached_per_code_object():
    from polyjax_core import wrapped_fun

    g = _make_adder(5)
    debug_info("jit", g, (1,), {})
    assert g.__code__ in wrapped_fun._code_info
    assert debug_info("jit", _make_adder(6), (1,), {}).arg_names == ("x",)


def test_debug_info_uses_the_pytree_registry_for_custom_nodes():
    import dataclasses

    from polyjax_core import tree_util

    @tree_util.register_dataclass
    @dataclasses.dataclass
    class Pair:
        u: int
        v: int

    def f(p):
        return p

    assert debug_info("jit", f, (Pair(1, 2),), {}).arg_names == ("p.u", "p.v")
