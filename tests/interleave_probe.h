/* The interleave probe (tests/interleave_probe.cu, driven by tests/interleave_probe_main.c): loads through
 * interleaved tensor maps that never hang the block. Each block arms its mbarrier with its own expect-tx count,
 * issues one load into a poisoned shared arena, waits a bounded time without trapping and reports a timeout as
 * data. A "search" block instead measures the bytes the copy delivered: it arms a count larger than any box,
 * lets the copy settle, then completes the rest one byte at a time (mbarrier.complete_tx) until the phase
 * completes; delivered = armed - completed by hand.
 * C linkage, no CUDA header needed by the caller beyond cuda_runtime.h. */
#ifndef TESTS_INTERLEAVE_PROBE_H
#define TESTS_INTERLEAVE_PROBE_H

#include <stdint.h>

#include <cuda_runtime.h>

#include "tma/hd.h"
#include "tma/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bit 31 of a block's `arm` value: the block measures the delivered bytes (the low 31 bits are the count it
 *  arms, which must exceed what the copy delivers). */
#define ILP_SEARCH 0x80000000u

/** What one block saw. */
typedef struct ilp_block_result {
    uint32_t completed;  /**< the phase completed (within the wait, or by the search) */
    uint32_t delivered;  /**< search blocks: bytes the copy delivered; ~0u when not measured */
    uint32_t early;      /**< search blocks: the phase completed before the search began */
    uint32_t wait_us;    /**< microseconds spent in the bounded wait (non-search blocks) */
    uint32_t settle_us;  /**< microseconds until the barrier word stopped changing */
    uint32_t reserved;
    uint64_t word_init;    /**< the raw 64-bit mbarrier word after init (reads 0 on an H200, whatever the state) */
    uint64_t word_armed;   /**< ... after arrive.expect_tx, before the copy */
    uint64_t word_settled; /**< ... after the settling wait */
} ilp_block_result;

/** The poison of arena byte i: a function of a seed, so the replay can rebuild it. */
TMA_HD uint8_t ilp_poison(uint32_t seed, uint32_t i) {
    uint32_t x = (seed ^ 0x9E3779B9u) + i * 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return (uint8_t)x;
}

/** The tagged global buffer: 32-bit word w holds ILP_TAG(w), so a shared-memory word names its source. */
#define ILP_TAG(w) (0x40000000u + (uint32_t)(w))

/** One launch of `n` blocks, each loading the box at `coord` of map t (rank t->box.rank) into its own arena of
 *  arena_bytes (1024-byte aligned, poisoned with ilp_poison(poison_seed, .)) at offsets[b], armed with arm[b]
 *  bytes (ILP_SEARCH: measure). Non-search blocks wait at most wait_us. arenas (host, n * arena_bytes, may be
 *  NULL) and res (host, n) receive what each block saw.
 *  @return the first CUDA error of the launch and its completion */
cudaError_t ilp_run(const tma_tensor *t, const int32_t coord[5], int n, const uint32_t *arm, const uint32_t *offsets,
                    uint32_t arena_bytes, uint32_t poison_seed, uint32_t wait_us, uint8_t *arenas,
                    ilp_block_result *res);

#ifdef __cplusplus
}
#endif

#endif /* TESTS_INTERLEAVE_PROBE_H */
