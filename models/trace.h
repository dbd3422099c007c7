/* Request traces from CSV files, read as a stream: a chunk of the file at a time, never
 * the whole file in memory.  A trace names three columns, the arrival time, the prompt
 * length and the output length (the Azure LLM inference trace 2023 has TIMESTAMP,
 * ContextTokens and GeneratedTokens), and optionally a fourth naming each row's session
 * (a conversation's or an agent run's id, any text: its turns share a prompt prefix,
 * each turn's prompt holding the one before and its answer), and a fifth of hashed
 * block ids (Mooncake's hash_ids: the prompt's blocks of block_tokens tokens each,
 * named so that equal ids at one position mean equal prefixes up to that block).
 * Times are seconds (a number) or timestamps "YYYY-MM-DD HH:MM:SS[.fraction]"; the
 * first row is time 0.
 *
 * A block-id field holds whole numbers >= 0 (below 2^64) separated by spaces, tabs or
 * commas, optionally inside one pair of brackets ("[0, 1, 2]", as a JSON list
 * converted to CSV reads); empty or "[]" is none.  A row names at most
 * ceil(prompt / block_tokens) ids, and at most TRACE_MAX_BLOCK_IDS.
 *
 * Every row is checked: a malformed row, a missing, negative or non-integer length, a
 * timestamp that goes backwards, a malformed block id or too many, a NUL byte in a
 * field, or a missing column is an error "file:row N: ..." (the header is row 1),
 * unless skip_bad is set, in which case the row is skipped and counted.  A UTF-8
 * byte-order mark before the header is skipped.
 */
#ifndef FLEETSIM_MODELS_TRACE_H
#define FLEETSIM_MODELS_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct trace_options {
    const char *path;   /* the file, and its name in messages */
    const char *time_column, *prompt_column, *output_column;
    double speedup;  /* > 0: times are divided by it */
    bool skip_bad;
    /* > 0: an open descriptor of the file, read from its start (with pread, so copies
     * of it in other processes do not disturb each other); path is then not opened
     * again, and a link or a rename after the descriptor was opened changes nothing.
     * 0: open path.  The caller owns the descriptor. */
    int fd;
    const char *session_column; /* NULL: none; else a column naming each row's session */
    const char *blocks_column;  /* NULL: none; else a column of each row's block ids */
    unsigned block_tokens;      /* tokens a block id stands for; 0: TRACE_BLOCK_TOKENS */
} trace_options;

enum {
    TRACE_BLOCK_TOKENS = 512,    /* Mooncake's block: the default block_tokens */
    TRACE_MAX_BLOCK_IDS = 65536, /* a row's ids: 33.5 M tokens of 512 */
};

typedef struct trace_record {
    double time_s;   /* since the first row, after speedup */
    unsigned prompt, output;
    uint64_t row;    /* 1-based, counting the header */
    uint64_t session; /* the session column's text hashed (never 0), or 0: no column or
                         an empty field (a request of its own) */
    const uint64_t *blocks; /* the row's block ids (NULL when none), owned by the reader
                               and valid until its next trace_next or trace_close */
    unsigned nblocks;
} trace_record;

typedef struct trace_reader trace_reader;

/* Opens the file and checks its header; NULL with "file: ..." in err. */
trace_reader *trace_open(const trace_options *options, char *err, size_t err_size);
void trace_close(trace_reader *t);

/* The next good row: 1, or 0 at the end, or -1 with "file:row N: ..." in err. */
int trace_next(trace_reader *t, trace_record *out, char *err, size_t err_size);

/* Rows skipped as bad so far (with skip_bad). */
uint64_t trace_skipped(const trace_reader *t);

/* A whole pass over the file: counts rows and tokens and checks every row, so that a
 * scenario is refused before it runs.  0, or -1 with the first error. */
typedef struct trace_summary {
    uint64_t rows, skipped;
    double prompt_tokens, output_tokens;
    double duration_s; /* time of the last row, after speedup */
    double longest_prompt;       /* the longest prompt ... */
    uint64_t longest_prompt_row; /* ... and its row (the header is row 1) */
} trace_summary;
int trace_scan(const trace_options *options, trace_summary *out, char *err, size_t err_size);

#endif
