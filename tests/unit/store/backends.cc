// Every TEST_P(StoreTest, ...) of this binary runs once per backend:
// Backend/StoreTest.Name/sqlite and Backend/StoreTest.Name/postgres.
#include "store_test_util.h"

namespace layerlab::store::testing {

INSTANTIATE_TEST_SUITE_P(Backend, StoreTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres), BackendName{});

}  // namespace layerlab::store::testing
