/* A Criterion fixture for tests of the models: the built-in catalogs, loaded before each
 * test (TestSuite(name, .init = test_catalog_setup, .fini = test_catalog_teardown)), and
 * entries found by name or the test fails. */
#ifndef FLEETSIM_TESTS_CATALOG_FIXTURE_H
#define FLEETSIM_TESTS_CATALOG_FIXTURE_H

#include "lua/catalog.h"

extern catalog test_catalog;

void test_catalog_setup(void);
void test_catalog_teardown(void);

/* The entry, asserted to exist. */
const model_spec *test_model(const char *name);
const device_spec *test_device(const char *name);
const engine_spec *test_engine(const char *name);

#endif
