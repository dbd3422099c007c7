/* Shared by the libFuzzer harnesses (make fuzz): scratch files for inputs that the code
 * under test reads by path. */
#ifndef FLEETSIM_TESTS_FUZZ_SUPPORT_H
#define FLEETSIM_TESTS_FUZZ_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

/* A folder of this process's own under build/fuzz/work (made on first use); the
 * harnesses write their inputs there.  The string lives as long as the process. */
const char *fuzz_work_dir(void);

/* Writes n bytes to <work dir>/name and returns the path (static storage: the next call
 * overwrites it).  Aborts if the file cannot be written: a broken harness, not a
 * finding. */
const char *fuzz_write(const char *name, const uint8_t *data, size_t n);

#endif
