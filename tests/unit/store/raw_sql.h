// Plain SQL on a store's SQLite file, not through the store: what tests check of the
// tables themselves (store_unit_tests links SQLite).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

namespace layerlab::store::testing {

// Rows of a one-column integer query, read with a plain connection.
inline std::vector<int64_t> sqlite_column(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::vector<int64_t> out;
  while (sqlite3_step(stmt) == SQLITE_ROW) out.push_back(sqlite3_column_int64(stmt, 0));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

}  // namespace layerlab::store::testing
