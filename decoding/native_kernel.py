"""A native kernel for linear layers over a few rows: the products that verifying a few drafts makes.

A forward over one to a few new tokens reads every weight once and does little arithmetic with it, so
its speed is the speed at which the linear layers stream their weights from memory. The BLAS kernels
torch calls reach about half of this machine's read bandwidth on such skinny products (measured in
docs/speculative-decoding.md: on the 2-core AMD EPYC the model's weights took 61-95 ms through them
against 30-33 ms to sum the same bytes). This kernel reads each weight row once, multiplies it with
every input row while it sits in registers, and splits the output rows between OpenMP threads.

It is C, compiled on first use with the system's C compiler (`cc`, or `$CC`) into a cache directory
(`$DECODING_NATIVE_CACHE`, else `$XDG_CACHE_HOME/akm/native-kernel` or `~/.cache/akm/native-kernel`)
and loaded with ctypes; the library's name carries a digest of the source and the flags, so a library
built before (an image builds it once) is loaded without a compiler, and a changed source is rebuilt. It needs x86-64 with AVX2 and FMA, float32 weights and a torch that runs on GNU OpenMP
(its `libgomp` is the one the library then shares, so both keep one thread pool). Where any of that is
missing the kernel is unavailable and says why (`unavailable_reason`); the lean forward then offers only
its other kernels. `DECODING_NATIVE_KERNEL=off` turns it off.

Its sums run in another order than BLAS's, so its products differ from torch's in the last bits, as
the other few-row kernels' do: a greedy verification on it can differ from a plain step only where two
logits tie to within that rounding, and the decode benchmark reports how often output differs.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import torch

logger = logging.getLogger(__name__)

DISABLE_ENV = "DECODING_NATIVE_KERNEL"
CACHE_ENV = "DECODING_NATIVE_CACHE"

_SOURCE = r"""
#include <immintrin.h>

static inline float sum8(__m256 a) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  s = _mm_hadd_ps(s, s);
  s = _mm_hadd_ps(s, s);
  return _mm_cvtss_f32(s);
}

/* y[r][n] = sum_k w[n][k] * x[r][k] for R (1..8) rows of x: w row-major N x K, x R x K, y R x N.
   Outputs are computed a tile of TILE consecutive n at a time into a buffer, then written row by row:
   writing y[r][n] for every r as each n is done scattered R stores a step over rows N floats apart,
   which (N a multiple of 1024, as an LM head's vocabulary often is) all fall in one cache set and
   measured 2.3x slower for 8 rows of a 49152 x 576 weight. */
#define TILE 32
#define PASS(R)                                                                        \
  static void pass##R(const float* w, const float* x, float* y, long n_out, long k_in, \
                      int threads) {                                                   \
    long tail = k_in - k_in % 8;                                                       \
    long tiles = (n_out + TILE - 1) / TILE;                                            \
    _Pragma("omp parallel for schedule(static) num_threads(threads)")                 \
    for (long tile = 0; tile < tiles; tile++) {                                        \
      float out[R][TILE];                                                              \
      long first = tile * TILE;                                                        \
      long last = first + TILE < n_out ? first + TILE : n_out;                         \
      for (long n = first; n < last; n++) {                                            \
        const float* row = w + n * k_in;                                               \
        __m256 acc[R];                                                                 \
        for (int r = 0; r < R; r++) acc[r] = _mm256_setzero_ps();                      \
        for (long k = 0; k < tail; k += 8) {                                           \
          __m256 weights = _mm256_loadu_ps(row + k);                                   \
          for (int r = 0; r < R; r++)                                                  \
            acc[r] = _mm256_fmadd_ps(weights, _mm256_loadu_ps(x + r * k_in + k), acc[r]);\
        }                                                                              \
        for (int r = 0; r < R; r++) {                                                  \
          float total = sum8(acc[r]);                                                  \
          for (long k = tail; k < k_in; k++) total += row[k] * x[r * k_in + k];        \
          out[r][n - first] = total;                                                   \
        }                                                                              \
      }                                                                                \
      for (int r = 0; r < R; r++)                                                      \
        for (long n = first; n < last; n++) y[r * n_out + n] = out[r][n - first];      \
    }                                                                                  \
  }

PASS(1)
PASS(2)
PASS(3)
PASS(4)
PASS(5)
PASS(6)
PASS(7)
PASS(8)

/* Eight accumulators and the weight fit AVX2's 16 registers: up to 8 rows share one read of w. */
void few_rows_linear(const float* w, const float* x, float* y, long n_out, long k_in, long rows,
                     int threads) {
  for (long first = 0; first < rows; first += 8) {
    long count = rows - first < 8 ? rows - first : 8;
    const float* xs = x + first * k_in;
    float* ys = y + first * n_out;
    switch (count) {
      case 1: pass1(w, xs, ys, n_out, k_in, threads); break;
      case 2: pass2(w, xs, ys, n_out, k_in, threads); break;
      case 3: pass3(w, xs, ys, n_out, k_in, threads); break;
      case 4: pass4(w, xs, ys, n_out, k_in, threads); break;
      case 5: pass5(w, xs, ys, n_out, k_in, threads); break;
      case 6: pass6(w, xs, ys, n_out, k_in, threads); break;
      case 7: pass7(w, xs, ys, n_out, k_in, threads); break;
      default: pass8(w, xs, ys, n_out, k_in, threads); break;
    }
  }
}
"""

_FLAGS = ("-O3", "-mavx2", "-mfma", "-fopenmp", "-shared", "-fPIC")


class NativeKernel:
    """The compiled kernel: `linear(rows, weight)` is `rows @ weight.T` for float32 CPU tensors."""

    def __init__(self, library: ctypes.CDLL) -> None:
        self._function = library.few_rows_linear
        self._function.restype = None
        self._function.argtypes = [
            ctypes.c_void_p,
            ctypes.c_void_p,
            ctypes.c_void_p,
            ctypes.c_long,
            ctypes.c_long,
            ctypes.c_long,
            ctypes.c_int,
        ]

    def linear(self, rows: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        """`rows` (count, in) times `weight` (out, in) transposed: (count, out), float32."""
        if rows.dim() != 2 or weight.dim() != 2 or rows.shape[1] != weight.shape[1]:
            raise ValueError(f"cannot multiply {tuple(rows.shape)} by {tuple(weight.shape)} transposed")
        for tensor in (rows, weight):
            if tensor.dtype != torch.float32 or tensor.device.type != "cpu":
                raise ValueError("the native kernel takes float32 CPU tensors only")
        if not weight.is_contiguous():
            raise ValueError("the native kernel needs a contiguous weight")
        return self.product(rows, weight)

    def product(self, rows: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        """`linear` without its checks, for a caller that checked its weights once (contiguous
        float32 CPU tensors) and passes float32 CPU rows of the weights' width; anything else is
        undefined behaviour."""
        rows = rows.contiguous()
        count, inputs = rows.shape
        outputs = weight.shape[0]
        product = torch.empty(count, outputs, dtype=torch.float32)
        self._function(
            weight.data_ptr(),
            rows.data_ptr(),
            product.data_ptr(),
            outputs,
            inputs,
            count,
            torch.get_num_threads(),
        )
        return product


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


def _torch_uses_gnu_openmp() -> bool:
    """Whether torch has loaded GNU OpenMP's `libgomp.so.1`: the library built here then binds to
    that same copy (the loader matches it by name) instead of starting a second thread pool."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return False
    return "libgomp" in maps and "ATen parallel backend: OpenMP" in torch.__config__.parallel_info()


def _cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV, "").strip()
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "akm" / "native-kernel"


def library_digest() -> str:
    """A digest of the kernel's source and compiler flags (16 hex digits)."""
    return hashlib.sha256("\n".join((_SOURCE, " ".join(_FLAGS))).encode()).hexdigest()[:16]


def library_name() -> str:
    """The compiled library's file name: it changes with the source and the flags."""
    return f"few_rows_linear-{library_digest()}.so"


def _build(compiler: str, directory: Path) -> Path:
    library = directory / library_name()
    if library.is_file():
        return library
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=directory) as staging:
        source = Path(staging) / "few_rows_linear.c"
        source.write_text(_SOURCE)
        built = Path(staging) / library.name
        result = subprocess.run(
            [compiler, *_FLAGS, str(source), "-o", str(built)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"{compiler} failed: {result.stderr.strip()[:500]}")
        built.replace(library)  # atomic: a concurrent build leaves one whole file
    return library


def _self_test(kernel: NativeKernel) -> None:
    generator = torch.Generator().manual_seed(0)
    for rows, inputs, outputs in ((1, 576, 37), (3, 20, 9), (6, 1536, 130), (11, 64, 70)):
        x = torch.randn(rows, inputs, generator=generator)
        w = torch.randn(outputs, inputs, generator=generator)
        expected = (x.double() @ w.double().T).float()
        got = kernel.linear(x, w)
        if not torch.allclose(got, expected, rtol=1e-4, atol=1e-4):
            raise RuntimeError("the compiled kernel's products are wrong")


_lock = threading.Lock()
_state: dict[str, object] = {}


def _load() -> NativeKernel | None:
    if os.environ.get(DISABLE_ENV, "").strip().lower() in ("0", "off", "false", "no"):
        _state["reason"] = f"turned off by {DISABLE_ENV}"
        return None
    if platform.machine().lower() not in ("x86_64", "amd64"):
        _state["reason"] = f"needs x86-64, this is {platform.machine()}"
        return None
    missing = {"avx2", "fma"} - _cpu_flags()
    if missing:
        _state["reason"] = f"this CPU lacks {', '.join(sorted(missing))}"
        return None
    if not _torch_uses_gnu_openmp():
        _state["reason"] = "this torch does not run on GNU OpenMP, whose thread pool the kernel would share"
        return None
    try:
        prebuilt = _cache_dir() / library_name()
        if prebuilt.is_file():
            library = prebuilt  # built before, here or when an image was made: no compiler needed
        else:
            compiler = shutil.which(os.environ.get("CC", "").strip() or "cc") or shutil.which("gcc")
            if compiler is None:
                _state["reason"] = "no C compiler (cc, gcc or $CC) to build it"
                return None
            try:
                library = _build(compiler, _cache_dir())
            except OSError:
                library = _build(compiler, Path(tempfile.gettempdir()) / "akm-native-kernel")
        kernel = NativeKernel(ctypes.CDLL(str(library)))
        _self_test(kernel)
    except (OSError, RuntimeError, subprocess.SubprocessError) as error:
        _state["reason"] = f"could not build or load it: {error}"
        logger.warning("native few-row kernel unavailable: %s", error)
        return None
    return kernel


def native_kernel() -> NativeKernel | None:
    """The kernel, built and checked on first call; None where it cannot run (see `unavailable_reason`)."""
    with _lock:
        if "kernel" not in _state:
            _state["kernel"] = _load()
        kernel = _state["kernel"]
    return kernel if isinstance(kernel, NativeKernel) else None


def unavailable_reason() -> str | None:
    """Why `native_kernel()` is None, or None when the kernel is available."""
    return None if native_kernel() is not None else str(_state.get("reason", "unknown"))
