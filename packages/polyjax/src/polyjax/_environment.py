"""What the process holds and runs on: `live_arrays`, `print_environment_info`."""

from __future__ import annotations

import gc
import platform as _platform
import sys
import textwrap
from importlib.metadata import PackageNotFoundError, version

__all__ = ["live_arrays", "print_environment_info"]


def live_arrays(platform: str | None = None) -> list:
    """The arrays alive in this process whose device buffers are not deleted.

    Arrays are found among the objects Python's garbage collector tracks, so the
    call costs time proportional to the heap: a debugging aid for finding
    what keeps device memory in use.

    Args:
      platform: only arrays on devices of this platform (``"cpu"``, ``"gpu"``...);
        all when None.

    Returns:
      A list of `Array`.

    Example:
      >>> import polyjax, polyjax.numpy as jnp
      >>> x = jnp.arange(3.0)
      >>> any(a is x for a in polyjax.live_arrays())
      True
    """
    from polyjax_interpreters.array import Array

    out = []
    for obj in gc.get_objects():
        if type(obj) is Array and not obj._impl.is_deleted():
            if platform is None or any(d.platform == platform for d in obj.devices()):
                out.append(obj)
    return out


def _version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def print_environment_info(return_string: bool = False) -> str | None:
    """Prints (or returns) the versions and devices polyjax runs with, for bug reports.

    Args:
      return_string: return the text instead of printing it.

    Returns:
      The text when ``return_string`` is true, else None.

    Example:
      >>> import polyjax
      >>> polyjax.print_environment_info(return_string=True).splitlines()[0].startswith("polyjax:")
      True
    """
    import numpy as np

    from polyjax_interpreters import backends

    devices = backends.devices()
    n_local = backends.local_device_count()
    info = textwrap.dedent(
        f"""\
        polyjax: {_version("polyjax")}
        jaxlib:  {_version("jaxlib")}
        numpy:   {np.__version__}
        python:  {sys.version.replace(chr(10), " ")}
        device info: {devices[0].device_kind}-{len(devices)}, {n_local} local devices
        process_count: {backends.process_count()}
        platform: {_platform.uname()}
        """
    )
    if return_string:
        return info
    print(info)
    return None
