"""The meta-package's accelerator extras name PJRT plugins matching our jaxlib."""

import pathlib
import tomllib

import jaxlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_cuda_extras_pin_plugins_to_the_locked_jaxlib():
    project = tomllib.loads((ROOT / "packages/polyjax/pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    for cuda in ("cuda12", "cuda13"):
        pins = {req.split("==")[0]: req.split("==")[1] for req in extras[cuda]}
        # jaxlib refuses a plugin whose version differs from its own
        assert pins[f"jax-{cuda}-pjrt"] == jaxlib.__version__
        assert pins[f"jax-{cuda}-plugin[with-cuda]"] == jaxlib.__version__
