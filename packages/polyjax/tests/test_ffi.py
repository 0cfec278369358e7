"""polyjax.ffi: a tiny C++ kernel built against jaxlib's XLA FFI headers, called eagerly,
under jit and under vmap (each vmap method).

Needs a C++ compiler (the system's `c++`/`g++`); building the kernel takes a
second or two of CPU, once per session.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import numpy as np
import pytest

import polyjax as jax
from polyjax import ffi

CXX = shutil.which("c++") or shutil.which("g++")

KERNEL = r"""
#include "xla/ffi/api/ffi.h"
namespace ffi = xla::ffi;
// y = factor * x + offset, elementwise.
static ffi::Error AffineImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y,
                             float factor, int64_t offset) {
  for (size_t i = 0; i < x.element_count(); ++i)
    y->typed_data()[i] = factor * x.typed_data()[i] + static_cast<float>(offset);
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(Affine, AffineImpl,
    ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>()
        .Attr<float>("factor").Attr<int64_t>("offset"));
"""

pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler on this machine")


@pytest.fixture(scope="module")
def affine_target(tmp_path_factory):
    build = tmp_path_factory.mktemp("ffi")
    source, library = build / "affine.cc", build / "libaffine.so"
    source.write_text(KERNEL)
    subprocess.run(
        [CXX, "-O0", "-shared", "-fPIC", "-std=c++17", "-w", f"-I{ffi.include_dir()}",
         "-o", str(library), str(source)],
        check=True,
    )  # fmt: skip
    lib = ctypes.cdll.LoadLibrary(str(library))
    ffi.register_ffi_target("polyjax_test_affine", ffi.pycapsule(lib.Affine))
    return "polyjax_test_affine"


def _affine(target, shape, vmap_method=None):
    call = ffi.ffi_call(target, jax.ShapeDtypeStruct(shape, np.float32), vmap_method=vmap_method)
    return lambda x: call(x, factor=np.float32(2.5), offset=3)


def test_ffi_call_eager_jit_and_vmap(affine_target):
    # One test, so that parallel workers do not each build the kernel.
    x = np.arange(4, dtype=np.float32)
    f = _affine(affine_target, (4,))
    np.testing.assert_array_equal(f(x), 2.5 * x + 3)
    np.testing.assert_array_equal(jax.jit(f)(x), 2.5 * x + 3)
    assert "custom_call" in jax.jit(f).lower(x).as_text()
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    for method in ("sequential", "expand_dims", "broadcast_all"):
        got = jax.vmap(_affine(affine_target, (3,), method))(xs)
        np.testing.assert_array_equal(got, 2.5 * xs + 3, err_msg=method)
    with pytest.raises(NotImplementedError, match="vmap_method"):
        jax.vmap(_affine(affine_target, (3,)))(xs)
