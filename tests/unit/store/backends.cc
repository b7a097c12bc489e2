// Every TEST_P(StoreTest, ...) of this binary runs once per backend:
// Backend/StoreTest.Name/sqlite, .../postgres and .../pgbouncer (PostgreSQL behind a
// transaction pooler).
#include "store_test_util.h"

namespace layerlab::store::testing {

INSTANTIATE_TEST_SUITE_P(Backend, StoreTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres,
                                           Backend::kPgBouncer),
                         BackendName{});

}  // namespace layerlab::store::testing
