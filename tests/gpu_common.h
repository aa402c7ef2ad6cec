/* Shared by the gpu test suites: device detection (skip with the reason), CUDA call checking, a seeded
 * random generator and a generator of random valid descriptors with small tensors. Header-only; every
 * function is static. */
#ifndef TESTS_GPU_COMMON_H
#define TESTS_GPU_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/redirect.h>
#include <cuda_runtime.h>

#include "test_seed.h"
#include "tma/tma.h"

#define CUDA_OK(call)                                                                               \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        cr_assert(e_ == cudaSuccess, "%s:%d: %s failed: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
    } while (0)

#ifndef GPU_SKIP_MARK
#define GPU_SKIP_MARK "libtma gpu suite skipped:" /* tests/CMakeLists.txt passes the same text */
#endif

/* Skip the calling test, saying why: printed after GPU_SKIP_MARK, which makes CTest report the suite as
 * Skipped (SKIP_REGULAR_EXPRESSION), and given to Criterion. */
#define GPU_SKIP(...)                                                                               \
    do {                                                                                            \
        char why_[512];                                                                             \
        snprintf(why_, sizeof why_, __VA_ARGS__);                                                   \
        printf("%s %s\n", GPU_SKIP_MARK, why_);                                                 \
        fflush(stdout);                                                                             \
        cr_skip_test("%s", why_);                                                                   \
    } while (0)

/* Skips the calling test unless an sm_90 device is present; creates the context (each Criterion test runs
 * in its own process, so each creates its own). */
static inline void require_sm90(void) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0)
        GPU_SKIP("no CUDA device (%s): the gpu suites need a Hopper (sm_90) GPU",
                 e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess)
        GPU_SKIP("cannot read device 0's properties: the gpu suites need a Hopper (sm_90) GPU");
    if (p.major != 9)
        GPU_SKIP("device 0 is %.64s (sm_%d%d), not Hopper (sm_90): TMA tests need sm_90", p.name, p.major, p.minor);
    if (cudaSetDevice(0) != cudaSuccess || cudaFree(0) != cudaSuccess)
        GPU_SKIP("cannot create a CUDA context on device 0");
}

/* xorshift64*; the seed comes from TMA_TEST_SEED or the clock, and is logged so a failure can be replayed. */
static uint64_t rng_state;

static inline uint64_t seed_rng(const char *suite) { return rng_state = test_seed(suite); }

static inline uint64_t rnd(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [lo, hi]. */
static inline int64_t rnd_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

static inline void rnd_bytes(uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd();
}

static inline int is_float_type(tma_dtype t) {
    return t == TMA_DTYPE_F16 || t == TMA_DTYPE_F32 || t == TMA_DTYPE_F64 || t == TMA_DTYPE_BF16 ||
           t == TMA_DTYPE_F32_FTZ || t == TMA_DTYPE_TF32 || t == TMA_DTYPE_TF32_FTZ;
}

/* A random valid descriptor with a small tensor (at most a few hundred KiB) and a box of at most
 * ~24 KiB of shared memory. global_address is left NULL: the caller places the tensor. */
static inline tma_tiled_desc random_desc(const tma_dtype *types, int ntypes) {
    for (;;) {
        tma_tiled_desc d;
        memset(&d, 0, sizeof d);
        d.dtype = types ? types[rnd() % (uint64_t)ntypes] : (tma_dtype)(rnd() % TMA_DTYPE_COUNT_);
        d.rank = (uint32_t)rnd_in(1, 5);
        d.swizzle = (tma_swizzle)rnd_in(0, 3);
        d.l2_promotion = (tma_l2_promotion)rnd_in(0, 3);
        d.oob_fill = is_float_type(d.dtype) && rnd() % 2 ? TMA_OOB_NAN : TMA_OOB_ZERO;
        uint32_t esize = (uint32_t)tma_dtype_size(d.dtype);
        uint32_t span = tma_swizzle_span(d.swizzle);
        uint32_t max_chunks = span ? span / 16 : 8;
        d.box_dim[0] = (uint32_t)rnd_in(1, max_chunks) * 16 / esize;
        d.global_dim[0] = (uint64_t)rnd_in(1, 3 * d.box_dim[0] + 8);
        uint64_t stride = (d.global_dim[0] * esize + 15) / 16 * 16 + 16 * (uint64_t)rnd_in(0, 2);
        uint32_t max_box = d.rank == 2 ? 24 : d.rank == 3 ? 8 : 4;
        /* a third of the time the outer dimensions nest in a shuffled order (strides need not grow with the
         * index, as in a {64, rows, cols / 64} view of a matrix) */
        uint32_t order[4] = {1, 2, 3, 4};
        if (rnd() % 3 == 0)
            for (uint32_t k = d.rank - 1; k > 1; k--) {
                uint32_t j = (uint32_t)(rnd() % k), t = order[k - 1];
                order[k - 1] = order[j], order[j] = t;
            }
        for (uint32_t i = 1; i < d.rank; i++) {
            d.box_dim[i] = (uint32_t)rnd_in(1, max_box);
            d.element_stride[i] = rnd() % 4 == 0 ? (uint32_t)rnd_in(2, 8) : (uint32_t)rnd_in(0, 1);
            d.global_dim[i] = (uint64_t)rnd_in(1, 2 * d.box_dim[i] + 3);
        }
        for (uint32_t k = 0; k + 1 < d.rank; k++) {
            const uint32_t i = order[k];
            d.global_stride[i - 1] = stride;
            stride = stride * d.global_dim[i] + 16 * (uint64_t)rnd_in(0, 1);
        }
        d.global_address = (void *)(uintptr_t)4096; /* stand-in for the check */
        if (tma_check_tiled(&d, NULL) == TMA_OK && tma_global_extent_bytes(&d) <= (1u << 19) &&
            tma_box_smem_bytes(&d) <= 24 * 1024)
            return d;
    }
}

/* Random coordinates for d: coord[0] on the 16-byte grid; partly or wholly out of bounds at times;
 * negative ones only if `allow_negative`. */
static inline void random_coords(const tma_tiled_desc *d, int32_t c[5], int allow_negative) {
    memset(c, 0, 5 * sizeof c[0]);
    int32_t step = 16 / (int32_t)tma_dtype_size(d->dtype);
    for (uint32_t i = 0; i < d->rank; i++) {
        int64_t span = (int64_t)d->box_dim[i] * (d->element_stride[i] ? d->element_stride[i] : 1);
        int64_t lo = allow_negative ? -span - 2 : 0;
        int64_t x = rnd_in(lo, (int64_t)d->global_dim[i] + 2);
        if (i == 0)
            x = (x >= 0 ? x / step : -((-x + step - 1) / step)) * step;
        c[i] = (int32_t)x;
    }
}

static inline void describe(const tma_tiled_desc *d, const int32_t c[5], char *out, size_t n) {
    snprintf(out, n,
             "rank %u %s swizzle %s oob %d dims {%llu,%llu,%llu,%llu,%llu} strides {%llu,%llu,%llu,%llu} "
             "box {%u,%u,%u,%u,%u} estride {%u,%u,%u,%u,%u} coord {%d,%d,%d,%d,%d}",
             d->rank, tma_dtype_name(d->dtype), tma_swizzle_name(d->swizzle), (int)d->oob_fill,
             (unsigned long long)d->global_dim[0], (unsigned long long)d->global_dim[1],
             (unsigned long long)d->global_dim[2], (unsigned long long)d->global_dim[3],
             (unsigned long long)d->global_dim[4], (unsigned long long)d->global_stride[0],
             (unsigned long long)d->global_stride[1], (unsigned long long)d->global_stride[2],
             (unsigned long long)d->global_stride[3], d->box_dim[0], d->box_dim[1], d->box_dim[2], d->box_dim[3],
             d->box_dim[4], d->element_stride[0], d->element_stride[1], d->element_stride[2], d->element_stride[3],
             d->element_stride[4], c[0], c[1], c[2], c[3], c[4]);
}

/* What the test printed on stdout (which .init = cr_redirect_stdout captures), e.g. the device's printf of checked
 * mode. Closes stdout: call it once, at the end. */
static inline void captured_stdout(char *text, size_t size) {
    fflush(stdout);
    fclose(stdout); /* closes the pipe's write end, so the read below ends */
    size_t n = fread(text, 1, size - 1, cr_get_redirected_stdout());
    text[n] = '\0';
}

/* How many random configurations to run: the default, or TMA_GPU_CONFIGS (smaller for the sanitizers). */
static inline int config_count(int fallback) {
    const char *env = getenv("TMA_GPU_CONFIGS");
    int n = env ? atoi(env) : 0;
    return n > 0 ? n : fallback;
}

#endif /* TESTS_GPU_COMMON_H */
