#include "catalog_fixture.h"

#include <criterion/criterion.h>

catalog test_catalog;

void test_catalog_setup(void)
{
    char err[512];
    cr_assert_eq(catalog_load(&test_catalog, err, sizeof err), 0, "%s", err);
}

void test_catalog_teardown(void) { catalog_release(&test_catalog); }

const model_spec *test_model(const char *name)
{
    const model_spec *m = catalog_model(&test_catalog, name);
    cr_assert_not_null(m, "no model %s", name);
    return m;
}

const device_spec *test_device(const char *name)
{
    const device_spec *d = catalog_device(&test_catalog, name);
    cr_assert_not_null(d, "no device %s", name);
    return d;
}

const engine_spec *test_engine(const char *name)
{
    const engine_spec *e = catalog_engine(&test_catalog, name);
    cr_assert_not_null(e, "no engine %s", name);
    return e;
}
