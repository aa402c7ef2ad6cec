/* tma-explain: check a TMA tiled or im2col descriptor given on the command line and say what it means.
 *
 *   tma-explain --dtype bf16 --dims 4096,4096 --box 64,128 --swizzle 128B
 *   tma-explain --mode im2col --dims 64,56,56,32 --lower -1,-1 --upper -1,-1 --channels 64 --pixels 128
 *
 * Prints every rule the descriptor breaks (tma_check_tiled_all / tma_check_im2col_all; each message names
 * the fix), and for a valid one whether loads and stores may go through it (a view in which two coordinates reach
 * the same bytes is read from, never written through; no copy goes through a template) and the facts a kernel
 * must keep in step with it. --json prints the same as one JSON object.
 * Exit status: 0 valid, 1 invalid, 2 bad usage or a report that cannot be written; each with a one-line message on
 * stderr. No GPU needed. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "im2col_rows.h"
#include "tma/tma.h"
#include "tma/wgmma.h"

#define MAX_DIAGS 32
/* A 256-byte aligned stand-in for a device address, used when --address is not given. */
#define DEFAULT_ADDRESS 0x7f0000000000ull

static const char *const usage_text =
    "usage: tma-explain --dims D0,D1,... [options]\n"
    "\n"
    "Check a TMA tiled tensor-map descriptor (the fields of cuTensorMapEncodeTiled) and explain it, or,\n"
    "with --mode im2col, an im2col one (cuTensorMapEncodeIm2col).\n"
    "Dimension 0 is the innermost (contiguous) one and comes first in every list.\n"
    "\n"
    "options (a value may follow as the next argument or after '=': --dims 64,64 or --dims=64,64):\n"
    "  --mode MODE        tiled im2col (default tiled)\n"
    "  --dtype T          element type: u8 u16 u32 i32 u64 i64 f16 f32 f64 bf16 f32_ftz tf32 tf32_ftz\n"
    "                     (default bf16)\n"
    "  --dims D0,D1,...   global dimensions in elements, 1 to 5 of them (required; sets the rank)\n"
    "  --strides S1,...   global strides in bytes of dimensions 1..rank-1 (default: dense rows, each row\n"
    "                     rounded up to 16 bytes)\n"
    "  --box B0,B1,...    box dimensions in elements, one per dimension (default: min(D, 64) each, and\n"
    "                     B0 at most one swizzle span)\n"
    "  --estrides E0,...  element strides, one per dimension, 1..8 (default 1,...)\n"
    "  --swizzle MODE     none 32B 64B 128B (also 128B_atom_32B 128B_atom_32B_flip_8B 128B_atom_64B,\n"
    "                     which Hopper lacks) (default none)\n"
    "  --interleave MODE  none 16B 32B (default none)\n"
    "  --l2 MODE          none 64B 128B 256B (default none)\n"
    "  --oob MODE         zero nan (default zero)\n"
    "  --address ADDR     global address (default 0x7f0000000000, a 256-byte aligned stand-in)\n"
    "  --store            set TMA_DESC_STORE: the map will be stored through, so the store-side rules apply\n"
    "                     (no two coordinates may reach the same bytes)\n"
    "  --template         set TMA_DESC_TEMPLATE: a template whose address and strides a kernel replaces\n"
    "                     before any copy (the address may be 0)\n"
    "  --allow-overlap    set TMA_DESC_ALLOW_OVERLAP: accepted for compatibility, no effect (a view whose\n"
    "                     coordinates share bytes is a valid map to load from)\n"
    "im2col only (--dims C,W,N / C,W,H,N / C,W,H,D,N; no --box, --store, --template, --allow-overlap):\n"
    "  --lower L0,...     pixelBoxLowerCorner, one per spatial dimension, W first (default 0,...)\n"
    "  --upper U0,...     pixelBoxUpperCorner, likewise (default 0,...)\n"
    "  --channels C       channels per pixel (default min(D0, 64))\n"
    "  --pixels P         pixels per column, the shared-memory rows of one copy (default 64)\n"
    "  --coord C,W,...    also draw the load at these coordinates (one per dimension, channels first): the\n"
    "                     input pixel and channels of every shared-memory row, from the CPU model (text only)\n"
    "  --offset O0,...    the load's im2col offsets, one per spatial dimension, W first (default 0,...)\n"
    "  --base OFFSET      shared address of the drawn load, a multiple of 128 up to 1048576; sets the swizzle\n"
    "                     phase (default 0)\n"
    "  --json             print one JSON object instead of text\n"
    "  --help             this text\n"
    "  --version          print the version of tma-explain (libtma's)\n"
    "  --                 end of the options (tma-explain takes no other arguments)\n"
    "Numbers are decimal, or hexadecimal after 0x (a leading 0 is still decimal).\n"
    "\n"
    "exit status: 0 valid, 1 invalid (every broken rule is listed, each with its fix), 2 bad usage or a report\n"
    "that cannot be written (a full disk, a closed pipe)\n"
    "\n"
    "examples:\n"
    "  tma-explain --dtype bf16 --dims 4096,4096 --box 64,128 --swizzle 128B\n"
    "  tma-explain --dtype bf16 --dims 4096,4096 --strides 8192 --box 128,64 --swizzle 128B   # too wide\n"
    "  tma-explain --dtype f32 --dims 1000,1000 --strides 4000 --box 32,32 --oob nan --json\n"
    "  tma-explain --dtype u8 --dims 64,64,8 --box 32,32,4 --interleave 32B --swizzle 32B\n"
    "  tma-explain --mode im2col --dims 64,56,56,32 --lower -1,-1 --upper -1,-1 --channels 64 --pixels 128 \\\n"
    "              --swizzle 128B\n";

static const char *const interleave_names[] = {"none", "16B", "32B"};
static const char *const l2_names[] = {"none", "64B", "128B", "256B"};
static const char *const oob_names[] = {"zero", "nan"};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---------------------------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------------------------- */

enum {
    OPT_HELP,
    OPT_VERSION,
    OPT_JSON,
    OPT_ALLOW_OVERLAP,
    OPT_STORE,
    OPT_TEMPLATE,
    OPT_DTYPE,
    OPT_DIMS,
    OPT_STRIDES,
    OPT_BOX,
    OPT_ESTRIDES,
    OPT_SWIZZLE,
    OPT_INTERLEAVE,
    OPT_L2,
    OPT_OOB,
    OPT_ADDRESS,
    OPT_MODE,
    OPT_LOWER,
    OPT_UPPER,
    OPT_CHANNELS,
    OPT_PIXELS,
    OPT_COORD,
    OPT_OFFSET,
    OPT_BASE,
    OPT_COUNT
};

static const cli_option option_table[OPT_COUNT] = {
    [OPT_HELP] = {"--help", "-h", false},
    [OPT_VERSION] = {"--version", NULL, false},
    [OPT_JSON] = {"--json", NULL, false},
    [OPT_ALLOW_OVERLAP] = {"--allow-overlap", NULL, false},
    [OPT_STORE] = {"--store", NULL, false},
    [OPT_TEMPLATE] = {"--template", NULL, false},
    [OPT_DTYPE] = {"--dtype", NULL, true},
    [OPT_DIMS] = {"--dims", NULL, true},
    [OPT_STRIDES] = {"--strides", NULL, true},
    [OPT_BOX] = {"--box", NULL, true},
    [OPT_ESTRIDES] = {"--estrides", NULL, true},
    [OPT_SWIZZLE] = {"--swizzle", NULL, true},
    [OPT_INTERLEAVE] = {"--interleave", NULL, true},
    [OPT_L2] = {"--l2", NULL, true},
    [OPT_OOB] = {"--oob", NULL, true},
    [OPT_ADDRESS] = {"--address", NULL, true},
    [OPT_MODE] = {"--mode", NULL, true},
    [OPT_LOWER] = {"--lower", NULL, true},
    [OPT_UPPER] = {"--upper", NULL, true},
    [OPT_CHANNELS] = {"--channels", NULL, true},
    [OPT_PIXELS] = {"--pixels", NULL, true},
    [OPT_COORD] = {"--coord", NULL, true},
    [OPT_OFFSET] = {"--offset", NULL, true},
    [OPT_BASE] = {"--base", NULL, true},
};

#define MAX_SPATIAL 3

/* The command line. The lists hold what was given, then the defaults for what was not (fill_defaults);
 * the counts stay 0 for a list that was not given, so the text can say "(default)". */
typedef struct explain_options {
    tma_dtype dtype;
    uint64_t dims[TMA_MAX_RANK], strides[TMA_MAX_RANK - 1], box[TMA_MAX_RANK], estrides[TMA_MAX_RANK];
    uint32_t ndims, nstrides, nbox, nestrides;
    int swizzle, interleave, l2, oob;
    uint64_t address;
    bool json;
    uint32_t flags; /* TMA_DESC_* */
    bool im2col; /* --mode im2col; the fields below are its own */
    int32_t lower[MAX_SPATIAL], upper[MAX_SPATIAL];
    uint32_t nlower, nupper, channels, pixels;
    int32_t coord[TMA_MAX_RANK];
    uint64_t offset[MAX_SPATIAL];
    uint32_t ncoord, noffset; /* ncoord 0: no drawing */
    uint32_t base;
    bool has_base;
    bool has_channels;
} explain_options;

static int mode_arg(const char *opt, const char *v, const char *prefix, const char *const *names, int n,
                    const char *choices) {
    const int mode = cli_parse_name(v, prefix, names, n);
    if (mode < 0)
        cli_bad_usage("%s '%s': use %s", opt, v, choices);
    return mode;
}

static void set_im2col_option(explain_options *o, int id, const char *v) {
    switch (id) {
    case OPT_MODE: o->im2col = cli_im2col_mode_arg(v); break;
    case OPT_LOWER: o->nlower = cli_parse_i32_list("--lower", v, o->lower, MAX_SPATIAL); break;
    case OPT_UPPER: o->nupper = cli_parse_i32_list("--upper", v, o->upper, MAX_SPATIAL); break;
    case OPT_CHANNELS:
        o->channels = cli_u32_arg("--channels", v);
        o->has_channels = true;
        break;
    case OPT_PIXELS: o->pixels = cli_u32_arg("--pixels", v); break;
    case OPT_COORD: o->ncoord = cli_parse_i32_list("--coord", v, o->coord, TMA_MAX_RANK); break;
    case OPT_OFFSET: o->noffset = cli_offsets_arg(v, o->offset, MAX_SPATIAL); break;
    case OPT_BASE:
        o->base = cli_base_arg(v);
        o->has_base = true;
        break;
    }
}

static void set_option(explain_options *o, int id, const char *v) {
    switch (id) {
    case OPT_HELP: cli_print_help(usage_text);
    case OPT_VERSION: cli_print_version();
    case OPT_JSON: o->json = true; break;
    case OPT_ALLOW_OVERLAP: o->flags |= TMA_DESC_ALLOW_OVERLAP; break;
    case OPT_STORE: o->flags |= TMA_DESC_STORE; break;
    case OPT_TEMPLATE: o->flags |= TMA_DESC_TEMPLATE; break;
    case OPT_DTYPE: o->dtype = cli_dtype_arg(v); break;
    case OPT_DIMS: o->ndims = cli_parse_list("--dims", v, o->dims, TMA_MAX_RANK); break;
    case OPT_STRIDES: o->nstrides = cli_parse_list("--strides", v, o->strides, TMA_MAX_RANK - 1); break;
    case OPT_BOX: o->nbox = cli_parse_list("--box", v, o->box, TMA_MAX_RANK); break;
    case OPT_ESTRIDES: o->nestrides = cli_estrides_arg(v, o->estrides, TMA_MAX_RANK); break;
    case OPT_SWIZZLE: o->swizzle = (int)cli_swizzle_arg(v); break;
    case OPT_INTERLEAVE:
        o->interleave = mode_arg("--interleave", v, "TMA_INTERLEAVE_", interleave_names, COUNT(interleave_names),
                                 "none, 16B or 32B");
        break;
    case OPT_L2: o->l2 = mode_arg("--l2", v, "TMA_L2_", l2_names, COUNT(l2_names), "none, 64B, 128B or 256B"); break;
    case OPT_OOB: o->oob = mode_arg("--oob", v, "TMA_OOB_", oob_names, COUNT(oob_names), "zero or nan"); break;
    case OPT_ADDRESS: o->address = cli_u64_arg("--address", v, UINT64_MAX, ""); break;
    default: set_im2col_option(o, id, v); break;
    }
}

/* Every list must have one value per dimension (--strides: one per dimension after the first). */
static void check_list_lengths(const explain_options *o) {
    const uint32_t rank = o->ndims;
    if (rank == 0)
        cli_bad_usage("--dims is required (e.g. --dims 4096,4096, dimension 0 first)");
    if (o->nstrides != 0 && o->nstrides != rank - 1)
        cli_bad_usage("--strides has %u value%s; a rank-%u tensor needs %u (dimensions 1..%u)", o->nstrides,
                      cli_plural(o->nstrides), rank, rank - 1, rank - 1);
    if (o->nbox != 0 && o->nbox != rank)
        cli_bad_usage("--box has %u value%s; --dims has %u", o->nbox, cli_plural(o->nbox), rank);
    if (o->nestrides != 0 && o->nestrides != rank)
        cli_bad_usage("--estrides has %u value%s; --dims has %u", o->nestrides, cli_plural(o->nestrides), rank);
}

/* The options of the other mode are refused, by name. */
static void check_mode_options(const explain_options *o, const bool *given) {
    static const int tiled_only[] = {OPT_BOX, OPT_ALLOW_OVERLAP, OPT_STORE, OPT_TEMPLATE};
    static const int im2col_only[] = {OPT_LOWER, OPT_UPPER, OPT_CHANNELS, OPT_PIXELS, OPT_COORD, OPT_OFFSET, OPT_BASE};
    const int *other = o->im2col ? tiled_only : im2col_only;
    const int n = o->im2col ? COUNT(tiled_only) : COUNT(im2col_only);
    for (int i = 0; i < n; i++)
        if (given[other[i]])
            cli_bad_usage("%s is not an option of --mode %s", option_table[other[i]].name,
                          o->im2col ? "im2col" : "tiled");
}

/* A corner list (--lower, --upper) of n values: one per spatial dimension (rank - 2), when the rank has any. */
static void check_corner_length(const char *opt, uint32_t n, uint32_t rank) {
    const uint32_t spatial = rank > 2 ? rank - 2 : 0;
    if (n != 0 && spatial != 0 && n != spatial)
        cli_bad_usage("%s has %u value%s; a rank-%u tensor has %u spatial dimension%s", opt, n, cli_plural(n), rank,
                      spatial, cli_plural(spatial));
}

/* --coord: one per dimension, text only; --offset only with it. */
static void check_drawing(const explain_options *o) {
    if ((o->noffset != 0 || o->has_base) && o->ncoord == 0)
        cli_bad_usage("%s needs --coord (the load to draw)", o->has_base ? "--base" : "--offset");
    if (o->ncoord != 0 && o->ncoord != o->ndims)
        cli_bad_usage("--coord has %u value%s; --dims has %u", o->ncoord, cli_plural(o->ncoord), o->ndims);
    if (o->ncoord != 0 && o->json)
        cli_bad_usage("--coord draws text: leave out --json");
}

static explain_options parse_options(int argc, char **argv) {
    explain_options o = {.dtype = TMA_DTYPE_BF16, .address = DEFAULT_ADDRESS, .pixels = 64};
    bool given[OPT_COUNT] = {false};
    cli_args args = cli_args_start(option_table, OPT_COUNT, argc, argv);
    const char *value;
    for (int id; (id = cli_next_option(&args, &value)) != CLI_DONE;) {
        set_option(&o, id, value);
        given[id] = true;
    }
    check_mode_options(&o, given);
    check_list_lengths(&o);
    check_corner_length("--lower", o.nlower, o.ndims);
    check_corner_length("--upper", o.nupper, o.ndims);
    check_corner_length("--offset", o.noffset, o.ndims);
    check_drawing(&o);
    return o;
}

/* min(D, 64) per dimension (at least 1), and B0 at most one swizzle span (tma_box_dim_max). */
static void default_box(explain_options *o, uint64_t esize) {
    const uint32_t cap0 = tma_box_dim_max((uint32_t)esize, (tma_swizzle)o->swizzle, 0);
    for (uint32_t i = 0; i < o->ndims; i++)
        o->box[i] = o->dims[i] < 64u ? (o->dims[i] ? o->dims[i] : 1u) : 64u;
    if (esize != 0 && o->box[0] > cap0)
        o->box[0] = cap0;
}

static void fill_defaults(explain_options *o) {
    const uint64_t esize = tma_dtype_size(o->dtype);
    if (o->nstrides == 0) /* dense rows, each rounded up to TMA's stride granule */
        cli_dense_strides(o->dims, o->ndims, esize, o->strides, "give --strides (TMA takes strides below 2^40)");
    if (o->nbox == 0 && !o->im2col)
        default_box(o, esize);
    if (!o->has_channels)
        o->channels = o->dims[0] < 64u ? (uint32_t)o->dims[0] : 64u;
    if (o->nestrides == 0)
        for (uint32_t i = 0; i < o->ndims; i++)
            o->estrides[i] = 1;
}

/* ---------------------------------------------------------------------------------------------
 * The descriptor, its check and its facts
 * ------------------------------------------------------------------------------------------- */

static tma_tiled_desc build_descriptor(const explain_options *o) {
    tma_tiled_desc d = {
        .dtype = o->dtype,
        .rank = o->ndims,
        .global_address = (void *)(uintptr_t)o->address,
        .interleave = (tma_interleave)o->interleave,
        .swizzle = (tma_swizzle)o->swizzle,
        .l2_promotion = (tma_l2_promotion)o->l2,
        .oob_fill = (tma_oob_fill)o->oob,
        .flags = o->flags,
    };
    for (uint32_t i = 0; i < o->ndims; i++) {
        d.global_dim[i] = o->dims[i];
        d.box_dim[i] = cli_to_u32("--box", o->box[i]);
        d.element_stride[i] = cli_to_u32("--estrides", o->estrides[i]);
        if (i + 1 < o->ndims)
            d.global_stride[i] = o->strides[i];
    }
    return d;
}

/* Every broken rule, the first MAX_DIAGS with their messages. */
typedef struct verdict {
    tma_status status;
    size_t count; /* broken rules */
    size_t shown; /* of them in diags */
    tma_diag diags[MAX_DIAGS];
} verdict;

static void check_descriptor(const tma_tiled_desc *d, verdict *v) {
    v->status = tma_check_tiled_all(d, v->diags, MAX_DIAGS, &v->count);
    v->shown = v->count < MAX_DIAGS ? v->count : MAX_DIAGS;
}

/* Which copies may go through a valid descriptor: a load and a store at the origin, where no coordinate rule can
 * refuse, so what refuses is the map's own (a view whose coordinates share bytes takes no store; a template takes
 * no copy). */
typedef struct copies {
    tma_diag load, store;
} copies;

static copies copies_of(const tma_tiled_desc *d) {
    const int32_t origin[5] = {0, 0, 0, 0, 0};
    copies c;
    tma_check_coords(d, origin, &c.load);
    tma_check_store_coords(d, origin, &c.store);
    return c;
}

/* The TMA_DESC_* bits the options set, by name. */
static const struct {
    uint32_t bit;
    const char *name;
} desc_flags[] = {{TMA_DESC_ALLOW_OVERLAP, "TMA_DESC_ALLOW_OVERLAP"},
                  {TMA_DESC_TEMPLATE, "TMA_DESC_TEMPLATE"},
                  {TMA_DESC_STORE, "TMA_DESC_STORE"}};

static uint32_t log2_u32(uint32_t v) {
    uint32_t r = 0;
    while (v > 1) {
        v >>= 1;
        r++;
    }
    return r;
}

/* The layout field of a wgmma shared-memory matrix descriptor over the tile (tma_wgmma_layout_of), in words. */
static void describe_wgmma_layout(tma_swizzle s, char *out, size_t cap) {
    const uint32_t layout = tma_wgmma_layout_of(s);
    if (layout > 3u)
        snprintf(out, cap, "none: wgmma cannot read %s", tma_swizzle_name(s));
    else if (s == TMA_SWIZZLE_NONE)
        snprintf(out, cap, "no swizzle (matrix-descriptor layout type %u, interleaved core matrices)", layout);
    else
        snprintf(out, cap, "%uB swizzle (matrix-descriptor layout type %u)", tma_swizzle_span(s), layout);
}

/* What a kernel must keep in step with a valid descriptor. */
typedef struct box_facts {
    uint64_t esize;
    size_t tx, smem, rows, pitch, row_bytes, extent;
    uint32_t swizzle_bits, period, phase_align;
    uint32_t elem_m;     /* CuTe's M of the swizzle on element offsets */
    uint32_t coord_mult; /* coord[0] must be a multiple of this many elements */
    char wgmma[96];
} box_facts;

static box_facts facts_of(const tma_tiled_desc *d, bool valid) {
    box_facts f = {.esize = tma_dtype_size(d->dtype)};
    f.tx = tma_box_tx_bytes(d);
    f.smem = tma_box_smem_bytes(d);
    f.rows = tma_box_rows(d);
    f.pitch = tma_box_row_pitch(d);
    f.row_bytes = valid ? (size_t)d->box_dim[0] * f.esize : 0;
    f.extent = tma_global_extent_bytes(d);
    f.swizzle_bits = tma_swizzle_bits(d->swizzle);
    f.period = tma_swizzle_period(d->swizzle);
    f.phase_align = f.period > TMA_SMEM_ALIGN ? f.period : TMA_SMEM_ALIGN;
    f.elem_m = f.esize ? 4u - log2_u32((uint32_t)f.esize) : 0u;
    f.coord_mult = f.esize ? TMA_COORD0_ALIGN_BYTES / (uint32_t)f.esize : 0u;
    describe_wgmma_layout(d->swizzle, f.wgmma, sizeof f.wgmma);
    return f;
}

/* ---------------------------------------------------------------------------------------------
 * JSON
 * ------------------------------------------------------------------------------------------- */

static void json_u64_array(const uint64_t *v, uint32_t n) {
    putchar('[');
    for (uint32_t i = 0; i < n; i++)
        printf("%s%llu", i ? "," : "", (unsigned long long)v[i]);
    putchar(']');
}

static void print_json_descriptor_head(const explain_options *o) {
    const uint32_t rank = o->ndims;
    printf("\"descriptor\":{\"dtype\":");
    cli_json_string(tma_dtype_name(o->dtype));
    printf(",\"elem_bytes\":%llu,\"rank\":%u,\"global_address\":\"0x%llx\",\"global_dim\":",
           (unsigned long long)tma_dtype_size(o->dtype), rank, (unsigned long long)o->address);
    json_u64_array(o->dims, rank);
    printf(",\"global_stride\":");
    json_u64_array(o->strides, rank - 1);
}

static void print_json_descriptor_tail(const explain_options *o) {
    printf(",\"element_stride\":");
    json_u64_array(o->estrides, o->ndims);
    printf(",\"swizzle\":");
    cli_json_string(cli_swizzle_names[o->swizzle]);
    printf(",\"interleave\":");
    cli_json_string(interleave_names[o->interleave]);
    printf(",\"l2_promotion\":");
    cli_json_string(l2_names[o->l2]);
    printf(",\"oob_fill\":");
    cli_json_string(oob_names[o->oob]);
}

static void print_json_descriptor(const explain_options *o) {
    print_json_descriptor_head(o);
    printf(",\"box_dim\":");
    json_u64_array(o->box, o->ndims);
    print_json_descriptor_tail(o);
    printf(",\"flags\":[");
    const char *sep = "";
    for (int i = 0; i < COUNT(desc_flags); i++)
        if (o->flags & desc_flags[i].bit) {
            printf("%s", sep);
            cli_json_string(desc_flags[i].name);
            sep = ",";
        }
    printf("]}");
}

/* "loads":true|false,"stores":true|false, each refusal as {"status":..,"message":..}. */
static void print_json_copies(const copies *c) {
    const tma_diag *const d[2] = {&c->load, &c->store};
    static const char *const key[2] = {"load", "store"};
    for (int i = 0; i < 2; i++) {
        printf(",\"%ss\":%s", key[i], d[i]->status == TMA_OK ? "true" : "false");
        if (d[i]->status == TMA_OK)
            continue;
        printf(",\"%s_error\":{\"status\":", key[i]);
        cli_json_string(tma_status_name(d[i]->status));
        printf(",\"message\":");
        cli_json_string(d[i]->message);
        putchar('}');
    }
}

static void print_json_errors(const verdict *v) {
    printf("\"broken_rules\":%zu,\"errors\":[", v->count);
    for (size_t i = 0; i < v->shown; i++) {
        printf("%s{\"status\":", i ? "," : "");
        cli_json_string(tma_status_name(v->diags[i].status));
        printf(",\"message\":");
        cli_json_string(v->diags[i].message);
        putchar('}');
    }
    putchar(']');
}

static void print_json_facts(const box_facts *f) {
    printf("\"tx_bytes\":%zu,\"smem_bytes\":%zu,\"smem_rows\":%zu,\"smem_row_pitch\":%zu,"
           "\"box_row_bytes\":%zu,\"row_padding_bytes\":%zu,\"smem_align\":%u,\"swizzle_period\":%u,"
           "\"smem_align_phase0\":%u,\"global_extent_bytes\":%zu,\"coord0_multiple\":%u,",
           f->tx, f->smem, f->rows, f->pitch, f->row_bytes, f->pitch - f->row_bytes, TMA_SMEM_ALIGN, f->period,
           f->phase_align, f->extent, f->coord_mult);
    if (f->swizzle_bits)
        printf("\"cute_swizzle\":\"Swizzle<%u,4,3>\",\"cute_swizzle_elem\":\"Swizzle<%u,%u,3>\",", f->swizzle_bits,
               f->swizzle_bits, f->elem_m);
    else
        printf("\"cute_swizzle\":null,\"cute_swizzle_elem\":null,");
    printf("\"wgmma_swizzle\":");
    cli_json_string(f->wgmma);
}

/* "{"valid":..,["mode":..,]"status":..," - the opening both modes share; mode NULL for tiled. */
static void print_json_opening(const verdict *v, const char *mode) {
    printf("{\"valid\":%s,", v->status == TMA_OK ? "true" : "false");
    if (mode)
        printf("\"mode\":\"%s\",", mode);
    printf("\"status\":");
    cli_json_string(tma_status_name(v->status));
    putchar(',');
}

static void print_json(const explain_options *o, const verdict *v, const copies *c, const box_facts *f) {
    const bool valid = v->status == TMA_OK;
    print_json_opening(v, NULL);
    print_json_descriptor(o);
    putchar(',');
    print_json_errors(v);
    if (valid) {
        print_json_copies(c);
        putchar(',');
        print_json_facts(f);
    }
    printf("}\n");
}

/* ---------------------------------------------------------------------------------------------
 * Text
 * ------------------------------------------------------------------------------------------- */

static void text_list(const uint64_t *v, uint32_t n, const char *sep) {
    for (uint32_t i = 0; i < n; i++)
        printf("%s%llu", i ? sep : "", (unsigned long long)v[i]);
}

/* The fields both modes have, before their own. */
static void print_text_descriptor_head(const explain_options *o) {
    const uint32_t rank = o->ndims;
    printf("descriptor\n");
    printf("  dtype          %s (%llu byte%s)\n", tma_dtype_name(o->dtype),
           (unsigned long long)tma_dtype_size(o->dtype), cli_plural(tma_dtype_size(o->dtype)));
    printf("  rank           %u\n", rank);
    printf("  global_address 0x%llx%s\n", (unsigned long long)o->address,
           o->address == DEFAULT_ADDRESS ? " (stand-in)" : "");
    printf("  global_dim     ");
    text_list(o->dims, rank, " x ");
    printf("   (elements, dimension 0 first)\n");
    if (rank > 1) {
        const char *dflt = o->nstrides ? "" : " (default: dense rows)";
        printf("  global_stride  ");
        text_list(o->strides, rank - 1, ", ");
        if (rank == 2)
            printf("   (bytes, dimension 1)%s\n", dflt);
        else
            printf("   (bytes, dimensions 1..%u)%s\n", rank - 1, dflt);
    }
}

/* The fields both modes have, after their own. */
static void print_text_descriptor_tail(const explain_options *o) {
    printf("  element_stride ");
    text_list(o->estrides, o->ndims, ", ");
    printf("\n");
    printf("  swizzle        %s\n", tma_swizzle_name((tma_swizzle)o->swizzle));
    printf("  interleave     %s\n", interleave_names[o->interleave]);
    printf("  l2_promotion   %s\n", l2_names[o->l2]);
    printf("  oob_fill       %s\n", oob_names[o->oob]);
    if (o->flags) {
        printf("  flags         ");
        for (int i = 0; i < COUNT(desc_flags); i++)
            if (o->flags & desc_flags[i].bit)
                printf(" %s", desc_flags[i].name);
        printf("\n");
    }
    printf("\n");
}

static void print_text_descriptor(const explain_options *o) {
    print_text_descriptor_head(o);
    printf("  box_dim        ");
    text_list(o->box, o->ndims, " x ");
    printf("%s\n", o->nbox ? "" : "   (default)");
    print_text_descriptor_tail(o);
}

static void print_text_errors(const verdict *v) {
    printf("verdict: INVALID, %zu broken rule%s\n", v->count, v->count == 1 ? "" : "s");
    for (size_t i = 0; i < v->shown; i++)
        printf("  %zu. %s: %s\n", i + 1, tma_status_name(v->diags[i].status), v->diags[i].message);
    if (v->count > v->shown)
        printf("  ... and %zu more\n", v->count - v->shown);
}

static void print_text_facts(const tma_tiled_desc *d, const box_facts *f) {
    printf("transaction bytes    %zu per box copy (tma_box_tx_bytes)\n", f->tx);
    printf("shared memory        %zu bytes = %zu row%s x %zu-byte pitch", f->smem, f->rows, cli_plural(f->rows),
           f->pitch);
    if (f->pitch > f->row_bytes)
        printf(" (box row %zu bytes, padded by %zu to the %u-byte swizzle span)", f->row_bytes,
               f->pitch - f->row_bytes, tma_swizzle_span(d->swizzle));
    printf("\n");
    printf("shared alignment     %u bytes (TMA_SMEM_ALIGN)", TMA_SMEM_ALIGN);
    if (f->swizzle_bits)
        printf("; %u bytes for the swizzle to start at phase 0 (tma_swizzle_period)", f->period);
    printf("\n");
    if (f->swizzle_bits)
        printf("CuTe swizzle         Swizzle<%u,4,3> on byte addresses = Swizzle<%u,%u,3> on %s element offsets\n",
               f->swizzle_bits, f->swizzle_bits, f->elem_m, tma_dtype_name(d->dtype));
    else
        printf("CuTe swizzle         none (identity; Swizzle<0,4,3>)\n");
    printf("global extent        %zu bytes from global_address (tma_global_extent_bytes)\n", f->extent);
}

static void print_text_checklist(const tma_tiled_desc *d, const box_facts *f) {
    printf("\nkeep in step in the kernel\n");
    printf("  - mbarrier expect-tx: %zu bytes per box copy (tma_box_tx_bytes; k copies on one barrier: k x %zu)\n",
           f->tx, f->tx);
    printf("  - shared buffer: %zu bytes per box, %u-byte aligned (TMA_SMEM_ALIGN)", f->smem, TMA_SMEM_ALIGN);
    if (f->swizzle_bits)
        printf(", %u-byte aligned for phase 0", f->period);
    printf("\n");
    printf("  - wgmma shared-memory descriptors over this tile: %s\n", f->wgmma);
    printf("  - coord[0] of every copy: a multiple of %u %s element%s (%u bytes; tma_check_coords)\n", f->coord_mult,
           tma_dtype_name(d->dtype), cli_plural(f->coord_mult), TMA_COORD0_ALIGN_BYTES);
    printf("  - element (row, col) of the box at smem_base: tma_swizzle_elem(%s, smem_base, %zu, %llu, row, col)\n",
           tma_swizzle_name(d->swizzle), f->pitch, (unsigned long long)f->esize);
}

/* The verdict of a valid descriptor: whether loads and stores may go through it, and if not, why. */
static void print_text_valid(const copies *c) {
    if (c->load.status != TMA_OK)
        printf("verdict: valid (TMA_OK), a template: no copy may go through it until a kernel replaces its "
               "placeholders\n  copies: %s: %s\n\n",
               tma_status_name(c->load.status), c->load.message);
    else if (c->store.status != TMA_OK)
        printf("verdict: valid (TMA_OK) for loads: it may be read from, not written through\n  stores: %s: %s\n\n",
               tma_status_name(c->store.status), c->store.message);
    else
        printf("verdict: valid (TMA_OK)\n\n");
}

static void print_text(const explain_options *o, const tma_tiled_desc *d, const verdict *v, const copies *c,
                       const box_facts *f) {
    print_text_descriptor(o);
    if (v->status != TMA_OK) {
        print_text_errors(v);
        return;
    }
    print_text_valid(c);
    print_text_facts(d, f);
    print_text_checklist(d, f);
}

/* What a valid tiled map takes, for the summary: "" (loads and stores) or which copies it refuses. */
static const char *copies_note(const copies *c) {
    return c->load.status != TMA_OK    ? ", a template: no copy until a kernel replaces its placeholders"
           : c->store.status != TMA_OK ? ", for loads only: a store through it would race with itself"
                                       : "";
}

/* The one-line summary on stderr (note follows a valid one's), once the report is written; returns the exit
 * status. */
static int summarize(const verdict *v, size_t tx, const char *note) {
    cli_flush_stdout();
    if (v->status == TMA_OK) {
        fprintf(stderr, "tma-explain: valid descriptor (%zu bytes per copy)%s\n", tx, note);
        return 0;
    }
    fprintf(stderr, "tma-explain: invalid descriptor: %zu broken rule%s, first %s\n", v->count,
            v->count == 1 ? "" : "s", tma_status_name(v->status));
    return 1;
}

static int explain_tiled(const explain_options *o) {
    const tma_tiled_desc d = build_descriptor(o);
    verdict v;
    check_descriptor(&d, &v);
    const box_facts f = facts_of(&d, v.status == TMA_OK);
    const copies c = copies_of(&d);
    if (o->json)
        print_json(o, &v, &c, &f);
    else
        print_text(o, &d, &v, &c, &f);
    return summarize(&v, f.tx, copies_note(&c));
}

/* ---------------------------------------------------------------------------------------------
 * im2col (--mode im2col)
 * ------------------------------------------------------------------------------------------- */

static tma_im2col_desc build_im2col_descriptor(const explain_options *o) {
    tma_im2col_desc d = {
        .dtype = o->dtype,
        .rank = o->ndims,
        .global_address = (void *)(uintptr_t)o->address,
        .channels_per_pixel = o->channels,
        .pixels_per_column = o->pixels,
        .interleave = (tma_interleave)o->interleave,
        .swizzle = (tma_swizzle)o->swizzle,
        .l2_promotion = (tma_l2_promotion)o->l2,
        .oob_fill = (tma_oob_fill)o->oob,
    };
    for (uint32_t i = 0; i < o->ndims; i++) {
        d.global_dim[i] = o->dims[i];
        d.element_stride[i] = cli_to_u32("--estrides", o->estrides[i]);
        if (i + 1 < o->ndims)
            d.global_stride[i] = o->strides[i];
    }
    for (uint32_t i = 0; i < MAX_SPATIAL; i++) {
        d.pixel_box_lower[i] = o->lower[i];
        d.pixel_box_upper[i] = o->upper[i];
    }
    return d;
}

static void check_im2col_descriptor(const tma_im2col_desc *d, verdict *v) {
    v->status = tma_check_im2col_all(d, v->diags, MAX_DIAGS, &v->count);
    v->shown = v->count < MAX_DIAGS ? v->count : MAX_DIAGS;
}

static uint32_t spatial_dims(const explain_options *o) { return o->ndims > 2 ? o->ndims - 2 : 0; }

static void print_i32_list(const int32_t *v, uint32_t n, const char *sep) {
    for (uint32_t i = 0; i < n; i++)
        printf("%s%d", i ? sep : "", v[i]);
}

static void print_text_im2col_descriptor(const explain_options *o) {
    print_text_descriptor_head(o);
    printf("  pixel_box_lower ");
    print_i32_list(o->lower, spatial_dims(o), ", ");
    printf("   (W first)%s\n", o->nlower ? "" : " (default)");
    printf("  pixel_box_upper ");
    print_i32_list(o->upper, spatial_dims(o), ", ");
    printf("   (W first)%s\n", o->nupper ? "" : " (default)");
    printf("  channels_per_pixel %u%s\n", o->channels, o->has_channels ? "" : " (default)");
    printf("  pixels_per_column  %u\n", o->pixels);
    print_text_descriptor_tail(o);
}

static void print_text_im2col_facts(const tma_im2col_desc *d) {
    const tma_box_info b = tma_im2col_box_info_of(d);
    const size_t row_bytes = (size_t)d->channels_per_pixel * tma_dtype_size(d->dtype);
    printf("transaction bytes    %zu per copy (tma_im2col_tx_bytes)\n", tma_im2col_tx_bytes(d));
    printf("shared memory        %zu bytes = %u row%s (pixel%s) x %u-byte pitch", tma_im2col_smem_bytes(d), b.rows,
           cli_plural(b.rows), cli_plural(b.rows), b.row_pitch);
    if (b.row_pitch > row_bytes)
        printf(" (row %zu bytes, padded by %zu to the %u-byte swizzle span)", row_bytes, b.row_pitch - row_bytes,
               tma_swizzle_span(d->swizzle));
    printf("\n");
    printf("each row             one input pixel: channels c .. c+%u of it (coord[0] = c)\n",
           d->channels_per_pixel - 1);
    printf("start coordinates    spatial dimension i in [pixel_box_lower[i], global_dim[i+1] + pixel_box_upper[i] - 1]"
           " (tma_check_im2col_coords)\n");
}

static void print_json_im2col(const explain_options *o, const tma_im2col_desc *d, const verdict *v) {
    const bool valid = v->status == TMA_OK;
    print_json_opening(v, "im2col");
    print_json_descriptor_head(o);
    printf(",\"pixel_box_lower\":[");
    print_i32_list(o->lower, spatial_dims(o), ",");
    printf("],\"pixel_box_upper\":[");
    print_i32_list(o->upper, spatial_dims(o), ",");
    printf("],\"channels_per_pixel\":%u,\"pixels_per_column\":%u", o->channels, o->pixels);
    print_json_descriptor_tail(o);
    printf("},");
    print_json_errors(v);
    if (valid) {
        const tma_box_info b = tma_im2col_box_info_of(d);
        printf(",\"tx_bytes\":%zu,\"smem_bytes\":%zu,\"smem_rows\":%u,\"smem_row_pitch\":%u",
               tma_im2col_tx_bytes(d), tma_im2col_smem_bytes(d), b.rows, b.row_pitch);
    }
    printf("}\n");
}

/* The rows of the load at --coord / --offset; the exit status (1 when the load breaks a per-copy rule). */
static int draw_im2col_load(const explain_options *o, const tma_im2col_desc *d) {
    uint16_t offset[MAX_SPATIAL] = {0};
    for (uint32_t i = 0; i < o->noffset; i++)
        offset[i] = (uint16_t)o->offset[i];
    tma_diag diag;
    printf("\n");
    const tma_status st = im2col_rows_print(d, o->coord, offset, o->base, &diag);
    if (st == TMA_OK) {
        cli_flush_stdout();
        fprintf(stderr, "tma-explain: valid descriptor and load (%zu bytes per copy)\n", tma_im2col_tx_bytes(d));
        return 0;
    }
    const char *outcome = st == TMA_ERR_UNSUPPORTED ? "not drawn" : "INVALID";
    printf("load: %s\n  %s: %s\n", outcome, tma_status_name(st), diag.message);
    cli_flush_stdout();
    fprintf(stderr, "tma-explain: valid descriptor, load %s: %s\n", outcome, tma_status_name(st));
    return 1;
}

static int explain_im2col(const explain_options *o) {
    const tma_im2col_desc d = build_im2col_descriptor(o);
    verdict v;
    check_im2col_descriptor(&d, &v);
    if (o->json) {
        print_json_im2col(o, &d, &v);
    } else {
        print_text_im2col_descriptor(o);
        if (v.status != TMA_OK)
            print_text_errors(&v);
        else {
            printf("verdict: valid (TMA_OK)\n\n");
            print_text_im2col_facts(&d);
        }
    }
    if (v.status == TMA_OK && o->ncoord != 0)
        return draw_im2col_load(o, &d);
    return summarize(&v, tma_im2col_tx_bytes(&d), "");
}


int main(int argc, char **argv) {
    cli_program = "tma-explain";
    explain_options o = parse_options(argc, argv);
    fill_defaults(&o);
    const int status = o.im2col ? explain_im2col(&o) : explain_tiled(&o);
    cli_flush_stdout();
    return status;
}
