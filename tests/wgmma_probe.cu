/* wgmma_probe: how wgmma reads a 128B-swizzled K-major operand whose descriptor starts off the swizzle period, for
 * docs/HARDWARE.md "wgmma operands that start off the swizzle period": what include/tma/wgmma.h's model and checker
 * rely on for descriptors that start at a row of a tile off its swizzle period.
 *
 *   wgmma_probe [SEED]
 *
 For each swizzle wgmma reads (32B, 64B, 128B: rows of S = 32, 64, 128 bytes), a tile of 80 rows x S / 2 bf16 is
 * written into shared memory at a 1024-byte aligned address with the swizzle on absolute addresses (tma_swizzle_addr,
 * as TMA writes it), B (64 rows) likewise. For each row offset off = 0 .. 15, one warpgroup multiplies rows off ..
 * off + 63 of the tile by B^T (S / 32 m64n64k16 steps along K, the descriptors advanced 32 bytes a step) through a
 * descriptor whose start address is the tile's + S off, with the base-offset field 0 and with (start >> 7) & 7, and
 * the products are compared, every element, with the CPU's.
 * The data are small integers, so every sum is exact in fp32. Prints one line per (swizzle, off, base offset): the
 * elements that differ; exits 1 if any read with base offset 0 differs (what tma_wgmma_kmajor_ok relies on). */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tma/device.cuh"
#include "tma/swizzle.h"
#include "tma/wgmma.cuh"

enum { ROWS = 80, N = 64, OFFS = 16 };

#define CK(x)                                                                                                       \
    do {                                                                                                            \
        cudaError_t e_ = (x);                                                                                       \
        if (e_ != cudaSuccess) {                                                                                    \
            fprintf(stderr, "wgmma_probe: %s: %s\n", #x, cudaGetErrorString(e_));                                  \
            exit(2);                                                                                                \
        }                                                                                                           \
    } while (0)

/* One warpgroup: the tile and B (rows of S bytes, K = S / 2 elements) into shared memory, swizzled on absolute
 * addresses, then D = tile[off ..] * B^T. */
__global__ void __launch_bounds__(128) probe(const uint16_t *a, const uint16_t *b, float *d, tma_swizzle mode,
                                             uint32_t off, uint32_t base_offset_mode) {
    extern __shared__ uint8_t dyn[];
    const uint32_t S = tma_swizzle_span(mode), K = S / 2u;
    uint8_t *sa = dyn + tma_swizzle_phase0_pad(TMA_SWIZZLE_128B, tma_smem_addr(dyn));
    uint8_t *sb = sa + ROWS * 128u + 1024u; /* 1024-aligned too (ROWS * 128 is a multiple of 1024) */
    const uint32_t a0 = tma_smem_addr(sa), b0 = tma_smem_addr(sb);
    for (uint32_t i = threadIdx.x; i < ROWS * K; i += 128u) { /* element (r, k) at byte S r + 2 k, swizzled */
        const uint32_t at = tma_swizzle_addr(mode, a0 + (i / K) * S + (i % K) * 2u);
        *(uint16_t *)(sa + (at - a0)) = a[i];
    }
    for (uint32_t i = threadIdx.x; i < N * K; i += 128u) {
        const uint32_t at = tma_swizzle_addr(mode, b0 + (i / K) * S + (i % K) * 2u);
        *(uint16_t *)(sb + (at - b0)) = b[i];
    }
    __syncthreads();
    const uint32_t start = a0 + S * off;
    /* base offset 0: libtma's own descriptor at that row; else the same fields with the base offset set */
    const uint64_t da = base_offset_mode ? tma_wgmma_desc_pack(start, 16u, 8u * S, (start >> 7) & 7u,
                                                               tma_wgmma_layout_of(mode))
                                         : tma_wgmma_desc_kmajor(mode, start, S, 64u, 0u);
    const uint64_t db = tma_wgmma_desc_kmajor(mode, b0, S, N, 0u);
    float acc[32];
    for (int i = 0; i < 32; i++)
        acc[i] = 0.0f;
    tma_wgmma_fence();
    for (uint32_t kk = 0; kk < S / TMA_WGMMA_K_BYTES; kk++)
        tma_wgmma_m64n64k16_bf16(acc, tma_wgmma_desc_advance(da, kk * TMA_WGMMA_K_BYTES),
                                 tma_wgmma_desc_advance(db, kk * TMA_WGMMA_K_BYTES));
    tma_wgmma_commit();
    tma_wgmma_wait<0>();
    tma_wgmma_fence_regs(acc);
    const uint32_t warp = threadIdx.x / 32u, lane = threadIdx.x % 32u;
    for (uint32_t i = 0; i < 32u; i++) {
        const uint32_t row = 16u * warp + lane / 4u + 8u * ((i / 2u) % 2u), col = 8u * (i / 4u) + 2u * (lane % 4u) + i % 2u;
        d[row * N + col] = acc[i];
    }
}

static uint16_t bf16_of_int(int v) { /* small integers are exact in bf16: the top half of the fp32 bits */
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

int main(int argc, char **argv) {
    unsigned seed = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 1u;
    srand(seed);
    enum { KMAX = 64 };
    static int ai[ROWS * KMAX], bi[N * KMAX];
    static uint16_t ah[ROWS * KMAX], bh[N * KMAX];
    static float d[64 * N];
    uint16_t *ga, *gb;
    float *gd;
    CK(cudaMalloc(&ga, sizeof ah));
    CK(cudaMalloc(&gb, sizeof bh));
    CK(cudaMalloc(&gd, sizeof d));
    const size_t smem = 1024u + ROWS * 128u + 1024u + N * 128u;
    CK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    printf("wgmma_probe seed %u: rows off .. off + 63 of a swizzled tile through a descriptor at tile + S off\n", seed);
    const tma_swizzle modes[3] = {TMA_SWIZZLE_32B, TMA_SWIZZLE_64B, TMA_SWIZZLE_128B};
    int wrong_at_zero = 0; /* reads with base offset 0 that differ: what tma_wgmma_kmajor_ok relies on */
    for (int mi = 0; mi < 3; mi++) {
        const int S = (int)tma_swizzle_span(modes[mi]), K = S / 2;
        for (int i = 0; i < ROWS * K; i++)
            ai[i] = rand() % 7 - 3, ah[i] = bf16_of_int(ai[i]);
        for (int i = 0; i < N * K; i++)
            bi[i] = rand() % 7 - 3, bh[i] = bf16_of_int(bi[i]);
        CK(cudaMemcpy(ga, ah, sizeof ah, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(gb, bh, sizeof bh, cudaMemcpyHostToDevice));
        for (uint32_t off = 0; off < OFFS; off++)
            for (uint32_t mode = 0; mode < 2u; mode++) { /* mode 1: the base-offset field (start >> 7) & 7 */
                CK(cudaMemset(gd, 0xFF, sizeof d)); /* NaN: an element not written shows */
                probe<<<1, 128, smem>>>(ga, gb, gd, modes[mi], off, mode);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                CK(cudaMemcpy(d, gd, sizeof d, cudaMemcpyDeviceToHost));
                int bad = 0;
                for (int m = 0; m < 64; m++)
                    for (int n = 0; n < N; n++) {
                        long want = 0;
                        for (int k = 0; k < K; k++)
                            want += (long)ai[(off + m) * K + k] * bi[n * K + k];
                        bad += !(d[m * N + n] == (float)want);
                    }
                printf("%dB swizzle, off %2u (start %% 1024 = %4u), base_offset %-13s: %4d of %d elements differ\n",
                       S, off, (unsigned)(S * off % 1024u), mode ? "(start>>7)&7" : "0", bad, 64 * N);
                wrong_at_zero += mode == 0u && bad != 0;
            }
    }
    printf("wgmma_probe: %s\n", wrong_at_zero ? "a read with base offset 0 at a row of the tile differed (see above)"
                                                : "every read with base offset 0 at a row of the tile was exact");
    return wrong_at_zero ? 1 : 0;
}
