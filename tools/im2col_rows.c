/* The rows of an im2col load, read back from the CPU model (im2col_rows.h). Each pass fills the tensor with one
 * digit of every element's index (value = digit + 1: 0 is the model's zero fill, all ones marks shared bytes the
 * load leaves untouched), loads it through tma_model_load_im2col, and accumulates the digits it finds. */
#include "im2col_rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tma/detail/rules.h" /* tma_rule_round_up (libtma's internals: tools ship with it) */

/* The host tensor the tool is willing to build. */
#define MAX_TENSOR_BYTES (256u << 20)

/* What one element of shared memory holds after the passes. */
enum { HOLDS_DATA, HOLDS_FILL, UNTOUCHED };

typedef struct cell {
    int kind;
    uint64_t index; /* HOLDS_DATA: the element's linear index, channels innermost */
} cell;

typedef struct model_run {
    tma_im2col_desc d; /* the descriptor with an unsigned type of the same size and zero fill */
    uint32_t esize, base;
    uint64_t elements, digit_base; /* digit_base: values per pass (2^(8 esize) - 2; 0 for 8-byte elements) */
    size_t smem_bytes;
    unsigned char *tensor, *smem;
    cell *cells; /* one per element of the load's shared memory */
} model_run;

static const tma_dtype unsigned_of_size[9] = {[1] = TMA_DTYPE_U8, [2] = TMA_DTYPE_U16, [4] = TMA_DTYPE_U32,
                                              [8] = TMA_DTYPE_U64};

static uint64_t element_offset(const tma_im2col_desc *d, uint64_t index, uint32_t esize) {
    uint64_t off = (index % d->global_dim[0]) * esize;
    index /= d->global_dim[0];
    for (uint32_t i = 1; i < d->rank; i++) {
        off += (index % d->global_dim[i]) * d->global_stride[i - 1];
        index /= d->global_dim[i];
    }
    return off;
}

/* Bytes from the address to the end of the last element; 0 when over MAX_TENSOR_BYTES. */
static uint64_t tensor_extent(const tma_im2col_desc *d, uint32_t esize, uint64_t *elements) {
    uint64_t extent = d->global_dim[0] * esize, n = d->global_dim[0];
    for (uint32_t i = 1; i < d->rank; i++) {
        n *= d->global_dim[i]; /* each factor is at most 2^32 and n at most 2^28 before it: no overflow */
        if (n > MAX_TENSOR_BYTES || d->global_stride[i - 1] > MAX_TENSOR_BYTES)
            return 0;
        extent += (d->global_dim[i] - 1) * d->global_stride[i - 1];
        if (extent > MAX_TENSOR_BYTES)
            return 0;
    }
    *elements = n;
    return extent;
}

static void store_value(unsigned char *p, uint64_t v, uint32_t esize) {
    for (uint32_t b = 0; b < esize; b++)
        p[b] = (unsigned char)(v >> (8u * b)); /* little-endian, as the device */
}

static uint64_t load_value(const unsigned char *p, uint32_t esize) {
    uint64_t v = 0;
    for (uint32_t b = 0; b < esize; b++)
        v |= (uint64_t)p[b] << (8u * b);
    return v;
}

/* Pass `pass`: the tensor holds digit `pass` of every index, plus one. */
static void fill_digits(model_run *m, uint32_t pass) {
    for (uint64_t i = 0; i < m->elements; i++) {
        uint64_t v = i;
        for (uint32_t p = 0; p < pass && m->digit_base; p++)
            v /= m->digit_base;
        store_value(m->tensor + element_offset(&m->d, i, m->esize), (m->digit_base ? v % m->digit_base : v) + 1,
                    m->esize);
    }
}

static tma_status run_pass(model_run *m, const int32_t coord[5], const uint16_t offset[3], uint32_t pass,
                           uint64_t weight) {
    fill_digits(m, pass);
    memset(m->smem, 0xff, m->smem_bytes);
    const tma_status st = tma_model_load_im2col(&m->d, coord, offset, m->smem, m->smem_bytes, m->base);
    if (st != TMA_OK)
        return st;
    const uint64_t all_ones = m->esize == 8 ? UINT64_MAX : (UINT64_C(1) << (8u * m->esize)) - 1u;
    for (size_t e = 0; e < (m->smem_bytes - m->base) / m->esize; e++) {
        const uint64_t v = load_value(m->smem + m->base + e * m->esize, m->esize);
        cell *c = &m->cells[e];
        c->kind = v == all_ones ? UNTOUCHED : v == 0 ? HOLDS_FILL : HOLDS_DATA;
        if (c->kind == HOLDS_DATA)
            c->index += (v - 1) * weight;
    }
    return TMA_OK;
}

/* Every pass, from digit 0 up, until the digits cover every index. */
static tma_status run_passes(model_run *m, const int32_t coord[5], const uint16_t offset[3]) {
    uint64_t weight = 1;
    for (uint32_t pass = 0;; pass++) {
        const tma_status st = run_pass(m, coord, offset, pass, weight);
        if (st != TMA_OK || m->digit_base == 0 || (m->elements - 1) / weight < m->digit_base)
            return st;
        weight *= m->digit_base;
    }
}

/* ---------------------------------------------------------------------------------------------
 * Printing
 * ------------------------------------------------------------------------------------------- */

/* The pixel coordinates (n, d, h, w) and channel of an element index; -1 for a dimension the rank lacks. */
static void decode_index(const tma_im2col_desc *d, uint64_t index, int64_t pixel[4], uint64_t *channel) {
    *channel = index % d->global_dim[0];
    index /= d->global_dim[0];
    int64_t spatial[3] = {-1, -1, -1};
    for (uint32_t i = 1; i + 1 < d->rank; i++) {
        spatial[i - 1] = (int64_t)(index % d->global_dim[i]);
        index /= d->global_dim[i];
    }
    pixel[0] = (int64_t)index, pixel[1] = spatial[2], pixel[2] = spatial[1], pixel[3] = spatial[0];
}

static void print_dim(int64_t v) {
    if (v < 0)
        printf("    -");
    else
        printf(" %4lld", (long long)v);
}

/* The logical chunk each physical 16-byte slot of row `row` holds: its number, f (fill), . (untouched). */
static void print_slots(const model_run *m, uint32_t row, uint32_t pitch, int32_t c0) {
    const uint32_t per_slot = TMA_SWIZZLE_CHUNK_BYTES / m->esize; /* a slot is one 16-byte chunk of the swizzle */
    for (uint32_t s = 0; s < pitch / TMA_SWIZZLE_CHUNK_BYTES; s++) {
        const cell *c = &m->cells[(row * pitch) / m->esize + s * per_slot];
        if (c->kind != HOLDS_DATA) {
            printf(" %2s", c->kind == HOLDS_FILL ? "f" : ".");
            continue;
        }
        int64_t pixel[4];
        uint64_t ch;
        decode_index(&m->d, c->index, pixel, &ch);
        printf(" %2lld", (long long)(((int64_t)ch - c0) * m->esize / 16));
    }
}

static void print_row(const model_run *m, uint32_t row, uint32_t pitch, int32_t c0) {
    const cell *cells = &m->cells[(row * pitch) / m->esize];
    uint64_t lo = UINT64_MAX, hi = 0, filled = 0;
    int64_t pixel[4] = {-1, -1, -1, -1};
    for (uint32_t e = 0; e < pitch / m->esize; e++) {
        uint64_t ch;
        if (cells[e].kind == HOLDS_FILL)
            filled++;
        if (cells[e].kind != HOLDS_DATA)
            continue;
        decode_index(&m->d, cells[e].index, pixel, &ch);
        lo = ch < lo ? ch : lo;
        hi = ch > hi ? ch : hi;
    }
    printf("%4u %6u", row, m->base + row * pitch);
    if (lo == UINT64_MAX) {
        printf("  %-37s|", "filled (outside the image)");
    } else {
        for (int i = 0; i < 4; i++)
            print_dim(pixel[i]);
        printf("  %4llu..%-4llu", (unsigned long long)lo, (unsigned long long)hi);
        if (filled)
            printf(" +%-4llu |", (unsigned long long)filled);
        else
            printf("       |");
    }
    print_slots(m, row, pitch, c0);
    printf("\n");
}

static void print_rows(const model_run *m, const int32_t coord[5], const uint16_t offset[3]) {
    const tma_box_info b = tma_im2col_box_info_of(&m->d);
    printf("im2col load at coord");
    for (uint32_t i = 0; i < m->d.rank; i++)
        printf("%s%d", i ? "," : " ", coord[i]);
    printf(", offsets");
    for (uint32_t i = 0; i + 2 < m->d.rank; i++)
        printf("%s%u", i ? "," : " ", offset[i]);
    printf(", shared memory at %u\n", m->base);
    printf("each row: the input pixel (n, d, h, w) and the channels it holds (+k: k channels filled); then the\n"
           "logical 16-byte chunk of the row in each physical slot (f: filled, .: untouched), from the model\n\n");
    printf(" row   addr    n    d    h    w  channels         | slots 0..%u\n",
           b.row_pitch / TMA_SWIZZLE_CHUNK_BYTES - 1u);
    for (uint32_t r = 0; r < b.rows; r++)
        print_row(m, r, b.row_pitch, coord[0]);
}

/* ---------------------------------------------------------------------------------------------
 * Setup
 * ------------------------------------------------------------------------------------------- */

static tma_status unsupported(tma_diag *diag, const char *why) {
    if (diag) {
        diag->status = TMA_ERR_UNSUPPORTED;
        snprintf(diag->message, sizeof diag->message, "%s", why);
    }
    return TMA_ERR_UNSUPPORTED;
}

static void release(model_run *m) {
    free(m->tensor);
    free(m->smem);
    free(m->cells);
}

tma_status im2col_rows_print(const tma_im2col_desc *d, const int32_t coord[5], const uint16_t offset[3], uint32_t base,
                             tma_diag *diag) {
    const tma_status st = tma_check_im2col_coords_diag(d, coord, offset, diag);
    if (st != TMA_OK)
        return st;
    if (d->interleave != TMA_INTERLEAVE_NONE)
        return unsupported(diag, "interleaved im2col maps are not modelled, so not drawn");
    model_run m = {.d = *d, .esize = (uint32_t)tma_dtype_size(d->dtype), .base = base};
    m.d.dtype = unsigned_of_size[m.esize];
    m.d.oob_fill = TMA_OOB_ZERO;
    m.digit_base = m.esize == 8 ? 0 : (UINT64_C(1) << (8u * m.esize)) - 2u;
    const uint64_t extent = tensor_extent(d, m.esize, &m.elements);
    if (extent == 0)
        return unsupported(diag, "the tensor is larger than 256 MiB: too large to draw on the host");
    m.smem_bytes = base + tma_im2col_smem_bytes(d);
    m.tensor = aligned_alloc(TMA_SMEM_ALIGN, tma_rule_round_up(extent, TMA_SMEM_ALIGN));
    m.smem = aligned_alloc(TMA_SMEM_ALIGN, tma_rule_round_up(m.smem_bytes, TMA_SMEM_ALIGN));
    m.cells = calloc(tma_im2col_smem_bytes(d) / m.esize, sizeof *m.cells);
    m.d.global_address = m.tensor;
    tma_status run = m.tensor && m.smem && m.cells ? run_passes(&m, coord, offset) : unsupported(diag, "out of memory");
    if (run == TMA_OK)
        print_rows(&m, coord, offset);
    release(&m);
    return run;
}
