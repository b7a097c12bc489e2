// Opening a store: migrations (both backends), reopening, newer schemas, files that are not
// stores, URLs.
#include "store/schema.h"

#include <sqlite3.h>

#include <thread>
#include <vector>

#include "raw_sql.h"
#include "store_test_util.h"

namespace layerlab::store {
namespace {

using testing::Backend;
using testing::PostgresService;
using testing::TempDir;

std::vector<int64_t> column(const std::string& path, const char* sql) {
  return testing::sqlite_column(path, sql);
}

void exec(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

int newest_version() {
  return sqlite::schema().steps.back().version;
}

// A fresh, empty database of either backend, and plain SQL on it (not through the store).
class SchemaTest : public ::testing::TestWithParam<Backend> {
 protected:
  SchemaTest()
      : url_(GetParam() == Backend::kSqlite ? "sqlite:" + dir_.path("s.db")
                                            : PostgresService::instance().fresh_database_url()) {}
  ~SchemaTest() override {
    if (GetParam() != Backend::kPostgres) return;
    try {
      PostgresService::instance().drop_database(PostgresService::database_of(url_));
    } catch (const std::exception&) {
      // The server goes away at exit anyway.
    }
  }
  std::vector<int64_t> rows(const char* sql) const {
    if (GetParam() == Backend::kSqlite) return column(dir_.path("s.db"), sql);
    return PostgresService::instance().column(PostgresService::database_of(url_), sql);
  }
  void run(const char* sql) const {
    if (GetParam() == Backend::kSqlite) {
      exec(dir_.path("s.db"), sql);
    } else {
      PostgresService::instance().exec(PostgresService::database_of(url_), sql);
    }
  }
  // The schema as an older layerlab left it: the steps up to `version`, by hand.
  void migrate_by_hand_to(int version) const {
    const SchemaDialect& d = GetParam() == Backend::kSqlite ? sqlite::schema() : pg::schema();
    run(d.version_table);
    for (const Migration& m : d.steps) {
      if (m.version > version) break;
      run(m.sql);
      run(("INSERT INTO schema_version (version, description, applied_at) VALUES (" +
           std::to_string(m.version) + ", 'old', 0)")
              .c_str());
    }
  }
  // The store's name for the database in messages.
  std::string label() const { return parse_store_url(url_).text; }

  TempDir dir_;
  std::string url_;
};

INSTANTIATE_TEST_SUITE_P(Backend, SchemaTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         testing::BackendName{});

TEST_P(SchemaTest, MigratesAnEmptyDatabaseAndReopensWithoutChanges) {
  int64_t id = 0;
  {
    auto store = open_store(url_);
    id = store->create_study("s", {{"k", 1}});
  }
  std::vector<int64_t> versions = rows("SELECT version FROM schema_version ORDER BY version");
  ASSERT_EQ(versions.size(), sqlite::schema().steps.size());
  EXPECT_EQ(versions.back(), newest_version());
  for (int i = 0; i < 2; ++i) {
    auto store = open_store(url_);
    EXPECT_EQ(store->get_study(id).spec["k"], 1);
  }
  EXPECT_EQ(rows("SELECT version FROM schema_version ORDER BY version"), versions);
}

// A store an older layerlab left at version 5 (before kept weights) opens, migrates, keeps
// what it had and keeps weights from then on.
TEST_P(SchemaTest, AVersion5StoreMigratesToKeptWeights) {
  migrate_by_hand_to(5);
  run("INSERT INTO studies (name, spec, status, created_at) VALUES ('old', '{}', 'running', 0)");
  auto store = open_store(url_);
  EXPECT_EQ(rows("SELECT MAX(version) FROM schema_version"),
            std::vector<int64_t>{newest_version()});
  const std::optional<StudyRecord> old = store->find_study("old");
  ASSERT_TRUE(old);
  store->add_trials(old->id, {{0, "iris", {}}});
  ClaimOptions o;
  o.study_id = old->id;
  const std::optional<Claim> c = store->claim_next("w", o);
  ASSERT_TRUE(c);
  TrialFinish f{c->trial_id, c->attempt, TrialStatus::kCompleted, nullptr, 0.5, "", {}};
  f.keep = KeepWeights{std::make_shared<const std::string>("weights"), 1, true};
  EXPECT_TRUE(store->finish_trials({f})[0]);
  EXPECT_EQ(store->find_weights(c->trial_id)->bytes, "weights");
}

// A store an older layerlab left at version 6 with trials still queued: after the migration
// (on PostgreSQL, the queued trials get a table of their own) every one is claimed, most
// expensive first, and none twice.
TEST_P(SchemaTest, AVersion6StoreKeepsItsQueuedTrialsClaimable) {
  migrate_by_hand_to(6);
  run("INSERT INTO studies (id, name, spec, status, created_at) "
      "VALUES (1, 'old', '{}', 'running', 0)");
  run("INSERT INTO trials (study_id, number, dataset, params, status, created_at, cost) VALUES "
      "(1, 0, 'iris', '{}', 'queued', 0, 1), (1, 1, 'iris', '{}', 'completed', 0, 9), "
      "(1, 2, 'iris', '{}', 'queued', 0, 5)");
  auto store = open_store(url_);
  std::vector<int64_t> claimed;
  while (const std::optional<Claim> c = store->claim_next("w", {})) claimed.push_back(c->number);
  EXPECT_EQ(claimed, (std::vector<int64_t>{2, 0}));
}

// The missing steps apply together or not at all: a store at version 4 whose step 6 cannot
// apply (a table of that name is already there) stays at version 4, step 5 taken back, and
// the error names the migration.
TEST_P(SchemaTest, AStepThatFailsLeavesTheStoreAtItsVersion) {
  migrate_by_hand_to(4);
  run("CREATE TABLE trial_weights (x INTEGER)");
  try {
    open_store(url_);
    FAIL() << "the migration went through";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("migrate"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("trial_weights"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rows("SELECT MAX(version) FROM schema_version"), std::vector<int64_t>{4});
  run("DROP TABLE trial_weights");
  auto store = open_store(url_);
  EXPECT_EQ(rows("SELECT MAX(version) FROM schema_version"),
            std::vector<int64_t>{newest_version()});
}

TEST_P(SchemaTest, ProcessesOpeningAtOnceMigrateOnce) {
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int i = 0; i < 6; ++i)
    threads.emplace_back([&] {
      try {
        open_store(url_)->list_studies();
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        ++errors;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors, 0);
  EXPECT_EQ(rows("SELECT COUNT(*) FROM schema_version"),
            std::vector<int64_t>{static_cast<int64_t>(sqlite::schema().steps.size())});
}

TEST_P(SchemaTest, NewerDatabaseIsAClearError) {
  open_store(url_);
  run("INSERT INTO schema_version (version, description, applied_at) "
      "VALUES (99, 'from the future', 0)");
  EXPECT_STORE_ERROR(open_store(url_), ErrorCode::kFailedPrecondition,
                     label() + ": the database has schema version 99");
  EXPECT_STORE_ERROR(open_store(url_), ErrorCode::kFailedPrecondition, "use a newer layerlab");
}

TEST(Schema, PostgresHasTheSameMigrationsAsSqlite) {
  ASSERT_EQ(pg::schema().steps.size(), sqlite::schema().steps.size());
  for (size_t i = 0; i < pg::schema().steps.size(); ++i) {
    EXPECT_EQ(pg::schema().steps[i].version, sqlite::schema().steps[i].version);
    EXPECT_STREQ(pg::schema().steps[i].description, sqlite::schema().steps[i].description);
  }
}

TEST(Schema, UsesWriteAheadLogging) {
  TempDir dir;
  std::string path = dir.path("wal.db");
  open_store("sqlite:" + path);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "wal");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

TEST(Schema, FileThatIsNotADatabaseNamesThePath) {
  TempDir dir;
  std::string path = dir.write("notes.txt", std::string(4096, 'x') + "not a database at all\n");
  EXPECT_STORE_ERROR(open_store("sqlite:" + path), ErrorCode::kInvalidArgument,
                     "sqlite:" + path + ": open: file is not a database");
}

TEST(Schema, UnopenablePathNamesThePath) {
  TempDir dir;
  std::string path = dir.path("no/such/dir/x.db");
  EXPECT_STORE_ERROR(open_store("sqlite:" + path), ErrorCode::kInvalidArgument,
                     "sqlite:" + path + ": cannot open the database file");
  // A directory is not a database file either.
  EXPECT_STORE_ERROR(open_store("sqlite:" + dir.path("")), ErrorCode::kInvalidArgument,
                     "cannot open");
}

TEST(Schema, MissingFileWithoutCreateIsNotFound) {
  TempDir dir;
  StoreOptions o;
  o.create_if_missing = false;
  std::string path = dir.path("absent.db");
  EXPECT_STORE_ERROR(open_store("sqlite:" + path, o), ErrorCode::kNotFound, path);
  EXPECT_FALSE(std::filesystem::exists(path));
  open_store("sqlite:" + path);
  EXPECT_NO_THROW(open_store("sqlite:" + path, o));
}

TEST(StoreUrl, SqliteForms) {
  EXPECT_EQ(parse_store_url("sqlite:layerlab.db").path, "layerlab.db");
  EXPECT_EQ(parse_store_url("sqlite:/tmp/x.db").path, "/tmp/x.db");
  EXPECT_EQ(parse_store_url("sqlite:///rel/x.db").path, "rel/x.db");
  EXPECT_EQ(parse_store_url("sqlite:////abs/x.db").path, "/abs/x.db");
  EXPECT_EQ(parse_store_url("sqlite:////abs/x.db").text, "sqlite:/abs/x.db");
  EXPECT_EQ(parse_store_url(kDefaultStoreUrl).kind, StoreUrl::Kind::kSqlite);
  EXPECT_EQ(parse_store_url("postgresql://u:pw@h:5432/db").kind, StoreUrl::Kind::kPostgres);
}

TEST(StoreUrl, Errors) {
  EXPECT_STORE_ERROR(parse_store_url("sqlite:"), ErrorCode::kInvalidArgument,
                     "store URL 'sqlite:' has no file");
  EXPECT_STORE_ERROR(parse_store_url("sqlite://host/x.db"), ErrorCode::kInvalidArgument,
                     "names a host");
  EXPECT_STORE_ERROR(parse_store_url("mysql://u@h/db"), ErrorCode::kInvalidArgument,
                     "unknown store URL 'mysql://u@h/db'; expected sqlite:PATH");
  EXPECT_STORE_ERROR(parse_store_url(""), ErrorCode::kInvalidArgument, "empty store URL");
  EXPECT_STORE_ERROR(parse_store_url("layerlab.db"), ErrorCode::kInvalidArgument, "'layerlab.db'");
}

TEST(StoreUrl, PostgresFormsHideThePassword) {
  StoreUrl u = parse_store_url("postgresql://alice:s3cret@db.example:5432/layerlab");
  EXPECT_EQ(u.kind, StoreUrl::Kind::kPostgres);
  EXPECT_EQ(u.text, "postgresql://alice:***@db.example:5432/layerlab");
  EXPECT_EQ(u.path, "postgresql://alice:s3cret@db.example:5432/layerlab");  // for libpq
  EXPECT_EQ(parse_store_url("postgres://bob@h/db").text, "postgres://bob@h/db");
  EXPECT_EQ(parse_store_url("postgres://bob:p@ss:w@h:1/db").text, "postgres://bob:***@h:1/db");
  EXPECT_EQ(parse_store_url("postgresql://h/db?user=u&password=pw&sslmode=require").text,
            "postgresql://h/db?user=u&password=***&sslmode=require");
  EXPECT_EQ(parse_store_url("postgresql:///db?password=pw").text, "postgresql:///db?password=***");
}

TEST(StoreUrl, PoolModeIsTakenOutOfTheUrlForLibpq) {
  StoreUrl u = parse_store_url("postgresql://u:pw@h:6432/db?pool_mode=transaction");
  EXPECT_TRUE(u.transaction_pooling);
  EXPECT_EQ(u.path, "postgresql://u:pw@h:6432/db");
  EXPECT_EQ(u.text, "postgresql://u:***@h:6432/db?pool_mode=transaction");  // as given
  // Among libpq's own parameters, which stay in their order.
  u = parse_store_url("postgresql://h/db?sslmode=require&pool_mode=transaction&password=pw");
  EXPECT_TRUE(u.transaction_pooling);
  EXPECT_EQ(u.path, "postgresql://h/db?sslmode=require&password=pw");
  EXPECT_EQ(u.text, "postgresql://h/db?sslmode=require&pool_mode=transaction&password=***");
  u = parse_store_url("postgresql://h/db?pool_mode=session&sslmode=disable");
  EXPECT_FALSE(u.transaction_pooling);
  EXPECT_EQ(u.path, "postgresql://h/db?sslmode=disable");
  u = parse_store_url("postgresql://h/db");
  EXPECT_FALSE(u.transaction_pooling);
  EXPECT_EQ(u.path, "postgresql://h/db");
}

TEST(StoreUrl, ABadPoolModeIsAnErrorNamingTheUrlWithoutItsPassword) {
  EXPECT_STORE_ERROR(parse_store_url("postgresql://u:pw@h/db?pool_mode=statement"),
                     ErrorCode::kInvalidArgument,
                     "store URL 'postgresql://u:***@h/db?pool_mode=statement': pool_mode "
                     "'statement' is neither session");
  EXPECT_STORE_ERROR(parse_store_url("postgresql://u:pw@h/db?pool_mode="),
                     ErrorCode::kInvalidArgument, "pool_mode '' is neither");
  EXPECT_STORE_ERROR(
      parse_store_url("postgresql://u:pw@h/db?pool_mode=transaction&pool_mode=session"),
      ErrorCode::kInvalidArgument, "gives pool_mode twice");
  // Never the password itself.
  try {
    parse_store_url("postgresql://u:pw@h/db?pool_mode=x");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("pw@"), std::string::npos) << e.what();
  }
}

TEST(StoreUrl, InMemoryDatabase) {
  auto store = open_store("sqlite::memory:");
  EXPECT_GT(store->create_study("m", nullptr), 0);
  EXPECT_EQ(store->list_studies().size(), 1u);
}

}  // namespace
}  // namespace layerlab::store
