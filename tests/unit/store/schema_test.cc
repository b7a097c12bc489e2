// Opening a store: migrations, reopening, newer schemas, files that are not stores, URLs.
#include <sqlite3.h>

#include <thread>
#include <vector>

#include "store/migrations.h"
#include "store_test_util.h"

namespace layerlab::store {
namespace {

using testing::TempDir;

// Rows of a one-column integer query, read with a plain connection.
std::vector<int64_t> column(const std::string& path, const char* sql) {
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

void exec(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

int newest_version() {
  return sqlite::migrations().back().version;
}

TEST(Schema, MigratesAnEmptyFileAndReopensWithoutChanges) {
  TempDir dir;
  std::string path = dir.path("s.db");
  int64_t id = 0;
  {
    auto store = open_store("sqlite:" + path);
    id = store->create_study("s", {{"k", 1}});
  }
  std::vector<int64_t> versions = column(path, "SELECT version FROM schema_version");
  ASSERT_EQ(versions.size(), sqlite::migrations().size());
  EXPECT_EQ(versions.back(), newest_version());
  for (int i = 0; i < 2; ++i) {
    auto store = open_store("sqlite:" + path);
    EXPECT_EQ(store->get_study(id).spec["k"], 1);
  }
  EXPECT_EQ(column(path, "SELECT version FROM schema_version"), versions);
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

TEST(Schema, ProcessesOpeningAtOnceMigrateOnce) {
  TempDir dir;
  std::string url = "sqlite:" + dir.path("race.db");
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      try {
        open_store(url)->list_studies();
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        ++errors;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors, 0);
  EXPECT_EQ(column(dir.path("race.db"), "SELECT COUNT(*) FROM schema_version"),
            std::vector<int64_t>{static_cast<int64_t>(sqlite::migrations().size())});
}

TEST(Schema, NewerDatabaseIsAClearError) {
  TempDir dir;
  std::string path = dir.path("new.db");
  open_store("sqlite:" + path);
  exec(path, "INSERT INTO schema_version (version, description) VALUES (99, 'from the future')");
  EXPECT_STORE_ERROR(open_store("sqlite:" + path), ErrorCode::kFailedPrecondition,
                     path + ": the database has schema version 99");
  EXPECT_STORE_ERROR(open_store("sqlite:" + path), ErrorCode::kFailedPrecondition,
                     "use a newer layerlab");
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

TEST(StoreUrl, PostgresIsNotBuiltYetAndHidesThePassword) {
  try {
    open_store("postgresql://alice:s3cret@db.example:5432/layerlab");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition);
    std::string msg = e.what();
    EXPECT_NE(msg.find("not built yet"), std::string::npos) << msg;
    EXPECT_NE(msg.find("postgresql://alice:***@db.example:5432/layerlab"), std::string::npos)
        << msg;
    EXPECT_EQ(msg.find("s3cret"), std::string::npos) << msg;
  }
}

TEST(StoreUrl, InMemoryDatabase) {
  auto store = open_store("sqlite::memory:");
  EXPECT_GT(store->create_study("m", nullptr), 0);
  EXPECT_EQ(store->list_studies().size(), 1u);
}

}  // namespace
}  // namespace layerlab::store
