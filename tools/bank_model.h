/* libtma tools: a CPU model of Hopper's 32 shared-memory banks (4 bytes each).
 *
 * THE RULE MODELLED (calibrated: tests/calibrate-banks.sh replays the requests on an H200 under ncu and every
 * predicted conflict and wavefront count matched, 28 of 28 patterns; docs/LAYOUTS.md):
 *   - Bank of a byte address a: (a / 4) % 32. Two accesses conflict when they touch the same bank in
 *     different 4-byte words; accesses to the same word are served together (broadcast).
 *   - A warp request of N-byte accesses (N = 1, 2, 4, 8 or 16) is split into phases of 128 bytes:
 *       N <= 4:  one phase, all 32 threads;
 *       N == 8:  two phases, threads 0-15 and 16-31 (half-warps);
 *       N == 16: four phases, threads 0-7, 8-15, 16-23, 24-31 (quarter-warps; ldmatrix too: each
 *                8x8 matrix is 8 row addresses of 16 bytes, one quarter-warp's worth).
 *   - A phase takes as many wavefronts as the largest number of distinct 4-byte words that its
 *     active threads touch in any one bank (at least 1 if any thread is active, 0 if none is).
 *   - wavefronts(request) = sum over phases; ideal(request) = number of phases with an active
 *     thread; conflicts = wavefronts - ideal.
 * An N-byte access must be N-byte aligned (as the hardware requires); the model does not check it. */
#ifndef TOOLS_BANK_MODEL_H
#define TOOLS_BANK_MODEL_H

#include <stdint.h>

#define BANK_COUNT 32u
#define BANK_BYTES 4u
#define WARP_LANES 32u

/** One warp request: each of 32 threads reads access_bytes at addr[t] if bit t of active_mask is set. */
typedef struct bank_request {
    uint32_t addr[WARP_LANES];
    uint32_t active_mask;
    uint32_t access_bytes; /* 1, 2, 4, 8 or 16 */
} bank_request;

/** What the model says about one request (or a sum of them). */
typedef struct bank_cost {
    uint32_t requests;
    uint32_t wavefronts;
    uint32_t ideal;
    uint32_t conflicts;    /* wavefronts - ideal */
    uint32_t worst_ways;   /* the largest wavefronts count of any one phase (1 = conflict-free) */
} bank_cost;

/** Bank of a byte address: (addr / 4) % 32. */
uint32_t bank_of(uint32_t addr);

/** Threads per phase for an access size: 32 for <= 4 bytes, 16 for 8, 8 for 16; 0 for any other size. */
uint32_t bank_phase_threads(uint32_t access_bytes);

/** Cost of one request under the rule above. An unsupported access size gives an all-zero cost. */
bank_cost bank_request_cost(const bank_request *req);

/** Add b into a (requests, wavefronts, ideal and conflicts summed; worst_ways the maximum). */
void bank_cost_add(bank_cost *a, bank_cost b);

#endif /* TOOLS_BANK_MODEL_H */
