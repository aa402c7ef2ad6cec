/* The transpose (tma_transpose_desc through tma_permute's plan, tune and run, and the one-call tma_transpose;
 * tma/kernels.h) against a CPU transpose, 1-, 2-, 4- and 8-byte elements, on ragged sizes and pitches: random
 * input, output poisoned first, every element compared bitwise, and the bytes of each output row past the
 * 16-byte chunk of its last element left untouched. Skips without an sm_90 device. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_common.h"
#include "tma/kernels.h"
#include "transpose_ref.h"

/* How a case is launched: a plan with the default tile order, a plan retuned (group, l2), or the one call. */
typedef enum how { PLAN, TUNED, ONE_CALL } how;

static void check_case(how h, uint32_t e, uint32_t rows, uint32_t cols, uint32_t group, tma_l2_promotion l2) {
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
    tma_diag diag;
    tma_status st;
    if (h == ONE_CALL) {
        st = tma_transpose(e, din, dout, rows, cols, ip, op, NULL, &diag);
        cr_assert_eq(st, TMA_OK, "tma_transpose elem %u %ux%u: %s", e, rows, cols, diag.message);
    } else {
        const tma_permute_desc d = tma_transpose_desc(e, din, dout, rows, cols, ip, op);
        tma_permute_plan p;
        st = tma_permute_plan_make(&p, &d, &diag);
        cr_assert_eq(st, TMA_OK, "plan elem %u %ux%u: %s", e, rows, cols, diag.message);
        if (h == TUNED && p.transpose) {
            st = tma_permute_plan_tune(&p, group, l2, &diag);
            cr_assert_eq(st, TMA_OK, "tune: %s", diag.message);
        }
        st = tma_permute_run(&p, NULL, &diag);
        cr_assert_eq(st, TMA_OK, "run: %s", diag.message);
    }
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(got, dout, out_bytes, cudaMemcpyDeviceToHost));
    char where[160] = "";
    size_t bad = ref_compare(e, got, want, cols, rows, op, where, sizeof where);
    cr_assert_eq(bad, 0, "elem %u %ux%u (pitch %zu -> %zu, how %d, group %u): %zu elements differ, first %s", e,
                 rows, cols, ip, op, (int)h, group, bad, where);
    size_t chunk_end = (rows * (size_t)e + 15) / 16 * 16;
    for (uint32_t r = 0; r < cols; r++)
        for (size_t b = chunk_end; b < op; b++)
            cr_assert_eq(got[r * op + b], 0xEE, "elem %u %ux%u: output row %u padding byte %zu written", e, rows,
                         cols, r, b);
    CUDA_OK(cudaFree(din));
    CUDA_OK(cudaFree(dout));
    free(in), free(want), free(got);
}

static const uint32_t sizes[][2] = {{1, 1},     {5, 3},     {33, 31},   {64, 64},     {127, 129},
                                    {300, 1000}, {1000, 77}, {1025, 513}, {2049, 1023}, {12345, 679}};

static void check_all(uint32_t e) {
    require_sm90();
    char suite[48];
    snprintf(suite, sizeof suite, "gpu_transpose, %u-byte elements", e);
    seed_rng(suite);
    int n = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++, n += 2) {
        check_case(PLAN, e, sizes[i][0], sizes[i][1], 0, TMA_L2_NONE);
        check_case(ONE_CALL, e, sizes[i][1], sizes[i][0], 0, TMA_L2_NONE);
    }
    for (uint32_t g = 1; g <= 16; g *= 4) /* other tile orders and L2 promotions */
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++, n++)
            check_case(TUNED, e, sizes[i][0], sizes[i][1], g, (tma_l2_promotion)(g % 4));
    cr_log_info("%u-byte elements: %d cases matched the CPU transpose bitwise", e, n);
}

Test(gpu_transpose, u8, .timeout = 300) { check_all(1); }
Test(gpu_transpose, bf16, .timeout = 300) { check_all(2); }
Test(gpu_transpose, fp32, .timeout = 300) { check_all(4); }
Test(gpu_transpose, fp64, .timeout = 300) { check_all(8); }

Test(gpu_transpose, refused_arguments_name_the_rule, .timeout = 60) {
    require_sm90();
    void *d = NULL;
    CUDA_OK(cudaMalloc(&d, 1 << 16));
    tma_diag diag;
    cr_expect_eq(tma_transpose(3, d, d, 8, 8, 64, 64, NULL, &diag), TMA_ERR_ARG, "3-byte elements");
    cr_expect(strstr(diag.message, "elem_bytes = 3") != NULL, "%s", diag.message);
    /* any pitch of whole elements is taken; one that splits an element is not */
    cr_expect_eq(tma_transpose(4, d, (char *)d + 4096, 8, 8, 40, 36, NULL, &diag), TMA_OK, "in_pitch 40: %s",
                 diag.message);
    CUDA_OK(cudaDeviceSynchronize());
    cr_expect_eq(tma_transpose(4, d, (char *)d + 4096, 8, 8, 42, 64, NULL, &diag), TMA_ERR_ARG, "in_pitch 42");
    cr_expect(strstr(diag.message, "in_pitch = 42 bytes is not a multiple of elem_bytes = 4") != NULL, "%s",
              diag.message);
    /* out rows that overlap (pitch 16 bytes for rows of 32): refused; in's may (it is only read) */
    cr_expect_eq(tma_transpose(4, d, (char *)d + 4096, 8, 8, 32, 16, NULL, &diag), TMA_ERR_GLOBAL_STRIDE_OVERLAP,
                 "out_pitch shorter than a row");
    cr_expect(strstr(diag.message, "out_pitch = 16 bytes, less than the 32 bytes of an out row") != NULL, "%s",
              diag.message);
    cr_expect_eq(tma_transpose(4, d, NULL, 8, 8, 32, 32, NULL, &diag), TMA_ERR_NULL_ARG, "NULL out");
    cr_expect_eq(tma_permute_run(NULL, NULL, &diag), TMA_ERR_NULL_ARG, "NULL plan");
    CUDA_OK(cudaFree(d));
}
