// The store's versioned schema: one migration driver, one list of steps per database
// (the same versions, tables, columns, constraints and indexes, each in its dialect).
// Private to src/store/.
#pragma once

#include <cstdint>
#include <span>

namespace layerlab::store {

struct Migration {
  int version;              // 1, 2, ... in order; the same numbers on both databases
  const char* description;  // for schema_version
  const char* sql;          // one script, applied in one transaction
};

// What the driver needs from a database besides its steps.
struct SchemaDialect {
  std::span<const Migration> steps;
  const char* version_table;      // CREATE TABLE IF NOT EXISTS schema_version (...)
  const char* has_version_table;  // a query with a row when schema_version exists
  // The same under the migration's lock, where a catalog cache may be behind: a query that
  // reads the catalog itself.
  const char* has_version_table_locked;
  int64_t lock_key;  // Db::lock_exclusive's key while migrating
};

// The version of the schema in db (0 for a database without a layerlab store).
template <typename Db>
int schema_version(Db& db, const SchemaDialect& dialect);

// Brings db to the newest version: every missing step in one transaction, so a step that
// fails leaves the database at the version it had. The transaction takes the database's
// exclusive lock and re-checks the version, so processes opening the same database at once
// apply each step once. A database newer than this binary is
// kFailedPrecondition naming it; one without a store is kNotFound when create_if_missing
// is false. now_ms stamps schema_version.applied_at.
template <typename Db>
void migrate(Db& db, const SchemaDialect& dialect, bool create_if_missing, int64_t now_ms);

namespace sqlite {
const SchemaDialect& schema();
}  // namespace sqlite
namespace pg {
const SchemaDialect& schema();
}  // namespace pg

}  // namespace layerlab::store
