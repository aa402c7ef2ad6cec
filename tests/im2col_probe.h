/* The im2col loads whose outcome the PTX ISA and TMA-FACTS leave open, one per child process of tests/im2col_probe.cu
 * (a load that faults takes its CUDA context with it): im2col offsets at and past the PTX ranges (rank 3 0..65535,
 * rank 4 0..255, rank 5 0..31), a negative channel start, a negative image index n. The gpu suite
 * (test_gpu_im2col, gpu_im2col/probe_*) and the probe build the same table from the same seed, so the parent can
 * model what the child's GPU wrote. Header-only, C. */
#ifndef TESTS_IM2COL_PROBE_H
#define TESTS_IM2COL_PROBE_H

#include <stdint.h>
#include <string.h>

#include "tma/tma.h"

enum i2c_probe_kind { I2C_PROBE_OFFSET, I2C_PROBE_CHANNEL, I2C_PROBE_N };

typedef struct i2c_probe_case {
    int kind;
    tma_im2col_desc d;      /* global_address: a stand-in; the image is i2c_probe_bytes */
    int32_t coord[5];
    uint16_t offset[3];
    uint32_t dim;           /* I2C_PROBE_OFFSET: the spatial dimension (0 = W) whose offset is probed */
    uint32_t bits;          /* I2C_PROBE_OFFSET: the width of the PTX range (16, 8, 5) */
} i2c_probe_case;

enum { I2C_PROBE_PPC = 8, I2C_PROBE_DST = 128, I2C_PROBE_MAX = 48 };

/* A rank-`rank` U16 image of `channels` channels (8 or 16: 16- or 32-byte pixels, each copy takes them all) with
 * the given spatial sizes (W first) and n images; bounding box = the image (corners 0), 8 pixels per column, no
 * swizzle. */
static inline tma_im2col_desc i2c_probe_desc(uint32_t rank, const uint64_t *spatial, uint64_t n, uint32_t channels) {
    tma_im2col_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = TMA_DTYPE_U16;
    d.rank = rank;
    d.global_address = (const void *)(uintptr_t)4096;
    d.global_dim[0] = channels;
    for (uint32_t i = 0; i + 2 < rank; i++)
        d.global_dim[i + 1] = spatial[i];
    d.global_dim[rank - 1] = n;
    uint64_t stride = 2u * channels;
    for (uint32_t i = 1; i < rank; i++) {
        d.global_stride[i - 1] = stride;
        stride *= d.global_dim[i];
    }
    d.channels_per_pixel = channels;
    d.pixels_per_column = I2C_PROBE_PPC;
    return d;
}

/* An offset case: offset[dim] = value at rank `rank`, the walk starting at `start` in that dimension (0 in the
 * others, and in W when dim != 0 the W box is exactly the column, so the walk never carries). Each reading of the
 * offset predicts different bytes: the image holds the start shifted by the full value (up to 1024), by the value
 * cut to `bits` bits (unsigned or signed), and at ranks 4 and 5 the other spatial dimensions hold any shift of
 * 0 .. 2^bits - 1 (an offset spilling into the next one's bits). */
static inline i2c_probe_case i2c_probe_offset_case(uint32_t rank, uint32_t dim, uint32_t value, uint32_t start) {
    i2c_probe_case c;
    memset(&c, 0, sizeof c);
    c.kind = I2C_PROBE_OFFSET;
    c.dim = dim;
    c.bits = rank == 3 ? 16u : rank == 4 ? 8u : 5u;
    const uint64_t others = rank == 3 ? 1u : (1u << c.bits) + 1u;
    uint64_t spatial[3] = {I2C_PROBE_PPC, others, others};
    const uint32_t reach = rank == 3 || value <= 1024u ? value : 1024u; /* rank 3: 16 bits, one dimension */
    spatial[dim] = (uint64_t)start + reach + I2C_PROBE_PPC + 1u;
    c.d = i2c_probe_desc(rank, spatial, 1, 8);
    c.coord[dim + 1] = (int32_t)start;
    c.offset[dim] = (uint16_t)value;
    return c;
}

/* A case starting at channel `c0` and image `n0`: 16 channels, so a start at -8 reads 8 channels before the
 * first and 8 of the image; the walk crosses from image n0 into n0 + 1 halfway. */
static inline i2c_probe_case i2c_probe_start_case(int kind, uint32_t rank, int32_t c0, int32_t n0) {
    i2c_probe_case c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    const uint64_t spatial[3] = {I2C_PROBE_PPC / 2, 1, 1};
    c.d = i2c_probe_desc(rank, spatial, 2, 16);
    c.coord[0] = c0;
    c.coord[rank - 1] = n0;
    return c;
}

/* The whole table; returns how many (at most I2C_PROBE_MAX). */
static inline int i2c_probe_cases(i2c_probe_case *out) {
    int n = 0;
    /* rank 3: 16-bit offsets; is 32768 .. 65535 read as a large shift or as a negative one? */
    static const uint32_t r3[] = {255, 256, 32767, 32768, 65535};
    for (unsigned k = 0; k < sizeof r3 / sizeof r3[0]; k++)
        out[n++] = i2c_probe_offset_case(3, 0, r3[k], 32768);
    /* rank 4: 0..255 in the PTX ISA */
    static const uint32_t r4[] = {128, 255, 256, 257, 384, 1000, 65535};
    for (unsigned k = 0; k < sizeof r4 / sizeof r4[0]; k++)
        out[n++] = i2c_probe_offset_case(4, 0, r4[k], 256);
    out[n++] = i2c_probe_offset_case(4, 1, 255, 256);
    out[n++] = i2c_probe_offset_case(4, 1, 256, 256);
    out[n++] = i2c_probe_offset_case(4, 1, 300, 256);
    /* rank 5: 0..31 in the PTX ISA */
    static const uint32_t r5[] = {16, 31, 32, 33, 48, 255, 65535};
    for (unsigned k = 0; k < sizeof r5 / sizeof r5[0]; k++)
        out[n++] = i2c_probe_offset_case(5, 0, r5[k], 32);
    for (uint32_t dim = 1; dim <= 2; dim++) {
        out[n++] = i2c_probe_offset_case(5, dim, 31, 32);
        out[n++] = i2c_probe_offset_case(5, dim, 32, 32);
        out[n++] = i2c_probe_offset_case(5, dim, 40, 32);
    }
    /* a negative channel start (on the 16-byte grid: 8 U16 channels) */
    out[n++] = i2c_probe_start_case(I2C_PROBE_CHANNEL, 3, -8, 0);
    out[n++] = i2c_probe_start_case(I2C_PROBE_CHANNEL, 4, -8, 0);
    out[n++] = i2c_probe_start_case(I2C_PROBE_CHANNEL, 4, -16, 0);
    out[n++] = i2c_probe_start_case(I2C_PROBE_CHANNEL, 4, -65536, 0);
    out[n++] = i2c_probe_start_case(I2C_PROBE_CHANNEL, 5, -8, 0);
    /* a negative n: image -1 then 0; -2 then -1; the most negative */
    out[n++] = i2c_probe_start_case(I2C_PROBE_N, 3, 0, -1);
    out[n++] = i2c_probe_start_case(I2C_PROBE_N, 4, 0, -1);
    out[n++] = i2c_probe_start_case(I2C_PROBE_N, 5, 0, -1);
    out[n++] = i2c_probe_start_case(I2C_PROBE_N, 4, 0, -2);
    out[n++] = i2c_probe_start_case(I2C_PROBE_N, 4, 0, INT32_MIN);
    return n;
}

/* Bytes of the image and the poison, the same in parent and child: splitmix64 of (seed, stream, index). */
static inline void i2c_probe_bytes(uint64_t seed, uint64_t stream, uint8_t *p, size_t n) {
    uint64_t x = seed ^ (stream * 0xD1B54A32D192ED03ull);
    for (size_t i = 0; i < n; i += 8) {
        x += 0x9E3779B97F4A7C15ull;
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        memcpy(&p[i], &z, n - i < 8 ? n - i : 8);
    }
}

/* Bytes from the image's address to the end of its last element. */
static inline size_t i2c_probe_extent(const tma_im2col_desc *d) {
    size_t e = (size_t)d->global_dim[0] * 2u; /* U16 */
    for (uint32_t i = 1; i < d->rank; i++)
        e += (size_t)(d->global_dim[i] - 1) * d->global_stride[i - 1];
    return e;
}

/* The child's arena: the load's shared memory at I2C_PROBE_DST, 128 bytes either side. */
static inline uint32_t i2c_probe_arena(const tma_im2col_desc *d) {
    return (uint32_t)(I2C_PROBE_DST + tma_im2col_smem_bytes(d) + 128u);
}

#endif /* TESTS_IM2COL_PROBE_H */
