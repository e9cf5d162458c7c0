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

It also holds `lean_layers`, the rest of a Llama decoder layer in C for such a block: RMS norms,
rotary positions, attention over the key/value cache (a chain or a draft tree), the residual adds and
SiLU, with its own vectorised exponential, so a decoding step makes one call for all its layers instead
of some forty torch operations per layer. On the 2-core AMD EPYC a one-row step of SmolLM2-135M took
19.9 ms with it against 31.7 ms with the products alone in C, nine rows 36.0 against 42.9 ms
(docs/speculative-decoding.md). Every row is computed by the same code whatever else is in the block,
so a row of a verification equals that row decoded alone, bit for bit.

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
from dataclasses import dataclass
from pathlib import Path

import torch

logger = logging.getLogger(__name__)

DISABLE_ENV = "DECODING_NATIVE_KERNEL"
CACHE_ENV = "DECODING_NATIVE_CACHE"

_SOURCE = r"""
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

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

/* The rest of a Llama decoder layer for a block of a few rows, so that a decoding step or a
   verification makes one call for all its layers instead of some forty tensor operations per layer,
   each paying torch's dispatch (measured on SmolLM2-135M: 4.7 ms of a 32 ms one-row step went to the
   operations besides the products, and 1.9 ms to attention; docs/speculative-decoding.md). Each row
   is computed by the same code whatever else is in the block: its norm, rotation and attention read
   only that row, and its attention visits the keys it may see in position order, so a row of a
   verification equals that row decoded alone, bit for bit. */

/* e^x for 8 floats: x = n ln 2 + r with |r| <= ln 2 / 2, e^r by Cephes' polynomial for expf, 2^n
   through the exponent bits. Below -87.3 (a masked score, a very negative SiLU input) it is 0. */
static inline __m256 exp8(__m256 x) {
  const __m256 low = _mm256_set1_ps(-87.3365447504f);
  __m256 under = _mm256_cmp_ps(x, low, _CMP_LT_OQ);
  x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(88.0f)), low);
  __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  x = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  x = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), x);
  __m256 y = _mm256_set1_ps(1.9875691500e-4f);
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894e-2f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459e-1f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201e-1f));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(x, x), _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
  __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(under, _mm256_mul_ps(y, _mm256_castsi256_ps(bits)));
}

/* out = weight * (x / sqrt(mean(x^2) + eps)), row by row (LlamaRMSNorm). */
static void rms_norm(const float* x, const float* weight, float* out, long rows, long size, float eps) {
  for (long r = 0; r < rows; r++) {
    const float* row = x + r * size;
    float* to = out + r * size;
    __m256 acc = _mm256_setzero_ps();
    long k = 0;
    for (; k + 8 <= size; k += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(row + k), _mm256_loadu_ps(row + k), acc);
    float total = sum8(acc);
    for (; k < size; k++) total += row[k] * row[k];
    float scale = 1.0f / sqrtf(total / (float)size + eps);
    for (k = 0; k < size; k++) to[k] = weight[k] * (row[k] * scale);
  }
}

/* x * cos + rotate_half(x) * sin for one head's vector, with the position's cos and sin rows. */
static void rotate(float* x, const float* c, const float* s, long dim) {
  long half = dim / 2;
  for (long d = 0; d < half; d++) {
    float a = x[d], b = x[d + half];
    x[d] = a * c[d] - b * s[d];
    x[d + half] = b * c[d + half] + a * s[d + half];
  }
}

/* One query row of one head over the keys it may see: the cached positions before `start`, then
   the block's rows `allowed` marks for row r (NULL: rows up to r, a chain). dim is a multiple of 8
   and at most 256; scores and order hold start + count + 8 entries. */
static void attend(const float* q, const float* keys, const float* values, long dim, long start,
                   long count, long r, const unsigned char* allowed, float scale, float* scores,
                   long* order, float* out) {
  long n = 0;
  for (long j = 0; j < start; j++) order[n++] = j;
  for (long c = 0; c < count; c++)
    if (allowed ? allowed[r * count + c] : c <= r) order[n++] = start + c;
  float most = -INFINITY;
  for (long i = 0; i < n; i++) {
    const float* key = keys + order[i] * dim;
    __m256 acc = _mm256_setzero_ps();
    for (long d = 0; d < dim; d += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), _mm256_loadu_ps(key + d), acc);
    scores[i] = sum8(acc) * scale;
    if (scores[i] > most) most = scores[i];
  }
  long padded = (n + 7) / 8 * 8;
  for (long i = n; i < padded; i++) scores[i] = -INFINITY;
  __m256 top = _mm256_set1_ps(most), total = _mm256_setzero_ps();
  for (long i = 0; i < padded; i += 8) {
    __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(scores + i), top));
    _mm256_storeu_ps(scores + i, e);
    total = _mm256_add_ps(total, e);
  }
  __m256 acc[32];
  long chunks = dim / 8;
  for (long d = 0; d < chunks; d++) acc[d] = _mm256_setzero_ps();
  for (long i = 0; i < n; i++) {
    const float* value = values + order[i] * dim;
    __m256 p = _mm256_set1_ps(scores[i]);
    for (long d = 0; d < chunks; d++) acc[d] = _mm256_fmadd_ps(p, _mm256_loadu_ps(value + 8 * d), acc[d]);
  }
  __m256 inverse = _mm256_set1_ps(1.0f / sum8(total));
  for (long d = 0; d < chunks; d++) _mm256_storeu_ps(out + 8 * d, _mm256_mul_ps(acc[d], inverse));
}

/* x / (1 + e^-x) * up, in place in x. */
static void silu_times(float* x, const float* up, long size) {
  long k = 0;
  const __m256 one = _mm256_set1_ps(1.0f);
  for (; k + 8 <= size; k += 8) {
    __m256 v = _mm256_loadu_ps(x + k);
    __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), v));
    _mm256_storeu_ps(x + k, _mm256_mul_ps(_mm256_div_ps(v, _mm256_add_ps(one, e)), _mm256_loadu_ps(up + k)));
  }
  for (; k < size; k++) x[k] = x[k] / (1.0f + expf(-x[k])) * up[k];
}

/* Every decoder layer over `count` new rows. hidden (count x size) holds the rows' embeddings and
   gets the last layer's output. weights: per layer q, k, v, o, gate, up, down, the attention norm's
   and the MLP norm's weights. keys/values: (layers, kv_heads, capacity, dim); the new rows' keys and
   values go to positions start .. start + count - 1. positions: each row's rotary position (its
   depth below the cache for a tree); allowed: count x count, which block rows each row sees (NULL: a
   chain). cos/sin: (capacity, dim) tables. Returns 0, or -1 when its buffers cannot be allocated. */
int lean_layers(const float* const* weights, long layers, float* hidden, long count, long size,
                long heads, long kv_heads, long dim, long inter, float* keys, float* values,
                long capacity, long start, const long* positions, const unsigned char* allowed,
                const float* cos_table, const float* sin_table, float eps, float scale, int threads) {
  long q_size = heads * dim, kv_size = kv_heads * dim, group = heads / kv_heads;
  long width = start + count + 8;
  float* buffer = malloc(sizeof(float) * (count * (2 * size + 2 * q_size + 2 * kv_size + 2 * inter) +
                                          (long)threads * width));
  long* orders = malloc(sizeof(long) * (long)threads * width);
  if (!buffer || !orders) {
    free(buffer);
    free(orders);
    return -1;
  }
  float *normed = buffer, *q = normed + count * size, *k = q + count * q_size, *v = k + count * kv_size;
  float *attended = v + count * kv_size, *projected = attended + count * q_size;
  float *gate = projected + count * size, *up = gate + count * inter, *scores = up + count * inter;
  for (long layer = 0; layer < layers; layer++) {
    const float* const* w = weights + layer * 9;
    float* layer_keys = keys + layer * kv_heads * capacity * dim;
    float* layer_values = values + layer * kv_heads * capacity * dim;
    rms_norm(hidden, w[7], normed, count, size, eps);
    few_rows_linear(w[0], normed, q, q_size, size, count, threads);
    few_rows_linear(w[1], normed, k, kv_size, size, count, threads);
    few_rows_linear(w[2], normed, v, kv_size, size, count, threads);
    for (long r = 0; r < count; r++) {
      const float* c = cos_table + positions[r] * dim;
      const float* s = sin_table + positions[r] * dim;
      for (long h = 0; h < heads; h++) rotate(q + r * q_size + h * dim, c, s, dim);
      for (long g = 0; g < kv_heads; g++) {
        rotate(k + r * kv_size + g * dim, c, s, dim);
        memcpy(layer_keys + (g * capacity + start + r) * dim, k + r * kv_size + g * dim, sizeof(float) * dim);
        memcpy(layer_values + (g * capacity + start + r) * dim, v + r * kv_size + g * dim, sizeof(float) * dim);
      }
    }
    long tasks = heads * count;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (long task = 0; task < tasks; task++) {
      long r = task / heads, h = task % heads, t = omp_get_thread_num();
      long offset = (h / group) * capacity * dim;
      attend(q + r * q_size + h * dim, layer_keys + offset, layer_values + offset, dim, start, count, r,
             allowed, scale, scores + t * width, orders + t * width, attended + r * q_size + h * dim);
    }
    few_rows_linear(w[3], attended, projected, size, q_size, count, threads);
    for (long i = 0; i < count * size; i++) hidden[i] += projected[i];
    rms_norm(hidden, w[8], normed, count, size, eps);
    few_rows_linear(w[4], normed, gate, inter, size, count, threads);
    few_rows_linear(w[5], normed, up, inter, size, count, threads);
    for (long r = 0; r < count; r++) silu_times(gate + r * inter, up + r * inter, inter);
    few_rows_linear(w[6], gate, projected, size, inter, count, threads);
    for (long i = 0; i < count * size; i++) hidden[i] += projected[i];
  }
  free(buffer);
  free(orders);
  return 0;
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

        self._layers = library.lean_layers
        self._layers.restype = ctypes.c_int
        self._layers.argtypes = [
            ctypes.c_void_p,  # weights: 9 pointers per layer
            ctypes.c_long,  # layers
            ctypes.c_void_p,  # hidden, in and out
            *[ctypes.c_long] * 6,  # count, size, heads, kv_heads, dim, inter
            ctypes.c_void_p,  # keys
            ctypes.c_void_p,  # values
            ctypes.c_long,  # capacity
            ctypes.c_long,  # start
            ctypes.c_void_p,  # positions (int64)
            ctypes.c_void_p,  # allowed (uint8) or NULL
            ctypes.c_void_p,  # cos table
            ctypes.c_void_p,  # sin table
            ctypes.c_float,  # eps
            ctypes.c_float,  # attention scale
            ctypes.c_int,  # threads
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

    def decoder_layers(
        self,
        layers: LayerPointers,
        hidden: torch.Tensor,
        caches: CachePointers,
        start: int,
        positions: torch.Tensor,
        allowed: torch.Tensor | None,
    ) -> None:
        """Run every decoder layer of `layers` over `hidden` (count x size, contiguous float32, the
        rows' embeddings; it gets the last layer's output) in place, writing the rows' keys and values
        to `caches` at positions `start` onwards. `positions` (int64, one per row) are the rotary
        positions; `allowed` (uint8, count x count) says which block rows each row attends to (None:
        rows up to itself). No checks: `LeanLlama` builds every argument."""
        count = hidden.shape[0]
        status = self._layers(
            layers.pointers,
            layers.count,
            hidden.data_ptr(),
            count,
            layers.size,
            layers.heads,
            layers.kv_heads,
            layers.dim,
            layers.inter,
            caches.keys.data_ptr(),
            caches.values.data_ptr(),
            caches.keys.shape[-2],
            start,
            positions.data_ptr(),
            None if allowed is None else allowed.data_ptr(),
            caches.cos.data_ptr(),
            caches.sin.data_ptr(),
            layers.eps,
            layers.scale,
            torch.get_num_threads(),
        )
        if status != 0:
            raise MemoryError("the native decoder layers could not allocate their buffers")


class LayerPointers:
    """The weights of a Llama model's decoder layers as the native kernel's `lean_layers` takes them:
    per layer q, k, v, o, gate, up, down and the two norms' weights, all contiguous float32 CPU
    tensors (kept referenced here so the pointers stay valid)."""

    def __init__(
        self,
        layers: list[tuple[torch.Tensor, ...]],
        *,
        heads: int,
        kv_heads: int,
        dim: int,
        eps: float,
    ) -> None:
        tensors = [tensor for layer in layers for tensor in layer]
        if any(len(layer) != 9 for layer in layers):
            raise ValueError("every layer needs its 9 weights")
        for tensor in tensors:
            if tensor.dtype != torch.float32 or tensor.device.type != "cpu" or not tensor.is_contiguous():
                raise ValueError("the native decoder layers take contiguous float32 CPU weights only")
        if dim % 8 or dim > 256 or heads % kv_heads:
            raise ValueError(
                f"the native decoder layers need a head size that is a multiple of 8 up to 256, got {dim}"
            )
        self._tensors = tensors
        self.pointers = (ctypes.c_void_p * len(tensors))(*[tensor.data_ptr() for tensor in tensors])
        self.count = len(layers)
        self.size = int(layers[0][0].shape[1])
        self.inter = int(layers[0][4].shape[0])
        self.heads, self.kv_heads, self.dim = heads, kv_heads, dim
        self.eps = eps
        self.scale = dim**-0.5


@dataclass
class CachePointers:
    """The key/value cache, (layers, 1, kv_heads, capacity, dim) each, and the rotary (capacity, dim)
    cos and sin tables the native decoder layers read and write."""

    keys: torch.Tensor
    values: torch.Tensor
    cos: torch.Tensor
    sin: torch.Tensor


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
