/* A C consumer of the installed tma::kernels: the transpose's CPU-model pipeline (no GPU needed), and the GPU
 * entry points, which without a Hopper GPU must say so with a status and a message. */
#include <stdio.h>
#include <string.h>

#include <tma/kernels.h>

int main(void) {
    enum { ROWS = 40, COLS = 24, PITCH_IN = 96, PITCH_OUT = 160 };
    static _Alignas(1024) float in[ROWS * PITCH_IN / 4], out[COLS * PITCH_OUT / 4];
    for (int i = 0; i < ROWS * PITCH_IN / 4; i++)
        in[i] = (float)i;
    tma_diag diag;
    const tma_permute_desc d = tma_transpose_desc(4, in, out, ROWS, COLS, PITCH_IN, PITCH_OUT);
    if (tma_permute_model(&d, NULL, &diag) != TMA_OK) {
        fprintf(stderr, "consumer_kernels: %s\n", diag.message);
        return 1;
    }
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            if (out[c * (PITCH_OUT / 4) + r] != in[r * (PITCH_IN / 4) + c]) {
                fprintf(stderr, "consumer_kernels: wrong element (%d, %d)\n", r, c);
                return 1;
            }
    tma_gemm_plan plan;
    const tma_status st = tma_gemm_plan_make(&plan, in, in, out, TMA_GEMM_OUT_F32, 64, 64, 64, &diag);
    if (st != TMA_OK && st != TMA_ERR_DEVICE && st != TMA_ERR_CUDA) {
        fprintf(stderr, "consumer_kernels: tma_gemm_plan_make: %s: %s\n", tma_status_name(st), diag.message);
        return 1;
    }
    printf("consumer_kernels: ok (model transpose verified; GEMM plan: %s%s%s)\n", tma_status_name(st),
           st == TMA_OK ? "" : ": ", st == TMA_OK ? "" : diag.message);
    return 0;
}
