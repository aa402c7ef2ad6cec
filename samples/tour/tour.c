/* tma-tour: libtma in one page, no GPU needed.
 *
 * What it shows, in order:
 *   1. a descriptor for a bf16 matrix with 128-byte swizzle, checked, and what a kernel must keep in step
 *      with it (expect-tx bytes, shared-memory bytes, row pitch, alignment, the CuTe swizzle);
 *   2. the CPU model loading one box of that matrix, partly out of bounds, at a shared-memory offset
 *      that is 128-byte but not 1024-byte aligned, printed as a grid: which logical 16-byte chunk of
 *      which row sits in each physical slot;
 *   3. the box read back through tma_swizzle_elem and compared with the matrix, element by element;
 *   4. three descriptors libtma refuses, with its reasons: two the driver refuses with a bare
 *      CUDA_ERROR_INVALID_VALUE, and one it accepts and then copies wrongly (docs/HARDWARE.md, "Where libtma is
 *      stricter than the driver");
 *   5. whether this machine can encode the map (needs the CUDA driver; says why not otherwise).
 *
 * Build and run:  cmake -B build && cmake --build build && ./build/samples/tma-tour
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tma/tma.h>

enum { ROWS = 100, COLS = 96, BOX_ROWS = 16, BOX_COLS = 64, SMEM_BASE = 384 };

static uint16_t matrix[ROWS][COLS]; /* bf16 bit patterns; value = row * 256 + col, easy to read back */

static void print_facts(const tma_tiled_desc *d) {
    uint32_t b = tma_swizzle_bits(d->swizzle);
    printf("  box            %u x %u %s (cols x rows)\n", d->box_dim[0], d->box_dim[1], tma_dtype_name(d->dtype));
    printf("  expect-tx      %zu bytes per copy (what arrive.expect_tx must announce)\n", tma_box_tx_bytes(d));
    printf("  shared memory  %zu bytes (%zu rows x %zu-byte pitch), %u-byte aligned destination\n",
           tma_box_smem_bytes(d), tma_box_rows(d), tma_box_row_pitch(d), TMA_SMEM_ALIGN);
    printf("  swizzle        %s = CuTe Swizzle<%u,4,3> on byte addresses, pattern repeats every %u bytes\n",
           tma_swizzle_name(d->swizzle), b, tma_swizzle_period(d->swizzle));
}

/* One line per 128-byte shared-memory line: for each physical 16-byte slot, the logical (row, chunk)
 * that the copy engine put there. */
static void print_smem_grid(const tma_tiled_desc *d, uint32_t base, uint32_t rows) {
    uint32_t pitch = (uint32_t)tma_box_row_pitch(d);
    printf("  smem line |");
    for (uint32_t slot = 0; slot < 8; slot++)
        printf(" slot%u", slot);
    printf("\n");
    for (uint32_t r = 0; r < rows; r++) {
        uint32_t owner[8];
        for (uint32_t chunk = 0; chunk < pitch / 16; chunk++) {
            uint32_t phys = tma_swizzle_addr(d->swizzle, base + r * pitch + chunk * 16);
            owner[(phys % 128) / 16] = chunk;
        }
        printf("  %9u |", base + r * pitch);
        for (uint32_t slot = 0; slot < 8; slot++)
            printf("  r%uc%u", r, owner[slot]);
        printf("\n");
    }
}

/* A descriptor the tour says libtma refuses; false (after saying so) if libtma accepts it, so that the tour fails
 * instead of printing TMA_OK under "refuses" when a rule changes. */
static bool show_rejection(const char *what, tma_tiled_desc d) {
    tma_diag diag;
    tma_status st = tma_check_tiled(&d, &diag);
    if (st == TMA_OK) {
        fprintf(stderr, "tma-tour: libtma accepts the descriptor shown as refused (%s): update section 4\n", what);
        return false;
    }
    printf("  %-38s -> %s\n     %s\n", what, tma_status_name(st), diag.message);
    return true;
}

int main(void) {
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            matrix[r][c] = (uint16_t)(r * 256 + c);

    printf("== 1. A descriptor: %d x %d bf16 matrix, %d x %d boxes, 128-byte swizzle\n", ROWS, COLS, BOX_ROWS,
           BOX_COLS);
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_BF16, matrix, ROWS, COLS, sizeof matrix[0], BOX_ROWS, BOX_COLS,
                                   TMA_SWIZZLE_128B);
    tma_diag diag;
    if (tma_check_tiled(&d, &diag) != TMA_OK) {
        fprintf(stderr, "tma-tour: %s: %s\n", tma_status_name(diag.status), diag.message);
        return 1;
    }
    print_facts(&d);

    /* Box at (col 64, row 90): columns 96..127 and rows 100..105 lie outside and are filled with zero. */
    const int32_t coord[5] = {64, 90};
    const uint32_t base = SMEM_BASE; /* 128-aligned, not 1024-aligned: the swizzle starts mid-phase */
    static uint8_t smem[SMEM_BASE + BOX_ROWS * 128];
    memset(smem, 0xEE, sizeof smem);
    tma_status st = tma_model_load_tiled(&d, coord, smem, sizeof smem, base);
    if (st != TMA_OK) {
        fprintf(stderr, "tma-tour: model load failed: %s\n", tma_status_name(st));
        return 1;
    }
    printf("\n== 2. The model's shared-memory image of the box at (col %d, row %d), stored at offset %u\n", coord[0],
           coord[1], base);
    printf("  (rC: box row r, logical 16-byte chunk C = columns 8C..8C+7; the first 8 rows)\n");
    print_smem_grid(&d, base, 8);

    printf("\n== 3. Reading it back through tma_swizzle_elem\n");
    uint32_t checked = 0, filled = 0, wrong = 0;
    for (uint32_t r = 0; r < BOX_ROWS; r++)
        for (uint32_t c = 0; c < BOX_COLS; c++) {
            uint16_t got;
            memcpy(&got, smem + tma_swizzle_elem(d.swizzle, base, (uint32_t)tma_box_row_pitch(&d), 2, r, c), 2);
            int gr = coord[1] + (int)r, gc = coord[0] + (int)c;
            uint16_t want = (gr < ROWS && gc < COLS) ? matrix[gr][gc] : 0;
            wrong += got != want;
            filled += !(gr < ROWS && gc < COLS);
            checked++;
        }
    printf("  %u elements compared, %u of them out-of-bounds fill, %u wrong\n", checked, filled, wrong);
    if (wrong) {
        fprintf(stderr, "tma-tour: the model and the swizzle helper disagree\n");
        return 1;
    }

    printf("\n== 4. Descriptors libtma refuses, and why\n");
    tma_tiled_desc wide = d;
    wide.box_dim[0] = 128;
    tma_tiled_desc ragged = d;
    ragged.global_stride[0] = COLS * 2 + 8;
    /* The driver encodes this one, and the copy engine ignores element_stride[0] without interleave: a kernel
     * written for every other column would get every column (docs/HARDWARE.md). */
    tma_tiled_desc every_other = d;
    every_other.element_stride[0] = 2;
    if (!show_rejection("box wider than the swizzle span", wide) ||
        !show_rejection("row stride not a multiple of 16", ragged) ||
        !show_rejection("every other column (driver: accepted)", every_other))
        return 1;

    printf("\n== 5. Encoding the map on this machine (a tma_tensor: the map and its box facts)\n");
    tma_tensor t;
    st = tma_tensor_make(&t, &d, &diag);
    if (st == TMA_OK)
        printf("  encoded (a real kernel would pass a device pointer, not this host array); a kernel expects "
               "%u bytes per copy\n", t.box.tx_bytes);
    else
        printf("  %s: %s\n", tma_status_name(st), diag.message);
    return 0;
}
