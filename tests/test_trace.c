/* Trace replay: the Azure traces stream through exactly, and every kind of bad row is
 * reported with its file and row. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "models/trace.h"
#include "support/scratch.h"

static char *dir;
static void setup(void) { dir = scratch_dir(); }
static void teardown(void) { scratch_remove_dir(dir); }
TestSuite(trace, .init = setup, .fini = teardown);

static trace_options azure(const char *path)
{
    return (trace_options){ path, "TIMESTAMP", "ContextTokens", "GeneratedTokens", 1, false, 0,
                            NULL, NULL, 0 };
}

Test(trace, the_azure_conversation_trace_streams_whole)
{
    /* counted independently of fleetsim (a CSV reader in another language): 19,366 rows,
     * 22,361,870 prompt and 4,088,665 output tokens, the last 3,501.72 s after the first */
    trace_options o = azure("scenarios/traces/azure_llm_2023_conv.csv");
    trace_summary s;
    char err[512];
    cr_assert_eq(trace_scan(&o, &s, err, sizeof err), 0, "%s", err);
    cr_expect_eq(s.rows, 19366);
    cr_expect_float_eq(s.prompt_tokens, 22361870, 0);
    cr_expect_float_eq(s.output_tokens, 4088665, 0);
    cr_expect_float_eq(s.duration_s, 3501.722, 1e-3);
    o.speedup = 2;
    cr_assert_eq(trace_scan(&o, &s, err, sizeof err), 0);
    cr_expect_float_eq(s.duration_s, 3501.722 / 2, 1e-3);
}

Test(trace, the_code_trace_too)
{
    trace_options o = azure("scenarios/traces/azure_llm_2023_code.csv");
    trace_summary s;
    char err[512];
    cr_assert_eq(trace_scan(&o, &s, err, sizeof err), 0, "%s", err);
    cr_expect_eq(s.rows, 8819);
    cr_expect_float_eq(s.prompt_tokens, 18059974, 0);
    cr_expect_float_eq(s.output_tokens, 245896, 0);
}

/* Scans text as a trace of options o (its path set here): the error "<path>:message". */
static void expect_error_with(trace_options o, const char *text, const char *message)
{
    char *path = scratch_file(dir, "t.csv", text), err[512], expected[512];
    o.path = path;
    trace_summary s;
    cr_expect_eq(trace_scan(&o, &s, err, sizeof err), -1, "accepted: %s", text);
    snprintf(expected, sizeof expected, "%s:%s", path, message);
    cr_expect_str_eq(err, expected);
    free(path);
}

static void expect_trace_error(const char *text, const char *message)
{
    expect_error_with((trace_options){ NULL, "t", "in", "out", 1, false, 0, NULL, NULL, 0 },
                      text, message);
}

Test(trace, bad_rows_are_reported_with_file_and_row)
{
    expect_trace_error("t,in,out\n0,10,5\n1,10\n", "row 3: 2 fields where the header has 3");
    expect_trace_error("t,in,out\n0,10,5\n1,-3,5\n", "row 3: in: expected a whole number of tokens >= 0, got \"-3\"");
    expect_trace_error("t,in,out\n0,10,5\n1,,5\n", "row 3: in: expected a whole number of tokens >= 0, got \"\"");
    expect_trace_error("t,in,out\n0,10,5\n1,10,lots\n", "row 3: out: expected a whole number of tokens >= 0, got \"lots\"");
    expect_trace_error("t,in,out\n5,10,5\n4.5,10,5\n", "row 3: t goes backwards (0.5 s before the previous row)");
    expect_trace_error("t,in,out\nyesterday,10,5\n", "row 2: t: expected seconds or a timestamp such as \"2023-11-16 18:17:03.98\", got \"yesterday\"");
    expect_trace_error("time,in,out\n0,10,5\n", "row 1: no column \"t\" in the header");
    expect_trace_error("t,in,out\n", " the trace has no rows");
}

Test(trace, skip_bad_skips_and_counts)
{
    char *path = scratch_file(dir, "t.csv", "t,in,out\n0,10,5\n1,x,5\n2,10\n3,7,1\n"), err[512];
    trace_options o = { path, "t", "in", "out", 1, true, 0, NULL, NULL, 0 };
    trace_summary s;
    cr_assert_eq(trace_scan(&o, &s, err, sizeof err), 0, "%s", err);
    cr_expect_eq(s.rows, 2);
    cr_expect_eq(s.skipped, 2);
    cr_expect_float_eq(s.prompt_tokens, 17, 0);
    free(path);
}

Test(trace, timestamps_with_fractions_and_quoted_fields)
{
    char *path = scratch_file(dir, "t.csv", "t,in,out\n\"2023-11-16 23:59:59.5\",1,1\n"
                                          "2023-11-17 00:00:01.25,2,3\n"), err[512];
    trace_options o = { path, "t", "in", "out", 1, false, 0, NULL, NULL, 0 };
    trace_reader *t = trace_open(&o, err, sizeof err);
    cr_assert_not_null(t, "%s", err);
    trace_record r;
    cr_assert_eq(trace_next(t, &r, err, sizeof err), 1);
    cr_expect_float_eq(r.time_s, 0, 0);
    cr_assert_eq(trace_next(t, &r, err, sizeof err), 1);
    cr_expect_float_eq(r.time_s, 1.75, 1e-9, "across midnight");
    cr_expect_eq(r.prompt, 2);
    cr_expect_eq(r.output, 3);
    cr_expect_eq(r.row, 3);
    cr_expect_eq(trace_next(t, &r, err, sizeof err), 0);
    trace_close(t);
    free(path);
}

/* Issue 17, finding 16: a header behind a UTF-8 byte-order mark is read (spreadsheets
 * write one), and a NUL byte inside a field is refused with its row instead of cutting
 * the field short ("37\0 4" once read as 37). */
Test(trace, a_byte_order_mark_is_skipped_and_a_nul_byte_refused)
{
    char *path = scratch_file(dir, "bom.csv", "\xEF\xBB\xBFTIMESTAMP,in,out\n0,10,5\n"), err[512];
    trace_options o = { path, "TIMESTAMP", "in", "out", 1, false, 0, NULL, NULL, 0 };
    trace_summary s;
    cr_expect_eq(trace_scan(&o, &s, err, sizeof err), 0, "%s", err);
    cr_expect_eq(s.rows, 1);
    free(path);
    char text[] = "t,in,out\n0,10,5\n1,37\0 4,5\n";
    char nul_path[1024];
    snprintf(nul_path, sizeof nul_path, "%s/nul.csv", dir);
    FILE *f = fopen(nul_path, "wb");
    cr_assert_not_null(f);
    fwrite(text, 1, sizeof text - 1, f);
    fclose(f);
    trace_options n = { nul_path, "t", "in", "out", 1, false, 0, NULL, NULL, 0 };
    cr_expect_eq(trace_scan(&n, &s, err, sizeof err), -1);
    char expected[1100];
    snprintf(expected, sizeof expected, "%s:row 3: a field holds a NUL byte", nul_path);
    cr_expect_str_eq(err, expected);
}

/* Issue 17, finding 7: a trace read through the descriptor opened at load reads that
 * file, whatever the name points to later, and readers one after the other (a looped
 * trace, the next replication) each read it from its start. */
Test(trace, a_descriptor_reads_the_file_opened_whatever_the_name_becomes)
{
    char *path = scratch_file(dir, "t.csv", "t,in,out\n0,10,5\n1,20,5\n"), err[512];
    int fd = open(path, O_RDONLY);
    cr_assert(fd > 0);
    free(scratch_file(dir, "other.csv", "t,in,out\n0,99,1\n"));
    char other[1024];
    snprintf(other, sizeof other, "%s/other.csv", dir);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(symlink(other, path), 0, "the name now points elsewhere");
    trace_options o = { path, "t", "in", "out", 1, false, fd, NULL, NULL, 0 };
    for (int pass = 0; pass < 2; pass++) {
        trace_summary s;
        cr_assert_eq(trace_scan(&o, &s, err, sizeof err), 0, "%s", err);
        cr_expect_eq(s.rows, 2, "pass %d", pass);
        cr_expect_float_eq(s.prompt_tokens, 30, 0, "pass %d read the other file", pass);
    }
    close(fd);
    free(path);
}

/* A trace of hashed block ids (Mooncake's hash_ids), 4 tokens a block. */
static trace_options with_blocks(const char *path)
{
    return (trace_options){ .path = path, .time_column = "t", .prompt_column = "in",
                            .output_column = "out", .speedup = 1, .blocks_column = "ids",
                            .block_tokens = 4 };
}

Test(trace, block_ids_are_read_with_spaces_commas_or_brackets)
{
    char *path = scratch_file(dir, "t.csv", "t,in,out,ids\n0,9,1,0 1 2\n1,8,1,\"[0, 1]\"\n"
                                          "2,5,1,\n3,5,1,[]\n"
                                          "4,12,1,\" 7,8 ,18446744073709551615 \"\n"),
         err[512];
    trace_options o = with_blocks(path);
    trace_reader *t = trace_open(&o, err, sizeof err);
    cr_assert(t, "%s", err);
    static const uint64_t expected[][3] = { { 0, 1, 2 }, { 0, 1 }, { 0 }, { 0 },
                                            { 7, 8, UINT64_MAX } };
    static const unsigned counts[] = { 3, 2, 0, 0, 3 };
    trace_record r;
    for (int row = 0; row < 5; row++) {
        cr_assert_eq(trace_next(t, &r, err, sizeof err), 1, "%s", err);
        cr_expect_eq(r.nblocks, counts[row], "row %d: %u ids", row + 2, r.nblocks);
        for (unsigned k = 0; k < r.nblocks && k < counts[row]; k++)
            cr_expect_eq(r.blocks[k], expected[row][k], "row %d, id %u", row + 2, k);
    }
    cr_expect_eq(trace_next(t, &r, err, sizeof err), 0);
    trace_close(t);
    free(path);
}

static void expect_blocks_error(const char *text, const char *message)
{
    expect_error_with(with_blocks(NULL), text, message);
}

Test(trace, bad_block_ids_are_reported_with_file_and_row)
{
    /* 9 tokens of 4 a block: ceil(9 / 4) = 3 ids at most */
    expect_blocks_error("t,in,out,ids\n0,9,1,0 1 2\n1,9,1,0 1 2 3\n",
                        "row 3: ids: 4 block ids of 4 tokens for a prompt of 9 tokens, at most 3");
    expect_blocks_error("t,in,out,ids\n0,9,1,0 x 2\n",
                        "row 2: ids: expected block ids (whole numbers >= 0 separated by spaces "
                        "or commas), got \"x\"");
    expect_blocks_error("t,in,out,ids\n0,9,1,0 -1\n",
                        "row 2: ids: expected block ids (whole numbers >= 0 separated by spaces "
                        "or commas), got \"-1\"");
    expect_blocks_error("t,in,out,ids\n0,9,1,1.5\n",
                        "row 2: ids: expected block ids (whole numbers >= 0 separated by spaces "
                        "or commas), got \"1.5\"");
    expect_blocks_error("t,in,out,ids\n0,9,1,18446744073709551616\n",
                        "row 2: ids: expected block ids (whole numbers >= 0 separated by spaces "
                        "or commas), got \"18446744073709551616\"");
    expect_blocks_error("t,in,out,ids\n0,9,1,\"[0, 1\"\n",
                        "row 2: ids: expected block ids (whole numbers >= 0 separated by spaces "
                        "or commas), got \"[0\"");
    expect_blocks_error("t,in,out,ids\n0,0,1,0\n",
                        "row 2: ids: 1 block ids of 4 tokens for a prompt of 0 tokens, at most 0");
    expect_blocks_error("t,in,out\n0,9,1\n", "row 1: no column \"ids\" in the header");
}

Test(trace, a_row_holds_at_most_the_bounded_number_of_ids)
{
    /* TRACE_MAX_BLOCK_IDS + 1 zeros, for a prompt long enough to name them all */
    size_t n = TRACE_MAX_BLOCK_IDS + 1;
    char *text = malloc(2 * n + 64);
    cr_assert(text);
    int k = sprintf(text, "t,in,out,ids\n0,%zu,1,", 4 * n);
    for (size_t i = 0; i < n; i++)
        k += sprintf(text + k, i + 1 < n ? "0 " : "0\n");
    char message[128];
    snprintf(message, sizeof message, "row 2: ids: more than %d block ids", TRACE_MAX_BLOCK_IDS);
    expect_blocks_error(text, message);
    free(text);
}
