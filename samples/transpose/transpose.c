/* tma-transpose-example: out = in^T in one call (tma_transpose), checked against a CPU transpose.
 *
 * What it shows: the kernels' one-call form. A 1000 x 600 fp32 matrix (row pitches rounded up to 16 bytes, as TMA
 * needs) is transposed on the GPU with tma_transpose, copied back and compared with a transpose done on the CPU.
 * Without a Hopper GPU the same descriptor (tma_transpose_desc) runs through the kernel's tile pipeline on libtma's CPU
 * model of the copy engine (tma_permute_model), and the result is compared the same way.
 * How it works, and the benchmark that times it: docs/guide/permute.md, samples/bench/transpose/ (tma-transpose).
 *
 * Build and run:  cmake -B build && cmake --build build -j && ./build/samples/tma-transpose-example
 * Exit status: 0 when the result equals the CPU transpose, 1 otherwise. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include <tma/kernels.h>

#include "../common/cuda_check.h"
#include "../common/hopper.h"
#include "../common/host.h"

enum { ROWS = 1000, COLS = 600 };

/* out = in^T on the GPU: copy in, one call, copy out. */
static tma_status transpose_on_gpu(const float *in, float *out, size_t in_pitch, size_t out_pitch, tma_diag *diag) {
    void *d_in, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, ROWS * in_pitch));
    CUDA_CHECK(cudaMalloc(&d_out, COLS * out_pitch));
    CUDA_CHECK(cudaMemcpy(d_in, in, ROWS * in_pitch, cudaMemcpyHostToDevice));
    const tma_status st = tma_transpose(4, d_in, d_out, ROWS, COLS, in_pitch, out_pitch, NULL, diag);
    if (st == TMA_OK)
        CUDA_CHECK(cudaMemcpy(out, d_out, COLS * out_pitch, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
    return st;
}

int main(void) {
    const size_t in_pitch = (COLS * 4 + 15) / 16 * 16, out_pitch = (ROWS * 4 + 15) / 16 * 16;
    float *in = host_alloc(ROWS * in_pitch), *out = host_alloc(COLS * out_pitch);
    for (uint32_t r = 0; r < ROWS; r++)
        for (uint32_t c = 0; c < COLS; c++)
            in[r * (in_pitch / 4) + c] = (float)(r * COLS + c);
    memset(out, 0xFF, COLS * out_pitch); /* NaN: an element never written cannot pass */

    tma_diag diag;
    tma_status st;
    if (sample_have_hopper("the kernel's tile pipeline on the CPU model of the copy engine")) {
        st = transpose_on_gpu(in, out, in_pitch, out_pitch, &diag);
    } else {
        const tma_permute_desc d = tma_transpose_desc(4, in, out, ROWS, COLS, in_pitch, out_pitch);
        tma_permute_model_facts facts;
        st = tma_permute_model(&d, &facts, &diag);
        if (st == TMA_OK)
            printf("CPU model: %llu tiles of %u x %u elements, %zu bytes a load (the mbarrier's expect-tx)\n",
                   (unsigned long long)facts.tiles, facts.load_desc.box_dim[0], facts.load_desc.box_dim[1],
                   facts.load_tx_bytes);
    }
    if (st != TMA_OK) {
        fprintf(stderr, "transpose: %s: %s\n", tma_status_name(st), diag.message);
        return 1;
    }

    size_t bad = 0;
    for (uint32_t r = 0; r < ROWS; r++)
        for (uint32_t c = 0; c < COLS; c++)
            bad += out[c * (out_pitch / 4) + r] != in[r * (in_pitch / 4) + c];
    printf("%u x %u fp32 transposed: %zu of %u elements differ from the CPU transpose\n", ROWS, COLS, bad,
           ROWS * COLS);
    free(in);
    free(out);
    return bad != 0;
}
