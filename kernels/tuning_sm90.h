/* Private to libtma_kernels (and its tests): the tuning constants of the kernels on Hopper (sm_90), one line each
 * with where it was measured. The measurements themselves are entries of the lab record (docs/lab/); a constant
 * tuned again is changed here, with its new entry. Plain C: the CPU-model pipelines and the tests read them too.
 * Not installed. */
#ifndef KERNELS_TUNING_SM90_H
#define KERNELS_TUNING_SM90_H

/* ---- tma_permute (permute_tiles.h, permute.cu) ---- */
/* COPY box bytes: a plain TMA copy with 256 x 32 fp32 boxes reached 94.7% of a device-to-device copy (H200,
 * docs/HARDWARE.md "Speed landmarks"). */
#define PM_COPY_BOX_BYTES 32768u
#define PM_COPY_STAGES 4u /* COPY load stages (H200, docs/lab/permute.md "Design notes with their measurements") */
/* TRANSPOSE input stages and output buffers (H200, the standalone transpose kernel, docs/lab/transpose.md "The
 * standalone kernel (until 2026-11-22)"). */
#ifndef PM_TR_STAGES
#define PM_TR_STAGES 4u
#endif
#ifndef PM_TR_OUT_BUFFERS
#define PM_TR_OUT_BUFFERS 3u
#endif
/* Lines of 128 bytes in a TRANSPOSE tile: 256 for every tile lost on 11 cases (H200, docs/lab/permute.md "Tile
 * height"). */
#ifndef PM_TILE_LINES
#define PM_TILE_LINES 128u
#endif
/* Lines of a tall tile (few channels, 2-byte thread-stored): bf16 NCHW -> NHWC C = 8 96-99% of a copy against 71-73%
 * at 128 (H200, docs/lab/permute.md "Few channels: short and packed tiles", "Whole chunks, tall bf16 tiles, few
 * slabs"). */
#define PM_TALL_TILE_LINES 256u
/* TRANSPOSE tile order: bands of this many tile columns (H200, the standalone transpose's sweep, docs/lab/
 * transpose.md "The standalone kernel (until 2026-11-22)"). */
#define PM_DEFAULT_GROUP 8u

/* ---- tma_conv2d's plan (conv.cu, conv_estimate_us): a cost model fitted to the sweeps of docs/lab/conv.md "The
 * plan's choices" (H200, ResNet-50's 3x3 layers at batch 32 and 128, every tile x schedule) ---- */
#define CONV_STAGE_US_64 0.45  /* a stage of a 128 x 64 tile, us */
#define CONV_STAGE_US_128 0.55 /* of a 128 x 128 tile */
#define CONV_STAGE_US_256 0.69 /* of a 128 x 256 tile */
#define CONV_FM_STAGE_US 0.60  /* of the filter-major 192 x 128 tile (the sweep with it, seed 1795387602) */
#define CONV_TILE_US 3.0       /* each tile a block finishes, per 128 x 256 outputs: epilogue and turn (same sweep) */
#define CONV_SHARED_STAGE 1.2  /* a stream-K or split-K stage, in stages (every SM loading at once) */
#define CONV_SK_PARTIAL_US 3.5 /* a stream-K owner's read of one helper's partial tile, us */
/* split-K's fixup in all, us: 5.5-6.6 traced (H200, GM_TRACE, docs/lab/conv.md "Split-K's fixup, taken apart") */
#define CONV_SPLIT_FIXUP_US 6.0

#endif /* KERNELS_TUNING_SM90_H */
