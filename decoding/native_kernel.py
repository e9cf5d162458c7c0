"""A native kernel for linear layers over a few rows: the products that verifying a few drafts makes.

A forward over one to a few new tokens reads every weight once and does little arithmetic with it, so
its speed is the speed at which the linear layers stream their weights from memory. The BLAS kernels
torch calls reach about half of this machine's read bandwidth on such skinny products (measured in
docs/speculative-decoding.md: on the 2-core AMD EPYC the model's weights took 61-95 ms through them
against 30-33 ms to sum the same bytes). This kernel multiplies a copy of each weight packed in panels
of 16 outputs (`NativeKernel.pack`, as large as the weight), reading each panel once for every row of
the block, and splits the panels between OpenMP threads.

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

/* A weight is multiplied in panels: the weight's rows cut into groups of PANEL consecutive outputs,
   each group stored input by input (panel q, input k: w[q*PANEL .. q*PANEL+15][k], the last panel
   padded with zeros). A pass over a panel loads PANEL weights of one input into two registers and
   multiplies them with that input of every row of the block, broadcast, into two accumulators per
   row: each output is summed over its inputs in one order (spans of SPAN, below), whatever the
   other rows of the block, so a row of a block equals that row alone, bit for bit. Against the kernel before
   (each weight row dotted with every input row, eight partial sums a row): per multiply-add one
   broadcast instead of one load of eight inputs, and no sums across a register at the end. On a
   2-core AMD EPYC with AVX-512 the model's linear layers and LM head, the two kernels alternating in
   one process, took 11.7 ms for 1 row against 13.3 before, 17.0 for 4 rows against 22.0, 24.7 for 8
   against 28.5 and 36.0 for 16 against 44.7
   (docs/speculative-decoding.md). */
#define PANEL 16

/* Packs w (n_out x k_in, row-major) into panels: (n_out + PANEL - 1) / PANEL panels of k_in x PANEL. */
void pack_panels(const float* w, float* panels, long n_out, long k_in, int threads) {
  long count = (n_out + PANEL - 1) / PANEL;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long q = 0; q < count; q++) {
    float* panel = panels + q * k_in * PANEL;
    for (long k = 0; k < k_in; k++)
      for (long j = 0; j < PANEL; j++) {
        long n = q * PANEL + j;
        panel[k * PANEL + j] = n < n_out ? w[n * k_in + k] : 0.0f;
      }
  }
}

/* The hardware prefetcher alone falls behind once a pass does more than a little arithmetic per
   weight. Asking for the panel's line 4 KB ahead into the core's L2 cache (not L1, which the block's
   input rows need) keeps the read streaming; 16 KB ahead into L1 took 1.1-1.2 times as long. The address
   is computed as an integer, since it can lie past the panels' end, where a prefetch is harmless but
   a pointer would not be defined. */
#define AHEAD_BYTES 4096
static inline void prefetch_ahead(const float* at) {
  __builtin_prefetch((const void*)((unsigned long)at + AHEAD_BYTES), 0, 1);
}

/* Outputs of one panel for R rows of x (R x k_in) into out (R x PANEL). Six rows keep twelve
   accumulators, the panel's two registers and a broadcast in AVX2's sixteen. The inputs are summed
   SPAN at a time and the spans' sums added into out in order: for 8 rows of 1536 unit normals by
   1536 outputs, one chain over all inputs was up to 2.3e-4 from the float64 product (mean 1.9e-5),
   spans of 64 up to 3.1e-5 (mean 5.3e-6), the kernel before up to 4.9e-5 and torch's up to 5.0e-5. */
#define SPAN 64
#define BLOCK(R)                                                                                  \
  static void block##R(const float* panel, const float* x, float (*out)[PANEL], long k_in,         \
                       int fetch) {                                                               \
    for (long from = 0; from < k_in; from += SPAN) {                                              \
      long to = from + SPAN < k_in ? from + SPAN : k_in;                                          \
      __m256 low[R], high[R];                                                                     \
      for (int r = 0; r < R; r++) low[r] = high[r] = _mm256_setzero_ps();                         \
      for (long k = from; k < to; k++) {                                                          \
        const float* at = panel + k * PANEL;                                                      \
        if (fetch && (k & 3) == 0) prefetch_ahead(at);                                            \
        __m256 a = _mm256_loadu_ps(at), b = _mm256_loadu_ps(at + 8);                              \
        for (int r = 0; r < R; r++) {                                                             \
          __m256 s = _mm256_broadcast_ss(x + r * k_in + k);                                       \
          low[r] = _mm256_fmadd_ps(a, s, low[r]);                                                 \
          high[r] = _mm256_fmadd_ps(b, s, high[r]);                                               \
        }                                                                                         \
      }                                                                                           \
      for (int r = 0; r < R; r++) {                                                               \
        if (from) {                                                                               \
          low[r] = _mm256_add_ps(_mm256_loadu_ps(out[r]), low[r]);                                \
          high[r] = _mm256_add_ps(_mm256_loadu_ps(out[r] + 8), high[r]);                          \
        }                                                                                         \
        _mm256_storeu_ps(out[r], low[r]);                                                         \
        _mm256_storeu_ps(out[r] + 8, high[r]);                                                    \
      }                                                                                           \
    }                                                                                             \
  }

BLOCK(1)
BLOCK(2)
BLOCK(3)
BLOCK(4)
BLOCK(5)
BLOCK(6)

/* More than MAX_BLOCK rows are split into blocks of equal size (8 rows as 4 + 4: a block of few rows
   waits on its short chains of multiply-adds); the first block reads the panel from memory and the
   later ones from the core's cache, so a block of up to CHUNK rows costs one read of the weights. */
#define MAX_BLOCK 6
#define CHUNK 64
static void chunk(const float* panels, const float* x, float* y, long n_out, long k_in, long rows,
                  int threads) {
  long count = (n_out + PANEL - 1) / PANEL;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long q = 0; q < count; q++) {
    float out[CHUNK][PANEL];
    const float* panel = panels + q * k_in * PANEL;
    long blocks = (rows + MAX_BLOCK - 1) / MAX_BLOCK;
    for (long block = 0, done = 0; block < blocks; block++) {
      long size = (rows - done) / (blocks - block);
      const float* xs = x + done * k_in;
      float(*os)[PANEL] = out + done;
      int fetch = block == 0;
      switch (size) {
        case 1: block1(panel, xs, os, k_in, fetch); break;
        case 2: block2(panel, xs, os, k_in, fetch); break;
        case 3: block3(panel, xs, os, k_in, fetch); break;
        case 4: block4(panel, xs, os, k_in, fetch); break;
        case 5: block5(panel, xs, os, k_in, fetch); break;
        default: block6(panel, xs, os, k_in, fetch); break;
      }
      done += size;
    }
    long width = n_out - q * PANEL < PANEL ? n_out - q * PANEL : PANEL;
    for (long r = 0; r < rows; r++) memcpy(y + r * n_out + q * PANEL, out[r], sizeof(float) * width);
  }
}

/* y (rows x n_out) = x (rows x k_in) times the packed weight transposed. */
void panel_linear(const float* panels, const float* x, float* y, long n_out, long k_in, long rows,
                  int threads) {
  for (long first = 0; first < rows; first += CHUNK) {
    long count = rows - first < CHUNK ? rows - first : CHUNK;
    chunk(panels, x + first * k_in, y + first * n_out, n_out, k_in, count, threads);
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

/* A key's score: one chain of multiply-adds over the head's dimensions, eight lanes wide, its lanes
   summed as ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)), times the scale. scores8 makes the same sums
   for eight keys at once. */
static inline __attribute__((always_inline)) __m256 dot_lanes(const float* query, const float* key, long dim) {
  __m256 acc = _mm256_setzero_ps();
  for (long d = 0; d < dim; d += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(query + d), _mm256_loadu_ps(key + d), acc);
  return acc;
}

static inline __attribute__((always_inline)) float score(const float* query, const float* key, long dim, float scale) {
  __m256 acc = dot_lanes(query, key, dim);
  __m256 pairs = _mm256_hadd_ps(acc, acc);
  __m256 quads = _mm256_hadd_ps(pairs, pairs);
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(quads), _mm256_extractf128_ps(quads, 1));
  return _mm_cvtss_f32(sum) * scale;
}

static inline __attribute__((always_inline)) void scores8(const float* query, const float* keys, long dim,
                                                          float scale, float* out) {
  __m256 acc[8];
  for (int j = 0; j < 8; j++) acc[j] = dot_lanes(query, keys + j * dim, dim);
  __m256 quads0 = _mm256_hadd_ps(_mm256_hadd_ps(acc[0], acc[1]), _mm256_hadd_ps(acc[2], acc[3]));
  __m256 quads1 = _mm256_hadd_ps(_mm256_hadd_ps(acc[4], acc[5]), _mm256_hadd_ps(acc[6], acc[7]));
  __m256 sums = _mm256_add_ps(_mm256_permute2f128_ps(quads0, quads1, 0x20),
                              _mm256_permute2f128_ps(quads0, quads1, 0x31));
  _mm256_storeu_ps(out, _mm256_mul_ps(sums, _mm256_set1_ps(scale)));
}

static inline int sees(const unsigned char* allowed, long count, long r, long c) {
  return allowed ? allowed[r * count + c] : c <= r;
}

/* Attention of the query heads of one key/value head (first_head .. first_head + group - 1) for
   rows first_row .. last_row - 1. Each query sees the cached positions before `start`, then the
   block's rows `allowed` marks for its row (NULL: rows up to its own, a chain), in position order.
   The cached keys and values are read KEY_BLOCK at a time and used by every query of the task
   while they sit in the core's first cache, instead of once per query: each key and value is read
   once per task, not once per row and query head. Each query's sums run in the same order as
   one query alone: its scores key by key, its softmax over them in position order, its weighted
   values key by key in position order (the running sums kept in `attended` between blocks), so
   a row of a block equals that row alone, bit for bit. dim is a multiple of 8 and at most 256;
   scores holds queries x width floats, width >= start + count + 8; seen holds queries entries. */
#define KEY_BLOCK 32
static inline __attribute__((always_inline)) void attend_body(
    const float* q, long q_size, const float* keys, const float* values, long dim, long start, long count,
    long first_row, long last_row, long first_head, long group, const unsigned char* allowed, float scale,
    float* scores, long width, long* seen, float* attended) {
  long chunks = dim / 8;
  for (long from = 0; from < start; from += KEY_BLOCK) {
    long to = from + KEY_BLOCK < start ? from + KEY_BLOCK : start;
    for (long r = first_row; r < last_row; r++)
      for (long j = 0; j < group; j++) {
        const float* query = q + r * q_size + (first_head + j) * dim;
        float* row_scores = scores + ((r - first_row) * group + j) * width;
        long i = from;
        for (; i + 8 <= to; i += 8) scores8(query, keys + i * dim, dim, scale, row_scores + i);
        for (; i < to; i++) row_scores[i] = score(query, keys + i * dim, dim, scale);
      }
  }
  for (long r = first_row; r < last_row; r++)
    for (long j = 0; j < group; j++) {
      long index = (r - first_row) * group + j;
      const float* query = q + r * q_size + (first_head + j) * dim;
      float* row_scores = scores + index * width;
      long n = start;
      for (long c = 0; c < count; c++)
        if (sees(allowed, count, r, c)) row_scores[n++] = score(query, keys + (start + c) * dim, dim, scale);
      float most = -INFINITY;
      for (long i = 0; i < n; i++)
        if (row_scores[i] > most) most = row_scores[i];
      long padded = (n + 7) / 8 * 8;
      for (long i = n; i < padded; i++) row_scores[i] = -INFINITY;
      __m256 top = _mm256_set1_ps(most), total = _mm256_setzero_ps();
      for (long i = 0; i < padded; i += 8) {
        __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(row_scores + i), top));
        _mm256_storeu_ps(row_scores + i, e);
        total = _mm256_add_ps(total, e);
      }
      /* The sum of the weights, kept past the weights (padded <= n + 7 < width). */
      row_scores[width - 1] = sum8(total);
      seen[index] = n;
    }
  for (long from = 0; from < start; from += KEY_BLOCK) {
    long to = from + KEY_BLOCK < start ? from + KEY_BLOCK : start;
    for (long r = first_row; r < last_row; r++)
      for (long j = 0; j < group; j++) {
        const float* row_scores = scores + ((r - first_row) * group + j) * width;
        float* out = attended + r * q_size + (first_head + j) * dim;
        __m256 acc[32];
        for (long d = 0; d < chunks; d++) acc[d] = from ? _mm256_loadu_ps(out + 8 * d) : _mm256_setzero_ps();
        for (long i = from; i < to; i++) {
          __m256 p = _mm256_set1_ps(row_scores[i]);
          for (long d = 0; d < chunks; d++)
            acc[d] = _mm256_fmadd_ps(p, _mm256_loadu_ps(values + i * dim + 8 * d), acc[d]);
        }
        for (long d = 0; d < chunks; d++) _mm256_storeu_ps(out + 8 * d, acc[d]);
      }
  }
  for (long r = first_row; r < last_row; r++)
    for (long j = 0; j < group; j++) {
      long index = (r - first_row) * group + j;
      const float* row_scores = scores + index * width;
      float* out = attended + r * q_size + (first_head + j) * dim;
      __m256 acc[32];
      for (long d = 0; d < chunks; d++) acc[d] = start ? _mm256_loadu_ps(out + 8 * d) : _mm256_setzero_ps();
      long i = start;
      for (long c = 0; c < count && i < seen[index]; c++) {
        if (!sees(allowed, count, r, c)) continue;
        __m256 p = _mm256_set1_ps(row_scores[i++]);
        for (long d = 0; d < chunks; d++)
          acc[d] = _mm256_fmadd_ps(p, _mm256_loadu_ps(values + (start + c) * dim + 8 * d), acc[d]);
      }
      __m256 inverse = _mm256_set1_ps(1.0f / row_scores[width - 1]);
      for (long d = 0; d < chunks; d++) _mm256_storeu_ps(out + 8 * d, _mm256_mul_ps(acc[d], inverse));
    }
}

/* attend_body with the head size a constant where it is 64 (SmolLM2's and many small Llamas'), so
   the compiler keeps a query's eight running sums of weighted values in registers; with the size
   known only at run time they lived in memory, a load and a store around every multiply-add. */
static void attend_group(const float* q, long q_size, const float* keys, const float* values, long dim,
                         long start, long count, long first_row, long last_row, long first_head,
                         long group, const unsigned char* allowed, float scale, float* scores,
                         long width, long* seen, float* attended) {
  if (dim == 64)
    attend_body(q, q_size, keys, values, 64, start, count, first_row, last_row, first_head, group, allowed,
                scale, scores, width, seen, attended);
  else
    attend_body(q, q_size, keys, values, dim, start, count, first_row, last_row, first_head, group, allowed,
                scale, scores, width, seen, attended);
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
   gets the last layer's output. weights: per layer q, k, v, o, gate, up, down packed in panels
   (pack_panels), the attention norm's and the MLP norm's weights. keys/values: (layers, kv_heads, capacity, dim); the new rows' keys and
   values go to positions start .. start + count - 1. positions: each row's rotary position (its
   depth below the cache for a tree); allowed: count x count, which block rows each row sees (NULL: a
   chain). cos/sin: (capacity, dim) tables. Returns 0, or -1 when its buffers cannot be allocated. */
int lean_layers(const float* const* weights, long layers, float* hidden, long count, long size,
                long heads, long kv_heads, long dim, long inter, float* keys, float* values,
                long capacity, long start, const long* positions, const unsigned char* allowed,
                const float* cos_table, const float* sin_table, float eps, float scale, int threads) {
  long q_size = heads * dim, kv_size = kv_heads * dim, group = heads / kv_heads;
  long width = start + count + 8;
  /* Attention tasks: each key/value head's rows in `parts` runs of rows, enough tasks to keep every
     thread busy where the block has the rows for it, and runs of at most PART_ROWS rows, so that a
     prefill's scores (a task's queries by the keys) stay small. */
  const long PART_ROWS = 16;
  long per_head = (2 * threads + kv_heads - 1) / kv_heads;
  long parts = count < per_head ? count : per_head;
  if (parts < (count + PART_ROWS - 1) / PART_ROWS) parts = (count + PART_ROWS - 1) / PART_ROWS;
  long part_rows = (count + parts - 1) / parts;
  long task_queries = part_rows * group;
  float* buffer = malloc(sizeof(float) * (count * (2 * size + 2 * q_size + 2 * kv_size + 2 * inter) +
                                          (long)threads * task_queries * width));
  long* seen = malloc(sizeof(long) * (long)threads * task_queries);
  if (!buffer || !seen) {
    free(buffer);
    free(seen);
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
    panel_linear(w[0], normed, q, q_size, size, count, threads);
    panel_linear(w[1], normed, k, kv_size, size, count, threads);
    panel_linear(w[2], normed, v, kv_size, size, count, threads);
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
    long tasks = kv_heads * parts;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (long task = 0; task < tasks; task++) {
      long g = task / parts, part = task % parts, t = omp_get_thread_num();
      long first_row = part * part_rows;
      long last_row = first_row + part_rows < count ? first_row + part_rows : count;
      long offset = g * capacity * dim;
      if (first_row < last_row)
        attend_group(q, q_size, layer_keys + offset, layer_values + offset, dim, start, count, first_row,
                     last_row, g * group, group, allowed, scale, scores + t * task_queries * width, width,
                     seen + t * task_queries, attended);
    }
    panel_linear(w[3], attended, projected, size, q_size, count, threads);
    for (long i = 0; i < count * size; i++) hidden[i] += projected[i];
    rms_norm(hidden, w[8], normed, count, size, eps);
    panel_linear(w[4], normed, gate, inter, size, count, threads);
    panel_linear(w[5], normed, up, inter, size, count, threads);
    for (long r = 0; r < count; r++) silu_times(gate + r * inter, up + r * inter, inter);
    panel_linear(w[6], gate, projected, size, inter, count, threads);
    for (long i = 0; i < count * size; i++) hidden[i] += projected[i];
  }
  free(buffer);
  free(seen);
  return 0;
}
"""

_FLAGS = ("-O3", "-mavx2", "-mfma", "-fopenmp", "-shared", "-fPIC")


PANEL = 16  # outputs per panel of a packed weight (the C source's PANEL)


@dataclass(frozen=True)
class Panels:
    """A weight (outputs x inputs) packed for the kernel: `data` holds ceil(outputs / PANEL) panels of
    inputs x PANEL floats (`NativeKernel.pack`)."""

    data: torch.Tensor
    outputs: int
    inputs: int


class NativeKernel:
    """The compiled kernel: `linear(rows, weight)` is `rows @ weight.T` for float32 CPU tensors; a
    caller multiplying by the same weight again packs it once (`pack`) and calls `product`."""

    def __init__(self, library: ctypes.CDLL) -> None:
        self._function = library.panel_linear
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
        self._pack = library.pack_panels
        self._pack.restype = None
        self._pack.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long, ctypes.c_long, ctypes.c_int]

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

    def pack(self, weight: torch.Tensor) -> Panels:
        """`weight` (out, in), a contiguous float32 CPU tensor, packed in panels for `product`: a copy
        as large as the weight (padded to a multiple of PANEL outputs)."""
        if weight.dim() != 2:
            raise ValueError(f"cannot pack a weight of shape {tuple(weight.shape)}")
        if weight.dtype != torch.float32 or weight.device.type != "cpu":
            raise ValueError("the native kernel takes float32 CPU tensors only")
        if not weight.is_contiguous():
            raise ValueError("the native kernel needs a contiguous weight")
        outputs, inputs = (int(size) for size in weight.shape)
        data = torch.empty(-(-outputs // PANEL) * PANEL * inputs, dtype=torch.float32)
        self._pack(weight.data_ptr(), data.data_ptr(), outputs, inputs, torch.get_num_threads())
        return Panels(data, outputs, inputs)

    def linear(self, rows: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        """`rows` (count, in) times `weight` (out, in) transposed: (count, out), float32. Packs the
        weight on every call."""
        if rows.dim() != 2 or weight.dim() != 2 or rows.shape[1] != weight.shape[1]:
            raise ValueError(f"cannot multiply {tuple(rows.shape)} by {tuple(weight.shape)} transposed")
        if rows.dtype != torch.float32 or rows.device.type != "cpu":
            raise ValueError("the native kernel takes float32 CPU tensors only")
        return self.product(rows, self.pack(weight))

    def product(self, rows: torch.Tensor, panels: Panels) -> torch.Tensor:
        """`linear` with a weight packed before and without checks, for a caller that passes float32
        CPU rows of the weight's width; anything else is undefined behaviour."""
        rows = rows.contiguous()
        count = rows.shape[0]
        product = torch.empty(count, panels.outputs, dtype=torch.float32)
        self._function(
            panels.data.data_ptr(),
            rows.data_ptr(),
            product.data_ptr(),
            panels.outputs,
            panels.inputs,
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
    per layer q, k, v, o, gate, up and down packed in panels (`NativeKernel.pack`) and the two norms'
    weights, contiguous float32 CPU tensors (all kept referenced here so the pointers stay valid)."""

    def __init__(
        self,
        layers: list[tuple[Panels | torch.Tensor, ...]],
        *,
        heads: int,
        kv_heads: int,
        dim: int,
        eps: float,
    ) -> None:
        if any(len(layer) != 9 for layer in layers):
            raise ValueError("every layer needs its 9 weights")
        tensors: list[torch.Tensor] = []
        for layer in layers:
            for index, weight in enumerate(layer):
                if (index < 7) != isinstance(weight, Panels):
                    raise ValueError("a layer's 7 products come packed in panels, its 2 norms as tensors")
                tensor = weight.data if isinstance(weight, Panels) else weight
                if tensor.dtype != torch.float32 or tensor.device.type != "cpu" or not tensor.is_contiguous():
                    raise ValueError("the native decoder layers take contiguous float32 CPU weights only")
                tensors.append(tensor)
        if not self.suits(heads, kv_heads, dim):
            raise ValueError(
                f"the native decoder layers need a head size that is a multiple of 8 up to 256, got {dim}"
            )
        first = layers[0]
        assert isinstance(first[0], Panels) and isinstance(first[4], Panels)
        self._tensors = tensors
        self.pointers = (ctypes.c_void_p * len(tensors))(*[tensor.data_ptr() for tensor in tensors])
        self.count = len(layers)
        self.size = first[0].inputs
        self.inter = first[4].outputs
        self.heads, self.kv_heads, self.dim = heads, kv_heads, dim
        self.eps = eps
        self.scale = dim**-0.5

    @staticmethod
    def suits(heads: int, kv_heads: int, dim: int) -> bool:
        """Whether the C layers take a model of these attention shapes."""
        return dim % 8 == 0 and dim <= 256 and heads % kv_heads == 0


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
    return f"panel_linear-{library_digest()}.so"


def _build(compiler: str, directory: Path) -> Path:
    library = directory / library_name()
    if library.is_file():
        return library
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=directory) as staging:
        source = Path(staging) / "panel_linear.c"
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
