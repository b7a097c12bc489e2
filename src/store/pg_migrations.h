// Versioned schema of the PostgreSQL store: the same versions (and the same tables,
// columns, constraints and indexes) as the SQLite store's (migrations.h), in PostgreSQL's
// dialect. Private to src/store/.
#pragma once

#include <cstdint>
#include <span>

#include "store/pg_db.h"

namespace layerlab::store::pg {

struct Migration {
  int version;              // 1, 2, ... in order; the same numbers as SQLite's
  const char* description;  // for schema_version
  const char* sql;          // one script, applied in one transaction
};

// Every migration this binary knows, oldest first.
std::span<const Migration> migrations();

// The version of the schema in db (0 for a database without a layerlab store).
int schema_version(Db& db);

// Brings db to the newest version, one transaction per step. Each step runs under a
// transaction-level advisory lock and re-checks the version, so
// processes opening the same database at once apply each step once. A database newer than
// this binary is kFailedPrecondition naming the URL; a database without a store is
// kNotFound when create_if_missing is false. now_ms stamps schema_version.applied_at.
void migrate(Db& db, bool create_if_missing, int64_t now_ms);

}  // namespace layerlab::store::pg
