/* Conformance kernels for 1-D bulk copies and multicast loads: run them on the GPU and hand back what they wrote,
 * for tests/test_gpu_bulk.c to compare with the CPU model. C linkage. Built with TMA_CHECKED. */
#ifndef TESTS_BULK_CONFORMANCE_H
#define TESTS_BULK_CONFORMANCE_H

#include <stdint.h>

#include <cuda_runtime.h>

#include "tma/tensor.h"
#include "tma/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One block's copy: global_offset bytes into the global buffer, smem_offset bytes into the block's 1024-byte aligned
 *  arena, `bytes` long. */
typedef struct bulk_job {
    uint64_t global_offset;
    uint32_t smem_offset;
    uint32_t bytes;
} bulk_job;

/** One block per job (jobs: device memory): poison the arena (poison: device, arena_bytes), bulk-load the job, copy
 *  the arena to out + b * arena_bytes. Odd blocks first prefetch the range into L2 (tma_bulk_prefetch_l2): the bytes
 *  that land must not change. */
cudaError_t bconf_load(const uint8_t *global, const bulk_job *jobs, int n, const uint8_t *poison, uint32_t arena_bytes,
                       uint8_t *out);

/** One block per job: copy images + b * arena_bytes into the arena, then bulk-store the job (reduce < 0), or bulk-reduce
 *  it with (dtype, reduce), into global. Jobs must write disjoint ranges. */
cudaError_t bconf_store(uint8_t *global, const bulk_job *jobs, int n, const uint8_t *images, uint32_t arena_bytes,
                        tma_dtype dtype, int reduce);

/** One cluster of `cluster` blocks (2..8). Block r, when masks[r] >= 0 (host array of `cluster`), issues one multicast
 *  load with cta_mask = masks[r] into its arena at r * slot_bytes: a tiled box of t at coords[r] (tiled = 1), or
 *  bytes_each bytes of global + r * bytes_each (tiled = 0). Each block arms its barrier for tma_multicast_rx_bytes of
 *  the masks, waits, and copies its arena (poisoned first) to out + rank * arena_bytes. */
cudaError_t bconf_multicast(int cluster, const int32_t *masks, int tiled, const tma_tensor *t, const int32_t (*coords)[5],
                            const uint8_t *global, uint32_t bytes_each, uint32_t slot_bytes, const uint8_t *poison,
                            uint32_t arena_bytes, uint8_t *out);

/** Copies between the blocks of clusters: `clusters` clusters of `cluster` blocks (2..8). Block b's arena starts as
 *  images + b * arena_bytes; it sends jobs[b] (smem_offset: where in its own arena the bytes start; global_offset: where
 *  in the receiver's arena they land) to the next rank of its cluster, (rank + 1) % cluster, with
 *  tma_bulk_copy_cluster (reduce < 0) or tma_bulk_reduce_cluster of (dtype, reduce); the receiver arms its barrier for
 *  the bytes its sender's job names, waits, and copies its arena to out + b * arena_bytes. */
cudaError_t bconf_cluster(int cluster, int clusters, const bulk_job *jobs, const uint8_t *images, uint32_t arena_bytes,
                          tma_dtype dtype, int reduce, uint8_t *out);

/** Checked mode: issue one copy that breaks a rule (which: 0 bulk load of 24 bytes, 1 bulk store to global + 8,
 *  2 bulk reduce from a shared address 8 bytes off 16, 3 tiled reduce-store .min through t (an f32 map),
 *  4 multicast to mask 0x4 in a cluster of 2, 5 a copy to cluster rank 2 in a cluster of 2). Returns the launch's error (the trap). */
cudaError_t bconf_checked(int which, uint8_t *global, const tma_tensor *t);

#ifdef __cplusplus
}
#endif

#endif /* TESTS_BULK_CONFORMANCE_H */
