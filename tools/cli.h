/* What the command-line tools share: option parsing ("--opt value", "--opt=value", "--"), usage errors
 * (exit status 2), number and list parsing, the names of types and modes on the command line, output
 * files ("-" is stdout) and JSON string output. */
#ifndef TOOLS_CLI_H
#define TOOLS_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tma/tma.h"

/** The program name in usage errors ("tma-explain"); set once at the start of main. */
extern const char *cli_program;

/** Print "PROGRAM: message (see PROGRAM --help)" on stderr and exit with status 2. */
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

/** Print "PROGRAM VERSION" (tma_version_string) on stdout. */
void cli_print_version(void);

/* ---------------------------------------------------------------------------------------------
 * Values
 * ------------------------------------------------------------------------------------------- */

/** An unsigned decimal number, or hexadecimal after 0x/0X; no sign, no spaces, nothing after it. A leading 0
 *  is decimal ("010" is ten). */
bool cli_parse_u64(const char *s, uint64_t *out);
/** cli_parse_u64 that must also fit in 32 bits. */
bool cli_parse_u32(const char *s, uint32_t *out);
/** A comma-separated list of 1..cap unsigned numbers; returns how many. Bad usage (exit 2) otherwise,
 *  naming the option `opt`: an empty list or an empty element ("10,,16", ",10", "10,"), too many values,
 *  an element that is not a number. */
uint32_t cli_parse_list(const char *opt, const char *s, uint64_t *out, uint32_t cap);
/** cli_parse_list for 32-bit signed numbers, each with an optional leading '-' ("-1,0x10"). */
uint32_t cli_parse_i32_list(const char *opt, const char *s, int32_t *out, uint32_t cap);
/** v as 32 bits, or bad usage (exit 2) naming the option `opt`. */
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

/** s as a JSON string literal on stdout, quotes included. */
void cli_json_string(const char *s);

#endif /* TOOLS_CLI_H */
