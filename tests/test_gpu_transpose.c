/* Every kind of tma_transpose (tma/kernels.h) against a CPU transpose, fp32 and bf16, on ragged sizes:
 * random input, output poisoned first, every element compared bitwise, and the bytes of each output row
 * past the 16-byte chunk of its last element left untouched. Skips without an sm_90 device. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"
#include "tma/kernels.h"
#include "transpose_ref.h"

static const char *kind_name(tma_transpose_kind k) {
    return k == TMA_TRANSPOSE_SWIZZLED ? "swizzled" : k == TMA_TRANSPOSE_SWIZZLED_64 ? "swizzled-64" : "wide";
}

/* group/l2: a tile order and L2 promotion (tma_transpose_plan_tune); group = ~0u: the defaults. */
static void check_kind(tma_transpose_kind v, uint32_t e, uint32_t rows, uint32_t cols, uint32_t group,
                       tma_l2_promotion l2) {
    /* Extra 32 bytes of pitch on some sizes: the kernels must honour pitches, not assume them. */
    size_t ip = (cols * (size_t)e + 15) / 16 * 16 + 32 * (rows % 2), op = (rows * (size_t)e + 15) / 16 * 16 + 32 * (cols % 2);
    size_t in_bytes = rows * ip, out_bytes = cols * op;
    uint8_t *in = malloc(in_bytes), *want = malloc(out_bytes), *got = malloc(out_bytes);
    cr_assert(in && want && got);
    rnd_bytes(in, in_bytes);
    memset(want, 0xEE, out_bytes);
    ref_transpose(e, in, want, rows, cols, ip, op);
    void *din, *dout;
    CUDA_OK(cudaMalloc(&din, in_bytes));
    CUDA_OK(cudaMalloc(&dout, out_bytes));
    CUDA_OK(cudaMemcpy(din, in, in_bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(dout, 0xEE, out_bytes));
    tma_transpose_plan p;
    tma_diag diag;
    tma_status st = tma_transpose_plan_make(&p, v, e, din, dout, rows, cols, ip, op, &diag);
    cr_assert_eq(st, TMA_OK, "%s elem %u %ux%u: %s", kind_name(v), e, rows, cols, diag.message);
    if (group != ~0u) {
        st = tma_transpose_plan_tune(&p, group, l2, &diag);
        cr_assert_eq(st, TMA_OK, "tune: %s", diag.message);
    }
    st = tma_transpose_run(&p, NULL, &diag);
    cr_assert_eq(st, TMA_OK, "run: %s", diag.message);
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(got, dout, out_bytes, cudaMemcpyDeviceToHost));
    char where[160] = "";
    size_t bad = ref_compare(e, got, want, cols, rows, op, where, sizeof where);
    cr_assert_eq(bad, 0, "%s elem %u %ux%u (pitch %zu -> %zu): %zu elements differ, first %s", kind_name(v), e,
                 rows, cols, ip, op, bad, where);
    size_t chunk_end = (rows * (size_t)e + 15) / 16 * 16;
    for (uint32_t r = 0; r < cols; r++)
        for (size_t b = chunk_end; b < op; b++)
            cr_assert_eq(got[r * op + b], 0xEE, "%s elem %u %ux%u: output row %u padding byte %zu written",
                         kind_name(v), e, rows, cols, r, b);
    CUDA_OK(cudaFree(din));
    CUDA_OK(cudaFree(dout));
    free(in), free(want), free(got);
}

static const uint32_t sizes[][2] = {{1, 1},     {5, 3},     {33, 31},   {64, 64},     {127, 129},
                                    {300, 1000}, {1000, 77}, {1025, 513}, {2049, 1023}, {12345, 679}};

static void check_all(uint32_t e) {
    require_sm90();
    seed_rng(e == 4 ? "gpu_transpose fp32" : "gpu_transpose bf16");
    int n = 0;
    for (int v = 0; v < TMA_TRANSPOSE_KIND_COUNT_; v++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++, n++)
            check_kind((tma_transpose_kind)v, e, sizes[i][0], sizes[i][1], ~0u, TMA_L2_NONE);
    for (uint32_t g = 1; g <= 16; g *= 4) /* other tile orders and L2 promotions */
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++, n++)
            check_kind(TMA_TRANSPOSE_SWIZZLED, e, sizes[i][0], sizes[i][1], g, (tma_l2_promotion)(g % 4));
    cr_log_info("%s: %d (kind, size) cases matched the CPU transpose bitwise", e == 4 ? "fp32" : "bf16", n);
}

Test(gpu_transpose, every_variant_fp32, .timeout = 300) { check_all(4); }
Test(gpu_transpose, every_variant_bf16, .timeout = 300) { check_all(2); }

Test(gpu_transpose, refused_arguments_name_the_rule, .timeout = 60) {
    require_sm90();
    void *d = NULL;
    CUDA_OK(cudaMalloc(&d, 1 << 16));
    tma_transpose_plan p;
    tma_diag diag;
    cr_expect_eq(tma_transpose_plan_make(&p, TMA_TRANSPOSE_SWIZZLED, 8, d, d, 8, 8, 64, 64, &diag), TMA_ERR_ARG,
                 "8-byte elements");
    cr_expect(strstr(diag.message, "elem_bytes = 8") != NULL, "%s", diag.message);
    cr_expect_eq(tma_transpose_plan_make(&p, TMA_TRANSPOSE_SWIZZLED, 4, d, d, 8, 8, 40, 64, &diag),
                 TMA_ERR_GLOBAL_STRIDE_ALIGN, "in_pitch 40");
    cr_expect(strstr(diag.message, "input map: global_stride[0] = 40 bytes") != NULL, "%s", diag.message);
    cr_expect_eq(tma_transpose_plan_make(&p, TMA_TRANSPOSE_SWIZZLED, 4, d, d, 8, 20, 64, 64, &diag), TMA_ERR_ARG,
                 "in_pitch shorter than a row");
    cr_expect(strstr(diag.message, "in_pitch = 64 bytes does not hold an input row of 80 bytes") != NULL, "%s",
              diag.message);
    cr_expect_eq(tma_transpose_run(NULL, NULL, &diag), TMA_ERR_NULL_ARG, "NULL plan");
    CUDA_OK(cudaFree(d));
}
