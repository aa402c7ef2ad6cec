/* Kernels that build or change tensor maps on the device and copy through them (tensormap_conformance.cu), for
 * tests/test_gpu_tensormap.c. C linkage. Built with TMA_CHECKED: publishing checks every rule. */
#ifndef TESTS_TENSORMAP_CONFORMANCE_H
#define TESTS_TENSORMAP_CONFORMANCE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "tma/rules.h"
#include "tma/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a block starts its map. */
enum { TM_FROM_TEMPLATE = 0, TM_FROM_ZERO = 1 };

/** How a block applies its edits. */
enum {
    TM_EDIT_BUILDER = 0, /* tma_builder_edit on a staging map in shared memory, then tma_builder_publish */
    TM_EDIT_GLOBAL = 1,  /* tma_map_apply_edit on the map in global memory, then tma_map_release */
    TM_EDIT_RAW = 2,     /* tma_map_replace_raw(field, dim, value as the operand) in shared memory, then published
                            with the template's box facts (probes of the bare instruction) */
};

/** What one block does: start its map (from tmpl / tmpl_desc, or zeros), apply edits[first .. first + count),
 *  publish it into slots[b], acquire it, and load `boxes` boxes (coords[box0 ..], arena offsets offsets[box0 ..])
 *  into an arena poisoned from `poison`; or, with store != 0, store one box from `image` (coords[box0]). */
typedef struct tm_job {
    int start;           /* TM_FROM_* */
    int edit_mode;       /* TM_EDIT_* */
    uint32_t first_edit; /* into the edits array */
    uint32_t edit_count;
    uint32_t box0;       /* into coords / offsets */
    uint32_t boxes;      /* loads (0: build only) */
    int store;           /* 1: store one box of image through the map instead of loading */
    uint32_t tmpl;       /* index of the template (tensor and descriptor) */
} tm_job;

/** Run one block per job. slots (device, one tma_tensor per job) receive the built maps and box facts; status
 *  (device, one per job) the device-side tma_builder_check of the final descriptor (or TMA_OK for raw edits);
 *  out (device, arena_bytes per job) the arenas after the loads. image: device, arena_bytes (stores).
 *  @return the first CUDA error of the launch and its completion */
cudaError_t tm_run_jobs(const tm_job *jobs, int njobs, const tma_tensor *tmpls, const tma_tiled_desc *tmpl_descs,
                        const tma_map_edit *edits, const int32_t (*coords)[5], const uint32_t *offsets,
                        const uint8_t *poison, const uint8_t *image, uint32_t arena_bytes, tma_tensor *slots,
                        int *status, uint8_t *out);

/** Stale reads: one thread changes the global address of the map in global memory `map` between buffers x and
 *  y (rows of 16-byte values 0x11.. and 0x22..; a 2-D u8 map of 16 x 1 boxes), `iters` times, publishing with
 *  the release fence, and after each change loads one box: with the acquire fence (acquire != 0) or without.
 *  *stale (device) receives how many loads delivered the other buffer's bytes, *wrong how many neither.
 *  @return the first CUDA error of the launch and its completion */
cudaError_t tm_stale_reads(tma_tensor *map, const void *x, const void *y, int iters, int acquire, int *stale,
                           int *wrong);

/** Where tm_load_from places a host-encoded map. */
enum { TM_MAP_PARAM = 0, TM_MAP_CONSTANT = 1, TM_MAP_GLOBAL = 2 };

/** Load the box at (0, 0) of a 2-D map placed as a kernel parameter, in __constant__, or in global memory
 *  written by the host at global_bytes (device; any alignment, to measure what the instructions need), into out
 *  (device, bytes). acquire: the acquire fence first (global only); prefetch: prefetch.tensormap first.
 *  @return the first CUDA error of the launch and its completion */
cudaError_t tm_load_from(int where, const tma_tensor *host_map, void *global_bytes, int acquire, int prefetch,
                         uint8_t *out, uint32_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* TESTS_TENSORMAP_CONFORMANCE_H */
