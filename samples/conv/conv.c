/* tma-conv-example: a 3x3 convolution with tma_conv2d: checked without a GPU, planned, run, compared with the CPU.
 *
 * What it shows: y = conv2d(x, w) on NHWC bf16 tensors, an implicit GEMM whose activations come through im2col TMA
 * loads. tma_conv2d_check needs no GPU; tma_conv2d_plan_make chooses the tile and how the blocks share the tiles,
 * which the sample prints; tma_conv2d_run launches it. Without a Hopper GPU, tma_conv2d_model runs the same copies,
 * at the same coordinates, on libtma's CPU model of the copy engine. Either way y is compared with a direct
 * convolution on the CPU (the data are small multiples of 1/8: exact sums, so only y's rounding to bf16 separates
 * them). How it works: docs/guide/conv.md; the benchmark: samples/bench/conv/ (tma-conv).
 *
 * Build and run:  cmake -B build && cmake --build build -j && ./build/samples/tma-conv-example
 * Exit status: 0 when every element of y is within bf16 rounding of the CPU convolution, 1 otherwise. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include <tma/kernels.h>

#include "../common/cuda_check.h"
#include "../common/hopper.h"
#include "../common/host.h"

static const tma_conv2d_shape shape = {.n = 2, .h = 9, .w = 9, .c = 16, .k = 24, .r = 3, .s = 3, .stride_h = 1,
                                       .stride_w = 1, .pad_h = 1, .pad_w = 1, .dilation_h = 1, .dilation_w = 1};
enum { XN = 2 * 9 * 9 * 16, WN = 24 * 3 * 3 * 16, YN = 2 * 9 * 9 * 24 }; /* elements of x, w, y (P = Q = 9) */

/* y = conv2d(x, w) on the GPU: copy in, plan, say what the plan chose, run, copy out. */
static tma_status conv_on_gpu(const uint16_t *x, const uint16_t *w, uint16_t *y, tma_diag *diag) {
    static const char *schedule[] = {"auto", "whole tiles", "stream-K", "split-K"};
    void *dx, *dw, *dy;
    CUDA_CHECK(cudaMalloc(&dx, XN * 2));
    CUDA_CHECK(cudaMalloc(&dw, WN * 2));
    CUDA_CHECK(cudaMalloc(&dy, YN * 2));
    CUDA_CHECK(cudaMemcpy(dx, x, XN * 2, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dw, w, WN * 2, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dy, 0xFF, YN * 2)); /* NaN: an element never written cannot pass */
    tma_conv2d_plan plan;
    tma_status st = tma_conv2d_plan_make(&plan, &shape, dx, dw, dy, diag);
    if (st == TMA_OK) {
        if (plan.block_m == TMA_CONV2D_HALO) /* whole output rows a tile, 3 taps a stage */
            printf("plan: halo tiles of 128 positions x %d filters, %s, %d stages a tile\n", plan.block_n,
                   schedule[plan.schedule], plan.stages);
        else
            printf("plan: tiles of %d pixels x %d filters, %s, %d stages a tile\n", plan.block_m, plan.block_n,
                   schedule[plan.schedule], plan.stages);
        st = tma_conv2d_run(&plan, NULL, diag);
        if (st == TMA_OK)
            CUDA_CHECK(cudaMemcpy(y, dy, YN * 2, cudaMemcpyDeviceToHost));
        tma_conv2d_plan_free(&plan, NULL);
    }
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dw));
    CUDA_CHECK(cudaFree(dy));
    return st;
}

int main(void) {
    static uint16_t x[XN], w[WN], y[YN];
    for (int i = 0; i < XN; i++)
        x[i] = bf16_from_float(sample_value(i, 1));
    for (int i = 0; i < WN; i++)
        w[i] = bf16_from_float(sample_value(i, 2));
    memset(y, 0xFF, sizeof y);
    tma_diag diag;
    tma_status st = tma_conv2d_check(&shape, NULL, NULL, NULL, &diag); /* every rule, no GPU needed */
    if (st == TMA_OK)
        st = sample_have_hopper("the kernel's tile pipeline on the CPU model of the copy engine")
                 ? conv_on_gpu(x, w, y, &diag)
                 : tma_conv2d_model(&shape, x, w, y, &diag);
    if (st != TMA_OK) {
        fprintf(stderr, "conv: %s: %s\n", tma_status_name(st), diag.message);
        return 1;
    }

    int bad = 0; /* y[n, p, q, k] = sum over r, s, c of x[n, p - 1 + r, q - 1 + s, c] * w[k, r, s, c] */
    for (int n = 0; n < 2; n++)
        for (int p = 0; p < 9; p++)
            for (int q = 0; q < 9; q++)
                for (int k = 0; k < 24; k++) {
                    double ref = 0;
                    for (int r = 0; r < 3; r++)
                        for (int s = 0; s < 3; s++)
                            for (int c = 0; c < 16; c++) {
                                const int h = p - 1 + r, ww = q - 1 + s;
                                if (h >= 0 && h < 9 && ww >= 0 && ww < 9)
                                    ref += bf16_to_double(x[((n * 9 + h) * 9 + ww) * 16 + c]) *
                                           bf16_to_double(w[((k * 3 + r) * 3 + s) * 16 + c]);
                            }
                    bad += !(fabs(bf16_to_double(y[((n * 9 + p) * 9 + q) * 24 + k]) - ref) <= fabs(ref) / 256);
                }
    printf("2 x 9 x 9 x 16 (*) 24 x 3 x 3 x 16, stride 1, padding 1: %d of %d elements outside bf16 rounding\n", bad,
           YN);
    return bad != 0;
}
