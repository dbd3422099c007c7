/* libFuzzer harness: a calibration profile's text through the profile loader
 * (lua/profile_load.h), then applied to a device as `fleetsim estimate --profile` does. */
#include <stdint.h>
#include <string.h>

#include "lua/catalog.h"
#include "lua/profile_load.h"
#include "tests/fuzz/fuzz_support.h"

static catalog cat;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char err[1024];
    return catalog_load(&cat, err, sizeof err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("profile.lua", data, size);
    char err[2048];
    device_profile p;
    if (profile_load_file(path, &p, err, sizeof err) != 0)
        return 0;
    const device_spec *d = catalog_device(&cat, p.catalog[0] ? p.catalog : "H100-SXM");
    if (!d)
        d = catalog_device(&cat, "H100-SXM");
    device_spec copy = *d;
    perf_profile perf = perf_default_profile(d);
    profile_apply(&p, &copy, &perf);
    return 0;
}
