// Helpers for the store and queue tests: a store driven by a manual clock on a fresh
// database of either backend, and error assertions.
//
// StoreTest is parametrised over the backends: TEST_P(StoreTest, ...) runs against SQLite
// (a file in a temp dir), PostgreSQL (a fresh database on the test server, see
// tests/support/postgres_service.h) and PostgreSQL behind a transaction pooler (the same,
// through PgBouncer with one server connection per database, see
// tests/support/pgbouncer_service.h); tests/unit/store/backends.cc instantiates it. TEST_F
// on the same fixture runs on SQLite only: for tests about SQLite itself, and for users of
// this header that are not parametrised (the store-backed queue's tests).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "common/error.h"
#include "store/store.h"
#include "support/pgbouncer_service.h"
#include "support/postgres_service.h"
#include "support/temp_and_errors.h"

namespace layerlab::store::testing {

using ::layerlab::testing::PgBouncerService;
using ::layerlab::testing::PostgresService;
using ::layerlab::testing::TempDir;
using ::layerlab::testing::throws_error;

enum class Backend { kSqlite, kPostgres, kPgBouncer };

inline const char* backend_name(Backend b) {
  switch (b) {
    case Backend::kSqlite:
      return "sqlite";
    case Backend::kPostgres:
      return "postgres";
    case Backend::kPgBouncer:
      return "pgbouncer";
  }
  return "?";
}

// How gtest prints the parameter (in test names and in ctest's).
inline void PrintTo(Backend b, std::ostream* os) {
  *os << backend_name(b);
}

// For INSTANTIATE_TEST_SUITE_P: .../sqlite, .../postgres.
struct BackendName {
  std::string operator()(const ::testing::TestParamInfo<Backend>& info) const {
    return backend_name(info.param);
  }
};

// A store on a fresh database of backend() driven by a manual clock; reopen() gives a
// second connection (another process, as far as the store can tell).
class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  StoreTest() : backend_(current_backend()), url_(fresh_url()), store_(reopen()) {}
  ~StoreTest() override {
    store_.reset();
    if (postgres()) {
      try {
        PostgresService::instance().drop_database(PostgresService::database_of(url_));
      } catch (const std::exception&) {
        // The server goes away at exit anyway.
      }
    }
  }

  Backend backend() const { return backend_; }
  bool postgres() const { return backend_ != Backend::kSqlite; }
  const std::string& url() const { return url_; }
  // The database itself, not through a pooler: for another client (a lock holder, psql).
  std::string direct_url() const {
    return backend_ == Backend::kPgBouncer
               ? PostgresService::instance().url_of(PostgresService::database_of(url_))
               : url_;
  }
  std::unique_ptr<Store> reopen() { return open_store(url(), options()); }
  StoreOptions options() {
    StoreOptions o;
    o.clock = &clock_;
    return o;
  }
  // A study with `n` queued trials numbered 0..n-1 on dataset "iris".
  int64_t study_with_trials(const std::string& name, int n) {
    int64_t id = store_->create_study(name, {{"metric", "val_accuracy"}});
    std::vector<NewTrial> trials;
    for (int i = 0; i < n; ++i) trials.push_back({i, "iris", {{"units", 8 * (i + 1)}}});
    store_->add_trials(id, trials);
    return id;
  }

  TempDir dir_;
  ManualClock clock_;

 private:
  // The parameter of a TEST_P; SQLite for a TEST_F.
  Backend current_backend() const {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return info && info->value_param() ? GetParam() : Backend::kSqlite;
  }
  std::string fresh_url() const {
    switch (backend_) {
      case Backend::kSqlite:
        return "sqlite:" + dir_.path("test.db");
      case Backend::kPostgres:
        return PostgresService::instance().fresh_database_url();
      case Backend::kPgBouncer:
        return PgBouncerService::instance().url_of(PostgresService::instance().fresh_database());
    }
    return "";
  }

  Backend backend_;
  std::string url_;

 protected:
  std::unique_ptr<Store> store_;
};

#define EXPECT_STORE_ERROR(stmt, code, part) \
  EXPECT_TRUE(::layerlab::store::testing::throws_error([&] { stmt; }, code, part))

}  // namespace layerlab::store::testing
