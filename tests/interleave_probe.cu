/* The interleave probe's kernels (see interleave_probe.h). A measuring instrument, not library code: it uses
 * three mbarrier operations the device API has no function for (the raw word, complete_tx, test_wait), each
 * wrapped once below. No wait here can hang or trap: a timeout is reported. */
#include "interleave_probe.h"

#include "tma/device.cuh"

/* ---------------------------------------------------------------------------------------------
 * mbarrier operations of the instrument
 * ------------------------------------------------------------------------------------------- */

/* The raw 64-bit barrier word (opaque to PTX; read only to record it). */
static __device__ __forceinline__ uint64_t ilp_word(const uint64_t *bar) {
    uint64_t w;
    asm volatile("ld.volatile.shared.u64 %0, [%1];" : "=l"(w) : "r"(tma_smem_addr(bar)) : "memory");
    return w;
}

/* mbarrier.complete_tx: what the copy engine does per delivered byte, done by hand. */
static __device__ __forceinline__ void ilp_complete_tx(uint64_t *bar, uint32_t tx) {
    asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(tma_smem_addr(bar)), "r"(tx)
                 : "memory");
}

/* mbarrier.test_wait.parity: has the phase of parity `phase` completed? Never suspends. */
static __device__ __forceinline__ bool ilp_test_wait(uint64_t *bar, uint32_t phase) {
    uint32_t done;
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(tma_smem_addr(bar)), "r"(phase & 1u)
                 : "memory");
    return done != 0;
}

/* Wait at most wait_us for phase 0; returns whether it completed, and the time spent. */
static __device__ bool ilp_bounded_wait(uint64_t *bar, uint32_t wait_us, uint32_t *spent_us) {
    const uint64_t start = tma_globaltimer_ns();
    for (;;) {
        const bool done = tma_mbar_try_wait(bar, 0);
        const uint64_t now = tma_globaltimer_ns();
        if (done || now - start > (uint64_t)wait_us * 1000u) {
            *spent_us = (uint32_t)((now - start) / 1000u);
            return done;
        }
    }
}

/* Poll the barrier word until it has not changed for 200 us (at most 50 ms), then return it. Measured on an H200:
 * the raw word of a Hopper mbarrier reads 0 through ld.shared whatever its state, so this is in effect a 200 us
 * wait - far longer than any box of the probe takes to land (microseconds); the search that follows would see a
 * copy still in flight as a count below tma_box_tx_bytes, and none did. */
static __device__ uint64_t ilp_settle(const uint64_t *bar, uint32_t *spent_us) {
    const uint64_t start = tma_globaltimer_ns();
    uint64_t last = ilp_word(bar), changed = start;
    for (;;) {
        const uint64_t w = ilp_word(bar), now = tma_globaltimer_ns();
        if (w != last) {
            last = w;
            changed = now;
        } else if (now - changed > 200000u || now - start > 50000000u) {
            *spent_us = (uint32_t)((now - start) / 1000u);
            return w;
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * The probe kernel
 * ------------------------------------------------------------------------------------------- */

typedef struct ilp_params {
    int32_t coord[5];
    uint32_t arena_bytes;
    uint32_t poison_seed;
    uint32_t wait_us;
} ilp_params;

template <int Rank>
static __device__ void ilp_issue(uint8_t *dst, const tma_tensor *t, uint64_t *bar, const int32_t (&c)[5]) {
    tma_load<Rank>(dst, t, bar, c);
}

__global__ void ilp_kernel(const __grid_constant__ tma_tensor t, const ilp_params p, const uint32_t *arm,
                           const uint32_t *offsets, uint8_t *out, ilp_block_result *res) {
    extern __shared__ uint8_t dyn[];
    __shared__ uint64_t bar;
    const uint32_t a = tma_smem_addr(dyn);
    uint8_t *arena = dyn + ((1024u - a % 1024u) % 1024u); /* the model's buffers start 1024-aligned too */
    const int b = blockIdx.x;

    for (uint32_t i = threadIdx.x; i < p.arena_bytes; i += blockDim.x)
        arena[i] = ilp_poison(p.poison_seed, i);
    tma_fence_proxy_async(); /* the poison (generic proxy) before the copy's writes (async proxy) */
    if (threadIdx.x == 0) {
        tma_mbar_init(&bar, 1);
        tma_fence_mbar_init();
    }
    __syncthreads();

    if (threadIdx.x == 0) {
        ilp_block_result r;
        r.completed = 0;
        r.delivered = ~0u;
        r.early = 0;
        r.wait_us = 0;
        r.reserved = 0;
        r.word_init = ilp_word(&bar);
        const bool search = (arm[b] & ILP_SEARCH) != 0u;
        const uint32_t tx = arm[b] & ~ILP_SEARCH;
        tma_mbar_arrive_expect_tx(&bar, tx);
        r.word_armed = ilp_word(&bar);
        const int32_t c[5] = {p.coord[0], p.coord[1], p.coord[2], p.coord[3], p.coord[4]};
        uint8_t *dst = arena + offsets[b];
        switch (t.box.rank) {
        case 1: ilp_issue<1>(dst, &t, &bar, c); break;
        case 2: ilp_issue<2>(dst, &t, &bar, c); break;
        case 3: ilp_issue<3>(dst, &t, &bar, c); break;
        case 4: ilp_issue<4>(dst, &t, &bar, c); break;
        default: ilp_issue<5>(dst, &t, &bar, c); break;
        }
        if (!search)
            r.completed = ilp_bounded_wait(&bar, p.wait_us, &r.wait_us);
        r.word_settled = ilp_settle(&bar, &r.settle_us);
        if (search) {
            if (ilp_test_wait(&bar, 0)) {
                r.early = 1;
                r.completed = 1;
            } else {
                for (uint32_t k = 1; k <= tx; k++) {
                    ilp_complete_tx(&bar, 1);
                    if (ilp_test_wait(&bar, 0)) {
                        r.delivered = tx - k;
                        r.completed = 1;
                        break;
                    }
                }
            }
        }
        res[b] = r;
    }
    __syncthreads();
    if (out != nullptr)
        for (uint32_t i = threadIdx.x; i < p.arena_bytes; i += blockDim.x)
            out[(size_t)b * p.arena_bytes + i] = arena[i];
}

/* ---------------------------------------------------------------------------------------------
 * Launchers
 * ------------------------------------------------------------------------------------------- */

extern "C" cudaError_t ilp_run(const tma_tensor *t, const int32_t coord[5], int n, const uint32_t *arm,
                               const uint32_t *offsets, uint32_t arena_bytes, uint32_t poison_seed, uint32_t wait_us,
                               uint8_t *arenas, ilp_block_result *res) {
    uint32_t *darm = nullptr, *doff = nullptr;
    uint8_t *dout = nullptr;
    ilp_block_result *dres = nullptr;
    ilp_params p;
    for (int i = 0; i < 5; i++)
        p.coord[i] = coord[i];
    p.arena_bytes = arena_bytes;
    p.poison_seed = poison_seed;
    p.wait_us = wait_us;
    const size_t smem = (size_t)arena_bytes + 1024u;
    cudaError_t e =
        cudaFuncSetAttribute((const void *)ilp_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&darm, (size_t)n * sizeof *arm);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&doff, (size_t)n * sizeof *offsets);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&dres, (size_t)n * sizeof *res);
    if (e == cudaSuccess && arenas != nullptr)
        e = cudaMalloc((void **)&dout, (size_t)n * arena_bytes);
    if (e == cudaSuccess)
        e = cudaMemcpy(darm, arm, (size_t)n * sizeof *arm, cudaMemcpyHostToDevice);
    if (e == cudaSuccess)
        e = cudaMemcpy(doff, offsets, (size_t)n * sizeof *offsets, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        ilp_kernel<<<n, 128, smem>>>(*t, p, darm, doff, dout, dres);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    if (e == cudaSuccess)
        e = cudaMemcpy(res, dres, (size_t)n * sizeof *res, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess && arenas != nullptr)
        e = cudaMemcpy(arenas, dout, (size_t)n * arena_bytes, cudaMemcpyDeviceToHost);
    cudaFree(darm);
    cudaFree(doff);
    cudaFree(dres);
    cudaFree(dout);
    return e;
}
