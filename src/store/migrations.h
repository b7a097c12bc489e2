// Versioned schema of the SQLite store. Private to src/store/.
#pragma once

#include <span>

#include "store/sqlite_db.h"

namespace layerlab::store::sqlite {

struct Migration {
  int version;              // 1, 2, ... in order
  const char* description;  // for schema_version
  const char* sql;          // one script, applied in one transaction
};

// Every migration this binary knows, oldest first.
std::span<const Migration> migrations();

// The version of the schema in db (0 for an empty database).
int schema_version(Db& db);

// Brings db to the newest version, one transaction per step, each re-checking the version
// under the write lock so that processes opening the same file at once apply each step
// once. A database newer than this binary is kFailedPrecondition naming the path.
void migrate(Db& db);

}  // namespace layerlab::store::sqlite
