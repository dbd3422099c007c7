/* libFuzzer harness: `fleetsim validate`'s tables (tests/validation/published.csv's
 * columns), which a user may write or be given: the CSV reader (output/csv_table.c) and
 * every row through the predictor (lua/validate_predict.c), the analytic model, the
 * training planner and the closed-loop serving simulation (lua/validate_serving.c).
 *
 * The input is the table's text after a fixed header row.  A row must give a figure or
 * a reason, never crash, hang or read out of bounds; a prediction must be a number
 * (finite or not) with no reason, a refusal a reason. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lua/catalog.h"
#include "lua/validate_predict.h"
#include "output/csv_table.h"
#include "tests/fuzz/fuzz_support.h"

static const char header[] =
    "id,half,category,metric,unit,value,model,device,device_count,precision,"
    "kv_cache_precision,parallelism,batch_or_concurrency,input_tokens,output_tokens,"
    "seq_len,global_batch,train_tokens,engine\n";

static catalog cat;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char err[512];
    return catalog_load(&cat, err, sizeof err) == 0 ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0; /* a few rows; long inputs only slow the search */
    size_t n = sizeof header - 1;
    uint8_t *text = malloc(n + size);
    if (!text)
        return 0;
    memcpy(text, header, n);
    memcpy(text + n, data, size);
    const char *path = fuzz_write("table.csv", text, n + size);
    free(text);
    csv_table t;
    char err[512];
    if (csv_table_read(path, &t, err, sizeof err) == 0) {
        for (size_t i = 0; i < t.rows && i < 16; i++) {
            validate_row row = validate_row_of(&t, i);
            validate_prediction p;
            validate_predict(&cat, &row, &p);
            if (!p.predicted && !p.reason[0])
                __builtin_trap(); /* a refusal says why */
        }
    }
    csv_table_release(&t);
    return 0;
}
