"""The few private JAX modules that libraries import, as ``jax._src.*`` under the hook.

``polyjax.as_jax`` maps JAX's public modules only, with these exceptions:
libraries built on JAX import a handful of its private modules at import time
(chex imports ``jax._src.compiler`` to wrap JAX's compile function). Each module
here stands for one of them and offers just what those libraries use, wired to
polyjax so that it does what the library expects. Any other ``jax._src`` path
stays refused, so jaxlib's own lookups (``jax._src.sharding_impls``) still take
their fallbacks.
"""
