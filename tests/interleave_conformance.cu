/* Conformance kernel for interleaved maps (see interleave_conformance.h). One block per box; 128 threads fill and
 * drain the arena, thread 0 arms the barrier from the map's box facts and issues the copy. */
#include "interleave_conformance.h"

#include "tma/device.cuh"

#include "conformance_arena.cuh"

template <int Rank>
static __device__ void conf_il_issue(uint8_t *dst, const tma_tensor *t, uint64_t *bar, const int32_t (&c)[5]) {
    tma_mbar_expect_box(bar, t); /* the count under test: t->box.tx_bytes, from the descriptor */
    tma_load<Rank>(dst, t, bar, c);
}

__global__ void conf_il_load_kernel(const __grid_constant__ tma_tensor t, const int32_t (*coords)[5],
                                    const uint32_t *offsets, const uint8_t *poison, uint32_t arena_bytes,
                                    uint32_t wait_us, uint8_t *out, uint32_t *done) {
    extern __shared__ uint8_t dyn[];
    __shared__ uint64_t bar;
    __shared__ uint32_t completed;
    uint8_t *arena = conf_arena(dyn);
    const int b = blockIdx.x;

    conf_fill_arena_and_barrier(arena, poison, arena_bytes, &bar);

    if (threadIdx.x == 0) {
        const int32_t c[5] = {coords[b][0], coords[b][1], coords[b][2], coords[b][3], coords[b][4]};
        uint8_t *dst = arena + offsets[b];
        switch (t.box.rank) {
        case 3: conf_il_issue<3>(dst, &t, &bar, c); break;
        case 4: conf_il_issue<4>(dst, &t, &bar, c); break;
        default: conf_il_issue<5>(dst, &t, &bar, c); break;
        }
    }
    /* Every thread waits, bounded and never trapping: a load that does not complete is a test failure the host
     * reports, not a hang. */
    const uint64_t start = tma_globaltimer_ns();
    bool ok = false;
    while (!(ok = tma_mbar_try_wait(&bar, 0)) && tma_globaltimer_ns() - start < (uint64_t)wait_us * 1000u) {
    }
    if (!ok) { /* let a late copy land before the block (and its shared memory) goes */
        const uint64_t late = tma_globaltimer_ns();
        while (tma_globaltimer_ns() - late < 20000000u) {
        }
    }
    if (threadIdx.x == 0)
        completed = ok ? 1u : 0u;
    __syncthreads();

    for (uint32_t i = threadIdx.x; i < arena_bytes; i += blockDim.x)
        out[(size_t)b * arena_bytes + i] = arena[i];
    if (threadIdx.x == 0)
        done[b] = completed;
}

extern "C" cudaError_t conf_il_load(const tma_tensor *t, const int32_t (*coords)[5], const uint32_t *offsets, int n,
                                    const uint8_t *poison, uint32_t arena_bytes, uint32_t wait_us, uint8_t *out,
                                    uint32_t *done) {
    const size_t smem = (size_t)arena_bytes + 1024u;
    cudaError_t e = cudaFuncSetAttribute((const void *)conf_il_load_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess)
        return e;
    conf_il_load_kernel<<<n, 128, smem>>>(*t, coords, offsets, poison, arena_bytes, wait_us, out, done);
    e = cudaGetLastError();
    return e != cudaSuccess ? e : cudaDeviceSynchronize();
}
