"""Typed key arrays go through the structural jnp/lax functions as JAX's do.

Oracle: a structural function only moves elements, so applied to keys it must
give the keys that the same function picks out of an array of key *indices*:
``key_data(f(keys)) == key_data(all_keys)[f(ids)]``. Arithmetic on keys raises
TypeError, as in JAX.
"""

import numpy as np
import pytest

from polyjax_core.tree_util import tree_map
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax, random
from polyjax_numpy import numpy as jnp

ALL = random.split(random.key(7), 12)
DATA = np.asarray(random.key_data(ALL))
X, Y = ALL[:6].reshape(2, 3), ALL[6:].reshape(2, 3)
IX, IY = jnp.arange(6).reshape(2, 3), jnp.arange(6, 12).reshape(2, 3)
MASK = np.array([[True, False, True], [False, True, False]])
dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
sdn = lax.ScatterDimensionNumbers((1,), (0,), (0,))

# name -> f(x, y): x and y have shape (2, 3).
STRUCTURAL = {
    "concatenate": lambda x, y: jnp.concatenate([x, y]),
    "concatenate_axis1": lambda x, y: jnp.concatenate([x, y], axis=-1),
    "stack": lambda x, y: jnp.stack([x, y], axis=1),
    "hstack": lambda x, y: jnp.hstack([x, y]),
    "vstack": lambda x, y: jnp.vstack([x, y]),
    "where": lambda x, y: jnp.where(MASK, x, y),
    "where_scalar": lambda x, y: jnp.where(True, x, y),
    "select": lambda x, y: lax.select(MASK, x, y),
    "select_n": lambda x, y: lax.select_n(jnp.asarray(MASK), x, y),
    "reshape": lambda x, y: jnp.reshape(x, (3, 2)),
    "reshape_method": lambda x, y: x.reshape(-1),
    "ravel": lambda x, y: jnp.ravel(x),
    "transpose": lambda x, y: jnp.transpose(x),
    "T": lambda x, y: x.T,
    "swapaxes": lambda x, y: jnp.swapaxes(x, 0, 1),
    "moveaxis": lambda x, y: jnp.moveaxis(x, 0, -1),
    "expand_dims": lambda x, y: jnp.expand_dims(x, -1),
    "squeeze": lambda x, y: jnp.squeeze(x[:1]),
    "broadcast_to": lambda x, y: jnp.broadcast_to(x[0], (4, 3)),
    "flip": lambda x, y: jnp.flip(x),
    "roll": lambda x, y: jnp.roll(x, 1, axis=1),
    "tile": lambda x, y: jnp.tile(x, (1, 2)),
    "repeat": lambda x, y: jnp.repeat(x, 2, axis=0),
    "split": lambda x, y: jnp.split(x, 3, axis=1)[2],
    "index_int": lambda x, y: x[1],
    "index_negative": lambda x, y: x[-1, -2],
    "index_slice": lambda x, y: x[:, ::2],
    "index_ellipsis": lambda x, y: x[..., 1],
    "index_array": lambda x, y: x[jnp.array([1, 0, 1])],
    "index_bool": lambda x, y: x[MASK],
    "at_set": lambda x, y: x.at[0, 1].set(y[1, 2]),
    "at_set_row": lambda x, y: x.at[1].set(y[0]),
    "at_get": lambda x, y: x.at[1, 2].get(),
    "take": lambda x, y: jnp.take(x, jnp.array([2, 0]), axis=1),
    "take_flat": lambda x, y: jnp.take(x, jnp.array([5, 1])),
    "take_method": lambda x, y: x.take(jnp.array([3])),
    "take_along_axis": lambda x, y: jnp.take_along_axis(x, jnp.array([[2], [0]]), axis=1),
    "dynamic_slice": lambda x, y: lax.dynamic_slice(x, (1, 1), (1, 2)),
    "dynamic_slice_in_dim": lambda x, y: lax.dynamic_slice_in_dim(x, 1, 2, axis=1),
    "dynamic_index_in_dim": lambda x, y: lax.dynamic_index_in_dim(x, 1, keepdims=False),
    "dynamic_update_slice": lambda x, y: lax.dynamic_update_slice(x, y[:1, :2], (1, 1)),
    "slice": lambda x, y: lax.slice(x, (0, 1), (2, 3)),
    "lax_concatenate": lambda x, y: lax.concatenate([x, y], 1),
    "lax_reshape": lambda x, y: lax.reshape(x, (6,)),
    "lax_broadcast_in_dim": lambda x, y: lax.broadcast_in_dim(x[0], (2, 3), (1,)),
    "lax_transpose": lambda x, y: lax.transpose(x, (1, 0)),
    "lax_rev": lambda x, y: lax.rev(x, (1,)),
    "gather": lambda x, y: lax.gather(x, jnp.array([[1], [0]]), dn, (1, 3)),
    "scatter": lambda x, y: lax.scatter(x, jnp.array([[1]]), y[:1], sdn),
    "diagonal": lambda x, y: jnp.diagonal(x),
    "copy": lambda x, y: jnp.copy(x),
    "copy_method": lambda x, y: x.copy(),
    "asarray": lambda x, y: jnp.asarray(x),
}


def _key_data(out):
    return np.asarray(random.key_data(out))


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("name", list(STRUCTURAL))
def test_structural_functions_move_whole_keys(name, mode):
    f = STRUCTURAL[name]
    ids = np.asarray(f(IX, IY))
    out = f(X, Y) if mode == "eager" else jit(f)(X, Y)
    assert isinstance(out, random.PRNGKeyArray)
    assert out.dtype == ALL.dtype and out.shape == ids.shape
    np.testing.assert_array_equal(_key_data(out), DATA[ids])


def test_vmap_of_structural_function():
    out = vmap(lambda k, i: jnp.concatenate([k[None], k[None]])[i])(X.ravel(), jnp.zeros(6, int))
    np.testing.assert_array_equal(_key_data(out), DATA[:6])


def test_loops_and_trees_carry_keys():
    def step(k, _):
        k, sub = random.split(k)
        return k, random.key_data(sub)

    k = random.key(3)
    final, subs = lax.scan(step, k, length=3)
    expect, rows = k, []
    for _ in range(3):
        expect, sub = random.split(expect)
        rows.append(np.asarray(random.key_data(sub)))
    np.testing.assert_array_equal(_key_data(final), _key_data(expect))
    np.testing.assert_array_equal(np.asarray(subs), np.stack(rows))
    fori = lax.fori_loop(0, 3, lambda i, c: random.split(c)[0], k)
    np.testing.assert_array_equal(_key_data(fori), _key_data(expect))
    # keys as scanned-over values and in a tree
    _, draws = lax.scan(lambda c, kk: (c, random.uniform(kk)), 0, X.ravel())
    assert np.asarray(draws).shape == (6,)
    tree = tree_map(lambda a: a, {"keys": X, "other": jnp.ones(2)})
    np.testing.assert_array_equal(_key_data(tree["keys"]), _key_data(X))


# Arithmetic and ordering are not defined on keys: TypeError, as in JAX.
ARITHMETIC = {
    "add": lambda x: x + x,
    "add_int": lambda x: x + 1,
    "mul": lambda x: x * 2,
    "neg": lambda x: -x,
    "lt": lambda x: x < x,
    "matmul": lambda x: x @ x,
    "jnp.add": lambda x: jnp.add(x, x),
    "jnp.sin": jnp.sin,
    "jnp.sum": jnp.sum,
    "jnp.sort": jnp.sort,
    "lax.add": lambda x: lax.add(x, x),
    "lax.neg": lax.neg,
    "convert": lambda x: lax.convert_element_type(x, np.uint32),
}


@pytest.mark.parametrize("name", list(ARITHMETIC))
def test_arithmetic_on_keys_raises_type_error(name):
    with pytest.raises(TypeError):
        ARITHMETIC[name](X)


def test_keys_do_not_promote_with_numbers():
    with pytest.raises(TypeError, match="key<fry>"):
        jnp.concatenate([X.ravel(), jnp.zeros((2,), np.uint32)])
    with pytest.raises(TypeError, match="key<fry>"):
        jnp.where(True, X, 0)


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_where_with_a_python_bool_and_astype_to_the_key_dtype(mode):
    # optax's MultiSteps: `astype(where(emit, new, old), old.dtype)` over a key state.
    k1, k2 = random.key(1), random.key(2)
    f = lambda c: jnp.astype(jnp.where(c, k1, k2), k1.dtype)  # noqa: E731
    out = jit(f, static_argnums=0)(False) if mode == "jit" else f(False)
    assert out.dtype == k1.dtype
    np.testing.assert_array_equal(random.key_data(out), random.key_data(k2))


def test_astype_between_keys_and_numbers_raises_jaxs_error():
    with pytest.raises(ValueError, match=r"from key<fry> to uint32"):
        jnp.astype(X, np.uint32)
    with pytest.raises(ValueError, match=r"from uint32 to key<fry>"):
        jnp.astype(jnp.zeros((2,), np.uint32), X.dtype)


# ---------------------------------------------------------------------------
# The sweep of issue 11 point 6: key arrays of shape (4,) and (2, 2), eagerly and
# under jit. A function of keys must give the keys (or the bools) that the same
# function gives on key *ids* (1..n, with id 0 standing for the all-zero key that
# `triu`/`tril` put in, as JAX does), or raise JAX 0.10.2's error type.

N = 8  # ids 1..4 for x, and y = x where MASK else ids 5..8
TABLE = np.concatenate([np.zeros((1, 2), np.uint32), DATA[:N]])


def _pair(shape):
    ids = np.arange(1, 5).reshape(shape)
    mask = (np.arange(4) % 2 == 0).reshape(shape)
    y_ids = np.where(mask, ids, ids + 4)
    return ids, y_ids, mask


def _keys(ids):
    return random.wrap_key_data(jnp.asarray(TABLE[ids]))


# name -> f(x, y, mask)
SWEEP = {
    "triu": lambda x, y, m: jnp.triu(x),
    "tril": lambda x, y, m: jnp.tril(x, -1),
    "where": lambda x, y, m: jnp.where(m, x, y[::-1]),
    "select": lambda x, y, m: lax.select(jnp.asarray(m), y, x),
    "flip": lambda x, y, m: jnp.flip(x),
    "roll": lambda x, y, m: jnp.roll(x, 1),
    "tile": lambda x, y, m: jnp.tile(x, 2),
    "repeat": lambda x, y, m: jnp.repeat(x, 2),
    "take": lambda x, y, m: jnp.take(x, jnp.array([3, 0])),
    "take_along_axis": lambda x, y, m: jnp.take_along_axis(
        x, jnp.zeros(x.shape, np.int32), axis=-1
    ),
    "dynamic_update_slice": lambda x, y, m: lax.dynamic_update_slice(
        x, y[(slice(1, 2),) * x.ndim], (0,) * x.ndim
    ),
    "at_set": lambda x, y, m: x.at[(-1,) * x.ndim].set(y.ravel()[1]),
    "concatenate": lambda x, y, m: jnp.concatenate([x, y]),
    "stack": lambda x, y, m: jnp.stack([x, y], axis=-1),
    "insert": lambda x, y, m: jnp.insert(x.ravel(), 1, y.ravel()[3]),
    "pad_edge": lambda x, y, m: jnp.pad(x, 1, mode="edge"),
    # comparisons give bools: keys compare whole, with NumPy broadcasting
    "eq": lambda x, y, m: x == y,
    "ne": lambda x, y, m: x != y,
    "eq_broadcast": lambda x, y, m: x == y.ravel()[2],
    "equal": lambda x, y, m: jnp.equal(x, y),
    "not_equal": lambda x, y, m: jnp.not_equal(y, x),
    "array_equal_same": lambda x, y, m: jnp.array_equal(x, x),
    "array_equal_other": lambda x, y, m: jnp.array_equal(x, y),
    "array_equiv": lambda x, y, m: jnp.array_equiv(x, x.ravel()[:1]),
    "isin": lambda x, y, m: jnp.isin(y, x),
}

# name -> (error type, shapes it applies to): JAX 0.10.2's errors.
SWEEP_ERRORS = {
    "triu": (ValueError, [(4,)]),  # "at least 2D"
    "tril": (ValueError, [(4,)]),
    "pad_constant": (ValueError, "all"),  # "Cannot convert_element_type from int32 to key<fry>"
    "sort": (TypeError, "all"),
    "argsort": (TypeError, "all"),
    "eq_int": (TypeError, "all"),
    "eq_raw_data": (TypeError, "all"),
    "add": (TypeError, "all"),
}
ERROR_FUNS = {
    "pad_constant": lambda x, y, m: jnp.pad(x, 1),
    "sort": lambda x, y, m: jnp.sort(x),
    "argsort": lambda x, y, m: jnp.argsort(x),
    "eq_int": lambda x, y, m: x == 1,
    "eq_raw_data": lambda x, y, m: x == random.key_data(x),
    "add": lambda x, y, m: x + y,
}


def _run(f, x, y, m, mode):
    return f(x, y, m) if mode == "eager" else jit(lambda a, b: f(a, b, m))(x, y)


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("shape", [(4,), (2, 2)], ids=["4", "2x2"])
@pytest.mark.parametrize("name", list(SWEEP))
def test_key_sweep_matches_the_function_on_ids(name, shape, mode):
    ids, y_ids, mask = _pair(shape)
    f = SWEEP[name]
    error, shapes = SWEEP_ERRORS.get(name, (None, []))
    if shape in shapes:
        with pytest.raises(error):
            _run(f, _keys(ids), _keys(y_ids), mask, mode)
        return
    expect = np.asarray(f(jnp.asarray(ids), jnp.asarray(y_ids), mask))
    out = _run(f, _keys(ids), _keys(y_ids), mask, mode)
    if expect.dtype == np.bool_:
        assert not isinstance(out, random.PRNGKeyArray)
        np.testing.assert_array_equal(np.asarray(out), expect)
    else:
        assert isinstance(out, random.PRNGKeyArray) and out.shape == expect.shape
        np.testing.assert_array_equal(_key_data(out), TABLE[expect])


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("shape", [(4,), (2, 2)], ids=["4", "2x2"])
@pytest.mark.parametrize("name", list(ERROR_FUNS))
def test_key_sweep_errors_are_jaxs(name, shape, mode):
    ids, y_ids, mask = _pair(shape)
    with pytest.raises(SWEEP_ERRORS[name][0]):
        _run(ERROR_FUNS[name], _keys(ids), _keys(y_ids), mask, mode)


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("fill", ["zeros_like", "ones_like"])
def test_zeros_and_ones_like_of_keys_fill_the_key_data(fill, mode):
    # JAX 0.10.2: a key array whose data words are all 0 (all 1).
    keys = _keys(_pair((2, 2))[0])
    f = getattr(jnp, fill)
    out = f(keys) if mode == "eager" else jit(f)(keys)
    assert isinstance(out, random.PRNGKeyArray) and out.shape == (2, 2)
    np.testing.assert_array_equal(_key_data(out), np.full((2, 2, 2), fill == "ones_like"))


# ---------------------------------------------------------------------------
# Pytrees: JAX's view (polyjax.tree_util, polyjax_core.jax_tree_util) shows a key
# array as one leaf; transformations still carry its data through.


def test_key_arrays_are_leaves_of_jax_tree_util():
    from polyjax_core import jax_tree_util as jtu

    tree = {"a": X, "b": [1.0, Y]}
    leaves = jtu.tree_leaves(tree)
    assert len(leaves) == 3 and leaves[0] is X and leaves[2] is Y
    assert str(jtu.tree_structure(tree)) == "PyTreeDef({'a': *, 'b': [*, *]})"
    assert jtu.tree_map(np.shape, tree) == {"a": (2, 3), "b": [(), (2, 3)]}
    assert [jtu.keystr(p) for p, _ in jtu.tree_leaves_with_path({"a": X})] == ["['a']"]
    assert jtu.all_leaves([X, Y]) and not jtu.is_tree_node(random.PRNGKeyArray)
    with pytest.raises(ValueError, match="can't tree-flatten"):
        jtu.flatten_one_level(X)
    # rebuilding from the flat list gives the same keys back
    leaves, treedef = jtu.tree_flatten(tree)
    again = jtu.tree_unflatten(treedef, leaves)
    assert again["a"] is X
    assert jtu.tree_broadcast({"a": 0, "b": 1}, tree) == {"a": 0, "b": [1, 1]}
    # `is_leaf` of the caller still applies around the keys
    assert jtu.tree_leaves(tree, is_leaf=lambda t: isinstance(t, list))[1] == [1.0, Y]


def test_transformations_carry_key_leaves():
    from polyjax_core import jax_tree_util as jtu
    from polyjax_interpreters.ad import grad

    out = jit(lambda t: {"k": t["k"][::-1]})({"k": X.ravel()})
    (leaf,) = jtu.tree_leaves(out)
    assert isinstance(leaf, random.PRNGKeyArray)
    np.testing.assert_array_equal(_key_data(leaf), DATA[:6][::-1])
    g, aux = grad(lambda v, k: (v * 2.0, random.split(k)), has_aux=True)(1.0, X[0, 0])
    assert float(g) == 2.0 and isinstance(aux, random.PRNGKeyArray) and aux.shape == (2,)
    np.testing.assert_array_equal(_key_data(aux), _key_data(random.split(X[0, 0])))
    batched = vmap(lambda k: k, out_axes=-1)(X)  # key axes only: the data axis stays last
    np.testing.assert_array_equal(_key_data(batched), _key_data(X.T))


@pytest.mark.parametrize(("in_axes", "out_axes"), [(-1, 0), (0, -1), (-2, -2), (-1, -1)])
def test_vmap_negative_axes_count_key_axes(in_axes, out_axes):
    # JAX counts negative axes of key arrays from the end of the key shape.
    out = vmap(lambda k: k, in_axes=in_axes, out_axes=out_axes)(X)
    expect = np.moveaxis(DATA[:6].reshape(2, 3, 2), in_axes % 2, out_axes % 2)
    assert out.shape == expect.shape[:2]
    np.testing.assert_array_equal(_key_data(out), expect)


def test_eval_shape_reports_key_types():
    from polyjax_core.abstract_values import ShapeDtypeStruct
    from polyjax_interpreters.jit import eval_shape

    out = eval_shape(lambda k: {"a": k[::-1], "b": random.uniform(k[0, 0])}, X)
    assert out["a"] == ShapeDtypeStruct((2, 3), ALL.dtype)
    assert out["b"] == ShapeDtypeStruct((), np.dtype(np.float32))
    assert jit(lambda k: k.T).lower(X).out_info == ShapeDtypeStruct((3, 2), ALL.dtype)
