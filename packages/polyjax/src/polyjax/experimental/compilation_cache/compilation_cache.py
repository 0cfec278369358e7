"""Setting up the persistent compilation cache (``docs/caching.md``).

Example:
  >>> import tempfile
  >>> from polyjax.experimental.compilation_cache import compilation_cache as cc
  >>> cc.set_cache_dir(tempfile.mkdtemp())  # later compilations are kept there
  >>> cc.reset_cache()  # and off again
"""

from polyjax_interpreters.compilation_cache import reset_cache, set_cache_dir

__all__ = ["reset_cache", "set_cache_dir"]
