/* Kernels that build or change tensor maps on the device (see tensormap_conformance.h). One block per job; warp 0
 * builds and publishes the map, thread 0 copies through it, 128 threads fill and drain the arena. */
#include "tensormap_conformance.h"

#include "tma/device.cuh"
#include "tma/tensormap.cuh"

/* The arena starts at the first 1024-byte aligned shared address of the dynamic allocation (the model's buffer
 * is 1024-aligned too, so an arena offset has the same swizzle phase). */
static __device__ uint8_t *tm_arena(uint8_t *dyn) {
    const uint32_t a = tma_smem_addr(dyn);
    return dyn + ((1024u - a % 1024u) % 1024u);
}

/* The 128 bytes of a map, copied with ordinary stores (a map in global memory starting from a template or zeros). */
static __device__ void tm_copy_map(tma_map *dst, const tma_map *src) {
    for (int i = 0; i < 16; i++)
        dst->opaque[i] = src ? src->opaque[i] : 0u;
}

/* Thread 0 of warp 0: edit the map in global memory in place, then release it. Returns the rules' status. */
static __device__ int tm_edit_in_global(const tm_job &job, const tma_tensor *tmpl, const tma_tiled_desc *tmpl_desc,
                                        const tma_map_edit *edits, tma_tensor *slot) {
    tma_tiled_desc desc = job.start == TM_FROM_ZERO ? tma_rule_zero_map_desc() : *tmpl_desc;
    tm_copy_map(&slot->map, job.start == TM_FROM_ZERO ? nullptr : &tmpl->map);
    for (uint32_t i = 0; i < job.edit_count; i++)
        tma_map_edit_in_step(&slot->map, &desc, edits[job.first_edit + i]);
    const int st = (int)tma_map_check(&desc, nullptr);
    if (st == TMA_OK) /* in checked mode an invalid map traps here: the device check test wants its status */
        tma_map_publish_in_place(slot, &desc);
    return st;
}

/* Thread 0 of warp 0: start the shared builder and apply the edits (as descriptor edits, or raw operands). */
static __device__ int tm_edit_in_builder(const tm_job &job, const tma_tensor *tmpl, const tma_tiled_desc *tmpl_desc,
                                         const tma_map_edit *edits, tma_map_builder *b) {
    if (job.start == TM_FROM_ZERO)
        tma_builder_from_zero(b);
    else
        tma_builder_from_template(b, tmpl, tmpl_desc);
    for (uint32_t i = 0; i < job.edit_count; i++) {
        const tma_map_edit e = edits[job.first_edit + i];
        if (job.edit_mode == TM_EDIT_RAW)
            tma_map_replace_raw(&b->map, (tma_map_field)e.field, e.dim, e.value);
        else
            tma_builder_edit(b, e);
    }
    return job.edit_mode == TM_EDIT_RAW ? (int)TMA_OK : (int)tma_builder_check(b, nullptr);
}

template <int Rank>
static __device__ void tm_load(uint8_t *dst, const tma_tensor *t, uint64_t *bar, const int32_t (&c)[5]) {
    tma_mbar_expect_box(bar, t);
    tma_load<Rank>(dst, t, bar, c);
}

template <int Rank>
static __device__ void tm_store(const tma_tensor *t, const uint8_t *src, const int32_t (&c)[5]) {
    tma_store<Rank>(t, src, c);
    tma_store_commit();
    tma_store_wait<0>();
}

/* Thread 0: copy through the published map (loads into the arena, one at a time, or one store). */
static __device__ void tm_copies(const tm_job &job, const tma_tensor *slot, const int32_t (*coords)[5],
                                 const uint32_t *offsets, uint8_t *arena, uint64_t *bar) {
    tma_map_acquire(&slot->map);
    for (uint32_t k = 0; k < (job.store ? 1u : job.boxes); k++) {
        const uint32_t box = job.box0 + k;
        const int32_t c[5] = {coords[box][0], coords[box][1], coords[box][2], coords[box][3], coords[box][4]};
        uint8_t *smem = arena + offsets[box];
#define TM_COPY_(N)                                                                                            \
    do {                                                                                                       \
        if (job.store)                                                                                         \
            tm_store<N>(slot, smem, c);                                                                        \
        else                                                                                                   \
            tm_load<N>(smem, slot, bar, c);                                                                    \
    } while (0)
        TMA_FOR_RANK(slot->box.rank, TM_COPY_);
#undef TM_COPY_
        if (!job.store)
            tma_mbar_wait(bar, k & 1u);
    }
}

__global__ void tm_jobs_kernel(const tm_job *jobs, const tma_tensor *tmpls, const tma_tiled_desc *tmpl_descs,
                               const tma_map_edit *edits, const int32_t (*coords)[5], const uint32_t *offsets,
                               const uint8_t *poison, const uint8_t *image, uint32_t arena_bytes, tma_tensor *slots,
                               int *status, uint8_t *out) {
    extern __shared__ uint8_t dyn[];
    __shared__ tma_map_builder b;
    __shared__ uint64_t bar;
    const tm_job job = jobs[blockIdx.x];
    tma_tensor *slot = &slots[blockIdx.x];
    uint8_t *arena = tm_arena(dyn);
    const uint8_t *fill = job.store ? image : poison;
    for (uint32_t i = threadIdx.x; i < arena_bytes; i += blockDim.x)
        arena[i] = fill[i];
    tma_fence_proxy_async(); /* the arena's ordinary writes before the copy engine's reads and writes */

    if (threadIdx.x < 32) { /* warp 0 builds and publishes */
        if (threadIdx.x == 0) {
            status[blockIdx.x] = job.edit_mode == TM_EDIT_GLOBAL
                                     ? tm_edit_in_global(job, &tmpls[job.tmpl], &tmpl_descs[job.tmpl], edits, slot)
                                     : tm_edit_in_builder(job, &tmpls[job.tmpl], &tmpl_descs[job.tmpl], edits, &b);
            tma_mbar_init(&bar, 1);
            tma_fence_mbar_init();
        }
        __syncwarp();
        if (job.edit_mode == TM_EDIT_BUILDER)
            tma_builder_publish(&b, slot);
        else if (job.edit_mode == TM_EDIT_RAW) { /* the template's box facts: raw edits keep the box */
            if (threadIdx.x == 0)
                slot->box = tmpls[job.tmpl].box;
            tma_map_publish(&slot->map, &b.map);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0 && (job.boxes > 0 || job.store))
        tm_copies(job, slot, coords, offsets, arena, &bar);
    __syncthreads();
    if (!job.store)
        for (uint32_t i = threadIdx.x; i < arena_bytes; i += blockDim.x)
            out[(size_t)blockIdx.x * arena_bytes + i] = arena[i];
}

static cudaError_t tm_finish(void) {
    cudaError_t e = cudaGetLastError();
    return e != cudaSuccess ? e : cudaDeviceSynchronize();
}

extern "C" cudaError_t tm_run_jobs(const tm_job *jobs, int njobs, const tma_tensor *tmpls,
                                   const tma_tiled_desc *tmpl_descs, const tma_map_edit *edits,
                                   const int32_t (*coords)[5], const uint32_t *offsets, const uint8_t *poison,
                                   const uint8_t *image, uint32_t arena_bytes, tma_tensor *slots, int *status,
                                   uint8_t *out) {
    const size_t smem = arena_bytes + 1024;
    cudaError_t e = cudaFuncSetAttribute(tm_jobs_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess)
        return e;
    tm_jobs_kernel<<<njobs, 128, smem>>>(jobs, tmpls, tmpl_descs, edits, coords, offsets, poison, image, arena_bytes,
                                         slots, status, out);
    return tm_finish();
}

/* ---------------------------------------------------------------------------------------------
 * Fence experiments
 * ------------------------------------------------------------------------------------------- */

__global__ void tm_stale_kernel(tma_tensor *map, const void *x, const void *y, int iters, int acquire, int *stale,
                                int *wrong) {
    __shared__ alignas(128) uint8_t box[128];
    __shared__ uint64_t bar;
    if (threadIdx.x != 0)
        return;
    tma_mbar_init(&bar, 1);
    tma_fence_mbar_init();
    int n_stale = 0, n_wrong = 0;
    for (int it = 0; it < iters; it++) {
        const void *want = it % 2 ? y : x;
        tma_map_apply_edit(&map->map, tma_edit(TMA_FIELD_GLOBAL_ADDRESS, 0, (uint64_t)(uintptr_t)want));
        tma_map_release();
        if (acquire)
            tma_map_acquire(&map->map);
        tma_mbar_arrive_expect_tx(&bar, 16);
        tma_load_2d(box, map, &bar, 0, 0);
        tma_mbar_wait(&bar, (uint32_t)it & 1u);
        const uint8_t got = box[0], want_byte = it % 2 ? 0x22 : 0x11, other = it % 2 ? 0x11 : 0x22;
        n_stale += got == other;
        n_wrong += got != want_byte && got != other;
    }
    *stale = n_stale;
    *wrong = n_wrong;
}

extern "C" cudaError_t tm_stale_reads(tma_tensor *map, const void *x, const void *y, int iters, int acquire,
                                      int *stale, int *wrong) {
    tm_stale_kernel<<<1, 32>>>(map, x, y, iters, acquire, stale, wrong);
    return tm_finish();
}

__constant__ tma_tensor tm_constant_map;

/* Load the box at (0, 0) of a 2-D map at t into shared memory and copy `bytes` of it out. */
static __device__ void tm_load_one(const tma_tensor *t, int acquire, int prefetch, uint8_t *out, uint32_t bytes) {
    extern __shared__ uint8_t dyn[];
    __shared__ uint64_t bar;
    uint8_t *tile = tm_arena(dyn);
    if (threadIdx.x == 0) {
        tma_mbar_init(&bar, 1);
        tma_fence_mbar_init();
        if (acquire)
            tma_map_acquire(&t->map);
        if (prefetch)
            tma_map_prefetch(&t->map);
        tma_mbar_expect_box(&bar, t);
        tma_load_2d(tile, t, &bar, 0, 0);
    }
    __syncthreads();
    tma_mbar_wait(&bar, 0);
    for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x)
        out[i] = tile[i];
}

__global__ void tm_load_param(const __grid_constant__ tma_tensor t, int prefetch, uint8_t *out, uint32_t bytes) {
    tm_load_one(&t, 0, prefetch, out, bytes);
}
__global__ void tm_load_constant(int prefetch, uint8_t *out, uint32_t bytes) {
    tm_load_one(&tm_constant_map, 0, prefetch, out, bytes);
}
__global__ void tm_load_global(const tma_tensor *t, int acquire, int prefetch, uint8_t *out, uint32_t bytes) {
    tm_load_one(t, acquire, prefetch, out, bytes);
}

extern "C" cudaError_t tm_load_from(int where, const tma_tensor *host_map, void *global_bytes, int acquire,
                                    int prefetch, uint8_t *out, uint32_t bytes) {
    const size_t smem = bytes + 1024;
    cudaError_t e = cudaSuccess;
    if (where == TM_MAP_PARAM) {
        tm_load_param<<<1, 128, smem>>>(*host_map, prefetch, out, bytes);
    } else if (where == TM_MAP_CONSTANT) {
        e = cudaMemcpyToSymbol(tm_constant_map, host_map, sizeof *host_map);
        if (e == cudaSuccess)
            tm_load_constant<<<1, 128, smem>>>(prefetch, out, bytes);
    } else {
        e = cudaMemcpy(global_bytes, host_map, sizeof *host_map, cudaMemcpyHostToDevice);
        if (e == cudaSuccess)
            tm_load_global<<<1, 128, smem>>>((const tma_tensor *)global_bytes, acquire, prefetch, out, bytes);
    }
    return e != cudaSuccess ? e : tm_finish();
}
