/* libtma: the types every layer shares - the enums, the status codes, the tiled descriptor and the
 * diagnostic - for the host API (tma.h), the rules (rules.h), the device API and the kernels.
 *
 * Every enum value equals the CUDA driver's enum of the same meaning (CUtensorMapDataType,
 * CUtensorMapSwizzle, ...), so a tma_* value can be passed to cuTensorMapEncodeTiled as it is.
 * src/encode.c checks that equality at compile time against the cuda.h it is built with.
 * This header needs neither cuda.h nor a GPU, so host-only C code and CUDA device code can use it. */
#ifndef TMA_TYPES_H
#define TMA_TYPES_H

#include <stdint.h>

/** Element types of a tiled tensor map (CUtensorMapDataType). The three packed sub-byte types that
 *  follow TF32_FTZ in cuda.h (16U4_ALIGN8B = 13 ...) belong to compute capability 10.x and are not
 *  supported: tma_check_tiled rejects them with TMA_ERR_DTYPE. */
typedef enum tma_dtype {
    TMA_DTYPE_U8 = 0,
    TMA_DTYPE_U16 = 1,
    TMA_DTYPE_U32 = 2,
    TMA_DTYPE_I32 = 3,
    TMA_DTYPE_U64 = 4,
    TMA_DTYPE_I64 = 5,
    TMA_DTYPE_F16 = 6,
    TMA_DTYPE_F32 = 7,
    TMA_DTYPE_F64 = 8,
    TMA_DTYPE_BF16 = 9,
    TMA_DTYPE_F32_FTZ = 10,
    TMA_DTYPE_TF32 = 11,
    TMA_DTYPE_TF32_FTZ = 12,
    TMA_DTYPE_COUNT_ = 13,        /**< number of supported types; not a type */
    TMA_DTYPE_LAST_DRIVER_ = 15   /**< the driver's last type (16U6_ALIGN16B); 13..15 are the packed ones */
} tma_dtype;

/** Shared-memory swizzle (CUtensorMapSwizzle). Hopper (sm_90) implements NONE, 32B, 64B and 128B;
 *  the three 128B_ATOM modes (CUDA 12.8+) are for compute capability 10.x and tma_check_tiled
 *  rejects them with TMA_ERR_SWIZZLE_UNSUPPORTED. */
typedef enum tma_swizzle {
    TMA_SWIZZLE_NONE = 0,
    TMA_SWIZZLE_32B = 1,
    TMA_SWIZZLE_64B = 2,
    TMA_SWIZZLE_128B = 3,
    TMA_SWIZZLE_128B_ATOM_32B = 4,
    TMA_SWIZZLE_128B_ATOM_32B_FLIP_8B = 5,
    TMA_SWIZZLE_128B_ATOM_64B = 6
} tma_swizzle;

/** Interleaved global layouts (CUtensorMapInterleave), e.g. NC/8HWC8. */
typedef enum tma_interleave {
    TMA_INTERLEAVE_NONE = 0,
    TMA_INTERLEAVE_16B = 1,
    TMA_INTERLEAVE_32B = 2
} tma_interleave;

/** L2 fetch granularity (CUtensorMapL2promotion). */
typedef enum tma_l2_promotion {
    TMA_L2_NONE = 0,
    TMA_L2_64B = 1,
    TMA_L2_128B = 2,
    TMA_L2_256B = 3
} tma_l2_promotion;

/** What a load writes for elements outside the tensor (CUtensorMapFloatOOBfill).
 *  TMA_OOB_NAN is CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA: floating-point types only.
 *  Measured on an H200: it writes the 16-bit pattern 0x7FF7 repeated, whatever the float type. */
typedef enum tma_oob_fill {
    TMA_OOB_ZERO = 0,
    TMA_OOB_NAN = 1
} tma_oob_fill;

/** Reduction of a reduce-store (cp.reduce.async.bulk{.tensor} .add / .min / .max / .inc / .dec / .and / .or
 *  / .xor). Which element types each one takes, tiled and 1-D, is a rule (tma/rules.h: TMA_REDUCE_FORMS). */
typedef enum tma_reduce {
    TMA_REDUCE_ADD = 0,
    TMA_REDUCE_MIN = 1,
    TMA_REDUCE_MAX = 2,
    TMA_REDUCE_INC = 3, /**< unsigned wrap at the shared value: g = g >= s ? 0 : g + 1 */
    TMA_REDUCE_DEC = 4, /**< g = (g == 0 || g > s) ? s : g - 1 */
    TMA_REDUCE_AND = 5,
    TMA_REDUCE_OR = 6,
    TMA_REDUCE_XOR = 7,
    TMA_REDUCE_COUNT_ = 8 /**< number of reductions; not one */
} tma_reduce;

/* ---------------------------------------------------------------------------------------------
 * Status codes. One X-macro table generates the enum, tma_status_name() and tma_strerror().
 * Values are stable once published: append, never renumber.
 * ------------------------------------------------------------------------------------------- */
#define TMA_STATUS_MAP(X)                                                                           \
    X(OK, 0, "success")                                                                             \
    X(ERR_NULL_ARG, 1, "a required pointer argument is NULL")                                       \
    X(ERR_DTYPE, 2, "unknown or unsupported element type")                                          \
    X(ERR_RANK, 3, "tensor rank out of range")                                                      \
    X(ERR_GLOBAL_ADDRESS_NULL, 4, "global address is NULL")                                         \
    X(ERR_GLOBAL_ADDRESS_ALIGN, 5, "global address misaligned")                                     \
    X(ERR_GLOBAL_DIM, 6, "global dimension out of range")                                           \
    X(ERR_GLOBAL_STRIDE_ALIGN, 7, "global stride misaligned")                                       \
    X(ERR_GLOBAL_STRIDE_RANGE, 8, "global stride too large")                                        \
    X(ERR_GLOBAL_STRIDE_OVERLAP, 9, "two coordinates of the tensor reach the same bytes")           \
    X(ERR_GLOBAL_EXTENT, 10, "tensor extent overflows the 64-bit address space")                    \
    X(ERR_BOX_DIM, 11, "box dimension out of range")                                                \
    X(ERR_BOX_INNER_BYTES, 12, "box inner dimension not a multiple of 16 bytes")                    \
    X(ERR_BOX_SWIZZLE_SPAN, 13, "box inner dimension wider than the swizzle span")                  \
    X(ERR_BOX_SMEM, 14, "box larger than a block's shared memory")                                  \
    X(ERR_ELEMENT_STRIDE, 15, "element stride out of range")                                        \
    X(ERR_INTERLEAVE, 16, "unknown interleave mode")                                                \
    X(ERR_INTERLEAVE_RANK, 17, "interleaved layout needs rank >= 3")                                \
    X(ERR_INTERLEAVE_SWIZZLE, 18, "interleave and swizzle modes do not go together (no longer reported)") \
    X(ERR_SWIZZLE, 19, "unknown swizzle mode")                                                      \
    X(ERR_SWIZZLE_UNSUPPORTED, 20, "swizzle mode not implemented on Hopper")                        \
    X(ERR_L2_PROMOTION, 21, "unknown L2 promotion")                                                 \
    X(ERR_OOB_FILL, 22, "unknown out-of-bounds fill")                                               \
    X(ERR_OOB_FILL_NAN_INTEGER, 23, "NaN fill requested for an integer type")                       \
    X(ERR_COORD_ALIGN, 24, "innermost coordinate not 16-byte aligned")                              \
    X(ERR_COORD_NEGATIVE_STORE, 25, "negative coordinate in a store")                               \
    X(ERR_SMEM_ALIGN, 26, "shared-memory address misaligned")                                           \
    X(ERR_SMEM_BOUNDS, 27, "box does not fit in the shared-memory buffer")                          \
    X(ERR_UNSUPPORTED, 28, "not supported by libtma")                                               \
    X(ERR_NO_DRIVER, 29, "CUDA driver library not found")                                           \
    X(ERR_DRIVER, 30, "the CUDA driver returned an error")                                          \
    X(ERR_MAP_ALIGN, 31, "CUtensorMap object not 64-byte aligned")                                  \
    X(ERR_ARG, 32, "argument outside the range the function accepts")                               \
    X(ERR_CUDA, 33, "a CUDA runtime call failed")                                                   \
    X(ERR_DEVICE, 34, "no Hopper (sm_90) GPU is the current device")                                \
    X(ERR_BULK_SIZE, 35, "bulk copy size not a multiple of 16 bytes, or too large")                 \
    X(ERR_REDUCE_TYPE, 36, "no such reduction for this element type")                               \
    X(ERR_MULTICAST_MASK, 37, "multicast mask names no block, or a block outside the cluster")      \
    X(ERR_IM2COL_CORNER, 38, "im2col bounding-box corner out of range")                             \
    X(ERR_IM2COL_BOX_EMPTY, 39, "im2col bounding box has no pixel")                                 \
    X(ERR_IM2COL_CHANNELS, 40, "im2col channels per pixel out of range")                            \
    X(ERR_IM2COL_PIXELS, 41, "im2col pixels per column out of range")                               \
    X(ERR_IM2COL_START, 42, "im2col start coordinate outside the bounding box")                     \
    X(ERR_IM2COL_OFFSET, 43, "im2col offset out of range")

typedef enum tma_status {
#define TMA_STATUS_ENUM_(name, value, text) TMA_##name = value,
    TMA_STATUS_MAP(TMA_STATUS_ENUM_)
#undef TMA_STATUS_ENUM_
} tma_status;

/* ---------------------------------------------------------------------------------------------
 * Descriptor of a tiled tensor map. A plain struct: fill it with designated initializers; fields
 * left out are zero, and zero is the common choice for every optional field.
 * ------------------------------------------------------------------------------------------- */
typedef struct tma_tiled_desc {
    tma_dtype dtype;              /**< element type */
    uint32_t rank;                /**< number of dimensions, 1..5 */
    void *global_address;         /**< device address (encode) or host address (model); 16-byte aligned */
    uint64_t global_dim[5];       /**< elements per dimension, dimension 0 innermost; 1..2^32 */
    uint64_t global_stride[4];    /**< bytes between consecutive indices of dimensions 1..rank-1, in any
                                       order; two coordinates may reach the same bytes only in a map that is
                                       never stored through */
    uint32_t box_dim[5];          /**< elements per copy along each dimension; 1..256 */
    uint32_t element_stride[5];   /**< 1..8, 0 means 1; element_stride[0] is ignored without interleave */
    tma_interleave interleave;    /**< interleaved global layout (NC/8HWC8 and the like); usually NONE */
    tma_swizzle swizzle;          /**< shared-memory swizzle of the box */
    tma_l2_promotion l2_promotion; /**< L2 fetch granularity */
    tma_oob_fill oob_fill;        /**< what loads write for elements outside the tensor */
    uint32_t flags;               /**< TMA_DESC_* bits */
} tma_tiled_desc;

/* tma_tiled_desc.flags. Values are append-only. */

/** Accepted for compatibility; no longer needed, and no longer has any effect. It let tma_check_tiled accept a view
 *  in which two coordinates reach the same bytes, for a map only loaded from. Such views are now accepted for every
 *  map (the driver encodes them, and a load through one is well defined: it reads some bytes more than once),
 *  and refused where a map is stored through (TMA_DESC_STORE, tma_check_store_coords, the model's stores and
 *  reduce-stores, the device's checked mode), where two writes to one address race. */
#define TMA_DESC_ALLOW_OVERLAP 1u

/** A template map: encoded on the host, then its fields (the global address, dimensions, strides, ...) replaced on
 *  the device before any copy goes through it (tensormap.replace: tma_builder_from_template in tma/tensormap.cuh),
 *  the way grouped GEMMs build one map per group. Its global address may be NULL and its strides placeholders (zero,
 *  say): with this flag tma_check_tiled does not apply the rules a placeholder cannot meet (the address not NULL;
 *  with TMA_DESC_STORE, the overlap rule), and nowhere else are they lifted. Every other rule holds, and the map
 *  built from a template is checked as a real one (the builder and every edit drop the flag, so a NULL address no
 *  edit replaced is refused there). tma_tensor_make marks its box facts TMA_BOX_TEMPLATE: tma_check_coords, the CPU
 *  model and the device's checked mode refuse a copy through the template itself. */
#define TMA_DESC_TEMPLATE 2u

/** A map that will be stored through (tiled stores and reduce-stores): tma_check_tiled, tma_encode_tiled and
 *  tma_tensor_make also apply the store-side rules, so the map is refused when it is made, with the dimensions
 *  named, not at its first store. Today that is the overlap rule: no two coordinates may reach the same bytes (a
 *  store through such a view writes some bytes twice and races with itself). Without the flag the same rules are
 *  applied to each store instead (tma_check_store_coords, the model, checked mode through TMA_BOX_LOAD_ONLY). */
#define TMA_DESC_STORE 4u

/* ---------------------------------------------------------------------------------------------
 * Descriptor of an im2col tensor map (cuTensorMapEncodeIm2col): an image tensor, channels innermost,
 * from which one copy gathers pixels_per_column pixels of channels_per_pixel channels each, walking the
 * image inside the bounding box (tma/detail/rules.h, "im2col maps", says how). Loads only: TMA has no im2col store.
 * ------------------------------------------------------------------------------------------- */
typedef struct tma_im2col_desc {
    tma_dtype dtype;              /**< element type */
    uint32_t rank;                /**< 3, 4 or 5: {C, W, N}, {C, W, H, N}, {C, W, H, D, N} (dim 0 = channels) */
    const void *global_address;   /**< device address (encode) or host address (model); 16-byte aligned */
    uint64_t global_dim[5];       /**< elements per dimension, channels first; 1..2^32 */
    uint64_t global_stride[4];    /**< bytes, for dims 1..rank-1 */
    int32_t pixel_box_lower[3];   /**< the driver's pixelBoxLowerCorner, spatial dims, innermost (W) first */
    int32_t pixel_box_upper[3];   /**< pixelBoxUpperCorner, likewise */
    uint32_t channels_per_pixel;  /**< channels each pixel brings, 1..256; times the element size a multiple of 16 */
    uint32_t pixels_per_column;   /**< pixels (shared-memory rows) one copy brings, 1..1024 */
    uint32_t element_stride[5];   /**< the walk's step per dimension, 1..8, 0 means 1; [0] is ignored by loads */
    tma_interleave interleave;    /**< interleaved global layout; usually NONE */
    tma_swizzle swizzle;          /**< shared-memory swizzle of the rows */
    tma_l2_promotion l2_promotion; /**< L2 fetch granularity */
    tma_oob_fill oob_fill;        /**< what loads write for pixels and channels outside the tensor */
} tma_im2col_desc;

/** Bytes of tma_diag's message, terminator included. */
#define TMA_DIAG_MESSAGE_BYTES 512

/** What a check found: the first broken rule's status and a message that names the field, its value,
 *  the limit and a fix. status == TMA_OK and message "" when nothing is wrong. */
typedef struct tma_diag {
    tma_status status;                    /**< TMA_OK or the broken rule's status */
    char message[TMA_DIAG_MESSAGE_BYTES]; /**< field, value, limit and fix; "" for TMA_OK */
} tma_diag;

#endif /* TMA_TYPES_H */
