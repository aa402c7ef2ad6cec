/* Independent references for the kernels' GPU tests (the differential fuzzer, test_gpu_fuzz.c; the convolution's
 * regression runs, test_gpu_conv.c), computed on the GPU: plain loops written from the definitions in tma/kernels.h,
 * sharing nothing with the kernels (no TMA, no tensor cores, no plan), plus seeded fills, comparisons and guard
 * checks, so a test moves no tensor through the host. A C API over a CUDA library (tests/gpu_ref.cu, target
 * tma_gpu_ref). Every function works on the default stream, waits for it, and returns the first CUDA error. */
#ifndef TESTS_GPU_REF_H
#define TESTS_GPU_REF_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "tma/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a fill writes. */
typedef enum ref_data {
    REF_DATA_REAL = 0, /* bf16 uniform in [-1, 1): products and sums are rounded, so results compare within a bound */
    REF_DATA_INTS = 1, /* bf16 integers in [-3, 3]: every product and partial sum below 2^24 is exact in fp32, so the
                          kernels' result must equal the reference bit for bit whatever their order of summation */
} ref_data;

/* n bf16 values at p from `seed` (a counter-based hash: the same seed gives the same tensor, whatever the launch). */
cudaError_t ref_fill_bf16(uint16_t *p, size_t n, uint64_t seed, ref_data kind);
/* n random bytes at p from `seed`. */
cudaError_t ref_fill_bytes(void *p, size_t n, uint64_t seed);

/* C = A B^T in fp32, A m x k and B n x k row-major bf16 (rows lda / ldb elements apart), C m x n dense; cabs (may
 * be NULL) = sum over k of |a b|, the scale of the rounding error of any order of summation. */
cudaError_t ref_gemm(const uint16_t *a, const uint16_t *b, int m, int n, int k, size_t lda, size_t ldb, float *c,
                     float *cabs);

/* y = conv2d(x, w) in fp32 from the definition of tma_conv2d_shape (NHWC x, KRSC w, NPQK y), yabs (may be NULL) the
 * sum of |x w| of each output. */
cudaError_t ref_conv2d(const tma_conv2d_shape *sh, const uint16_t *x, const uint16_t *w, float *y, float *yabs);

/* What a comparison found. */
typedef struct ref_diff {
    unsigned long long bad;       /* elements outside the bound (NaN and infinities always) */
    unsigned long long nonfinite; /* of those, NaN or infinite: never written, or poisoned */
    unsigned long long first;     /* the lowest bad index (~0 if none) */
    float got, want;              /* at `first` */
} ref_diff;

/* n outputs (bf16, or fp32 where out_f32) against the fp32 reference: with rel = 0 and abs_coef = 0 exactly (the
 * reference rounded to the output's type; for REF_DATA_INTS), else |got - want| <= rel |want| + abs_coef refabs. */
cudaError_t ref_compare(const void *out, int out_f32, const float *ref, const float *refabs, size_t n, float rel,
                        float abs_coef, ref_diff *d);

/* Bytes of p[0 .. n) that are not `v` (a guard or a poison left where nothing may be written). */
cudaError_t ref_count_not(const void *p, size_t n, uint8_t v, unsigned long long *count);
/* Bytes where a and b differ (two runs of one problem: a race shows as a difference); *first the lowest. */
cudaError_t ref_count_diff(const void *a, const void *b, size_t n, unsigned long long *count,
                           unsigned long long *first);

/* The permutation of d (d->src, d->dst device addresses, as tma_permute takes them; any element-aligned address) by
 * one thread per element: want[dst element] = src[src element], and role[b] for each byte b of dst's span of
 * dst_bytes (from dst's first element's first byte to its last element's last): 1 an element's, 0 none (between
 * rows, a padded row's tail, a gap of any stride): nothing may write it. want and role are dst_bytes long; dst itself
 * is not touched. */
cudaError_t ref_permute(const tma_permute_desc *d, uint8_t *want, uint8_t *role, size_t dst_bytes);
/* got against want and role: elements bitwise, every other byte still `poison`. */
cudaError_t ref_permute_check(const uint8_t *got, const uint8_t *want, const uint8_t *role, size_t n, uint8_t poison,
                              ref_diff *d);

#ifdef __cplusplus
}
#endif

#endif /* TESTS_GPU_REF_H */
