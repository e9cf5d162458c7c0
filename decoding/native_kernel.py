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

/* The hardware prefetcher alone falls behind once a pass does more than a little arithmetic per
   weight: 8 rows took 17.8 ms for the model's linear layers against 12.6 ms for one row. Asking for the
   weight line 16 KB ahead, one request per 64-byte line, keeps the read streaming: 1 to 8 rows then
   all took 12.0-13.0 ms. The address is computed as an integer, since it can lie past the weight's
   end, where a prefetch is harmless but a pointer would not be defined. */
#define AHEAD_BYTES 16384
static inline void prefetch_ahead(const float* at) {
  __builtin_prefetch((const void*)((unsigned long)at + AHEAD_BYTES), 0, 3);
}

/* y[r][n] = sum_k w[n][k] * x[r][k] for R rows of x: w row-major N x K, x R x K, y R x N.
   Outputs are computed a tile of TILE consecutive n at a time into a buffer, then written row by row:
   writing y[r][n] for every r as each n is done scattered R stores a step over rows N floats apart,
   which (N a multiple of 1024, as an LM head's vocabulary often is) all fall in one cache set and
   measured 2.3x slower for 8 rows of a 49152 x 576 weight.
   A group of up to 15 rows keeps one accumulator per row and the weight in AVX2's 16 registers (the
   multiply-adds read the input rows from memory). More rows are split into groups of equal size, since
   a group of one row waits on its single chain of multiply-adds: 9 rows as 8 + 1 took 21.8 ms for the
   model's linear layers, as one group 16.5. The first group reads the tile's weights from memory (TILE
   rows of a few KB each, which stay in the core's L2 cache) and the later groups read them from there,
   so 16 rows cost one read of the weights, not two. */
#define TILE 32
#define GROUP(R)                                                                       \
  static void group##R(const float* w, const float* x, float (*out)[TILE], long first, \
                       long last, long k_in, int fetch) {                              \
    long tail = k_in - k_in % 8;                                                       \
    for (long n = first; n < last; n++) {                                              \
      const float* row = w + n * k_in;                                                 \
      __m256 acc[R];                                                                   \
      for (int r = 0; r < R; r++) acc[r] = _mm256_setzero_ps();                        \
      for (long k = 0; k < tail; k += 8) {                                             \
        if (fetch && (k & 15) == 0) prefetch_ahead(row + k);                           \
        __m256 weights = _mm256_loadu_ps(row + k);                                     \
        for (int r = 0; r < R; r++)                                                    \
          acc[r] = _mm256_fmadd_ps(weights, _mm256_loadu_ps(x + r * k_in + k), acc[r]);  \
      }                                                                                \
      for (int r = 0; r < R; r++) {                                                    \
        float total = sum8(acc[r]);                                                    \
        for (long k = tail; k < k_in; k++) total += row[k] * x[r * k_in + k];          \
        out[r][n - first] = total;                                                     \
      }                                                                                \
    }                                                                                  \
  }

GROUP(1)
GROUP(2)
GROUP(3)
GROUP(4)
GROUP(5)
GROUP(6)
GROUP(7)
GROUP(8)
GROUP(9)
GROUP(10)
GROUP(11)
GROUP(12)
GROUP(13)
GROUP(14)
GROUP(15)

/* Up to CHUNK rows share one read of the weights; more go CHUNK at a time. */
#define CHUNK 64
#define MAX_GROUP 15
static void chunk(const float* w, const float* x, float* y, long n_out, long k_in, long rows,
                  int threads) {
  long tiles = (n_out + TILE - 1) / TILE;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long tile = 0; tile < tiles; tile++) {
    float out[CHUNK][TILE];
    long first = tile * TILE;
    long last = first + TILE < n_out ? first + TILE : n_out;
    long groups = (rows + MAX_GROUP - 1) / MAX_GROUP;
    for (long group = 0, done = 0; group < groups; group++) {
      long count = (rows - done) / (groups - group);
      const float* xs = x + done * k_in;
      float(*os)[TILE] = out + done;
      int fetch = group == 0;
      switch (count) {
        case 1: group1(w, xs, os, first, last, k_in, fetch); break;
        case 2: group2(w, xs, os, first, last, k_in, fetch); break;
        case 3: group3(w, xs, os, first, last, k_in, fetch); break;
        case 4: group4(w, xs, os, first, last, k_in, fetch); break;
        case 5: group5(w, xs, os, first, last, k_in, fetch); break;
        case 6: group6(w, xs, os, first, last, k_in, fetch); break;
        case 7: group7(w, xs, os, first, last, k_in, fetch); break;
        case 8: group8(w, xs, os, first, last, k_in, fetch); break;
        case 9: group9(w, xs, os, first, last, k_in, fetch); break;
        case 10: group10(w, xs, os, first, last, k_in, fetch); break;
        case 11: group11(w, xs, os, first, last, k_in, fetch); break;
        case 12: group12(w, xs, os, first, last, k_in, fetch); break;
        case 13: group13(w, xs, os, first, last, k_in, fetch); break;
        case 14: group14(w, xs, os, first, last, k_in, fetch); break;
        default: group15(w, xs, os, first, last, k_in, fetch); break;
      }
      done += count;
    }
    for (long r = 0; r < rows; r++)
      for (long n = first; n < last; n++) y[r * n_out + n] = out[r][n - first];
  }
}

/* Every row is summed by the same code whatever the number of rows: a row of a block equals that row
   alone, bit for bit. */
void few_rows_linear(const float* w, const float* x, float* y, long n_out, long k_in, long rows,
                     int threads) {
  for (long first = 0; first < rows; first += CHUNK) {
    long count = rows - first < CHUNK ? rows - first : CHUNK;
    chunk(w, x + first * k_in, y + first * n_out, n_out, k_in, count, threads);
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
