/* What the command-line tools share: option parsing ("--opt value", "--opt=value", "--"), usage errors
 * (exit status 2), number and list parsing, the values of the options both tools take (--dtype, --swizzle,
 * --mode, --base, --estrides, --offset, the default dense strides), output files ("-" is stdout) and the
 * check that the report was written, JSON string output, plurals. One parser: the two tools accept the same
 * spellings and limits, and refuse the same things with the same words. */
#ifndef TOOLS_CLI_H
#define TOOLS_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tma/tma.h"

/** The program name in usage errors ("tma-explain"); set once at the start of main. */
extern const char *cli_program;

/** The exit status of bad usage, and of output that cannot be written (a full disk, a closed pipe). */
#define CLI_EXIT_USAGE 2

/** Print "PROGRAM: message (see PROGRAM --help)" on stderr and exit with status CLI_EXIT_USAGE. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), noreturn))
#endif
void cli_bad_usage(const char *fmt, ...);

/* ---------------------------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------------------------- */

/** One option a tool accepts; a tool keeps them in an array indexed by its own enum. */
typedef struct cli_option {
    const char *name;  /**< "--dims" */
    const char *alias; /**< another spelling ("-h"), or NULL */
    bool takes_value;  /**< "--dims 4,4" or "--dims=4,4"; otherwise a flag, which takes no value */
} cli_option;

/** The command line being read by cli_next_option. */
typedef struct cli_args {
    const cli_option *options;
    int noptions;
    int argc;
    char **argv;
    int next; /**< index in argv of the next argument */
} cli_args;

/** What cli_next_option returns once the command line is used up. */
#define CLI_DONE (-1)

/** Start reading argv[1..argc) against options[0..noptions). */
cli_args cli_args_start(const cli_option *options, int noptions, int argc, char **argv);

/** The next option: its index in the options array, its value in *value (NULL for a flag); CLI_DONE at the
 *  end or at "--". The name is matched before any value is looked at. Bad usage (exit 2): an unknown option,
 *  a missing value, a value given to a flag, and any argument that is not an option (the tools take no
 *  operands, so anything after "--" is one). */
int cli_next_option(cli_args *a, const char **value);

/** Print "PROGRAM VERSION" (tma_version_string) on stdout and exit: 0, or CLI_EXIT_USAGE if it cannot be
 *  written. */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void cli_print_version(void);
/** Print `text` (the --help) on stdout and exit likewise. */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void cli_print_help(const char *text);

/* ---------------------------------------------------------------------------------------------
 * Values
 * ------------------------------------------------------------------------------------------- */

/** An unsigned decimal number, or hexadecimal after 0x/0X; no sign, no spaces, nothing after it. A leading 0
 *  is decimal ("010" is ten). False for anything else, and for a number past 2^64 - 1. */
bool cli_parse_u64(const char *s, uint64_t *out);
/** The value of option `opt`: a number (as cli_parse_u64) of at most `max`, or bad usage (exit 2) that says
 *  which: "not an unsigned number", or "too large: at most MAX" followed by `why` (may be ""). */
uint64_t cli_u64_arg(const char *opt, const char *v, uint64_t max, const char *why);
/** cli_u64_arg up to UINT32_MAX. */
uint32_t cli_u32_arg(const char *opt, const char *v);
/** A comma-separated list of 1..cap unsigned numbers; returns how many. Bad usage (exit 2) otherwise,
 *  naming the option `opt`: an empty list or an empty element ("10,,16", ",10", "10,"), too many values,
 *  an element that is not a number or is past 2^64 - 1. */
uint32_t cli_parse_list(const char *opt, const char *s, uint64_t *out, uint32_t cap);
/** cli_parse_list with every value at most `max` ("too large: at most MAX" followed by `why`). */
uint32_t cli_parse_list_max(const char *opt, const char *s, uint64_t *out, uint32_t cap, uint64_t max,
                            const char *why);
/** cli_parse_list for 32-bit signed numbers, each with an optional leading '-' ("-1,0x10"). */
uint32_t cli_parse_i32_list(const char *opt, const char *s, int32_t *out, uint32_t cap);
/** v as 32 bits, or bad usage (exit 2) naming the option `opt`: "too large". */
uint32_t cli_to_u32(const char *opt, uint64_t v);
/** An element type by its tma_dtype_name ("bf16", "f32", ...), case-insensitive. */
bool cli_parse_dtype(const char *s, tma_dtype *out);
/** The value of --dtype: a type name, or bad usage (exit 2) listing the names. */
tma_dtype cli_dtype_arg(const char *v);
/** Index of s in names[0..n) (case-insensitive; an optional prefix such as "TMA_SWIZZLE_" is accepted),
 *  or -1. */
int cli_parse_name(const char *s, const char *prefix, const char *const *names, int n);

/** Swizzle modes as the tools spell them, indexed by tma_swizzle. */
extern const char *const cli_swizzle_names[7];
/** The value of --swizzle: any of cli_swizzle_names (case-insensitive, "TMA_SWIZZLE_" optional), the
 *  compute capability 10.x modes included (the checker then says why Hopper lacks them); else bad usage. */
tma_swizzle cli_swizzle_arg(const char *v);
/** The value of --mode: false for "tiled", true for "im2col"; else bad usage. */
bool cli_im2col_mode_arg(const char *v);

/** The largest --base. A Hopper block has at most 227 KiB of shared memory; 1 MiB leaves room for offsets from
 *  any aligned base, and keeps base + every row address of the drawing well inside 32 bits. */
#define CLI_MAX_BASE (1u << 20)
/** The value of --base (a shared-memory address; it sets the swizzle phase): a multiple of TMA_SMEM_ALIGN (128)
 *  of at most CLI_MAX_BASE; else bad usage. */
uint32_t cli_base_arg(const char *v);
/** The value of --estrides: 1..cap element strides. 0 is refused (bad usage): libtma's descriptors read it as 1,
 *  the driver's encoders refuse it, so on the command line it is a mistake either way. Values past 8 are left to
 *  the checker, which names the rule. */
uint32_t cli_estrides_arg(const char *v, uint64_t *out, uint32_t cap);
/** The value of --offset (im2col offsets, 16 bits each): 1..cap of them; else bad usage. */
uint32_t cli_offsets_arg(const char *v, uint64_t *out, uint32_t cap);

/** The default strides of dimensions 1..rank-1 in bytes: dense rows of dims[0] elements of esize bytes, each
 *  rounded up to 16 bytes (TMA's stride granule), then each dimension dense over the ones inside it (a
 *  dimension of 0 counts as 1; the checker refuses it). Bad usage (exit 2) where a stride would pass 2^64 - 1
 *  bytes, instead of wrapping to a small stride that looks valid; `fix` ends that message ("give --strides"). */
void cli_dense_strides(const uint64_t *dims, uint32_t rank, uint64_t esize, uint64_t *strides, const char *fix);

/** "" for 1, "s" otherwise: "%u value%s". */
const char *cli_plural(uint64_t n);

/* ---------------------------------------------------------------------------------------------
 * Output
 * ------------------------------------------------------------------------------------------- */

/** True for the file name "-", which means stdout. */
bool cli_is_stdout(const char *path);
/** `path` opened for writing, or stdout for "-"; NULL (errno set) if it cannot be opened. */
FILE *cli_open_output(const char *path);
/** Close what cli_open_output returned (stdout is flushed, not closed); false if anything failed to be
 *  written. */
bool cli_close_output(FILE *f);
/** cli_open_output, or "PROGRAM: cannot write PATH: REASON" on stderr and exit CLI_EXIT_USAGE. */
FILE *cli_open_output_or_exit(const char *path);
/** cli_close_output, or the same message and exit. */
void cli_close_output_or_exit(FILE *f, const char *path);
/** Flush the report on stdout; if any of it could not be written (a full disk, a pipe closed with SIGPIPE
 *  ignored), say so on stderr and exit CLI_EXIT_USAGE, so that a lost report never exits 0 or 1. Call it before
 *  the one-line summary on stderr, and before returning from main. */
void cli_flush_stdout(void);

/** s as a JSON string literal on stdout, quotes included. */
void cli_json_string(const char *s);

#endif /* TOOLS_CLI_H */
