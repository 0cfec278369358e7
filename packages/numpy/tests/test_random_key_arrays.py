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
