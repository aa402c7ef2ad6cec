/* tma-layout: print a TMA box as it lands in shared memory, and the bank conflicts of common reads.
 *
 *   tma-layout --swizzle 128B --dtype bf16 --box 64,64 --base 0 [--pitch BYTES] [--svg FILE] [--json]
 *   tma-layout --mode im2col --dims 64,8,8,2 --lower -1,-1 --upper -1,-1 --pixels 12 --coord 0,-1,-1,0 --offset 1,0
 *
 * With --mode im2col the image is one im2col load: the rows are its pixels, drawn by im2col_rows.c (the drawing
 * tma-explain --coord prints: which input pixel and channels each row holds, and the chunk in each slot, read back
 * from tma_model_load_im2col), then the same bank-conflict patterns over those rows (text only).
 *
 * The grid has one line per box row and one cell per physical 16-byte slot of that row: the logical
 * (row.chunk) that TMA stores there, found with tma_swizzle_addr on base + row*pitch + chunk*16
 * (the swizzle is its own inverse), pitch = tma_box_row_pitch. Then the bank model (bank_model.h)
 * counts wavefronts for named access patterns. No GPU needed. --json prints one JSON object instead, for an
 * invalid box too; --svg - (or --requests -) puts that output on stdout in place of the report.
 * Exit status: 0 printed, 1 the box is not a valid TMA box (the reasons are printed), 2 bad usage or output (the
 * report, --svg, --requests) that cannot be written. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bank_model.h"
#include "cli.h"
#include "im2col_rows.h"
#include "tma/detail/rules.h" /* tma_rule_round_up (libtma's internals: tools ship with it) */
#include "tma/tma.h"

#define STANDIN_ADDRESS 0x7f0000000000ull
#define MAX_DIAGS 16

static const char *const usage_text =
    "usage: tma-layout [--swizzle MODE] [--dtype T] [--box COLS,ROWS] [--base OFFSET] [--pitch BYTES]\n"
    "                  [--svg FILE] [--requests FILE] [--json]\n"
    "       tma-layout --mode im2col --dims C,W,...,N [--lower L0,...] [--upper U0,...] [--channels C]\n"
    "                  [--pixels P] [--estrides E0,...] [--coord C,W,...,N] [--offset O0,...]\n"
    "                  [--swizzle MODE] [--dtype T] [--base OFFSET]\n"
    "\n"
    "Print a TMA box as it lands in shared memory: one line per box row, one cell per physical 16-byte\n"
    "slot holding the logical row.chunk stored there (chunk = 16 bytes of the box row), and the banks\n"
    "each row covers; then the bank conflicts of common access patterns (32 banks x 4 bytes).\n"
    "With --mode im2col, one im2col load instead: each row is one pixel, with the input pixel (n, d, h, w)\n"
    "and channels it holds and the logical chunk in each physical slot (from the CPU model); then the\n"
    "same bank conflicts over those rows.\n"
    "\n"
    "options (a value may follow as the next argument or after '=': --box 64,64 or --box=64,64):\n"
    "  --mode MODE      tiled im2col (default tiled)\n"
    "  --swizzle MODE   none 32B 64B 128B (default 128B); 128B_atom_32B 128B_atom_32B_flip_8B 128B_atom_64B\n"
    "                   are refused with the reason (compute capability 10.x modes, which Hopper lacks)\n"
    "  --dtype T        u8 u16 u32 i32 u64 i64 f16 f32 f64 bf16 f32_ftz tf32 tf32_ftz (default bf16)\n"
    "  --box COLS,ROWS  box in elements: COLS along the contiguous dimension (default: one swizzle span\n"
    "                   of elements, 128 bytes for none; 8 rows)\n"
    "  --base OFFSET    shared-memory address (or offset from a 1024-byte aligned base) of the box; a\n"
    "                   multiple of 128 up to 1048576 (default 0). It sets the swizzle phase.\n"
    "  --pitch BYTES    bytes between rows (default tma_box_row_pitch: the swizzle span, or the box row\n"
    "                   for none). A larger pitch models padded rows, or 32B/64B data with 128-byte rows.\n"
    "  --svg FILE       also draw the tile as SVG into FILE\n"
    "  --requests FILE  also write every modelled warp request to FILE (for tests/calibrate-banks.sh)\n"
    "  --json           print one JSON object instead of text, for an invalid box too\n"
    "  --help           this text\n"
    "  --version        print the version of tma-layout (libtma's)\n"
    "im2col only (text only: no --box, --pitch, --svg, --requests, --json):\n"
    "  --dims C,W,N     the image, channels first: C,W,N / C,W,H,N / C,W,H,D,N (required; dense rows)\n"
    "  --lower L0,...   pixelBoxLowerCorner, one per spatial dimension, W first (default 0,...)\n"
    "  --upper U0,...   pixelBoxUpperCorner, likewise (default 0,...)\n"
    "  --channels C     channels per pixel (default min(C, one swizzle span of elements))\n"
    "  --pixels P       pixels per column: the rows of one load (default 8)\n"
    "  --estrides E,... element strides, one per dimension, 1..8 (default 1,...)\n"
    "  --coord C,W,...  the load's coordinates, channels first (default: channel 0, the box's lower\n"
    "                   corner, image 0)\n"
    "  --offset O0,...  the load's im2col offsets, one per spatial dimension, W first (default 0,...)\n"
    "  --               end of the options (tma-layout takes no other arguments)\n"
    "Numbers are decimal, or hexadecimal after 0x (a leading 0 is still decimal).\n"
    "\n"
    "FILE - is stdout: then the SVG (or the requests) is the only thing printed on stdout, in place of the\n"
    "report, and nothing is printed there for an invalid box. So at most one of --svg and --requests may be\n"
    "-, and not with --json.\n"
    "\n"
    "exit status: 0 printed, 1 not a valid TMA box (the broken rules are printed; im2col: an invalid\n"
    "descriptor or load, or one the model does not draw), 2 bad usage or output that cannot be written (the\n"
    "report, --svg, --requests: a full disk, a closed pipe)\n"
    "\n"
    "examples:\n"
    "  tma-layout --swizzle 128B --dtype bf16 --box 64,64\n"
    "  tma-layout --swizzle none --dtype f32 --box 32,32 --svg none.svg\n"
    "  tma-layout --swizzle 128B --dtype bf16 --box 64,8 --base 384\n"
    "  tma-layout --swizzle 64B --dtype f32 --box 16,8 --pitch 128     # 2-way conflicts\n"
    "  tma-layout --swizzle 32B --dtype f32 --box 8,8 --svg - > tile.svg\n"
    "  tma-layout --mode im2col --dims 64,8,8,2 --lower -1,-1 --upper -1,-1 --pixels 12 \\\n"
    "             --coord 0,-1,-1,0 --offset 1,0      # a 3x3 filter's tap (1, 0), padding 1\n";

/* ---------------------------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------------------------- */

enum {
    OPT_HELP,
    OPT_VERSION,
    OPT_JSON,
    OPT_SWIZZLE,
    OPT_DTYPE,
    OPT_BOX,
    OPT_BASE,
    OPT_PITCH,
    OPT_SVG,
    OPT_REQUESTS,
    OPT_MODE,
    OPT_DIMS,
    OPT_LOWER,
    OPT_UPPER,
    OPT_CHANNELS,
    OPT_PIXELS,
    OPT_ESTRIDES,
    OPT_COORD,
    OPT_OFFSET,
    OPT_COUNT
};

static const cli_option option_table[OPT_COUNT] = {
    [OPT_HELP] = {"--help", "-h", false},
    [OPT_VERSION] = {"--version", NULL, false},
    [OPT_JSON] = {"--json", NULL, false},
    [OPT_SWIZZLE] = {"--swizzle", NULL, true},
    [OPT_DTYPE] = {"--dtype", NULL, true},
    [OPT_BOX] = {"--box", NULL, true},
    [OPT_BASE] = {"--base", NULL, true},
    [OPT_PITCH] = {"--pitch", NULL, true},
    [OPT_SVG] = {"--svg", NULL, true},
    [OPT_REQUESTS] = {"--requests", NULL, true},
    [OPT_MODE] = {"--mode", NULL, true},
    [OPT_DIMS] = {"--dims", NULL, true},
    [OPT_LOWER] = {"--lower", NULL, true},
    [OPT_UPPER] = {"--upper", NULL, true},
    [OPT_CHANNELS] = {"--channels", NULL, true},
    [OPT_PIXELS] = {"--pixels", NULL, true},
    [OPT_ESTRIDES] = {"--estrides", NULL, true},
    [OPT_COORD] = {"--coord", NULL, true},
    [OPT_OFFSET] = {"--offset", NULL, true},
};

#define MAX_SPATIAL 3

/* --mode im2col: the load to draw. Counts stay 0 for a list that was not given. */
typedef struct im2col_options {
    bool on;
    uint64_t dims[TMA_MAX_RANK], estrides[TMA_MAX_RANK], offset[MAX_SPATIAL];
    int32_t lower[MAX_SPATIAL], upper[MAX_SPATIAL], coord[TMA_MAX_RANK];
    uint32_t ndims, nestrides, nlower, nupper, ncoord, noffset;
    uint32_t channels, pixels;
    bool has_channels, has_pixels; /* otherwise the defaults */
} im2col_options;

typedef struct layout_options {
    tma_swizzle mode;
    tma_dtype dtype;
    uint32_t cols, rows; /* the box, in elements x rows */
    bool have_box;       /* --box given; else cols is one swizzle span (default_cols) */
    uint32_t base;
    uint32_t pitch;      /* 0: tma_box_row_pitch */
    bool json;
    const char *svg, *requests; /* NULL: not written; "-": stdout */
    im2col_options im2col;
} layout_options;

static void parse_box(layout_options *o, const char *v) {
    const char *comma = strchr(v, ',');
    if (comma == NULL || strchr(comma + 1, ',') != NULL)
        cli_bad_usage("--box '%s': give COLS,ROWS (e.g. 64,64)", v);
    uint64_t box[2];
    cli_parse_list("--box", v, box, 2);
    o->cols = cli_to_u32("--box", box[0]);
    o->rows = cli_to_u32("--box", box[1]);
    o->have_box = true;
}

static const char *output_file_arg(const char *opt, const char *v) {
    if (*v == '\0')
        cli_bad_usage("%s '': give a file name, or - for stdout", opt);
    return v;
}

/* The counts are judged by the descriptor's checker (0 included: it says why). */
static void set_im2col_option(im2col_options *m, int id, const char *v) {
    switch (id) {
    case OPT_MODE: m->on = cli_im2col_mode_arg(v); break;
    case OPT_DIMS: m->ndims = cli_parse_list("--dims", v, m->dims, TMA_MAX_RANK); break;
    case OPT_LOWER: m->nlower = cli_parse_i32_list("--lower", v, m->lower, MAX_SPATIAL); break;
    case OPT_UPPER: m->nupper = cli_parse_i32_list("--upper", v, m->upper, MAX_SPATIAL); break;
    case OPT_CHANNELS:
        m->channels = cli_u32_arg("--channels", v);
        m->has_channels = true;
        break;
    case OPT_PIXELS:
        m->pixels = cli_u32_arg("--pixels", v);
        m->has_pixels = true;
        break;
    case OPT_ESTRIDES: m->nestrides = cli_estrides_arg(v, m->estrides, TMA_MAX_RANK); break;
    case OPT_COORD: m->ncoord = cli_parse_i32_list("--coord", v, m->coord, TMA_MAX_RANK); break;
    case OPT_OFFSET: m->noffset = cli_offsets_arg(v, m->offset, MAX_SPATIAL); break;
    }
}

static void set_option(layout_options *o, int id, const char *v) {
    switch (id) {
    case OPT_HELP: cli_print_help(usage_text);
    case OPT_VERSION: cli_print_version();
    case OPT_JSON: o->json = true; break;
    case OPT_SWIZZLE: o->mode = cli_swizzle_arg(v); break; /* the 10.x modes too: the box check says why not */
    case OPT_DTYPE: o->dtype = cli_dtype_arg(v); break;
    case OPT_BOX: parse_box(o, v); break;
    case OPT_BASE: o->base = cli_base_arg(v); break;
    case OPT_PITCH:
        o->pitch = cli_u32_arg("--pitch", v);
        if (o->pitch == 0)
            cli_bad_usage("--pitch 0: give the bytes between rows (a multiple of 16 that holds the box row), or "
                          "leave --pitch out for TMA's own");
        break;
    case OPT_SVG: o->svg = output_file_arg("--svg", v); break;
    case OPT_REQUESTS: o->requests = output_file_arg("--requests", v); break;
    default: set_im2col_option(&o->im2col, id, v); break;
    }
}

static bool to_stdout(const char *path) { return path != NULL && cli_is_stdout(path); }

/* --svg - or --requests -: that output is all there is on stdout, in place of the report. */
static bool stdout_taken(const layout_options *o) { return to_stdout(o->svg) || to_stdout(o->requests); }

/* stdout holds one thing: the report (text or JSON), the SVG or the requests. */
static void check_stdout_users(const layout_options *o) {
    if (to_stdout(o->svg) && to_stdout(o->requests))
        cli_bad_usage("--svg - and --requests - both write to stdout: send one of them to a file");
    if (stdout_taken(o) && o->json)
        cli_bad_usage("--json and %s both print on stdout: leave out --json, or write to a file",
                      to_stdout(o->svg) ? "--svg -" : "--requests -");
}

/* One swizzle span of elements, one 128-byte line for none. */
static uint32_t default_cols(const layout_options *o) {
    const uint32_t span = tma_swizzle_span(o->mode);
    return (span ? span : TMA_SWIZZLE_LINE_BYTES) / (uint32_t)tma_dtype_size(o->dtype);
}

/* The options of the other mode are refused, by name. */
static void check_mode_options(const layout_options *o, const bool *given) {
    static const int tiled_only[] = {OPT_BOX, OPT_PITCH, OPT_SVG, OPT_REQUESTS, OPT_JSON};
    static const int im2col_only[] = {OPT_DIMS,   OPT_LOWER,    OPT_UPPER, OPT_CHANNELS,
                                      OPT_PIXELS, OPT_ESTRIDES, OPT_COORD, OPT_OFFSET};
    const bool im2col = o->im2col.on;
    const int *other = im2col ? tiled_only : im2col_only;
    const size_t n = im2col ? sizeof tiled_only / sizeof tiled_only[0] : sizeof im2col_only / sizeof im2col_only[0];
    for (size_t i = 0; i < n; i++)
        if (given[other[i]])
            cli_bad_usage("%s is not an option of --mode %s%s", option_table[other[i]].name,
                          im2col ? "im2col" : "tiled", im2col ? " (it draws text)" : "");
}

/* One value per dimension (--coord, --estrides), per spatial dimension (--lower, --upper, --offset). */
static void check_im2col_lists(const im2col_options *m) {
    const uint32_t rank = m->ndims, spatial = rank > 2 ? rank - 2 : 0;
    if (rank == 0)
        cli_bad_usage("--mode im2col needs --dims (C,W,N / C,W,H,N / C,W,H,D,N, channels first)");
    const struct {
        const char *name;
        uint32_t given, want;
    } lists[] = {{"--lower", m->nlower, spatial}, {"--upper", m->nupper, spatial}, {"--offset", m->noffset, spatial},
                 {"--coord", m->ncoord, rank},    {"--estrides", m->nestrides, rank}};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
        if (lists[i].given != 0 && spatial != 0 && lists[i].given != lists[i].want)
            cli_bad_usage("%s has %u value%s; a rank-%u image (--dims) needs %u", lists[i].name, lists[i].given,
                          cli_plural(lists[i].given), rank, lists[i].want);
}

static layout_options parse_options(int argc, char **argv) {
    layout_options o = {.mode = TMA_SWIZZLE_128B, .dtype = TMA_DTYPE_BF16, .rows = 8};
    bool given[OPT_COUNT] = {false};
    cli_args args = cli_args_start(option_table, OPT_COUNT, argc, argv);
    const char *value;
    for (int id; (id = cli_next_option(&args, &value)) != CLI_DONE;) {
        set_option(&o, id, value);
        given[id] = true;
    }
    check_mode_options(&o, given);
    if (o.im2col.on)
        check_im2col_lists(&o.im2col);
    check_stdout_users(&o);
    if (!o.have_box)
        o.cols = default_cols(&o);
    return o;
}

/* ---------------------------------------------------------------------------------------------
 * The tile
 * ------------------------------------------------------------------------------------------- */

typedef struct tile {
    tma_swizzle mode;
    tma_dtype dtype;
    uint32_t esize, cols, rows; /* box: cols elements x rows */
    uint32_t base, pitch;
    uint32_t chunks; /* logical 16-byte chunks per box row */
    uint32_t slots;  /* physical 16-byte slots per row: pitch / 16 */
} tile;

/* Shared address of logical byte `off` of box row `row`. */
static uint32_t tile_addr(const tile *t, uint32_t row, uint32_t off) {
    return tma_swizzle_addr(t->mode, t->base + row * t->pitch + off);
}

/* The logical chunk stored in physical slot `slot` of row `row` (the swizzle is its own inverse and
 * keeps a chunk inside its span-aligned block, so inside its row: pitch is a multiple of the span). */
static uint32_t slot_chunk(const tile *t, uint32_t row, uint32_t slot) {
    uint32_t logical = tma_swizzle_addr(t->mode, t->base + row * t->pitch + slot * TMA_SWIZZLE_CHUNK_BYTES);
    return (logical - t->base - row * t->pitch) / TMA_SWIZZLE_CHUNK_BYTES;
}

/* Banks covered by the written bytes of a row: count per bank. */
static void row_banks(const tile *t, uint32_t row, uint32_t cover[BANK_COUNT]) {
    memset(cover, 0, BANK_COUNT * sizeof cover[0]);
    for (uint32_t c = 0; c < t->chunks; c++)
        for (uint32_t w = 0; w < 4u; w++)
            cover[bank_of(tile_addr(t, row, c * TMA_SWIZZLE_CHUNK_BYTES + w * 4u))]++;
}

/* "0-31", "0-15", "0-7,16-23", "0-31 x2". */
static void format_banks(const uint32_t cover[BANK_COUNT], char *out, size_t cap) {
    uint32_t lo = UINT32_MAX, hi = 0;
    for (uint32_t b = 0; b < BANK_COUNT; b++) {
        if (cover[b] < lo) lo = cover[b];
        if (cover[b] > hi) hi = cover[b];
    }
    if (lo == hi && lo > 0) {
        snprintf(out, cap, lo == 1 ? "0-31" : "0-31 x%u", lo);
        return;
    }
    size_t n = 0;
    out[0] = '\0';
    for (uint32_t b = 0; b < BANK_COUNT;) {
        if (!cover[b]) {
            b++;
            continue;
        }
        uint32_t e = b;
        while (e + 1 < BANK_COUNT && cover[e + 1])
            e++;
        n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%u-%u", n ? "," : "", b, e);
        b = e + 1;
    }
}

/* ---------------------------------------------------------------------------------------------
 * Access patterns: each is a list of warp requests over the whole box, summed by the bank model.
 * ------------------------------------------------------------------------------------------- */

/* Where --requests writes each warp request as it is modelled (NULL: nowhere). The GPU probe
 * (tests/calibrate-banks.sh) replays exactly these requests under ncu. */
static FILE *request_dump;

static void add_request(bank_cost *sum, bank_request *req) {
    if (req->active_mask) {
        bank_cost_add(sum, bank_request_cost(req));
        if (request_dump) {
            fprintf(request_dump, "R %u %u", req->access_bytes, req->active_mask);
            for (uint32_t lane = 0; lane < WARP_LANES; lane++)
                fprintf(request_dump, " %u", (req->active_mask >> lane) & 1u ? req->addr[lane] : 0u);
            fputc('\n', request_dump);
        }
    }
    req->active_mask = 0;
}

/* Thread t of every request reads logical chunk t of the tile in row-major order. */
static bank_cost pattern_rows16(const tile *t) {
    bank_cost sum = {0, 0, 0, 0, 0};
    bank_request req = {.access_bytes = 16};
    uint32_t total = t->rows * t->chunks;
    for (uint32_t i = 0; i < total; i++) {
        uint32_t lane = i % WARP_LANES;
        req.addr[lane] = tile_addr(t, i / t->chunks, (i % t->chunks) * TMA_SWIZZLE_CHUNK_BYTES);
        req.active_mask |= 1u << lane;
        if (lane == WARP_LANES - 1)
            add_request(&sum, &req);
    }
    add_request(&sum, &req);
    return sum;
}

/* Per column of 4-byte words and per group of 32 rows: thread t reads that word of row 32g + t. */
static bank_cost pattern_cols4(const tile *t) {
    bank_cost sum = {0, 0, 0, 0, 0};
    bank_request req = {.access_bytes = 4};
    for (uint32_t w = 0; w < t->chunks * 4u; w++)
        for (uint32_t r0 = 0; r0 < t->rows; r0 += WARP_LANES) {
            for (uint32_t lane = 0; lane < WARP_LANES && r0 + lane < t->rows; lane++) {
                req.addr[lane] = tile_addr(t, r0 + lane, w * 4u);
                req.active_mask |= 1u << lane;
            }
            add_request(&sum, &req);
        }
    return sum;
}

/* Per logical chunk column and per group of 32 rows: thread t reads that chunk of row 32g + t, so
 * each quarter-warp reads one chunk column across 8 consecutive rows. */
static bank_cost pattern_chunkcol16(const tile *t) {
    bank_cost sum = {0, 0, 0, 0, 0};
    bank_request req = {.access_bytes = 16};
    for (uint32_t c = 0; c < t->chunks; c++)
        for (uint32_t r0 = 0; r0 < t->rows; r0 += WARP_LANES) {
            for (uint32_t lane = 0; lane < WARP_LANES && r0 + lane < t->rows; lane++) {
                req.addr[lane] = tile_addr(t, r0 + lane, c * TMA_SWIZZLE_CHUNK_BYTES);
                req.active_mask |= 1u << lane;
            }
            add_request(&sum, &req);
        }
    return sum;
}

/* ldmatrix.x4 over each 16-row x 2-chunk block: matrix m = lane / 8 is rows r0 + (m % 2) * 8 .. +7 of
 * chunk c0 + m / 2 (the A-fragment order of mma.m16n8k16); lane supplies row lane % 8 of matrix m. */
static bank_cost pattern_ldmatrix(const tile *t) {
    bank_cost sum = {0, 0, 0, 0, 0};
    bank_request req = {.access_bytes = 16};
    for (uint32_t r0 = 0; r0 < t->rows; r0 += 16u)
        for (uint32_t c0 = 0; c0 < t->chunks; c0 += 2u) {
            for (uint32_t lane = 0; lane < WARP_LANES; lane++) {
                uint32_t m = lane / 8u, row = r0 + (m % 2u) * 8u + lane % 8u, c = c0 + m / 2u;
                if (row >= t->rows || c >= t->chunks)
                    continue;
                req.addr[lane] = tile_addr(t, row, c * TMA_SWIZZLE_CHUNK_BYTES);
                req.active_mask |= 1u << lane;
            }
            add_request(&sum, &req);
        }
    return sum;
}

typedef struct pattern {
    const char *name;
    const char *what;
    uint32_t access_bytes;
    const char *probe; /* the kind of request the GPU probe replays (--requests) */
    bank_cost (*generate)(const tile *t);
} pattern;

static const pattern patterns[] = {
    {"row-wise 16-byte reads", "thread i reads logical chunk i of the box in row-major order, 32 per request", 16,
     "load", pattern_rows16},
    {"column-wise 4-byte reads",
     "per 4-byte column, thread i reads that word of row 32g+i (one request per column and 32 rows)", 4, "load",
     pattern_cols4},
    {"chunk column, 8 rows, 16-byte reads",
     "per logical chunk column, thread i reads that chunk of row 32g+i: each quarter-warp reads one chunk column "
     "across 8 consecutive rows",
     16, "load", pattern_chunkcol16},
    {"ldmatrix x4 (8x8 b16)",
     "per 16-row x 2-chunk block, matrix m = i/8 is rows (m%2)*8..+7 of chunk m/2, thread i gives row i%8 of "
     "matrix m",
     16, "ldmatrix", pattern_ldmatrix},
};
#define NPATTERNS (sizeof patterns / sizeof patterns[0])

typedef struct pattern_result {
    const pattern *def;
    bank_cost cost;
} pattern_result;

/* Each pattern's cost; with `dump`, also its prediction ("P index probe wavefronts ideal conflicts") and
 * then its requests, for the GPU probe. */
static void model_patterns(const tile *t, pattern_result results[NPATTERNS], FILE *dump) {
    for (size_t i = 0; i < NPATTERNS; i++) {
        results[i].def = &patterns[i];
        results[i].cost = patterns[i].generate(t);
        if (dump) {
            fprintf(dump, "P %zu %s %u %u %u\n", i, patterns[i].probe, results[i].cost.wavefronts,
                    results[i].cost.ideal, results[i].cost.conflicts);
            request_dump = dump;
            patterns[i].generate(t);
            request_dump = NULL;
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * Output
 * ------------------------------------------------------------------------------------------- */

static uint32_t digits(uint32_t v) {
    uint32_t n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

static void print_text_caption(const tile *t) {
    const uint32_t period = tma_swizzle_period(t->mode);
    const uint32_t line = tma_swizzle_phase(t->mode, t->base) / TMA_SWIZZLE_LINE_BYTES; /* the phase, in lines */
    printf("tile: %s, box %u col%s x %u row%s, %s, base %u", tma_dtype_name(t->dtype), t->cols, cli_plural(t->cols),
           t->rows, cli_plural(t->rows), tma_swizzle_name(t->mode), t->base);
    if (t->mode != TMA_SWIZZLE_NONE)
        printf(" (phase %u of the %u-byte pattern)", line, period);
    printf("\n");
    printf("row pitch %u bytes: %u slot%s of 16 bytes per row, %u written (%u bytes = %u %s element%s per row)\n",
           t->pitch, t->slots, cli_plural(t->slots), t->chunks, t->chunks * TMA_SWIZZLE_CHUNK_BYTES, t->cols,
           tma_dtype_name(t->dtype), cli_plural(t->cols));
    printf("cell = logical row.chunk stored in that physical 16-byte slot (chunk k = elements %u*k .. %u*k+%u); "
           "'.' = never written\n\n",
           TMA_SWIZZLE_CHUNK_BYTES / t->esize, TMA_SWIZZLE_CHUNK_BYTES / t->esize,
           TMA_SWIZZLE_CHUNK_BYTES / t->esize - 1u);
}

static void print_text_grid(const tile *t) {
    uint32_t cw = digits(t->rows - 1) + 1 + digits(t->chunks - 1);
    const bool fixed_banks = t->pitch % (BANK_COUNT * BANK_BYTES) == 0; /* every row meets the banks alike */
    if (fixed_banks && cw < 5)
        cw = 5;
    uint32_t lw = digits(t->rows - 1), aw = digits(t->base + (t->rows - 1) * t->pitch);
    if (aw < 4)
        aw = 4;
    /* header: slot numbers, and the banks of each slot when they are the same in every row */
    printf("%*s %*s | ", (int)lw + 4, "slot", (int)aw, "");
    for (uint32_t s = 0; s < t->slots; s++)
        printf("%*u ", (int)cw, s);
    printf("|\n");
    if (fixed_banks) {
        printf("%*s %*s | ", (int)lw + 4, "bank", (int)aw, "");
        for (uint32_t s = 0; s < t->slots; s++) {
            char b[16];
            uint32_t b0 = bank_of(t->base + s * TMA_SWIZZLE_CHUNK_BYTES);
            snprintf(b, sizeof b, "%u-%u", b0, b0 + 3u);
            printf("%*s ", (int)cw, b);
        }
        printf("|\n");
    }
    for (uint32_t r = 0; r < t->rows; r++) {
        printf("row %*u %*u | ", (int)lw, r, (int)aw, t->base + r * t->pitch);
        for (uint32_t s = 0; s < t->slots; s++) {
            uint32_t c = slot_chunk(t, r, s);
            if (c >= t->chunks) {
                printf("%*s ", (int)cw, ".");
            } else {
                char cell[24];
                snprintf(cell, sizeof cell, "%u.%u", r, c);
                printf("%*s ", (int)cw, cell);
            }
        }
        uint32_t cover[BANK_COUNT];
        char banks[160];
        row_banks(t, r, cover);
        format_banks(cover, banks, sizeof banks);
        printf("| banks %s\n", banks);
    }
    printf("(the number after 'row' is the row's shared address)\n\n");
}

static void print_text_patterns(const pattern_result *p, size_t np) {
    printf("bank conflicts, CPU model (32 banks x 4 bytes; a request of 4-byte accesses is 1 phase of 32 threads,\n"
           "8-byte 2 half-warps, 16-byte 4 quarter-warps; a phase costs the most distinct 4-byte words asked of\n"
           "one bank; calibrated against ncu on an H200)\n\n");
    printf("%-36s %6s %8s %10s %6s %9s %6s\n", "pattern", "access", "requests", "wavefronts", "ideal", "conflicts",
           "worst");
    for (size_t i = 0; i < np; i++) {
        char worst[16];
        snprintf(worst, sizeof worst, "%u-way", p[i].cost.worst_ways);
        printf("%-36s %4u B %8u %10u %6u %9u %6s\n", p[i].def->name, p[i].def->access_bytes, p[i].cost.requests,
               p[i].cost.wavefronts, p[i].cost.ideal, p[i].cost.conflicts, worst);
    }
    printf("\n");
    for (size_t i = 0; i < np; i++)
        printf("  %s: %s\n", p[i].def->name, p[i].def->what);
}

static void print_text(const tile *t, const pattern_result *p, size_t np) {
    print_text_caption(t);
    print_text_grid(t);
    print_text_patterns(p, np);
}

static void print_json(const tile *t, const pattern_result *p, size_t np) {
    printf("{\"valid\":true,\"status\":\"TMA_OK\",\"swizzle\":\"%s\",\"dtype\":\"%s\",\"elem_bytes\":%u,"
           "\"box_cols\":%u,\"box_rows\":%u,\"base\":%u,\"row_pitch\":%u,\"chunks_per_row\":%u,\"slots_per_row\":%u,"
           "\"grid\":[",
           cli_swizzle_names[t->mode], tma_dtype_name(t->dtype), t->esize, t->cols, t->rows, t->base, t->pitch,
           t->chunks, t->slots);
    for (uint32_t r = 0; r < t->rows; r++) {
        printf("%s[", r ? "," : "");
        for (uint32_t s = 0; s < t->slots; s++) {
            uint32_t c = slot_chunk(t, r, s);
            if (c >= t->chunks)
                printf("%snull", s ? "," : "");
            else
                printf("%s%u", s ? "," : "", c);
        }
        printf("]");
    }
    printf("],\"patterns\":[");
    for (size_t i = 0; i < np; i++)
        printf("%s{\"name\":\"%s\",\"access_bytes\":%u,\"requests\":%u,\"wavefronts\":%u,\"ideal\":%u,"
               "\"conflicts\":%u,\"worst_ways\":%u}",
               i ? "," : "", p[i].def->name, p[i].def->access_bytes, p[i].cost.requests, p[i].cost.wavefronts,
               p[i].cost.ideal, p[i].cost.conflicts, p[i].cost.worst_ways);
    printf("]}\n");
}

/* One colour per logical chunk column (cycled past 16). */
static const char *const palette[16] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                                        "#b3de69", "#fccde5", "#66c2a5", "#fc8d62", "#8da0cb", "#e78ac3",
                                        "#a6d854", "#ffd92f", "#e5c494", "#b3b3b3"};

static void write_svg(const tile *t, FILE *f) {
    const uint32_t cw = 56, ch = 22, left = 110, top = 80;
    uint32_t w = left + t->slots * cw + 150;
    const uint32_t h = top + t->rows * ch + 20;
    if (w < 780)
        w = 780; /* room for the caption: about 115 characters of 11 px monospace */
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
            "font-family=\"monospace\" font-size=\"11\">\n",
            w, h, w, h);
    fprintf(f, "<style>.cell{stroke:#444;stroke-width:0.5}.c{text-anchor:middle}</style>\n");
    fprintf(f, "<title>%s %s box %u x %u at base %u, row pitch %u</title>\n", tma_swizzle_name(t->mode),
            tma_dtype_name(t->dtype), t->cols, t->rows, t->base, t->pitch);
    fprintf(f, "<text x=\"4\" y=\"15\" font-size=\"13\">%s, %s, box %u col%s x %u row%s, base %u, pitch %u B</text>\n",
            tma_swizzle_name(t->mode), tma_dtype_name(t->dtype), t->cols, cli_plural(t->cols), t->rows,
            cli_plural(t->rows), t->base, t->pitch);
    fprintf(f, "<text x=\"4\" y=\"32\">cell = logical row.chunk stored in each physical 16-byte slot; colour = logical "
               "chunk; white = never written</text>\n");
    /* bank numbers along the top edge (the banks of each slot in row 0) */
    fprintf(f, "<text x=\"4\" y=\"%u\">banks (row 0)</text>\n", top - 26);
    fprintf(f, "<text x=\"4\" y=\"%u\">slot</text>\n", top - 8);
    for (uint32_t s = 0; s < t->slots; s++) {
        uint32_t b0 = bank_of(t->base + s * TMA_SWIZZLE_CHUNK_BYTES);
        fprintf(f, "<text class=\"c\" x=\"%u\" y=\"%u\">%u-%u</text>\n", left + s * cw + cw / 2, top - 26,
                b0, b0 + 3u);
        fprintf(f, "<text class=\"c\" x=\"%u\" y=\"%u\">%u</text>\n", left + s * cw + cw / 2, top - 8, s);
    }
    for (uint32_t r = 0; r < t->rows; r++) {
        uint32_t y = top + r * ch;
        fprintf(f, "<text x=\"4\" y=\"%u\">row %u @%u</text>\n", y + 15, r, t->base + r * t->pitch);
        for (uint32_t s = 0; s < t->slots; s++) {
            uint32_t c = slot_chunk(t, r, s), x = left + s * cw;
            bool pad = c >= t->chunks;
            fprintf(f,
                    "<rect class=\"cell\" x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" fill=\"%s\"/>\n",
                    x, y, cw, ch, pad ? "#ffffff" : palette[c % 16u]);
            if (!pad)
                fprintf(f, "<text class=\"c\" x=\"%u\" y=\"%u\">%u.%u</text>\n", x + cw / 2, y + 15, r, c);
        }
        uint32_t cover[BANK_COUNT];
        char banks[160];
        row_banks(t, r, cover);
        format_banks(cover, banks, sizeof banks);
        fprintf(f, "<text x=\"%u\" y=\"%u\">banks %s</text>\n", left + t->slots * cw + 6, y + 15, banks);
    }
    fprintf(f, "</svg>\n");
}

/* ---------------------------------------------------------------------------------------------
 * The box and its check
 * ------------------------------------------------------------------------------------------- */

/* The box must be one TMA can copy: it is checked as a 2-D map of exactly the box's size. */
static tma_tiled_desc box_descriptor(const layout_options *o) {
    const uint32_t esize = (uint32_t)tma_dtype_size(o->dtype);
    const uint64_t gstride = tma_rule_round_up((uint64_t)o->cols * esize, TMA_GLOBAL_ALIGN);
    return tma_desc_2d(o->dtype, (void *)(uintptr_t)STANDIN_ADDRESS, o->rows ? o->rows : 1u, o->cols ? o->cols : 1u,
                       gstride ? gstride : TMA_GLOBAL_ALIGN, o->rows, o->cols, o->mode);
}

typedef struct box_check {
    tma_status status;
    size_t count; /* broken rules; the first MAX_DIAGS are in diags */
    tma_diag diags[MAX_DIAGS];
} box_check;

static void check_box(const tma_tiled_desc *d, box_check *c) {
    c->status = tma_check_tiled_all(d, c->diags, MAX_DIAGS, &c->count);
}

static size_t shown_diags(const box_check *c) { return c->count < MAX_DIAGS ? c->count : MAX_DIAGS; }

static void print_invalid_text(const layout_options *o, const box_check *c) {
    printf("box %u x %u %s with %s is not a valid TMA box:\n", o->cols, o->rows, tma_dtype_name(o->dtype),
           tma_swizzle_name(o->mode));
    for (size_t i = 0; i < shown_diags(c); i++)
        printf("  %zu. %s: %s\n", i + 1, tma_status_name(c->diags[i].status), c->diags[i].message);
}

static void print_invalid_json(const layout_options *o, const box_check *c) {
    printf("{\"valid\":false,\"status\":");
    cli_json_string(tma_status_name(c->status));
    printf(",\"swizzle\":\"%s\",\"dtype\":\"%s\",\"elem_bytes\":%u,\"box_cols\":%u,\"box_rows\":%u,\"base\":%u,"
           "\"broken_rules\":%zu,\"errors\":[",
           cli_swizzle_names[o->mode], tma_dtype_name(o->dtype), (unsigned)tma_dtype_size(o->dtype), o->cols, o->rows,
           o->base, c->count);
    for (size_t i = 0; i < shown_diags(c); i++) {
        printf("%s{\"status\":", i ? "," : "");
        cli_json_string(tma_status_name(c->diags[i].status));
        printf(",\"message\":");
        cli_json_string(c->diags[i].message);
        putchar('}');
    }
    printf("]}\n");
}

/* The broken rules on stdout (unless an output file took stdout), a line on stderr; the exit status. */
static int report_invalid_box(const layout_options *o, const box_check *c) {
    if (o->json)
        print_invalid_json(o, c);
    else if (!stdout_taken(o))
        print_invalid_text(o, c);
    cli_flush_stdout();
    fprintf(stderr, "tma-layout: invalid box: %zu broken rule%s, first %s\n", c->count, c->count == 1 ? "" : "s",
            tma_status_name(c->status));
    return 1;
}

/* The tile of a valid box, with the row pitch of --pitch or the one TMA uses. */
static tile make_tile(const layout_options *o, const tma_tiled_desc *d) {
    const uint32_t esize = (uint32_t)tma_dtype_size(o->dtype);
    const uint32_t span = tma_swizzle_span(o->mode);
    const uint32_t pitch = o->pitch ? o->pitch : (uint32_t)tma_box_row_pitch(d);
    if (pitch % TMA_SWIZZLE_CHUNK_BYTES != 0 || pitch < o->cols * esize || (span && pitch % span != 0))
        cli_bad_usage("--pitch %u: use a multiple of 16%s%s that holds the %u-byte box row", pitch,
                      span ? " and of the swizzle span " : "", span ? cli_swizzle_names[o->mode] : "",
                      o->cols * esize);
    if ((uint64_t)o->rows * pitch > 4u * 1024u * 1024u)
        cli_bad_usage("--pitch %u x %u rows: too large", pitch, o->rows);
    tile t = {o->mode, o->dtype, esize, o->cols, o->rows, o->base, pitch, o->cols * esize / TMA_SWIZZLE_CHUNK_BYTES,
              pitch / TMA_SWIZZLE_CHUNK_BYTES};
    return t;
}

/* ---------------------------------------------------------------------------------------------
 * Output files
 * ------------------------------------------------------------------------------------------- */

/* The file of --svg or --requests, opened for writing (stdout for "-"); NULL where the option was not given. */
static FILE *open_output(const char *path) { return path == NULL ? NULL : cli_open_output_or_exit(path); }

static void close_output(FILE *f, const char *path) {
    if (f != NULL)
        cli_close_output_or_exit(f, path);
}

/* The one-line summary on stderr, once the report is written. */
static void summarize(const tile *t, const pattern_result *p, size_t np) {
    uint32_t conflicts = 0;
    for (size_t i = 0; i < np; i++)
        conflicts += p[i].cost.conflicts;
    cli_flush_stdout();
    fprintf(stderr, "tma-layout: %u row%s x %u slot%s printed; %u modelled bank conflict%s over %zu patterns\n",
            t->rows, cli_plural(t->rows), t->slots, cli_plural(t->slots), conflicts, cli_plural(conflicts), np);
}

/* ---------------------------------------------------------------------------------------------
 * --mode im2col: one load, drawn by im2col_rows.c, then the bank patterns over its rows
 * ------------------------------------------------------------------------------------------- */

/* The descriptor of the options: dense rows (each rounded up to 16 bytes), a stand-in address. */
static tma_im2col_desc im2col_descriptor(const layout_options *o) {
    const im2col_options *m = &o->im2col;
    const uint64_t esize = tma_dtype_size(o->dtype);
    tma_im2col_desc d = {.dtype = o->dtype, .rank = m->ndims, .global_address = (void *)(uintptr_t)STANDIN_ADDRESS,
                         .swizzle = o->mode};
    const uint32_t span_cols = default_cols(o);
    d.channels_per_pixel = m->has_channels ? m->channels : m->dims[0] < span_cols ? (uint32_t)m->dims[0] : span_cols;
    d.pixels_per_column = m->has_pixels ? m->pixels : 8u;
    cli_dense_strides(m->dims, m->ndims, esize, d.global_stride, "use smaller --dims");
    for (uint32_t i = 0; i < m->ndims; i++) {
        d.global_dim[i] = m->dims[i];
        d.element_stride[i] = m->nestrides ? cli_to_u32("--estrides", m->estrides[i]) : 1u;
    }
    for (uint32_t i = 0; i < MAX_SPATIAL; i++) {
        d.pixel_box_lower[i] = m->lower[i];
        d.pixel_box_upper[i] = m->upper[i];
    }
    return d;
}

static void print_dims(const char *what, const uint64_t *v, uint32_t n) {
    printf("%s", what);
    for (uint32_t i = 0; i < n; i++)
        printf("%s%llu", i ? " x " : " ", (unsigned long long)v[i]);
}

static void print_corner(const char *what, const int32_t *v, uint32_t n) {
    printf("%s {", what);
    for (uint32_t i = 0; i < n; i++)
        printf("%s%d", i ? ", " : "", v[i]);
    printf("}");
}

static int report_invalid_im2col(const tma_im2col_desc *d, const box_check *c) {
    printf("im2col descriptor (%s, rank %u, %u channel%s x %u pixel%s, %s) is not valid:\n",
           tma_dtype_name(d->dtype), d->rank, d->channels_per_pixel, cli_plural(d->channels_per_pixel),
           d->pixels_per_column, cli_plural(d->pixels_per_column), tma_swizzle_name(d->swizzle));
    for (size_t i = 0; i < shown_diags(c); i++)
        printf("  %zu. %s: %s\n", i + 1, tma_status_name(c->diags[i].status), c->diags[i].message);
    cli_flush_stdout();
    fprintf(stderr, "tma-layout: invalid im2col descriptor: %zu broken rule%s, first %s\n", c->count,
            c->count == 1 ? "" : "s", tma_status_name(c->status));
    return 1;
}

static int layout_im2col(const layout_options *o) {
    const im2col_options *m = &o->im2col;
    const tma_im2col_desc d = im2col_descriptor(o);
    box_check check;
    check.status = tma_check_im2col_all(&d, check.diags, MAX_DIAGS, &check.count);
    if (check.status != TMA_OK)
        return report_invalid_im2col(&d, &check);
    const uint32_t spatial = d.rank - 2;
    int32_t coord[TMA_MAX_RANK] = {0};
    uint16_t offset[MAX_SPATIAL] = {0};
    for (uint32_t i = 0; i < d.rank; i++)
        coord[i] = m->ncoord ? m->coord[i] : i >= 1 && i <= spatial ? d.pixel_box_lower[i - 1] : 0;
    for (uint32_t i = 0; i < m->noffset; i++)
        offset[i] = (uint16_t)m->offset[i];

    const tma_box_info b = tma_im2col_box_info_of(&d);
    print_dims("im2col image:", d.global_dim, d.rank);
    printf(" %s (channels first; dense rows)", tma_dtype_name(d.dtype));
    print_corner(", box lower", d.pixel_box_lower, spatial);
    print_corner(" upper", d.pixel_box_upper, spatial);
    printf(" (W first)\n");
    printf("one load: %u channel%s x %u pixel%s, %s, row pitch %u bytes, %zu bytes of shared memory (%zu transferred)%s"
           "\n",
           d.channels_per_pixel, cli_plural(d.channels_per_pixel), d.pixels_per_column,
           cli_plural(d.pixels_per_column), tma_swizzle_name(d.swizzle), b.row_pitch,
           tma_im2col_smem_bytes(&d), tma_im2col_tx_bytes(&d),
           m->ncoord ? "" : "; --coord not given: the box's corner");
    printf("\n");
    tma_diag diag;
    const tma_status st = im2col_rows_print(&d, coord, offset, o->base, &diag);
    if (st != TMA_OK) {
        const char *outcome = st == TMA_ERR_UNSUPPORTED ? "not drawn" : "INVALID";
        printf("load: %s\n  %s: %s\n", outcome, tma_status_name(st), diag.message);
        cli_flush_stdout();
        fprintf(stderr, "tma-layout: valid im2col descriptor, load %s: %s\n", outcome, tma_status_name(st));
        return 1;
    }
    /* The rows of an im2col load sit in shared memory as the rows of a box of channels x pixels with the same
     * pitch and swizzle: the bank patterns are those of that tile. */
    const uint32_t esize = (uint32_t)tma_dtype_size(d.dtype);
    const tile t = {d.swizzle, d.dtype, esize, d.channels_per_pixel, d.pixels_per_column, o->base, b.row_pitch,
                    d.channels_per_pixel * esize / TMA_SWIZZLE_CHUNK_BYTES, b.row_pitch / TMA_SWIZZLE_CHUNK_BYTES};
    pattern_result results[NPATTERNS];
    model_patterns(&t, results, NULL);
    printf("\n");
    print_text_patterns(results, NPATTERNS);
    uint32_t conflicts = 0;
    for (size_t i = 0; i < NPATTERNS; i++)
        conflicts += results[i].cost.conflicts;
    cli_flush_stdout();
    fprintf(stderr, "tma-layout: im2col load of %u row%s x %u slot%s drawn; %u modelled bank conflict%s over %zu "
            "patterns\n",
            t.rows, cli_plural(t.rows), t.slots, cli_plural(t.slots), conflicts, cli_plural(conflicts),
            (size_t)NPATTERNS);
    return 0;
}

int main(int argc, char **argv) {
    cli_program = "tma-layout";
    const layout_options o = parse_options(argc, argv);
    if (o.im2col.on)
        return layout_im2col(&o);

    const tma_tiled_desc d = box_descriptor(&o);
    box_check check;
    check_box(&d, &check);
    if (check.status != TMA_OK)
        return report_invalid_box(&o, &check);
    const tile t = make_tile(&o, &d);

    FILE *requests = open_output(o.requests), *svg = open_output(o.svg);
    pattern_result results[NPATTERNS];
    model_patterns(&t, results, requests);
    close_output(requests, o.requests);

    if (o.json)
        print_json(&t, results, NPATTERNS);
    else if (!stdout_taken(&o))
        print_text(&t, results, NPATTERNS);
    if (svg != NULL)
        write_svg(&t, svg);
    close_output(svg, o.svg);
    summarize(&t, results, NPATTERNS);
    return 0;
}
