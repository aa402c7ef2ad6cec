/* tma-explain: check a TMA tiled descriptor given on the command line and say what it means.
 *
 *   tma-explain --dtype bf16 --dims 4096,4096 --box 64,128 --swizzle 128B
 *
 * Prints every rule the descriptor breaks (tma_check_tiled_all; each message names the fix), and for a
 * valid one the facts a kernel must keep in step with it. --json prints the same as one JSON object.
 * Exit status: 0 valid, 1 invalid, 2 bad usage; each with a one-line message on stderr. No GPU needed. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tma/tma.h"

#define MAX_DIAGS 32
/* A 256-byte aligned stand-in for a device address, used when --address is not given. */
#define DEFAULT_ADDRESS 0x7f0000000000ull

static const char *const usage_text =
    "usage: tma-explain --dims D0,D1,... [options]\n"
    "\n"
    "Check a TMA tiled tensor-map descriptor (the fields of cuTensorMapEncodeTiled) and explain it.\n"
    "Dimension 0 is the innermost (contiguous) one and comes first in every list.\n"
    "\n"
    "options:\n"
    "  --dtype T          element type: u8 u16 u32 i32 u64 i64 f16 f32 f64 bf16 f32_ftz tf32 tf32_ftz\n"
    "                     (default bf16)\n"
    "  --dims D0,D1,...   global dimensions in elements, 1 to 5 of them (required; sets the rank)\n"
    "  --strides S1,...   global strides in bytes of dimensions 1..rank-1 (default: dense rows, each row\n"
    "                     rounded up to 16 bytes)\n"
    "  --box B0,B1,...    box dimensions in elements, one per dimension (default: min(D, 64) each, and\n"
    "                     B0 at most one swizzle span)\n"
    "  --estrides E0,...  element strides, one per dimension (default 1,...)\n"
    "  --swizzle MODE     none 32B 64B 128B (also 128B_atom_32B 128B_atom_32B_flip_8B 128B_atom_64B,\n"
    "                     which Hopper lacks) (default none)\n"
    "  --interleave MODE  none 16B 32B (default none)\n"
    "  --l2 MODE          none 64B 128B 256B (default none)\n"
    "  --oob MODE         zero nan (default zero)\n"
    "  --address ADDR     global address (default 0x7f0000000000, a 256-byte aligned stand-in)\n"
    "  --allow-overlap    set TMA_DESC_ALLOW_OVERLAP (a map that is only loaded from)\n"
    "  --json             print one JSON object instead of text\n"
    "  --help             this text\n"
    "\n"
    "exit status: 0 valid, 1 invalid (every broken rule is listed, each with its fix), 2 bad usage\n"
    "\n"
    "examples:\n"
    "  tma-explain --dtype bf16 --dims 4096,4096 --box 64,128 --swizzle 128B\n"
    "  tma-explain --dtype bf16 --dims 4096,4096 --strides 8192 --box 128,64 --swizzle 128B   # too wide\n"
    "  tma-explain --dtype f32 --dims 1000,1000 --strides 4000 --box 32,32 --oob nan --json\n"
    "  tma-explain --dtype u8 --dims 64,64,8 --box 32,32,4 --interleave 32B --swizzle 32B\n";

/* ---------------------------------------------------------------------------------------------
 * Parsing
 * ------------------------------------------------------------------------------------------- */

static uint32_t to_u32(const char *opt, uint64_t v) {
    if (v > UINT32_MAX)
        cli_bad_usage("%s: %llu does not fit in 32 bits", opt, (unsigned long long)v);
    return (uint32_t)v;
}

static const char *const interleave_names[] = {"none", "16B", "32B"};
static const char *const l2_names[] = {"none", "64B", "128B", "256B"};
static const char *const oob_names[] = {"zero", "nan"};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---------------------------------------------------------------------------------------------
 * Output helpers
 * ------------------------------------------------------------------------------------------- */

static void json_u64_array(const uint64_t *v, uint32_t n) {
    putchar('[');
    for (uint32_t i = 0; i < n; i++)
        printf("%s%llu", i ? "," : "", (unsigned long long)v[i]);
    putchar(']');
}

static void text_list(const uint64_t *v, uint32_t n, const char *sep) {
    for (uint32_t i = 0; i < n; i++)
        printf("%s%llu", i ? sep : "", (unsigned long long)v[i]);
}

static uint32_t log2_u32(uint32_t v) {
    uint32_t r = 0;
    while (v > 1) {
        v >>= 1;
        r++;
    }
    return r;
}

/* The swizzle field of a wgmma shared-memory matrix descriptor (bits 62-63 on sm_90). */
static const char *wgmma_swizzle(tma_swizzle s) {
    switch (s) {
    case TMA_SWIZZLE_128B: return "128B swizzle (matrix-descriptor layout type 1)";
    case TMA_SWIZZLE_64B: return "64B swizzle (matrix-descriptor layout type 2)";
    case TMA_SWIZZLE_32B: return "32B swizzle (matrix-descriptor layout type 3)";
    default: return "no swizzle (matrix-descriptor layout type 0, interleaved core matrices)";
    }
}

/* ---------------------------------------------------------------------------------------------
 * main
 * ------------------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
    cli_program = "tma-explain";
    tma_dtype dtype = TMA_DTYPE_BF16;
    uint64_t dims[5] = {0}, strides[4] = {0}, box[5] = {0}, estr[5] = {0};
    uint32_t ndims = 0, nstrides = 0, nbox = 0, nestr = 0;
    int swz = 0, il = 0, l2 = 0, oob = 0;
    uint64_t address = DEFAULT_ADDRESS;
    bool json = false, overlap = false;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (strcmp(a, "--json") == 0) {
            json = true;
            continue;
        }
        if (strcmp(a, "--allow-overlap") == 0) {
            overlap = true;
            continue;
        }
        if (strncmp(a, "--", 2) != 0)
            cli_bad_usage("unexpected argument '%s'", a);
        if (i + 1 >= argc)
            cli_bad_usage("%s needs a value", a);
        const char *v = argv[++i];
        if (strcmp(a, "--dtype") == 0) {
            dtype = cli_dtype_arg(v);
        } else if (strcmp(a, "--dims") == 0) {
            ndims = cli_parse_list(a, v, dims, 5);
        } else if (strcmp(a, "--strides") == 0) {
            nstrides = cli_parse_list(a, v, strides, 4);
        } else if (strcmp(a, "--box") == 0) {
            nbox = cli_parse_list(a, v, box, 5);
        } else if (strcmp(a, "--estrides") == 0) {
            nestr = cli_parse_list(a, v, estr, 5);
        } else if (strcmp(a, "--swizzle") == 0) {
            if ((swz = cli_parse_name(v, "TMA_SWIZZLE_", cli_swizzle_names, COUNT(cli_swizzle_names))) < 0)
                cli_bad_usage("--swizzle '%s': use none, 32B, 64B or 128B", v);
        } else if (strcmp(a, "--interleave") == 0) {
            if ((il = cli_parse_name(v, "TMA_INTERLEAVE_", interleave_names, COUNT(interleave_names))) < 0)
                cli_bad_usage("--interleave '%s': use none, 16B or 32B", v);
        } else if (strcmp(a, "--l2") == 0) {
            if ((l2 = cli_parse_name(v, "TMA_L2_", l2_names, COUNT(l2_names))) < 0)
                cli_bad_usage("--l2 '%s': use none, 64B, 128B or 256B", v);
        } else if (strcmp(a, "--oob") == 0) {
            if ((oob = cli_parse_name(v, "TMA_OOB_", oob_names, COUNT(oob_names))) < 0)
                cli_bad_usage("--oob '%s': use zero or nan", v);
        } else if (strcmp(a, "--address") == 0) {
            if (!cli_parse_u64(v, &address))
                cli_bad_usage("--address '%s': not an unsigned number (e.g. 0x7f0000000000)", v);
        } else {
            cli_bad_usage("unknown option '%s'", a);
        }
    }
    if (ndims == 0)
        cli_bad_usage("--dims is required (e.g. --dims 4096,4096, dimension 0 first)");
    const uint32_t rank = ndims;
    if (nstrides != 0 && nstrides != rank - 1)
        cli_bad_usage("--strides has %u values; a rank-%u tensor needs %u (dimensions 1..%u)", nstrides, rank, rank - 1,
                  rank - 1);
    if (nbox != 0 && nbox != rank)
        cli_bad_usage("--box has %u values; --dims has %u", nbox, rank);
    if (nestr != 0 && nestr != rank)
        cli_bad_usage("--estrides has %u values; --dims has %u", nestr, rank);

    const uint64_t esize = tma_dtype_size(dtype);
    if (nstrides == 0) { /* dense rows, each row rounded up to 16 bytes */
        uint64_t st = (dims[0] * esize + 15u) / 16u * 16u;
        for (uint32_t i = 0; i + 1 < rank; i++) {
            strides[i] = st;
            st *= dims[i + 1] ? dims[i + 1] : 1u;
        }
    }
    if (nbox == 0) {
        uint32_t span = tma_swizzle_span((tma_swizzle)swz);
        for (uint32_t i = 0; i < rank; i++)
            box[i] = dims[i] < 64u ? (dims[i] ? dims[i] : 1u) : 64u;
        if (span != 0 && box[0] * esize > span)
            box[0] = span / esize;
    }
    if (nestr == 0)
        for (uint32_t i = 0; i < rank; i++)
            estr[i] = 1;

    tma_tiled_desc d = {
        .dtype = dtype,
        .rank = rank,
        .global_address = (void *)(uintptr_t)address,
        .interleave = (tma_interleave)il,
        .swizzle = (tma_swizzle)swz,
        .l2_promotion = (tma_l2_promotion)l2,
        .oob_fill = (tma_oob_fill)oob,
        .flags = overlap ? TMA_DESC_ALLOW_OVERLAP : 0u,
    };
    for (uint32_t i = 0; i < rank; i++) {
        d.global_dim[i] = dims[i];
        d.box_dim[i] = to_u32("--box", box[i]);
        d.element_stride[i] = to_u32("--estrides", estr[i]);
        if (i + 1 < rank)
            d.global_stride[i] = strides[i];
    }

    tma_diag diags[MAX_DIAGS];
    size_t count = 0;
    tma_status st = tma_check_tiled_all(&d, diags, MAX_DIAGS, &count);
    const bool valid = st == TMA_OK;
    const size_t shown = count < MAX_DIAGS ? count : MAX_DIAGS;

    /* The facts of a valid descriptor. */
    const size_t tx = tma_box_tx_bytes(&d), smem = tma_box_smem_bytes(&d), rows = tma_box_rows(&d);
    const size_t pitch = tma_box_row_pitch(&d), row_bytes = valid ? (size_t)d.box_dim[0] * esize : 0;
    const uint32_t bits = tma_swizzle_bits(d.swizzle), period = tma_swizzle_period(d.swizzle);
    const uint32_t phase_align = period > TMA_SMEM_ALIGN ? period : TMA_SMEM_ALIGN;
    const uint32_t elem_m = esize ? 4u - log2_u32((uint32_t)esize) : 0u; /* CuTe M on element offsets */
    const size_t extent = tma_global_extent_bytes(&d);
    const uint32_t coord_mult = esize ? (uint32_t)(16u / (esize < 16u ? esize : 16u)) : 0u;
    const char *sname = tma_swizzle_name(d.swizzle);

    if (json) {
        printf("{\"valid\":%s,\"status\":", valid ? "true" : "false");
        cli_json_string(tma_status_name(st));
        printf(",\"descriptor\":{\"dtype\":");
        cli_json_string(tma_dtype_name(dtype));
        printf(",\"elem_bytes\":%llu,\"rank\":%u,\"global_address\":\"0x%llx\",\"global_dim\":",
               (unsigned long long)esize, rank, (unsigned long long)address);
        json_u64_array(dims, rank);
        printf(",\"global_stride\":");
        json_u64_array(strides, rank - 1);
        printf(",\"box_dim\":");
        json_u64_array(box, rank);
        printf(",\"element_stride\":");
        json_u64_array(estr, rank);
        printf(",\"swizzle\":");
        cli_json_string(cli_swizzle_names[swz]);
        printf(",\"interleave\":");
        cli_json_string(interleave_names[il]);
        printf(",\"l2_promotion\":");
        cli_json_string(l2_names[l2]);
        printf(",\"oob_fill\":");
        cli_json_string(oob_names[oob]);
        printf(",\"allow_overlap\":%s},\"broken_rules\":%zu,\"errors\":[", overlap ? "true" : "false", count);
        for (size_t i = 0; i < shown; i++) {
            printf("%s{\"status\":", i ? "," : "");
            cli_json_string(tma_status_name(diags[i].status));
            printf(",\"message\":");
            cli_json_string(diags[i].message);
            putchar('}');
        }
        putchar(']');
        if (valid) {
            printf(",\"tx_bytes\":%zu,\"smem_bytes\":%zu,\"smem_rows\":%zu,\"smem_row_pitch\":%zu,"
                   "\"box_row_bytes\":%zu,\"row_padding_bytes\":%zu,\"smem_align\":%u,\"swizzle_period\":%u,"
                   "\"smem_align_phase0\":%u,\"global_extent_bytes\":%zu,\"coord0_multiple\":%u,",
                   tx, smem, rows, pitch, row_bytes, pitch - row_bytes, TMA_SMEM_ALIGN, period, phase_align, extent,
                   coord_mult);
            if (bits)
                printf("\"cute_swizzle\":\"Swizzle<%u,4,3>\",\"cute_swizzle_elem\":\"Swizzle<%u,%u,3>\",", bits, bits,
                       elem_m);
            else
                printf("\"cute_swizzle\":null,\"cute_swizzle_elem\":null,");
            printf("\"wgmma_swizzle\":");
            cli_json_string(wgmma_swizzle(d.swizzle));
        }
        printf("}\n");
    } else {
        printf("descriptor\n");
        printf("  dtype          %s (%llu bytes)\n", tma_dtype_name(dtype), (unsigned long long)esize);
        printf("  rank           %u\n", rank);
        printf("  global_address 0x%llx%s\n", (unsigned long long)address,
               address == DEFAULT_ADDRESS ? " (stand-in)" : "");
        printf("  global_dim     ");
        text_list(dims, rank, " x ");
        printf("   (elements, dimension 0 first)\n");
        if (rank > 1) {
            printf("  global_stride  ");
            text_list(strides, rank - 1, ", ");
            if (rank == 2)
                printf("   (bytes, dimension 1)%s\n", nstrides ? "" : " (default: dense rows)");
            else
                printf("   (bytes, dimensions 1..%u)%s\n", rank - 1, nstrides ? "" : " (default: dense rows)");
        }
        printf("  box_dim        ");
        text_list(box, rank, " x ");
        printf("%s\n", nbox ? "" : "   (default)");
        printf("  element_stride ");
        text_list(estr, rank, ", ");
        printf("\n");
        printf("  swizzle        %s\n", sname);
        printf("  interleave     %s\n", interleave_names[il]);
        printf("  l2_promotion   %s\n", l2_names[l2]);
        printf("  oob_fill       %s\n", oob_names[oob]);
        if (overlap)
            printf("  flags          TMA_DESC_ALLOW_OVERLAP\n");
        printf("\n");
        if (!valid) {
            printf("verdict: INVALID, %zu broken rule%s\n", count, count == 1 ? "" : "s");
            for (size_t i = 0; i < shown; i++)
                printf("  %zu. %s: %s\n", i + 1, tma_status_name(diags[i].status), diags[i].message);
            if (count > shown)
                printf("  ... and %zu more\n", count - shown);
        } else {
            printf("verdict: valid (TMA_OK)\n\n");
            printf("transaction bytes    %zu per box copy (tma_box_tx_bytes)\n", tx);
            printf("shared memory        %zu bytes = %zu rows x %zu-byte pitch", smem, rows, pitch);
            if (pitch > row_bytes)
                printf(" (box row %zu bytes, padded by %zu to the %u-byte swizzle span)", row_bytes,
                       pitch - row_bytes, tma_swizzle_span(d.swizzle));
            printf("\n");
            printf("shared alignment     %u bytes (TMA_SMEM_ALIGN)", TMA_SMEM_ALIGN);
            if (bits)
                printf("; %u bytes for the swizzle to start at phase 0 (tma_swizzle_period)", period);
            printf("\n");
            if (bits)
                printf("CuTe swizzle         Swizzle<%u,4,3> on byte addresses = Swizzle<%u,%u,3> on %s element "
                       "offsets\n",
                       bits, bits, elem_m, tma_dtype_name(dtype));
            else
                printf("CuTe swizzle         none (identity; Swizzle<0,4,3>)\n");
            printf("global extent        %zu bytes from global_address (tma_global_extent_bytes)\n", extent);
            printf("\nkeep in step in the kernel\n");
            printf("  - mbarrier expect-tx: %zu bytes per box copy (tma_box_tx_bytes; k copies on one barrier: "
                   "k x %zu)\n",
                   tx, tx);
            printf("  - shared buffer: %zu bytes per box, %u-byte aligned (TMA_SMEM_ALIGN)", smem, TMA_SMEM_ALIGN);
            if (bits)
                printf(", %u-byte aligned for phase 0", period);
            printf("\n");
            printf("  - wgmma shared-memory descriptors over this tile: %s\n", wgmma_swizzle(d.swizzle));
            printf("  - coord[0] of every copy: a multiple of %u %s elements (16 bytes; tma_check_coords)\n",
                   coord_mult, tma_dtype_name(dtype));
            printf("  - element (row, col) of the box at smem_base: tma_swizzle_elem(%s, smem_base, %zu, %llu, row, "
                   "col)\n",
                   sname, pitch, (unsigned long long)esize);
        }
    }

    if (valid) {
        fprintf(stderr, "tma-explain: valid descriptor (%zu bytes per copy)\n", tx);
        return 0;
    }
    fprintf(stderr, "tma-explain: invalid descriptor: %zu broken rule%s, first %s\n", count, count == 1 ? "" : "s",
            tma_status_name(st));
    return 1;
}
