/* Tests for tma_encode_tiled (src/encode.c) that run anywhere: no GPU and no driver are needed.
 *
 * The driver is loaded once per process (pthread_once), on the first call that gets past the checks,
 * from $TMA_LIBCUDA or else libcuda.so.1. Criterion runs every test in its own process, so a test that
 * sets TMA_LIBCUDA first thing decides which library that process's single load sees. The encode_context tests load
 * a stand-in driver (tests/fake_libcuda.c) whose encoders need a current context, as the real ones do.
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h> /* the driver API, for the raw CUtensorMap */

#include "tma/tma.h"

#define MISSING_LIBCUDA "/nonexistent/libtma-test/libcuda.so.1"

/* A valid descriptor (the checker never dereferences the address, and neither does the encoder). */
static tma_tiled_desc valid_desc(void) {
    return tma_desc_2d(TMA_DTYPE_BF16, (void *)(uintptr_t)0x100000, 1024, 1024, 2048, 64, 64, TMA_SWIZZLE_128B);
}

static void use_missing_driver(void) { cr_assert_eq(setenv("TMA_LIBCUDA", MISSING_LIBCUDA, 1), 0, "setenv"); }

/* A byte buffer to carve misaligned CUtensorMap pointers from. */
static _Alignas(128) unsigned char map_buffer[2 * sizeof(CUtensorMap) + 128];

static CUtensorMap *map_at(size_t offset) { return (CUtensorMap *)(void *)(map_buffer + offset); }

/* ---------------------------------------------------------------------------------------------
 * No driver
 * ------------------------------------------------------------------------------------------- */

Test(encode_no_driver, missing_library_names_path_and_fix) {
    use_missing_driver();
    tma_tiled_desc d = valid_desc();
    CUtensorMap map;
    tma_diag diag;
    memset(&diag, 0x7f, sizeof diag);
    tma_status st = tma_encode_tiled(&map, &d, &diag);
    cr_assert_eq(st, TMA_ERR_NO_DRIVER, "missing driver: got %s: %s", tma_status_name(st), diag.message);
    cr_expect_eq(diag.status, TMA_ERR_NO_DRIVER, "diag.status: %s", tma_status_name(diag.status));
    cr_expect_not_null(memchr(diag.message, '\0', sizeof diag.message), "message must be terminated");
    cr_expect(strstr(diag.message, MISSING_LIBCUDA) != NULL, "message \"%s\" must name the path %s", diag.message,
              MISSING_LIBCUDA);
    cr_expect(strstr(diag.message, "install the NVIDIA driver") != NULL, "message \"%s\" must say what to install",
              diag.message);
    cr_expect(strstr(diag.message, "TMA_LIBCUDA") != NULL, "message \"%s\" must mention TMA_LIBCUDA",
              diag.message);
}

Test(encode_no_driver, same_answer_on_every_call) {
    use_missing_driver();
    tma_tiled_desc d = valid_desc();
    CUtensorMap map;
    tma_diag first, again;
    cr_assert_eq(tma_encode_tiled(&map, &d, &first), TMA_ERR_NO_DRIVER, "first call: %s", first.message);
    cr_expect_eq(tma_encode_tiled(&map, &d, &again), TMA_ERR_NO_DRIVER, "second call: %s", again.message);
    cr_expect_str_eq(again.message, first.message, "the reason does not change between calls");
    cr_expect_eq(tma_encode_tiled(&map, &d, NULL), TMA_ERR_NO_DRIVER, "diag = NULL is accepted");
}

Test(encode_no_driver, library_is_loaded_once_per_process) {
    use_missing_driver();
    tma_tiled_desc d = valid_desc();
    CUtensorMap map;
    tma_diag diag;
    cr_assert_eq(tma_encode_tiled(&map, &d, &diag), TMA_ERR_NO_DRIVER, "first load: %s", diag.message);
    /* Changing the variable afterwards has no effect: the load happened once. */
    cr_assert_eq(setenv("TMA_LIBCUDA", "libc.so.6", 1), 0, "setenv");
    cr_expect_eq(tma_encode_tiled(&map, &d, &diag), TMA_ERR_NO_DRIVER, "after setenv: %s", diag.message);
    cr_expect(strstr(diag.message, MISSING_LIBCUDA) != NULL, "still the first library's reason: \"%s\"",
              diag.message);
}

Test(encode_no_driver, library_without_the_entry_point) {
    /* libm is on every glibc system and has no cuTensorMapEncodeTiled. */
    cr_assert_eq(setenv("TMA_LIBCUDA", "libm.so.6", 1), 0, "setenv");
    tma_tiled_desc d = valid_desc();
    CUtensorMap map;
    tma_diag diag;
    tma_status st = tma_encode_tiled(&map, &d, &diag);
    cr_assert_eq(st, TMA_ERR_NO_DRIVER, "libm as the driver: got %s: %s", tma_status_name(st), diag.message);
    cr_expect(strstr(diag.message, "libm.so.6") != NULL, "message \"%s\" must name the library", diag.message);
    cr_expect(strstr(diag.message, "cuTensorMapEncodeTiled") != NULL, "message \"%s\" must name the function",
              diag.message);
}

struct thread_result {
    tma_status status;
    char message[sizeof(((tma_diag *)0)->message)];
};

static void *encode_in_thread(void *arg) {
    struct thread_result *res = arg;
    tma_tiled_desc d = valid_desc();
    CUtensorMap map;
    tma_diag diag;
    res->status = tma_encode_tiled(&map, &d, &diag);
    memcpy(res->message, diag.message, sizeof res->message);
    return NULL;
}

Test(encode_no_driver, concurrent_first_calls) {
    use_missing_driver();
    enum { N = 8 };
    pthread_t threads[N];
    struct thread_result results[N];
    for (int i = 0; i < N; i++)
        cr_assert_eq(pthread_create(&threads[i], NULL, encode_in_thread, &results[i]), 0, "pthread_create %d", i);
    for (int i = 0; i < N; i++)
        cr_assert_eq(pthread_join(threads[i], NULL), 0, "pthread_join %d", i);
    for (int i = 0; i < N; i++) {
        cr_expect_eq(results[i].status, TMA_ERR_NO_DRIVER, "thread %d: %s", i, tma_status_name(results[i].status));
        cr_expect_str_eq(results[i].message, results[0].message, "thread %d sees the same reason", i);
    }
}

/* A long driver path must not push the advice out of the message. */
Test(encode_no_driver, long_path_keeps_the_advice) {
    const char *path = "/opt/nvidia/drivers/580.159.04/lib/x86_64-linux-gnu/libcuda.so.1";
    cr_assert_eq(setenv("TMA_LIBCUDA", path, 1), 0, "setenv");
    tma_tiled_desc d = valid_desc();
    CUtensorMap map;
    tma_diag diag;
    cr_assert_eq(tma_encode_tiled(&map, &d, &diag), TMA_ERR_NO_DRIVER, "long path: %s", diag.message);
    cr_expect(strstr(diag.message, path) != NULL, "message \"%s\" must name the path", diag.message);
    cr_expect(strstr(diag.message, "TMA_LIBCUDA at libcuda.so.1") != NULL, "message \"%s\" was truncated",
              diag.message);
}

/* ---------------------------------------------------------------------------------------------
 * Argument and descriptor errors come before the driver
 * ------------------------------------------------------------------------------------------- */

Test(encode_args, invalid_descriptor_gives_the_checkers_status) {
    use_missing_driver();
    CUtensorMap map;
    tma_diag diag, check;

    tma_tiled_desc d = valid_desc();
    d.box_dim[0] = 128; /* 256 bytes in a 128-byte swizzle span */
    cr_expect_eq(tma_encode_tiled(&map, &d, &diag), TMA_ERR_BOX_SWIZZLE_SPAN, "span: %s", diag.message);
    cr_expect_eq(tma_check_tiled(&d, &check), TMA_ERR_BOX_SWIZZLE_SPAN, "checker agrees");
    cr_expect_str_eq(diag.message, check.message, "encode passes the checker's message on");
    cr_expect_eq(diag.status, TMA_ERR_BOX_SWIZZLE_SPAN, "diag.status");

    d = valid_desc();
    d.rank = 0;
    cr_expect_eq(tma_encode_tiled(&map, &d, &diag), TMA_ERR_RANK, "rank 0: %s", diag.message);

    d = valid_desc();
    d.global_address = NULL;
    cr_expect_eq(tma_encode_tiled(&map, &d, &diag), TMA_ERR_GLOBAL_ADDRESS_NULL, "NULL address: %s", diag.message);

    d = valid_desc();
    d.swizzle = TMA_SWIZZLE_128B_ATOM_64B;
    cr_expect_eq(tma_encode_tiled(&map, &d, &diag), TMA_ERR_SWIZZLE_UNSUPPORTED, "ATOM swizzle: %s", diag.message);

    cr_expect_eq(tma_encode_tiled(&map, NULL, &diag), TMA_ERR_NULL_ARG, "NULL descriptor: %s", diag.message);
    cr_expect_eq(tma_encode_tiled(&map, NULL, NULL), TMA_ERR_NULL_ARG, "NULL descriptor, NULL diag");

    /* None of these reached the driver: a valid descriptor still reports the missing library. */
    d = valid_desc();
    cr_expect_eq(tma_encode_tiled(&map, &d, &diag), TMA_ERR_NO_DRIVER, "valid descriptor afterwards: %s",
                 diag.message);

    /* Maps the driver encodes pass the checks and go to it (missing here), through tma_tensor_make too: a view whose
     * rows overlap (a load map), a broadcast, a template with a NULL address and zero strides. */
    tma_tensor t;
    d = valid_desc();
    d.global_stride[0] = 64; /* 2048-byte rows, 64 bytes apart */
    cr_expect_eq(tma_encode_tiled(&map, &d, &diag), TMA_ERR_NO_DRIVER, "overlapping rows: %s", diag.message);
    cr_expect_eq(tma_tensor_make(&t, &d, &diag), TMA_ERR_NO_DRIVER, "overlapping rows: %s", diag.message);
    d.flags = TMA_DESC_STORE; /* as a map to store through: refused before the driver */
    cr_expect_eq(tma_encode_tiled(&map, &d, &diag), TMA_ERR_GLOBAL_STRIDE_OVERLAP, "a store map: %s", diag.message);
    d = valid_desc();
    d.global_stride[0] = 0;
    cr_expect_eq(tma_tensor_make(&t, &d, &diag), TMA_ERR_NO_DRIVER, "a broadcast: %s", diag.message);
    d.global_address = NULL;
    d.flags = TMA_DESC_TEMPLATE;
    cr_expect_eq(tma_tensor_make(&t, &d, &diag), TMA_ERR_NO_DRIVER, "a NULL template: %s", diag.message);
}

Test(encode_args, null_map) {
    use_missing_driver();
    tma_tiled_desc d = valid_desc();
    tma_diag diag;
    memset(&diag, 0x7f, sizeof diag);
    cr_expect_eq(tma_encode_tiled(NULL, &d, &diag), TMA_ERR_NULL_ARG, "NULL map: %s", diag.message);
    cr_expect_eq(diag.status, TMA_ERR_NULL_ARG, "NULL map: diag.status");
    cr_expect(strstr(diag.message, "map = NULL") != NULL, "NULL map: message \"%s\"", diag.message);
    cr_expect_eq(tma_encode_tiled(NULL, &d, NULL), TMA_ERR_NULL_ARG, "NULL map, NULL diag");
    cr_expect_eq(tma_encode_tiled(NULL, NULL, &diag), TMA_ERR_NULL_ARG, "NULL map and descriptor");
}

Test(encode_args, misaligned_map) {
    use_missing_driver();
    tma_tiled_desc d = valid_desc();
    tma_diag diag;
    const size_t bad[] = {16, 8, 32, 48, 1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&diag, 0x7f, sizeof diag);
        tma_status st = tma_encode_tiled(map_at(bad[i]), &d, &diag);
        cr_expect_eq(st, TMA_ERR_MAP_ALIGN, "map at +%zu: got %s: %s", bad[i], tma_status_name(st), diag.message);
        cr_expect_eq(diag.status, TMA_ERR_MAP_ALIGN, "map at +%zu: diag.status", bad[i]);
        cr_expect(strstr(diag.message, "64-byte aligned") != NULL, "map at +%zu: message \"%s\"", bad[i],
                  diag.message);
        cr_expect_eq(tma_encode_tiled(map_at(bad[i]), &d, NULL), TMA_ERR_MAP_ALIGN, "map at +%zu, NULL diag",
                     bad[i]);
    }
    /* 64 bytes is what the driver asks for: such a map gets past the check (and finds no driver here). */
    tma_status st = tma_encode_tiled(map_at(64), &d, &diag);
    cr_expect_eq(st, TMA_ERR_NO_DRIVER, "map at +64 is aligned enough: got %s: %s", tma_status_name(st),
                 diag.message);
}

/* ---------------------------------------------------------------------------------------------
 * Real libraries, where the machine has them
 * ------------------------------------------------------------------------------------------- */

/* With whatever libcuda.so.1 the machine has: none (CI), a driver without a GPU, or a GPU. */
static void expect_default_driver_outcome(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    bool have_driver = lib != NULL;
    if (lib)
        dlclose(lib);

    tma_tiled_desc d = valid_desc();
    CUtensorMap map;
    tma_diag diag;
    tma_status st = tma_encode_tiled(&map, &d, &diag);
    if (!have_driver) {
        cr_expect_eq(st, TMA_ERR_NO_DRIVER, "no libcuda.so.1 here: got %s: %s", tma_status_name(st), diag.message);
        cr_expect(strstr(diag.message, "libcuda.so.1") != NULL, "message \"%s\" must name libcuda.so.1",
                  diag.message);
        cr_log_info("encode with the default library: no libcuda.so.1, %s", tma_status_name(st));
        return;
    }
    cr_expect(st == TMA_OK || st == TMA_ERR_DRIVER, "libcuda.so.1 present: expected TMA_OK or TMA_ERR_DRIVER, got %s: %s",
              tma_status_name(st), diag.message);
    cr_expect_eq(diag.status, st, "diag.status");
    if (st == TMA_OK)
        cr_expect_str_empty(diag.message, "TMA_OK comes with an empty message");
    else
        cr_expect_str_not_empty(diag.message, "TMA_ERR_DRIVER comes with a reason");
    cr_log_info("encode with the default library: libcuda.so.1 found, %s%s%s", tma_status_name(st),
                st == TMA_OK ? "" : ": ", diag.message);
}

Test(encode_default, driver_or_not) {
    unsetenv("TMA_LIBCUDA");
    expect_default_driver_outcome();
}

Test(encode_default, empty_variable_means_default) {
    cr_assert_eq(setenv("TMA_LIBCUDA", "", 1), 0, "setenv");
    expect_default_driver_outcome();
}

/* The CUDA toolkit's stub libcuda has every entry point, but cuInit fails: the TMA_ERR_DRIVER path
 * without a GPU. Skipped where no toolkit is installed. */
Test(encode_default, toolkit_stub_library) {
    static const char *const candidates[] = {
        "/usr/local/cuda/lib64/stubs/libcuda.so",
        "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so",
        "/usr/local/cuda/targets/sbsa-linux/lib/stubs/libcuda.so",
        "/usr/local/cuda/lib/stubs/libcuda.so",
    };
    const char *stub = NULL;
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0] && !stub; i++)
        if (access(candidates[i], R_OK) == 0)
            stub = candidates[i];
    if (!stub)
        cr_skip_test("no CUDA toolkit stub libcuda.so found");
    cr_assert_eq(setenv("TMA_LIBCUDA", stub, 1), 0, "setenv");
    tma_tiled_desc d = valid_desc();
    CUtensorMap map;
    tma_diag diag;
    tma_status st = tma_encode_tiled(&map, &d, &diag);
    cr_expect_eq(st, TMA_ERR_DRIVER, "stub %s: got %s: %s", stub, tma_status_name(st), diag.message);
    cr_expect(strstr(diag.message, "cuInit(0) failed") != NULL, "stub: message \"%s\" must say cuInit failed",
              diag.message);
    cr_log_info("encode with the stub %s: %s: %s", stub, tma_status_name(st), diag.message);
}

/* ---------------------------------------------------------------------------------------------
 * The context the driver's encoders need (docs/HARDWARE.md "Encoding needs a current context"), with the stand-in
 * driver tests/fake_libcuda.c: its encoders refuse without a current context, as the real ones do.
 * ------------------------------------------------------------------------------------------- */

typedef void (*fake_state_fn)(int *, int *, int *, int *, int *);
typedef CUresult (*fake_push_fn)(CUcontext);
typedef CUresult (*fake_retain_fn)(CUcontext *, CUdevice);

static void *use_fake_driver(void) {
    cr_assert_eq(setenv("TMA_LIBCUDA", FAKE_LIBCUDA, 1), 0, "setenv");
    void *lib = dlopen(FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL); /* the instance libtma opens too */
    cr_assert(lib != NULL, "%s", dlerror());
    return lib;
}

Test(encode_context, borrowed_for_the_call_and_returned) {
    void *lib = use_fake_driver();
    fake_state_fn state = (fake_state_fn)dlsym(lib, "fake_libcuda_state");
    cr_assert(state != NULL);
    tma_tiled_desc d = valid_desc();
    CUtensorMap map;
    tma_diag diag;
    for (int call = 1; call <= 2; call++) {
        cr_assert_eq(tma_encode_tiled(&map, &d, &diag), TMA_OK, "call %d: %s", call, diag.message);
        int retains, pushes, pops, encodes, current;
        state(&retains, &pushes, &pops, &encodes, &current);
        cr_expect_eq(retains, 1, "device 0's primary context retained once for the process, not %d times", retains);
        cr_expect_eq(pushes, call, "pushed for each call");
        cr_expect_eq(pops, call, "popped after each call");
        cr_expect_eq(encodes, call, "every encode made with a context current");
        cr_expect_eq(current, 0, "the thread is left without a context, as it was");
    }
    tma_tensor t;
    tma_im2col_desc im = {0};
    im.dtype = TMA_DTYPE_BF16, im.rank = 4, im.global_address = (void *)(uintptr_t)0x100000;
    im.global_dim[0] = 64, im.global_dim[1] = 8, im.global_dim[2] = 8, im.global_dim[3] = 2;
    im.global_stride[0] = 128, im.global_stride[1] = 1024, im.global_stride[2] = 8192;
    im.pixel_box_lower[0] = im.pixel_box_lower[1] = -1, im.pixel_box_upper[0] = im.pixel_box_upper[1] = -1;
    im.channels_per_pixel = 64, im.pixels_per_column = 32, im.swizzle = TMA_SWIZZLE_128B;
    cr_assert_eq(tma_tensor_make_im2col(&t, &im, &diag), TMA_OK, "im2col: %s", diag.message);
    int retains, pushes, pops, encodes, current;
    state(&retains, &pushes, &pops, &encodes, &current);
    cr_expect(pushes == 3 && pops == 3 && current == 0, "im2col: pushed %d, popped %d", pushes, pops);
}

Test(encode_context, a_current_context_is_used_as_it_is) {
    void *lib = use_fake_driver();
    fake_state_fn state = (fake_state_fn)dlsym(lib, "fake_libcuda_state");
    fake_push_fn push = (fake_push_fn)dlsym(lib, "cuCtxPushCurrent_v2");
    fake_retain_fn retain = (fake_retain_fn)dlsym(lib, "cuDevicePrimaryCtxRetain");
    cr_assert(state && push && retain);
    CUcontext ctx;
    cr_assert_eq(retain(&ctx, 0), CUDA_SUCCESS);
    cr_assert_eq(push(ctx), CUDA_SUCCESS); /* the caller's own context */
    tma_tiled_desc d = valid_desc();
    CUtensorMap map;
    tma_diag diag;
    cr_assert_eq(tma_encode_tiled(&map, &d, &diag), TMA_OK, "%s", diag.message);
    int retains, pushes, pops, encodes, current;
    state(&retains, &pushes, &pops, &encodes, &current);
    cr_expect(retains == 1 && pushes == 1 && pops == 0, "libtma borrowed a context although one was current "
                                                         "(retains %d, pushes %d, pops %d)", retains, pushes, pops);
    cr_expect(current == 1, "the caller's context stays current");
}

Test(encode_context, no_device_says_why) {
    cr_assert_eq(setenv("FAKE_LIBCUDA_NO_DEVICE", "1", 1), 0, "setenv");
    use_fake_driver();
    tma_tiled_desc d = valid_desc();
    CUtensorMap map;
    tma_diag diag;
    const tma_status st = tma_encode_tiled(&map, &d, &diag);
    cr_assert_eq(st, TMA_ERR_DRIVER, "got %s: %s", tma_status_name(st), diag.message);
    const char *says = "cuTensorMapEncodeTiled needs a CUDA context current on the calling thread";
    cr_expect(strstr(diag.message, says) != NULL && strstr(diag.message, "CUDA_ERROR_NO_DEVICE") != NULL &&
                  strstr(diag.message, "cudaSetDevice") != NULL,
              "the message names the function, the cause and the fix: %s", diag.message);
}
