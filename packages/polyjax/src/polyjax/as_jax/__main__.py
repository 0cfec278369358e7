"""``python -m polyjax.as_jax SCRIPT [ARGS]`` or ``-m MODULE [ARGS]``: runs JAX code on polyjax.

The script or module runs as ``__main__`` with ``import jax`` resolving to
polyjax (importing this package installed the hook), and with ``sys.argv``
and ``sys.path[0]`` set as ``python SCRIPT`` / ``python -m MODULE`` set them.
"""

from __future__ import annotations

import os
import runpy
import sys

_USAGE = "usage: python -m polyjax.as_jax (SCRIPT | -m MODULE) [ARGS ...]"


def main(argv: list[str]) -> int:
    """Runs ``argv`` (what follows ``-m polyjax.as_jax``); returns an exit status."""
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    if argv[0] == "-m":
        if len(argv) < 2:
            print(f"{_USAGE}\nerror: -m needs a module name", file=sys.stderr)
            return 2
        # run_module(alter_sys=True) replaces argv[0] by the module's file, as `python -m`.
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    sys.argv = list(argv)
    # `python SCRIPT` puts the script's directory first on the path, not the cwd.
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
