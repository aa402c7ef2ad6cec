/* gpu: tensor maps built or changed on the device (tma/tensormap.cuh) against the driver and the CPU model.
 *
 *   operand_encodings  - each field replaced on a host-encoded template, with libtma's operand encoding
 *                        (tma_rule_edit_operand), gives the same 128 bytes as the driver's encoding of the edited
 *                        descriptor; where it does not, the codes that would are searched and named.
 *   loads_match_model  - random maps built on the device (from a template, a TMA_DESC_TEMPLATE one with a NULL
 *                        address and zero strides, or from zeros; in a shared staging map then published, or in
 *                        place in global memory then released; every field kind, all types and swizzles), each
 *                        used for 4 loads whose every shared-memory byte must equal the
 *                        CPU model of the same descriptor; the host mirror of the edits (tma_desc_apply_edit)
 *                        must give that descriptor; the device's own check must pass; the built maps are compared
 *                        with the driver's encoding, byte for byte, and the differences counted.
 *   stores_match_model - the same for stores.
 *   device_check_agrees_with_host - random invalid edits: the device's tma_rules_tiled status equals the host's.
 *   checked_mode_*     - publishing an invalid map prints the host's message and traps.
 *   fences             - a map changed on the device without the acquire fence: how often a load reads the old
 *                        map; maps as kernel parameters, in __constant__ and in host-written global memory.
 * Random configurations; the seed is logged and TMA_TEST_SEED replays it. */
#include <inttypes.h>

#include "gpu_common.h"

#include <criterion/parameterized.h> /* after criterion.h, whose Test stands in for the real one until then */
#include "tensormap_conformance.h"

enum { BATCH = 200, BOXES = 4, ARENA = 32 * 1024, POOL_SLOT = 1u << 19 };

/* Every field the jobs of a batch need, on the host and on the device. */
typedef struct batch {
    int n;
    tm_job jobs[BATCH];
    tma_tensor tmpls[BATCH];
    tma_tiled_desc tmpl_descs[BATCH];   /* device addresses */
    tma_tiled_desc targets[BATCH];      /* the descriptor each job must end with (device addresses) */
    tma_map_edit edits[BATCH * 32];
    uint32_t nedits;
    int32_t coords[BATCH * BOXES][5];
    uint32_t offsets[BATCH * BOXES];
    uint8_t *pool_h, *pool_d;           /* each job's tensor at POOL_SLOT * j */
} batch;

static void batch_open(batch *b) {
    memset(b, 0, sizeof *b);
    b->pool_h = malloc((size_t)BATCH * POOL_SLOT);
    cr_assert(b->pool_h != NULL, "out of host memory");
    CUDA_OK(cudaMalloc((void **)&b->pool_d, (size_t)BATCH * POOL_SLOT));
}

static void batch_close(batch *b) {
    free(b->pool_h);
    CUDA_OK(cudaFree(b->pool_d));
}

static tma_tiled_desc with_address(tma_tiled_desc d, void *a) {
    d.global_address = a;
    return d;
}

static void add_edit(batch *b, tma_map_edit e) {
    cr_assert_lt(b->nedits, (uint32_t)(BATCH * 32), "edit list full");
    b->edits[b->nedits++] = e;
}

/* The edits that take `from` to `to`: every field that differs, plus now and then one that does not (an edit to
 * the same value must change nothing). With all != 0, every field `to` has. */
static void edits_between(batch *b, const tma_tiled_desc *from, const tma_tiled_desc *to, int all) {
    if (all || from->global_address != to->global_address || rnd() % 4 == 0)
        add_edit(b, tma_edit(TMA_FIELD_GLOBAL_ADDRESS, 0, (uint64_t)(uintptr_t)to->global_address));
    if (all || from->rank != to->rank)
        add_edit(b, tma_edit(TMA_FIELD_RANK, 0, to->rank));
    for (uint32_t i = 0; i < to->rank; i++) {
        if (all || from->global_dim[i] != to->global_dim[i] || rnd() % 8 == 0)
            add_edit(b, tma_edit(TMA_FIELD_GLOBAL_DIM, i, to->global_dim[i]));
        if (i > 0 && (all || from->global_stride[i - 1] != to->global_stride[i - 1]))
            add_edit(b, tma_edit(TMA_FIELD_GLOBAL_STRIDE, i, to->global_stride[i - 1]));
        if (all || from->box_dim[i] != to->box_dim[i])
            add_edit(b, tma_edit(TMA_FIELD_BOX_DIM, i, to->box_dim[i]));
        const uint32_t fe = from->element_stride[i] ? from->element_stride[i] : 1, te = to->element_stride[i] ? to->element_stride[i] : 1;
        if (all || fe != te)
            add_edit(b, tma_edit(TMA_FIELD_ELEMENT_STRIDE, i, te));
    }
    if (all || from->dtype != to->dtype)
        add_edit(b, tma_edit(TMA_FIELD_DTYPE, 0, to->dtype));
    if (all || from->interleave != to->interleave)
        add_edit(b, tma_edit(TMA_FIELD_INTERLEAVE, 0, to->interleave));
    if (all || from->swizzle != to->swizzle || rnd() % 8 == 0)
        add_edit(b, tma_edit(TMA_FIELD_SWIZZLE, 0, to->swizzle));
    if (all || from->oob_fill != to->oob_fill)
        add_edit(b, tma_edit(TMA_FIELD_OOB_FILL, 0, to->oob_fill));
}

/* Compare the rules' fields of two descriptors (those within the rank, and the kinds). */
static int same_desc(const tma_tiled_desc *a, const tma_tiled_desc *b) {
    if (a->dtype != b->dtype || a->rank != b->rank || a->global_address != b->global_address ||
        a->interleave != b->interleave || a->swizzle != b->swizzle || a->oob_fill != b->oob_fill ||
        a->l2_promotion != b->l2_promotion)
        return 0;
    for (uint32_t i = 0; i < a->rank; i++) {
        const uint32_t ea = a->element_stride[i] ? a->element_stride[i] : 1, eb = b->element_stride[i] ? b->element_stride[i] : 1;
        if (a->global_dim[i] != b->global_dim[i] || a->box_dim[i] != b->box_dim[i] || ea != eb ||
            (i > 0 && a->global_stride[i - 1] != b->global_stride[i - 1]))
            return 0;
    }
    return 1;
}

/* The fields a template may differ in from the map built from it, by class. */
enum {
    CHANGE_ADDRESS = 1 << 0,  /* global_address */
    CHANGE_EXTENT = 1 << 1,   /* global_dim, global_stride (same rank) */
    CHANGE_BOX = 1 << 2,      /* box_dim (same rank) */
    CHANGE_ESTRIDE = 1 << 3,  /* element_stride (same rank) */
    CHANGE_DTYPE = 1 << 4,    /* dtype */
    CHANGE_SWIZZLE = 1 << 5,  /* swizzle */
    CHANGE_OOB = 1 << 6,      /* oob_fill */
    CHANGE_ALL = 0xffff,      /* everything, the rank too */
};

/* With the CHANGE_* classes: the template is a TMA_DESC_TEMPLATE one, encoded with a NULL address and zero strides
 * (as grouped GEMMs encode theirs); the edits replace them, and the built map is checked as a real one. */
enum { TEMPLATE_NULL = 1 << 16 };

/* A random template for target `to` that differs from it only in the classes of `changes` (and in the L2
 * promotion, which no instruction sets: the target keeps the template's). */
static tma_tiled_desc random_template_for(tma_tiled_desc *to, int changes) {
    for (int tries = 0; tries < 100000; tries++) {
        const tma_tiled_desc other = random_desc(NULL, 0);
        tma_tiled_desc from = changes == CHANGE_ALL ? other : *to;
        const int same_rank = other.rank == to->rank;
        if (changes != CHANGE_ALL && !same_rank && (changes & (CHANGE_EXTENT | CHANGE_BOX | CHANGE_ESTRIDE)))
            continue;
        for (uint32_t i = 0; i < 5 && changes != CHANGE_ALL; i++) {
            if (changes & CHANGE_EXTENT) {
                from.global_dim[i] = other.global_dim[i];
                if (i < 4)
                    from.global_stride[i] = other.global_stride[i];
            }
            if (changes & CHANGE_BOX)
                from.box_dim[i] = other.box_dim[i];
            if (changes & CHANGE_ESTRIDE)
                from.element_stride[i] = other.element_stride[i];
        }
        if (changes != CHANGE_ALL) {
            if (changes & CHANGE_DTYPE)
                from.dtype = other.dtype;
            if (changes & CHANGE_SWIZZLE)
                from.swizzle = other.swizzle;
            if (changes & CHANGE_OOB)
                from.oob_fill = other.oob_fill;
            from.l2_promotion = other.l2_promotion;
        }
        if (tma_check_tiled(&from, NULL) == TMA_OK && tma_global_extent_bytes(&from) <= POOL_SLOT) {
            to->l2_promotion = from.l2_promotion; /* no instruction sets it */
            return from;
        }
    }
    cr_assert_fail("no template found for change classes 0x%x", changes);
    return *to;
}

/* Job j: a random target of type dtype (its tensor at pool slot j), a template that differs from it in the classes
 * of `changes` (or zeros), the edits between them. */
static void make_job(batch *b, int j, tma_dtype dtype, int store, int start, int edit_mode, int changes) {
    const int null_template = (changes & TEMPLATE_NULL) != 0;
    changes &= ~TEMPLATE_NULL;
    tma_tiled_desc to = random_desc(&dtype, 1);
    to.global_address = (void *)(uintptr_t)4096;
    const int zero = start == TM_FROM_ZERO;
    tma_tiled_desc from = zero ? random_desc(NULL, 0) : random_template_for(&to, changes);
    if (zero)
        to.l2_promotion = TMA_L2_NONE; /* no instruction sets it */
    to.global_address = b->pool_d + (size_t)POOL_SLOT * (size_t)j;
    /* a valid address: another slot's when addresses may change */
    from.global_address = b->pool_d + (size_t)POOL_SLOT * (size_t)((changes & CHANGE_ADDRESS ? j + 1 : j) % BATCH);
    if (null_template) {
        from.global_address = NULL;
        memset(from.global_stride, 0, sizeof from.global_stride);
        from.flags |= TMA_DESC_TEMPLATE;
    }
    tm_job *job = &b->jobs[j];
    job->start = start;
    job->edit_mode = edit_mode;
    job->first_edit = b->nedits;
    job->tmpl = (uint32_t)j;
    job->store = store;
    job->box0 = (uint32_t)j * BOXES;
    job->boxes = store ? 0 : BOXES;
    tma_diag diag;
    cr_assert_eq(tma_tensor_make(&b->tmpls[j], &from, &diag), TMA_OK, "job %d: template: %s", j, diag.message);
    b->tmpl_descs[j] = from;
    b->targets[j] = to;
    tma_tiled_desc mirror = zero ? tma_rule_zero_map_desc() : from;
    edits_between(b, &mirror, &to, zero);
    job->edit_count = b->nedits - job->first_edit;
    /* the host mirror: the same edits on the descriptor give the target, and it passes every rule */
    for (uint32_t i = 0; i < job->edit_count; i++)
        tma_desc_apply_edit(&mirror, b->edits[job->first_edit + i]);
    to.l2_promotion = mirror.l2_promotion; /* the template's, or NONE where the map was encoded again */
    b->targets[j] = to;
    cr_assert(same_desc(&mirror, &to), "job %d: the host mirror of the edits is not the target", j);
    cr_assert(!null_template || ((b->tmpls[j].box.flags & TMA_BOX_TEMPLATE) && !(mirror.flags & TMA_DESC_TEMPLATE)),
              "job %d: the template's box facts say template, the edited descriptor does not", j);
    cr_assert_eq(tma_check_tiled(&mirror, &diag), TMA_OK, "job %d: mirror refused: %s", j, diag.message);
    const size_t extent = tma_global_extent_bytes(&to);
    rnd_bytes(b->pool_h + (size_t)POOL_SLOT * j, extent);
    CUDA_OK(cudaMemcpy(b->pool_d + (size_t)POOL_SLOT * j, b->pool_h + (size_t)POOL_SLOT * j, extent,
                       cudaMemcpyHostToDevice));
    const uint32_t smem = (uint32_t)tma_box_smem_bytes(&to);
    for (uint32_t k = 0; k < (store ? 1u : BOXES); k++) {
        random_coords(&to, b->coords[job->box0 + k], !store);
        b->offsets[job->box0 + k] = 128u * (uint32_t)rnd_in(0, (ARENA - 1024 - smem) / 128);
    }
}

/* Device copies of a batch's arrays. */
typedef struct device_batch {
    tm_job *jobs;
    tma_tensor *tmpls, *slots;
    tma_tiled_desc *tmpl_descs;
    tma_map_edit *edits;
    int32_t (*coords)[5];
    uint32_t *offsets;
    uint8_t *poison, *image, *out;
    int *status;
} device_batch;

#define TO_DEVICE(dst, src, bytes)                                                                  \
    do {                                                                                            \
        CUDA_OK(cudaMalloc((void **)&(dst), (bytes)));                                              \
        CUDA_OK(cudaMemcpy((dst), (src), (bytes), cudaMemcpyHostToDevice));                         \
    } while (0)

static void run_batch(const batch *b, const uint8_t *poison, const uint8_t *image, tma_tensor *slots, int *status,
                      uint8_t *out) {
    device_batch d;
    TO_DEVICE(d.jobs, b->jobs, sizeof(tm_job) * b->n);
    TO_DEVICE(d.tmpls, b->tmpls, sizeof(tma_tensor) * b->n);
    TO_DEVICE(d.tmpl_descs, b->tmpl_descs, sizeof(tma_tiled_desc) * b->n);
    TO_DEVICE(d.edits, b->edits, sizeof(tma_map_edit) * (b->nedits ? b->nedits : 1));
    TO_DEVICE(d.coords, b->coords, sizeof(b->coords));
    TO_DEVICE(d.offsets, b->offsets, sizeof(b->offsets));
    TO_DEVICE(d.poison, poison, ARENA);
    TO_DEVICE(d.image, image, ARENA);
    CUDA_OK(cudaMalloc((void **)&d.slots, sizeof(tma_tensor) * b->n));
    CUDA_OK(cudaMalloc((void **)&d.status, sizeof(int) * b->n));
    CUDA_OK(cudaMalloc((void **)&d.out, (size_t)ARENA * b->n));
    CUDA_OK(tm_run_jobs(d.jobs, b->n, d.tmpls, d.tmpl_descs, d.edits, (const int32_t(*)[5])d.coords, d.offsets,
                        d.poison, d.image, ARENA, d.slots, d.status, d.out));
    CUDA_OK(cudaMemcpy(slots, d.slots, sizeof(tma_tensor) * b->n, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(status, d.status, sizeof(int) * b->n, cudaMemcpyDeviceToHost));
    if (out)
        CUDA_OK(cudaMemcpy(out, d.out, (size_t)ARENA * b->n, cudaMemcpyDeviceToHost));
    void *all[] = {d.jobs, d.tmpls, d.tmpl_descs, d.edits, d.coords, d.offsets, d.poison, d.image, d.slots, d.status,
                   d.out};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        CUDA_OK(cudaFree(all[i]));
}

/* Byte positions where a built map differs from the driver's encoding of the same descriptor, tallied. */
typedef struct map_diff {
    unsigned compared, equal;
    unsigned byte_differs[128];
} map_diff;

static void compare_with_driver(map_diff *md, const tma_tiled_desc *target, const tma_tensor *built) {
    tma_tensor drv;
    tma_diag diag;
    cr_assert_eq(tma_tensor_make(&drv, target, &diag), TMA_OK, "driver encoding: %s", diag.message);
    const uint8_t *x = (const uint8_t *)&drv.map, *y = (const uint8_t *)&built->map;
    md->compared++;
    md->equal += memcmp(x, y, 128) == 0;
    for (int i = 0; i < 128; i++)
        md->byte_differs[i] += x[i] != y[i];
    cr_assert(memcmp(&drv.box, &built->box, sizeof drv.box) == 0, "box facts built on the device differ");
}

static void log_diff(const char *what, const map_diff *md) {
    char where[512] = "";
    size_t n = 0;
    for (int i = 0; i < 128; i++)
        if (md->byte_differs[i])
            n += (size_t)snprintf(where + n, sizeof where - n, " %d(%u)", i, md->byte_differs[i]);
    cr_log_info("%s: %u of %u maps equal the driver's encoding byte for byte; bytes that differed (count):%s", what,
                md->equal, md->compared, n ? where : " none");
}

/* The ways of building a map, each in its own process (a fault names its way): from a template or from zeros,
 * staged in shared memory or edited in place in global memory; and, from a template, edits of one class of
 * fields at a time. */
typedef struct build_way {
    char name[48]; /* no pointers: Criterion's workers are new processes, with their own addresses */
    int start, edit_mode, changes;
} build_way;

static build_way ways[] = {
    {"template, staged", TM_FROM_TEMPLATE, TM_EDIT_BUILDER, CHANGE_ALL},
    {"template, in global memory", TM_FROM_TEMPLATE, TM_EDIT_GLOBAL, CHANGE_ALL},
    {"zeros, staged", TM_FROM_ZERO, TM_EDIT_BUILDER, CHANGE_ALL},
    {"zeros, in global memory", TM_FROM_ZERO, TM_EDIT_GLOBAL, CHANGE_ALL},
    {"NULL template, staged", TM_FROM_TEMPLATE, TM_EDIT_BUILDER, CHANGE_ALL | TEMPLATE_NULL},
    {"NULL template, in global memory", TM_FROM_TEMPLATE, TM_EDIT_GLOBAL, CHANGE_ALL | TEMPLATE_NULL},
    {"template, address and extents changed", TM_FROM_TEMPLATE, TM_EDIT_BUILDER, CHANGE_ADDRESS | CHANGE_EXTENT},
    {"template, box changed", TM_FROM_TEMPLATE, TM_EDIT_BUILDER, CHANGE_BOX},
    {"template, element strides changed", TM_FROM_TEMPLATE, TM_EDIT_BUILDER, CHANGE_ESTRIDE},
    {"template, dtype changed", TM_FROM_TEMPLATE, TM_EDIT_BUILDER, CHANGE_DTYPE},
    {"template, swizzle changed", TM_FROM_TEMPLATE, TM_EDIT_BUILDER, CHANGE_SWIZZLE},
    {"template, oob fill changed", TM_FROM_TEMPLATE, TM_EDIT_BUILDER, CHANGE_OOB},
};

ParameterizedTestParameters(gpu_tensormap, loads_match_model) {
    return cr_make_param_array(build_way, ways, sizeof ways / sizeof ways[0]);
}

ParameterizedTest(build_way *way, gpu_tensormap, loads_match_model, .timeout = 600) {
    require_sm90();
    char suite[96];
    snprintf(suite, sizeof suite, "gpu_tensormap.loads_match_model (%s)", way->name);
    seed_rng(suite);
    const int total = way->changes == CHANGE_ALL ? config_count(2000) / 4 + 1 /* the four: >= 2,000 */
                                                 : config_count(2000) / 8 + 1;
    static batch b;
    batch_open(&b);
    uint8_t *poison = malloc(ARENA), *image = malloc(ARENA), *out = malloc((size_t)ARENA * BATCH),
            *want = malloc(ARENA);
    tma_tensor *slots = malloc(sizeof(tma_tensor) * BATCH);
    int status[BATCH];
    cr_assert(poison && image && out && want && slots);
    map_diff diff = {0};
    unsigned by_swizzle[4] = {0}, by_type[TMA_DTYPE_COUNT_] = {0}, by_rank[6] = {0};
    /* TMA_TM_TRACE=1: one job per launch, its template and target printed first (the last printed names a fault) */
    const int trace = getenv("TMA_TM_TRACE") != NULL;
    for (int done = 0; done < total;) {
        b.n = trace ? 1 : total - done < BATCH ? total - done : BATCH;
        b.nedits = 0;
        rnd_bytes(poison, ARENA);
        for (int j = 0; j < b.n; j++)
            make_job(&b, j, (tma_dtype)((done + j) % TMA_DTYPE_COUNT_), 0, way->start, way->edit_mode, way->changes);
        if (trace) {
            char from[600], to[600];
            describe(&b.tmpl_descs[0], b.coords[0], from, sizeof from);
            describe(&b.targets[0], b.coords[0], to, sizeof to);
            fprintf(stderr, "trace job %d\n  template l2 %d %s\n  target   %s\n", done, (int)b.tmpl_descs[0].l2_promotion,
                    from, to);
        }
        run_batch(&b, poison, image, slots, status, out);
        for (int j = 0; j < b.n; j++) {
            const tm_job *job = &b.jobs[j];
            char text[600];
            describe(&b.targets[j], b.coords[job->box0], text, sizeof text);
            cr_assert_eq(status[j], TMA_OK, "job %d: the device's check says %s: %s", done + j,
                         tma_status_name((tma_status)status[j]), text);
            /* the model of the same descriptor over the host copy of the tensor */
            memcpy(want, poison, ARENA);
            tma_tiled_desc host = with_address(b.targets[j], b.pool_h + (size_t)POOL_SLOT * j);
            for (uint32_t k = 0; k < BOXES; k++)
                cr_assert_eq(tma_model_load_tiled(&host, b.coords[job->box0 + k], want, ARENA,
                                                  b.offsets[job->box0 + k]),
                             TMA_OK, "model load");
            const uint8_t *got = out + (size_t)ARENA * j;
            for (uint32_t i = 0; i < ARENA; i++)
                cr_assert_eq(got[i], want[i], "job %d (%s) byte %u: GPU 0x%02x, model 0x%02x: %s", done + j,
                             way->name, i, got[i], want[i], text);
            compare_with_driver(&diff, &b.targets[j], &slots[j]);
            by_swizzle[b.targets[j].swizzle]++;
            by_type[b.targets[j].dtype]++;
            by_rank[b.targets[j].rank]++;
        }
        done += b.n;
    }
    cr_log_info("device-built maps (%s): %d configurations, %d loads each, every byte equal to the model; ranks 1-5: "
                "%u %u %u %u %u; swizzle NONE/32/64/128: %u %u %u %u",
                way->name, total, BOXES, by_rank[1], by_rank[2], by_rank[3], by_rank[4], by_rank[5], by_swizzle[0],
                by_swizzle[1], by_swizzle[2], by_swizzle[3]);
    for (int t = 0; t < TMA_DTYPE_COUNT_ && t < total; t++) /* the targets' types go round: all 13 from 13 jobs on */
        cr_expect_gt(by_type[t], 0, "every type drawn (%s)", tma_dtype_name((tma_dtype)t));
    log_diff(way->name, &diff);
    batch_close(&b);
    free(poison), free(image), free(out), free(want), free(slots);
}

Test(gpu_tensormap, stores_match_model, .timeout = 600) {
    require_sm90();
    seed_rng("gpu_tensormap.stores_match_model");
    const int total = config_count(500);
    static batch b;
    batch_open(&b);
    uint8_t *poison = calloc(ARENA, 1), *image = malloc(ARENA), *got = malloc(POOL_SLOT), *want = malloc(POOL_SLOT);
    tma_tensor *slots = malloc(sizeof(tma_tensor) * BATCH);
    int status[BATCH];
    cr_assert(image && got && want && slots && poison);
    for (int done = 0; done < total;) {
        b.n = total - done < BATCH ? total - done : BATCH;
        b.nedits = 0;
        rnd_bytes(image, ARENA);
        for (int j = 0; j < b.n; j++)
            make_job(&b, j, (tma_dtype)((done + j) % TMA_DTYPE_COUNT_), 1, (int)(rnd() % 2),
                     rnd() % 2 ? TM_EDIT_BUILDER : TM_EDIT_GLOBAL, CHANGE_ALL | (rnd() % 4 ? 0 : TEMPLATE_NULL));
        run_batch(&b, poison, image, slots, status, NULL);
        for (int j = 0; j < b.n; j++) {
            const tm_job *job = &b.jobs[j];
            char text[600];
            describe(&b.targets[j], b.coords[job->box0], text, sizeof text);
            cr_assert_eq(status[j], TMA_OK, "job %d: device check %s", done + j, tma_status_name((tma_status)status[j]));
            const size_t extent = tma_global_extent_bytes(&b.targets[j]);
            memcpy(want, b.pool_h + (size_t)POOL_SLOT * j, extent);
            tma_tiled_desc host = with_address(b.targets[j], want);
            cr_assert_eq(tma_model_store_tiled(&host, b.coords[job->box0], image, ARENA, b.offsets[job->box0]), TMA_OK,
                         "model store");
            CUDA_OK(cudaMemcpy(got, b.pool_d + (size_t)POOL_SLOT * j, extent, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < extent; i++)
                cr_assert_eq(got[i], want[i], "store job %d byte %zu: GPU 0x%02x, model 0x%02x: %s", done + j, i, got[i],
                             want[i], text);
        }
        done += b.n;
    }
    cr_log_info("device-built maps: %d stores, every byte of each tensor equal to the model", total);
    batch_close(&b);
    free(poison), free(image), free(got), free(want), free(slots);
}

/* ---------------------------------------------------------------------------------------------
 * The operand encodings
 * ------------------------------------------------------------------------------------------- */

/* The bytes where two maps differ, as " [i] xx/yy", or " identical". */
static void diff_bytes(const tma_map *x, const tma_map *y, char *text, size_t size) {
    size_t n = 0;
    text[0] = '\0';
    for (int i = 0; i < 128 && n < size; i++) {
        const uint8_t a = ((const uint8_t *)x)[i], c = ((const uint8_t *)y)[i];
        if (a != c)
            n += (size_t)snprintf(text + n, size - n, " [%d] %02x/%02x", i, a, c);
    }
    if (n == 0)
        snprintf(text, size, " identical");
}

/* A template changed by a few edits; the result must load what the model loads, and its bytes are compared with
 * the driver's encoding of the edited descriptor. Each in its own process (ParameterizedTest). */
typedef struct probe {
    char what[48];
    tma_tiled_desc from; /* global_address: an offset into the test's buffer */
    tma_map_edit edit[4];
    int nedits;
} probe;

static tma_tiled_desc probe_base(void *addr) {
    tma_tiled_desc d = {.dtype = TMA_DTYPE_F32, .rank = 3, .global_address = addr, .global_dim = {64, 48, 6},
                        .global_stride = {512, 512 * 48}, .box_dim = {8, 16, 2}, .element_stride = {1, 1, 1}};
    return d;
}

static probe probes[64];

static size_t make_probes(void) {
    size_t n = 0;
    const tma_tiled_desc base = probe_base(NULL);
#define PROBE_FROM(type, name, ...)                                                                 \
    do {                                                                                            \
        probe *p_ = &probes[n++];                                                                   \
        snprintf(p_->what, sizeof p_->what, "%s", name);                                            \
        p_->from = base;                                                                            \
        p_->from.dtype = type;                                                                      \
        const tma_map_edit e_[] = {__VA_ARGS__};                                                    \
        p_->nedits = (int)(sizeof e_ / sizeof e_[0]);                                               \
        memcpy(p_->edit, e_, sizeof e_);                                                            \
    } while (0)
#define PROBE(name, ...) PROBE_FROM(TMA_DTYPE_F32, name, __VA_ARGS__)
    PROBE("global_address", tma_edit(TMA_FIELD_GLOBAL_ADDRESS, 0, 4096));
    PROBE("global_dim[0]", tma_edit(TMA_FIELD_GLOBAL_DIM, 0, 40));
    PROBE("global_dim[2]", tma_edit(TMA_FIELD_GLOBAL_DIM, 2, 5));
    PROBE("global_stride of dim 2", tma_edit(TMA_FIELD_GLOBAL_STRIDE, 2, 512 * 64));
    PROBE("box_dim[0] 16", tma_edit(TMA_FIELD_BOX_DIM, 0, 16));
    PROBE("box_dim[0] 4", tma_edit(TMA_FIELD_BOX_DIM, 0, 4));
    PROBE("box_dim[1] 7", tma_edit(TMA_FIELD_BOX_DIM, 1, 7));
    PROBE("box_dim[2] 1", tma_edit(TMA_FIELD_BOX_DIM, 2, 1));
    PROBE("element_stride[1] 3", tma_edit(TMA_FIELD_ELEMENT_STRIDE, 1, 3));
    PROBE("element_stride[2] 2", tma_edit(TMA_FIELD_ELEMENT_STRIDE, 2, 2));
    PROBE("dtype f16 (box_dim[0] 16)", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_F16),
          tma_edit(TMA_FIELD_BOX_DIM, 0, 16));
    PROBE("dtype u8 (box_dim[0] 16)", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_U8), tma_edit(TMA_FIELD_BOX_DIM, 0, 16));
    PROBE("dtype u64 (box_dim[0] 2)", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_U64), tma_edit(TMA_FIELD_BOX_DIM, 0, 2));
    PROBE("dtype f64 (box_dim[0] 2)", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_F64), tma_edit(TMA_FIELD_BOX_DIM, 0, 2));
    PROBE("dtype bf16 (box_dim[0] 8)", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_BF16));
    PROBE("dtype i32", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_I32));
    PROBE("dtype f32_ftz", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_F32_FTZ));
    PROBE("dtype tf32", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_TF32));
    PROBE("dtype tf32_ftz", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_TF32_FTZ));
    PROBE("dtype u16 (box_dim[0] 8)", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_U16));
    PROBE("swizzle 32B", tma_edit(TMA_FIELD_SWIZZLE, 0, TMA_SWIZZLE_32B));
    PROBE("swizzle 64B", tma_edit(TMA_FIELD_SWIZZLE, 0, TMA_SWIZZLE_64B));
    PROBE("swizzle 128B", tma_edit(TMA_FIELD_SWIZZLE, 0, TMA_SWIZZLE_128B));
    PROBE("swizzle 128B, box_dim[0] 32", tma_edit(TMA_FIELD_SWIZZLE, 0, TMA_SWIZZLE_128B),
          tma_edit(TMA_FIELD_BOX_DIM, 0, 32));
    PROBE("oob_fill NaN", tma_edit(TMA_FIELD_OOB_FILL, 0, TMA_OOB_NAN));
    PROBE("rank 2", tma_edit(TMA_FIELD_RANK, 0, 2));
    PROBE("rank 4", tma_edit(TMA_FIELD_RANK, 0, 4), tma_edit(TMA_FIELD_GLOBAL_DIM, 3, 2),
          tma_edit(TMA_FIELD_GLOBAL_STRIDE, 3, 512 * 48 * 6), tma_edit(TMA_FIELD_BOX_DIM, 3, 2));
    PROBE_FROM(TMA_DTYPE_TF32, "from tf32: dtype f32", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_F32));
    PROBE_FROM(TMA_DTYPE_TF32, "from tf32: dtype u32", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_U32));
    PROBE_FROM(TMA_DTYPE_TF32, "from tf32: dtype tf32_ftz", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_TF32_FTZ));
    PROBE_FROM(TMA_DTYPE_TF32, "from tf32: dtype f16 (box_dim[0] 16)", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_F16),
               tma_edit(TMA_FIELD_BOX_DIM, 0, 16));
    PROBE_FROM(TMA_DTYPE_TF32_FTZ, "from tf32_ftz: dtype f32_ftz", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_F32_FTZ));
    PROBE_FROM(TMA_DTYPE_TF32_FTZ, "from tf32_ftz: dtype f32", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_F32));
    PROBE_FROM(TMA_DTYPE_F32_FTZ, "from f32_ftz: dtype f32", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_F32));
    PROBE_FROM(TMA_DTYPE_U32, "from u32: dtype f32", tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_F32));
#undef PROBE
#undef PROBE_FROM
    return n;
}

ParameterizedTestParameters(gpu_tensormap, field_edits) {
    const size_t n = make_probes();
    return cr_make_param_array(probe, probes, n);
}

ParameterizedTest(probe *p, gpu_tensormap, field_edits, .timeout = 120) {
    require_sm90();
    seed_rng("gpu_tensormap.field_edits");
    static batch b;
    batch_open(&b);
    b.n = 1;
    /* the template over the pool, the edits (addresses are offsets into it) */
    tma_tiled_desc from = with_address(p->from, b.pool_d);
    tma_tiled_desc to = from;
    for (int i = 0; i < p->nedits; i++) {
        tma_map_edit e = p->edit[i];
        if (e.field == TMA_FIELD_GLOBAL_ADDRESS)
            e.value += (uint64_t)(uintptr_t)b.pool_d;
        b.edits[i] = e;
        tma_desc_apply_edit(&to, e);
    }
    b.nedits = (uint32_t)p->nedits;
    tma_diag diag;
    cr_assert_eq(tma_tensor_make(&b.tmpls[0], &from, &diag), TMA_OK, "%s: template: %s", p->what, diag.message);
    cr_assert_eq(tma_check_tiled(&to, &diag), TMA_OK, "%s: target: %s", p->what, diag.message);
    b.tmpl_descs[0] = from;
    b.targets[0] = to;
    b.jobs[0] = (tm_job){.start = TM_FROM_TEMPLATE, .edit_mode = TM_EDIT_BUILDER, .edit_count = (uint32_t)p->nedits,
                         .boxes = BOXES};
    const size_t extent = tma_global_extent_bytes(&to) + 8192;
    rnd_bytes(b.pool_h, extent);
    CUDA_OK(cudaMemcpy(b.pool_d, b.pool_h, extent, cudaMemcpyHostToDevice));
    for (uint32_t k = 0; k < BOXES; k++) {
        random_coords(&to, b.coords[k], 1);
        b.offsets[k] = 1024u * k;
    }
    uint8_t *poison = malloc(ARENA), *out = malloc(ARENA), *want = malloc(ARENA);
    tma_tensor built;
    int status;
    cr_assert(poison && out && want);
    rnd_bytes(poison, ARENA);
    /* first build only, and log the bytes against the driver's encoding of the same descriptor (a fault of the
     * loads below must not hide them) */
    b.jobs[0].boxes = 0;
    run_batch(&b, poison, poison, &built, &status, NULL);
    tma_tensor drv;
    cr_assert_eq(tma_tensor_make(&drv, &to, &diag), TMA_OK, "%s", diag.message);
    char bytes[600] = "", tmpl_bytes[600] = "";
    diff_bytes(&drv.map, &built.map, bytes, sizeof bytes);
    diff_bytes(&b.tmpls[0].map, &drv.map, tmpl_bytes, sizeof tmpl_bytes);
    cr_log_info("field edit %s: bytes vs the driver (driver/edited):%s; the driver's template vs its target "
                "(template/target):%s", p->what, bytes, tmpl_bytes);
    b.jobs[0].boxes = BOXES;
    run_batch(&b, poison, poison, &built, &status, out);
    memcpy(want, poison, ARENA);
    tma_tiled_desc host = with_address(to, b.pool_h + ((uint8_t *)to.global_address - b.pool_d));
    for (uint32_t k = 0; k < BOXES; k++)
        cr_assert_eq(tma_model_load_tiled(&host, b.coords[k], want, ARENA, b.offsets[k]), TMA_OK, "model");
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < ARENA; i++)
        if (out[i] != want[i] && wrong++ == 0)
            first = i;
    cr_log_info("field edit %s: loads %s", p->what, wrong ? "DIFFER" : "equal the model");
    cr_assert_eq(wrong, 0, "%s: %zu bytes of 4 loads differ from the model, first at %zu (GPU 0x%02x, model 0x%02x)",
                 p->what, wrong, first, out[first], want[first]);
    batch_close(&b);
    free(poison), free(out), free(want);
}

/* The hardware rule behind tma_rule_edit_needs_reencode, by the bare instruction: a tf32 map whose element type
 * is replaced by f32 still rounds what it loads to TF32 (the loads equal the model of the tf32 map, and not the
 * f32 one). If this fails, the rule may be stale: docs/HARDWARE.md. (Other target types fault: not run here.) */
Test(gpu_tensormap, replace_cannot_clear_tf32, .timeout = 60) {
    require_sm90();
    seed_rng("gpu_tensormap.replace_cannot_clear_tf32");
    static batch b;
    batch_open(&b);
    b.n = 1;
    tma_tiled_desc tf32 = probe_base(b.pool_d);
    tf32.dtype = TMA_DTYPE_TF32;
    tma_diag diag;
    cr_assert_eq(tma_tensor_make(&b.tmpls[0], &tf32, &diag), TMA_OK, "%s", diag.message);
    b.tmpl_descs[0] = tf32;
    b.edits[0] = tma_edit(TMA_FIELD_DTYPE, 0, tma_rule_edit_operand(tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_F32), 0));
    b.nedits = 1;
    b.jobs[0] = (tm_job){.start = TM_FROM_TEMPLATE, .edit_mode = TM_EDIT_RAW, .edit_count = 1, .boxes = 1};
    const size_t extent = tma_global_extent_bytes(&tf32);
    rnd_bytes(b.pool_h, extent); /* random f32 bits: almost every value has mantissa bits TF32 drops */
    CUDA_OK(cudaMemcpy(b.pool_d, b.pool_h, extent, cudaMemcpyHostToDevice));
    memset(b.coords[0], 0, sizeof b.coords[0]);
    b.offsets[0] = 0;
    uint8_t *poison = malloc(ARENA), *out = malloc(ARENA), *as_tf32 = malloc(ARENA), *as_f32 = malloc(ARENA);
    cr_assert(poison && out && as_tf32 && as_f32);
    rnd_bytes(poison, ARENA);
    tma_tensor built;
    int status;
    run_batch(&b, poison, poison, &built, &status, out);
    memcpy(as_tf32, poison, ARENA);
    memcpy(as_f32, poison, ARENA);
    tma_tiled_desc host = with_address(tf32, b.pool_h);
    cr_assert_eq(tma_model_load_tiled(&host, b.coords[0], as_tf32, ARENA, 0), TMA_OK, "model");
    host.dtype = TMA_DTYPE_F32;
    cr_assert_eq(tma_model_load_tiled(&host, b.coords[0], as_f32, ARENA, 0), TMA_OK, "model");
    size_t differ_f32 = 0;
    for (size_t i = 0; i < ARENA; i++) {
        cr_assert_eq(out[i], as_tf32[i], "byte %zu: GPU 0x%02x, model of the tf32 map 0x%02x", i, out[i], as_tf32[i]);
        differ_f32 += out[i] != as_f32[i];
    }
    cr_assert_gt(differ_f32, 0, "the loads equal an f32 load: tensormap.replace cleared the TF32 flag");
    cr_log_info("tf32 map with its element type replaced by f32: loads still round to TF32 (%zu bytes differ from an "
                "f32 load)", differ_f32);
    batch_close(&b);
    free(poison), free(out), free(as_tf32), free(as_f32);
}

/* ---------------------------------------------------------------------------------------------
 * The device's check and checked mode
 * ------------------------------------------------------------------------------------------- */

Test(gpu_tensormap, device_check_agrees_with_host, .timeout = 300) {
    require_sm90();
    seed_rng("gpu_tensormap.device_check");
    static batch b;
    batch_open(&b);
    b.n = BATCH;
    tma_tiled_desc mirrors[BATCH];
    for (int j = 0; j < b.n; j++) { /* a valid template, then one edit that is often out of range */
        tma_tiled_desc from = random_desc(NULL, 0);
        from.global_address = b.pool_d + (size_t)POOL_SLOT * j;
        tma_diag diag;
        cr_assert_eq(tma_tensor_make(&b.tmpls[j], &from, &diag), TMA_OK, "%s", diag.message);
        b.tmpl_descs[j] = from;
        static const uint64_t values[] = {0, 1, 7, 9, 16, 255, 256, 257, 300, 1ull << 32, (1ull << 32) + 1, 1ull << 40};
        const tma_map_field field = (tma_map_field)(rnd() % TMA_FIELD_COUNT_);
        uint32_t dim = (uint32_t)rnd_in(0, 4);
        if (field == TMA_FIELD_GLOBAL_STRIDE)
            dim = (uint32_t)rnd_in(1, 4);
        uint64_t value = values[rnd() % (sizeof values / sizeof values[0])];
        if (field == TMA_FIELD_DTYPE)
            value = rnd() % 13;
        else if (field == TMA_FIELD_SWIZZLE)
            value = rnd() % 4;
        else if (field == TMA_FIELD_INTERLEAVE)
            value = rnd() % 3;
        else if (field == TMA_FIELD_OOB_FILL)
            value = rnd() % 2;
        else if (field == TMA_FIELD_RANK)
            value = (uint64_t)rnd_in(1, 5);
        b.edits[j] = tma_edit(field, dim, value);
        b.jobs[j] = (tm_job){.start = TM_FROM_TEMPLATE, .edit_mode = TM_EDIT_GLOBAL, .first_edit = (uint32_t)j,
                             .edit_count = 1, .tmpl = (uint32_t)j};
        mirrors[j] = from;
        tma_desc_apply_edit(&mirrors[j], b.edits[j]);
    }
    b.nedits = BATCH;
    uint8_t *zero = calloc(ARENA, 1);
    tma_tensor *slots = malloc(sizeof(tma_tensor) * BATCH);
    int status[BATCH], refused = 0;
    run_batch(&b, zero, zero, slots, status, NULL);
    for (int j = 0; j < b.n; j++) {
        tma_diag diag;
        const tma_status host = tma_check_tiled(&mirrors[j], &diag);
        cr_assert_eq(status[j], host, "edit %d (field %u dim %u value %" PRIu64 "): device %s, host %s (%s)", j,
                     b.edits[j].field, b.edits[j].dim, b.edits[j].value, tma_status_name((tma_status)status[j]),
                     tma_status_name(host), diag.message);
        refused += host != TMA_OK;
    }
    cr_log_info("device check: %d edited descriptors, %d refused, every status equal to the host's", b.n, refused);
    cr_expect_gt(refused, b.n / 10, "enough invalid edits drawn");
    batch_close(&b);
    free(zero), free(slots);
}

Test(gpu_tensormap, checked_mode_refuses_an_invalid_map_with_the_hosts_message, .init = cr_redirect_stdout,
     .timeout = 60) {
    require_sm90();
    static batch b;
    batch_open(&b);
    b.n = 1;
    tma_tiled_desc from = probe_base(b.pool_d);
    tma_diag diag;
    cr_assert_eq(tma_tensor_make(&b.tmpls[0], &from, &diag), TMA_OK, "%s", diag.message);
    b.tmpl_descs[0] = from;
    b.edits[0] = tma_edit(TMA_FIELD_BOX_DIM, 1, 300);
    b.nedits = 1;
    b.jobs[0] = (tm_job){.start = TM_FROM_TEMPLATE, .edit_mode = TM_EDIT_BUILDER, .edit_count = 1};
    tma_tiled_desc mirror = from;
    tma_desc_apply_edit(&mirror, b.edits[0]);
    cr_assert_eq(tma_check_tiled(&mirror, &diag), TMA_ERR_BOX_DIM, "the host refuses it");
    /* run by hand: a trap is the expected outcome */
    device_batch d;
    TO_DEVICE(d.jobs, b.jobs, sizeof(tm_job));
    TO_DEVICE(d.tmpls, b.tmpls, sizeof(tma_tensor));
    TO_DEVICE(d.tmpl_descs, b.tmpl_descs, sizeof(tma_tiled_desc));
    TO_DEVICE(d.edits, b.edits, sizeof(tma_map_edit));
    uint8_t *zero = calloc(ARENA, 1);
    TO_DEVICE(d.poison, zero, ARENA);
    CUDA_OK(cudaMalloc((void **)&d.slots, sizeof(tma_tensor)));
    CUDA_OK(cudaMalloc((void **)&d.status, sizeof(int)));
    CUDA_OK(cudaMalloc((void **)&d.out, ARENA));
    const cudaError_t e = tm_run_jobs(d.jobs, 1, d.tmpls, d.tmpl_descs, d.edits, NULL, NULL, d.poison, d.poison,
                                      ARENA, d.slots, d.status, d.out);
    cr_assert(e != cudaSuccess, "publishing an invalid map completed");
    char text[4096];
    captured_stdout(text, sizeof text);
    cr_assert(strstr(text, "TMA_ERR_BOX_DIM") != NULL && strstr(text, diag.message) != NULL,
              "checked mode did not print the host's message (CUDA said %s):\n device: %s\n host: %s",
              cudaGetErrorString(e), text, diag.message);
    free(zero);
}

/* ---------------------------------------------------------------------------------------------
 * Fences
 * ------------------------------------------------------------------------------------------- */

Test(gpu_tensormap, fences, .timeout = 300) {
    require_sm90();
    uint8_t *x, *y;
    CUDA_OK(cudaMalloc((void **)&x, 256));
    CUDA_OK(cudaMalloc((void **)&y, 256));
    CUDA_OK(cudaMemset(x, 0x11, 256));
    CUDA_OK(cudaMemset(y, 0x22, 256));
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_U8, x, 1, 16, 16, 1, 16, TMA_SWIZZLE_NONE);
    tma_tensor host, *map;
    tma_diag diag;
    cr_assert_eq(tma_tensor_make(&host, &d, &diag), TMA_OK, "%s", diag.message);
    CUDA_OK(cudaMalloc((void **)&map, sizeof *map));
    int *counts;
    CUDA_OK(cudaMalloc((void **)&counts, 2 * sizeof(int)));
    const int iters = 20000;
    int with[2], without[2];
    for (int acquire = 1; acquire >= 0; acquire--) {
        CUDA_OK(cudaMemcpy(map, &host, sizeof host, cudaMemcpyHostToDevice));
        CUDA_OK(tm_stale_reads(map, x, y, iters, acquire, &counts[0], &counts[1]));
        CUDA_OK(cudaMemcpy(acquire ? with : without, counts, 2 * sizeof(int), cudaMemcpyDeviceToHost));
    }
    cr_log_info("fences: a map in global memory changed %d times by one thread (replace + release): with the acquire "
                "fence %d stale and %d wrong loads; without it %d stale and %d wrong",
                iters, with[0], with[1], without[0], without[1]);
    cr_assert_eq(with[0] + with[1], 0, "with the acquire fence no load may read the old map");
    /* host-encoded maps in the three places a kernel can take them from, with and without prefetch */
    uint8_t got[16];
    const char *where[3] = {"a kernel parameter", "__constant__", "global memory (host-written)"};
    tma_tensor *gmap;
    CUDA_OK(cudaMalloc((void **)&gmap, sizeof *gmap));
    uint8_t *dout;
    CUDA_OK(cudaMalloc((void **)&dout, 16));
    for (int w = TM_MAP_PARAM; w <= TM_MAP_GLOBAL; w++)
        for (int acquire = 0; acquire <= (w == TM_MAP_GLOBAL); acquire++)
            for (int prefetch = 0; prefetch <= 1; prefetch++) {
                CUDA_OK(cudaMemset(dout, 0, 16));
                CUDA_OK(tm_load_from(w, &host, gmap, acquire, prefetch, dout, 16));
                CUDA_OK(cudaMemcpy(got, dout, 16, cudaMemcpyDeviceToHost));
                for (int i = 0; i < 16; i++)
                    cr_assert_eq(got[i], 0x11, "a map in %s (%s acquire, %s prefetch): byte %d = 0x%02x", where[w],
                                 acquire ? "with" : "without", prefetch ? "with" : "without", i, got[i]);
            }
    cr_log_info("fences: host-encoded maps as a kernel parameter, in __constant__ and in host-written global memory "
                "(with and without the acquire fence, with and without prefetch.tensormap) all loaded the right bytes");
    void *all[] = {x, y, map, counts, gmap, dout};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        CUDA_OK(cudaFree(all[i]));
}

/* ---------------------------------------------------------------------------------------------
 * Alignment of a map in global memory
 * ------------------------------------------------------------------------------------------- */

/* A map in global memory at 16, 32, 64 and 128 bytes modulo 128: CUDA 13 declares CUtensorMap 128-byte aligned
 * (CUDA 12: 64), and the PTX ISA asks 64 of a map's address. Measured on an H200 (docs/HARDWARE.md): 64 is
 * enough for the copy, the acquire fence and prefetch.tensormap; at 16 or 32 the kernel fails with "misaligned
 * address". Each case in its own process: a fault ends its context. */
typedef struct map_placement {
    uint32_t offset; /* bytes past a 256-byte aligned allocation */
    int acquire, prefetch;
    int faults;      /* measured */
} map_placement;

static map_placement placements[] = {{128, 1, 1, 0}, {64, 1, 0, 0}, {64, 1, 1, 0}, {64, 0, 1, 0},
                                     {32, 1, 0, 1},  {32, 1, 1, 1}, {32, 0, 0, 1}, {16, 0, 0, 1}};

ParameterizedTestParameters(gpu_tensormap, map_alignment) {
    return cr_make_param_array(map_placement, placements, sizeof placements / sizeof placements[0]);
}

ParameterizedTest(map_placement *pl, gpu_tensormap, map_alignment, .timeout = 60) {
    require_sm90();
    uint8_t *x, *buf, *dout;
    CUDA_OK(cudaMalloc((void **)&x, 256));
    CUDA_OK(cudaMemset(x, 0x11, 256));
    CUDA_OK(cudaMalloc((void **)&buf, 1024));
    CUDA_OK(cudaMalloc((void **)&dout, 16));
    CUDA_OK(cudaMemset(dout, 0, 16));
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_U8, x, 1, 16, 16, 1, 16, TMA_SWIZZLE_NONE);
    tma_tensor host;
    tma_diag diag;
    cr_assert_eq(tma_tensor_make(&host, &d, &diag), TMA_OK, "%s", diag.message);
    const cudaError_t e = tm_load_from(TM_MAP_GLOBAL, &host, buf + pl->offset, pl->acquire, pl->prefetch, dout, 16);
    uint8_t got[16] = {0};
    if (e == cudaSuccess)
        CUDA_OK(cudaMemcpy(got, dout, 16, cudaMemcpyDeviceToHost));
    cr_log_info("a map at %u mod 128 bytes in global memory (%s acquire, %s prefetch.tensormap): %s%s", pl->offset % 128,
                pl->acquire ? "with" : "without", pl->prefetch ? "with" : "without",
                e == cudaSuccess ? "loaded" : cudaGetErrorString(e),
                e == cudaSuccess ? (got[0] == 0x11 ? " the right bytes" : " WRONG bytes") : "");
    if (pl->faults) {
        cr_assert_eq(e, cudaErrorMisalignedAddress, "expected a misaligned-address fault, got: %s",
                     cudaGetErrorString(e));
        return;
    }
    cr_assert_eq(e, cudaSuccess, "the load through the map failed: %s", cudaGetErrorString(e));
    for (int i = 0; i < 16; i++)
        cr_assert_eq(got[i], 0x11, "byte %d = 0x%02x", i, got[i]);
}
