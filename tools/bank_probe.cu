/* tma-bank-probe: replay on the GPU the warp requests that tma-layout's bank model priced, so that ncu
 * can count what the hardware does with them (tests/calibrate-banks.sh compares the two).
 *
 *   tma-layout --swizzle 128B --dtype f32 --box 32,32 --requests req.txt
 *   ncu --clock-control none --csv --metrics <wavefront and conflict counters> tma-bank-probe req.txt
 *
 * The file holds blocks "P <index> <load|ldmatrix> <wavefronts> <ideal> <conflicts>" (the model's
 * prediction) followed by lines "R <bytes> <active-mask> <32 addresses>". Each block becomes one
 * launch of one warp that issues exactly those requests: a shared load of <bytes> per active lane, or
 * one ldmatrix.x4 per request. It prints each block's prediction, one line per launch, in launch order. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "tma/swizzle.h"

/* A failing CUDA call prints file:line, the call and the error, and exits (a tool's own check). */
#define CUDA_CHECK(call)                                                                            \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "tma-bank-probe: %s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,      \
                    cudaGetErrorString(e_));                                                        \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

/* One named function per shared-memory instruction the probe issues (asm volatile: issued exactly as
 * written, never merged or widened by the compiler). */
static __device__ __forceinline__ uint32_t ld_shared_b32(uint32_t a) {
    uint32_t v;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(a));
    return v;
}
static __device__ __forceinline__ uint32_t ld_shared_v2_b32(uint32_t a) {
    uint32_t x, y;
    asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];" : "=r"(x), "=r"(y) : "r"(a));
    return x ^ y;
}
static __device__ __forceinline__ uint32_t ld_shared_v4_b32(uint32_t a) {
    uint32_t x, y, z, w;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(a));
    return x ^ y ^ z ^ w;
}
static __device__ __forceinline__ uint32_t ldmatrix_x4(uint32_t a) {
    uint32_t x, y, z, w;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(x), "=r"(y), "=r"(z), "=r"(w)
                 : "r"(a));
    return x ^ y ^ z ^ w;
}

__global__ void replay(const uint32_t *addr, const uint32_t *mask, int n, int bytes, int ldmatrix, uint32_t *sink) {
    extern __shared__ uint8_t dyn[];
    const uint32_t lane = threadIdx.x;
    uint32_t base = (uint32_t)__cvta_generic_to_shared(dyn);
    base += tma_swizzle_phase0_pad(TMA_SWIZZLE_128B, base); /* banks see address % 128; phase 0 of every swizzle */
    uint32_t acc = 0;
    for (int r = 0; r < n; r++) {
        uint32_t a = base + addr[r * 32 + lane];
        if (ldmatrix)
            acc ^= ldmatrix_x4(a);
        else if ((mask[r] >> lane) & 1u)
            acc ^= bytes == 4 ? ld_shared_b32(a) : bytes == 8 ? ld_shared_v2_b32(a) : ld_shared_v4_b32(a);
    }
    sink[lane] = acc;
}

struct block {
    int index, ldmatrix, bytes;
    unsigned wavefronts, ideal, conflicts;
    std::vector<uint32_t> addr, mask;
};

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: tma-bank-probe REQUESTS_FILE (written by tma-layout --requests)\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        fprintf(stderr, "tma-bank-probe: cannot open %s\n", argv[1]);
        return 2;
    }
    std::vector<block> blocks;
    char kind[16];
    while (fscanf(f, " %15s", kind) == 1) {
        if (strcmp(kind, "P") == 0) {
            block b{};
            char op[16];
            if (fscanf(f, "%d %15s %u %u %u", &b.index, op, &b.wavefronts, &b.ideal, &b.conflicts) != 5)
                break;
            b.ldmatrix = strcmp(op, "ldmatrix") == 0;
            blocks.push_back(b);
        } else if (strcmp(kind, "R") == 0 && !blocks.empty()) {
            unsigned bytes, mask, a;
            if (fscanf(f, "%u %u", &bytes, &mask) != 2)
                break;
            blocks.back().bytes = (int)bytes;
            blocks.back().mask.push_back(mask);
            for (int l = 0; l < 32 && fscanf(f, "%u", &a) == 1; l++)
                blocks.back().addr.push_back(a);
        } else {
            fprintf(stderr, "tma-bank-probe: %s: unexpected '%s'\n", argv[1], kind);
            return 2;
        }
    }
    fclose(f);

    uint32_t *sink;
    CUDA_CHECK(cudaMalloc(&sink, 32 * sizeof(uint32_t)));
    CUDA_CHECK(cudaFuncSetAttribute(replay, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    for (const block &b : blocks) {
        int n = (int)b.mask.size();
        uint32_t top = 0;
        for (uint32_t a : b.addr)
            top = a > top ? a : top;
        if (b.ldmatrix)
            for (uint32_t m : b.mask)
                if (m != 0xFFFFFFFFu) {
                    fprintf(stderr, "tma-bank-probe: pattern %d: ldmatrix needs all 32 lanes\n", b.index);
                    return 2;
                }
        uint32_t *daddr, *dmask;
        CUDA_CHECK(cudaMalloc(&daddr, b.addr.size() * sizeof(uint32_t)));
        CUDA_CHECK(cudaMalloc(&dmask, b.mask.size() * sizeof(uint32_t)));
        CUDA_CHECK(cudaMemcpy(daddr, b.addr.data(), b.addr.size() * sizeof(uint32_t), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(dmask, b.mask.data(), b.mask.size() * sizeof(uint32_t), cudaMemcpyHostToDevice));
        replay<<<1, 32, top + 16 + TMA_SWIZZLE_PERIOD_128B>>>(daddr, dmask, n, b.bytes, b.ldmatrix, sink);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        printf("pattern %d %s requests %d predicted wavefronts %u ideal %u conflicts %u\n", b.index,
               b.ldmatrix ? "ldmatrix" : "load", n, b.wavefronts, b.ideal, b.conflicts);
        cudaFree(daddr);
        cudaFree(dmask);
    }
    cudaFree(sink);
    return 0;
}
