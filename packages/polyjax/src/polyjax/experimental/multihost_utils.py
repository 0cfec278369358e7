"""``polyjax.experimental.multihost_utils``: collectives between the processes of a run.

See `polyjax_sharding.multihost_utils` and docs/distributed.md.
"""

import polyjax._runtime  # noqa: F401  (the lax primitives the compiled gathers use)
from polyjax_sharding.multihost_utils import *  # noqa: F403  (re-exported unchanged)
from polyjax_sharding.multihost_utils import __all__ as __all__
