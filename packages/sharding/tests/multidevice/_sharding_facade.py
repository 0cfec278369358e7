"""The transformations by their facade names, for the polyjax-sharding tests.

This package's tests cannot import `polyjax`; `pj.jit`, `pj.grad`, ... read as
the facade's calls do. The conftests (this directory's, for the 8-device runs,
and the parent's, for the main session) put this directory on `sys.path`:
`from _sharding_facade import pj`.
"""

from types import SimpleNamespace

from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_interpreters import ad, array, backends, remat
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_sharding import Mesh, NamedSharding, make_mesh, pmap, set_mesh

# The tuple's entries go under their own names.
pj = SimpleNamespace(
    grad=ad.grad,
    checkpoint=remat.checkpoint,
    device_put=array.device_put,
    devices=backends.devices,
    **{
        f.__name__: f
        for f in (jit, vmap, make_jaxpr, make_mesh, set_mesh, pmap, NamedSharding, Mesh)
    },
)
