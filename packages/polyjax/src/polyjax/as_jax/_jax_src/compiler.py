"""``jax._src.compiler`` under the hook: JAX's compile entry point, for libraries that wrap it.

Once this module is imported, every polyjax compile calls
``jax._src.compiler.backend_compile_and_load``, looked up at each compile, so
a library that replaces it (chex's ``restrict_backends`` does, to forbid
compiling for a platform) wraps polyjax's compiles as it would JAX's. Its
first argument is the PJRT client, whose ``platform`` names the backend, as
JAX's ``backend`` argument does.
"""

from __future__ import annotations

import sys
from typing import Any

from polyjax_interpreters import dispatch

__all__ = ["backend_compile_and_load"]

backend_compile_and_load = dispatch.backend_compile_and_load


def _compile_through_jax_src_compiler(*args: Any) -> Any:
    # A library sets the attribute on the module it imported, `jax._src.compiler`
    # (the alias of this module), so that is where it is looked up.
    module = sys.modules.get("jax._src.compiler") or sys.modules[__name__]
    return module.backend_compile_and_load(*args)


dispatch.set_compile_function(_compile_through_jax_src_compiler)
