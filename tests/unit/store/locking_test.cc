// What another connection's lock and a damaged file do to a store call.
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "store/pg_db.h"
#include "store_test_util.h"

namespace layerlab::store {
namespace {

using std::chrono::milliseconds;
using testing::StoreTest;

// Holds what the store's writers need, as another process's transaction could: SQLite's
// BEGIN IMMEDIATE on the file; on PostgreSQL (where writers lock rows, not the store) an
// open transaction holding the tables in EXCLUSIVE mode (reads go on, writes wait).
class WriteLock {
 public:
  explicit WriteLock(const std::string& url) {
    if (url.rfind("sqlite:", 0) == 0) {
      EXPECT_EQ(sqlite3_open(url.substr(7).c_str(), &db_), SQLITE_OK);
      EXPECT_EQ(sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
    } else {
      pg_ = std::make_unique<pg::Db>(url, "lock holder", pg::Db::Options{});
      pg_->exec_script("BEGIN; LOCK TABLE studies, trials IN EXCLUSIVE MODE");
    }
  }
  ~WriteLock() { release(); }
  void release() {
    pg_.reset();  // closing the session ends its transaction
    if (!db_) return;
    sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
    db_ = nullptr;
  }

 private:
  sqlite3* db_ = nullptr;
  std::unique_ptr<pg::Db> pg_;
};

TEST_P(StoreTest, ALockHeldPastAllRetriesIsUnavailableAndNamesTheCall) {
  StoreOptions o = options();
  o.busy_timeout = milliseconds(30);
  o.max_retries = 2;
  auto store = open_store(url(), o);
  const std::string label = parse_store_url(url()).text;
  WriteLock lock(direct_url());
  EXPECT_STORE_ERROR(store->create_study("s", nullptr), ErrorCode::kUnavailable,
                     label + ": create_study: ");
  EXPECT_STORE_ERROR(store->create_study("s", nullptr), ErrorCode::kUnavailable,
                     postgres() ? "lock timeout (gave up after 3 tries over "
                                : "database is locked (gave up after 3 tries over ");
  EXPECT_EQ(store->stats().retries, 4u);
  // Readers are not blocked by a writer (WAL; MVCC).
  EXPECT_NO_THROW(store->list_studies());
  lock.release();
  EXPECT_GT(store->create_study("s", nullptr), 0);
}

TEST_P(StoreTest, ABriefLockIsWaitedOutWithoutAnError) {
  int64_t study = study_with_trials("s", 1);
  auto lock = std::make_unique<WriteLock>(direct_url());
  std::thread holder([&] {
    std::this_thread::sleep_for(milliseconds(150));
    lock->release();
  });
  std::optional<Claim> c = store_->claim_next("w", {});
  holder.join();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->study_id, study);
  // (PostgreSQL's writers wait on rows and tables, which the store does not count.)
  if (!postgres()) {
    EXPECT_GE(store_->stats().busy_waits, 1u);
  }
  EXPECT_EQ(store_->stats().retries, 0u);
}

TEST(DamagedFile, CorruptPagesAreAnErrorNamingThePath) {
  testing::TempDir dir;
  std::string path = dir.path("damaged.db");
  {
    auto store = open_store("sqlite:" + path);
    int64_t study = store->create_study("s", nullptr);
    std::vector<NewTrial> trials;
    for (int i = 0; i < 200; ++i) trials.push_back({i, "iris", {{"pad", std::string(200, 'x')}}});
    store->add_trials(study, trials);
  }  // the last connection checkpoints the log into the file
  ASSERT_GT(std::filesystem::file_size(path), 8192u);
  {
    // Keep page 1 (header and schema), scribble over every later page.
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4096);
    std::string junk(std::filesystem::file_size(path) - 4096, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  EXPECT_STORE_ERROR(
      {
        auto store = open_store("sqlite:" + path);
        store->list_trials(1, {});
      },
      ErrorCode::kFailedPrecondition, "sqlite:" + path + ": ");
}

}  // namespace
}  // namespace layerlab::store
