"""``python -m polyjax.distributed.launch -n N script.py``: N processes on this machine.

See `polyjax_sharding.launch`.
"""

import sys

from polyjax_sharding.launch import ProcessResult, free_port, launch, main

__all__ = ["ProcessResult", "free_port", "launch", "main"]

if __name__ == "__main__":
    sys.exit(main())
