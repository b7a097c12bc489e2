#include "store/sqlite_db.h"

#include <unistd.h>

#include <cmath>
#include <limits>
#include <thread>

namespace layerlab::store::sqlite {
namespace {

ErrorCode code_for(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_PROTOCOL:
      return ErrorCode::kUnavailable;
    case SQLITE_NOTADB:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH:
      return ErrorCode::kInvalidArgument;
    case SQLITE_CORRUPT:
      return ErrorCode::kFailedPrecondition;
    default:
      return ErrorCode::kInternal;
  }
}

// The start of a statement, for messages.
std::string snippet(const char* sql) {
  std::string s = sql ? sql : "";
  for (char& c : s)
    if (c == '\n' || c == '\t') c = ' ';
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

}  // namespace

SqliteError::SqliteError(int rc, const std::string& message)
    : Error(code_for(rc), message), rc_(rc) {}

bool SqliteError::busy() const {
  int primary = rc_ & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

// ---- Query

Query::~Query() {
  if (!stmt_) return;
  db_->count_steps(sqlite3_stmt_status(stmt_, SQLITE_STMTSTATUS_VM_STEP, /*reset=*/1));
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

void Query::bind(int i, int64_t v) {
  if (int rc = sqlite3_bind_int64(stmt_, i, v); rc != SQLITE_OK) db_->fail(rc, "bind");
}

void Query::bind(int i, double v) {
  int rc = std::isnan(v) ? sqlite3_bind_null(stmt_, i) : sqlite3_bind_double(stmt_, i, v);
  if (rc != SQLITE_OK) db_->fail(rc, "bind");
}

void Query::bind(int i, std::string_view v) {
  // A null pointer would bind NULL; an empty string must stay a string.
  int rc = sqlite3_bind_text(stmt_, i, v.data() ? v.data() : "", static_cast<int>(v.size()),
                             SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) db_->fail(rc, "bind");
}

void Query::bind(int i, Blob v) {
  // A zero-length blob is still a blob (sqlite3_bind_blob64 with a null pointer is NULL).
  static const char kEmpty = 0;
  int rc = sqlite3_bind_blob64(stmt_, i, v.bytes.empty() ? &kEmpty : v.bytes.data(), v.bytes.size(),
                               SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) db_->fail(rc, "bind");
}

void Query::bind(int i, std::nullopt_t) {
  if (int rc = sqlite3_bind_null(stmt_, i); rc != SQLITE_OK) db_->fail(rc, "bind");
}

bool Query::next() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->fail(rc, snippet(sqlite3_sql(stmt_)));
}

void Query::run() {
  while (next()) {
  }
}

bool Query::is_null(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}
int64_t Query::i64(int col) const {
  return sqlite3_column_int64(stmt_, col);
}

double Query::f64(int col) const {
  return is_null(col) ? std::numeric_limits<double>::quiet_NaN()
                      : sqlite3_column_double(stmt_, col);
}

std::optional<double> Query::opt_f64(int col) const {
  if (is_null(col)) return std::nullopt;
  return sqlite3_column_double(stmt_, col);
}

std::optional<int64_t> Query::opt_i64(int col) const {
  if (is_null(col)) return std::nullopt;
  return sqlite3_column_int64(stmt_, col);
}

std::string Query::text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (!p) return {};
  return {reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
}

std::string Query::blob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  if (!p) return {};
  return {static_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
}

// ---- Db

Db::Db(const std::string& path, std::string label, const Options& options)
    : label_(std::move(label)),
      options_(options),
      rng_(static_cast<unsigned>(std::random_device{}() ^ static_cast<unsigned>(::getpid()))) {
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (options_.create_if_missing) flags |= SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = label_ + ": cannot open the database file: " +
                      (db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
    sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError(rc, msg);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_handler(db_, &Db::on_busy, this);
  try {
    configure();
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

Db::~Db() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  if (db_) sqlite3_close(db_);
}

// Settings of the connection. journal_mode=WAL is persistent and needs the lock the first
// time; the others are per connection. The first read of the file is here, so a file that
// is not a database fails here, naming the path.
void Db::configure() {
  for (int attempt = 0;; ++attempt) {
    try {
      step_ = "open";
      {
        Query q = query("PRAGMA journal_mode=WAL");
        q.next();
      }
      exec("PRAGMA synchronous=NORMAL");
      exec("PRAGMA foreign_keys=ON");
      // Checkpoint less often than SQLite's default of 1,000 pages: while another process
      // reads, a checkpoint cannot reset the log, and every commit past the threshold
      // would run (and sync) another one. Measured with 2 workers: 876 checkpoints for
      // 2,000 small trials at the default.
      exec("PRAGMA wal_autocheckpoint=16384");
      return;
    } catch (const SqliteError& e) {
      if (!e.busy() || attempt >= options_.max_retries) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(20 << std::min(attempt, 5)));
    }
  }
}

Query Db::query_with(std::string_view sql, const std::vector<SqlValue>& values) {
  Query q(statement(sql), *this);
  for (size_t i = 0; i < values.size(); ++i) {
    const int at = static_cast<int>(i) + 1;
    std::visit(
        [&](const auto& x) {
          if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>) {
            q.bind(at, std::nullopt);
          } else {
            q.bind(at, x);
          }
        },
        values[i]);
  }
  return q;
}

void Db::exec_script(const char* sql) {
  if (int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr); rc != SQLITE_OK)
    fail(rc, "script");
}

int64_t Db::changes() const {
  return sqlite3_changes64(db_);
}
int64_t Db::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(db_);
}

void Db::fail(int rc, std::string_view what) const {
  // For a file that is not a database (or a damaged one) the statement is noise.
  bool file_problem = (rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT;
  std::string msg = label_ + ": " + step_ + ": ";
  if (!what.empty() && !file_problem) msg += std::string(what) + ": ";
  msg += db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  if ((rc & 0xff) == SQLITE_NOTADB) msg += " (is this a layerlab store?)";
  if ((rc & 0xff) == SQLITE_CORRUPT) msg += " (the file is damaged; restore it from a copy)";
  throw SqliteError(rc, msg);
}

sqlite3_stmt* Db::statement(std::string_view sql) {
  if (auto it = statements_.find(sql); it != statements_.end()) return it->second;
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) fail(rc, "prepare " + snippet(std::string(sql).c_str()));
  statements_.emplace(std::string(sql), stmt);
  return stmt;
}

void Db::rollback_quietly() {
  if (db_ && !sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Db::run_transaction(bool write, const char* step, const std::function<void()>& body) {
  if (!sqlite3_get_autocommit(db_))
    throw internal_error(label_ + ": " + step + ": nested transaction inside " + step_);
  auto start = std::chrono::steady_clock::now();
  for (int attempt = 0;; ++attempt) {
    step_ = step;
    try {
      exec(write ? "BEGIN IMMEDIATE" : "BEGIN");
      body();
      exec("COMMIT");
      transactions_.fetch_add(1, std::memory_order_relaxed);
      return;
    } catch (const SqliteError& e) {
      rollback_quietly();
      if (!e.busy()) throw;
      if (attempt >= options_.max_retries) {
        auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - start);
        throw SqliteError(e.rc(), std::string(e.what()) + " (gave up after " +
                                      std::to_string(attempt + 1) + " tries over " +
                                      std::to_string(waited.count()) + " ms)");
      }
      retries_.fetch_add(1, std::memory_order_relaxed);
      // Full jitter on an exponential step: 20 ms, 40 ms, ... capped at 1 s.
      int64_t cap = std::min<int64_t>(1000, int64_t{20} << std::min(attempt, 6));
      std::uniform_int_distribution<int64_t> pause(cap / 2, cap);
      std::this_thread::sleep_for(std::chrono::milliseconds(pause(rng_)));
    } catch (...) {
      rollback_quietly();
      throw;
    }
  }
}

// SQLite calls this when the lock it wants is held by another connection; returning 1
// makes it try again. Short, growing, jittered sleeps (50 us .. 2 ms) keep the queue of
// writers moving without spinning; 0 after busy_timeout hands SQLITE_BUSY to
// run_transaction, which retries the whole transaction.
int Db::on_busy(void* self_ptr, int count) {
  auto* self = static_cast<Db*>(self_ptr);
  auto now = std::chrono::steady_clock::now();
  if (count == 0) {
    self->busy_since_ = now;
    self->busy_waits_.fetch_add(1, std::memory_order_relaxed);
  } else if (now - self->busy_since_ >= self->options_.busy_timeout) {
    return 0;
  }
  int64_t cap = std::min<int64_t>(2'000, int64_t{50} << std::min(count, 6));
  std::uniform_int_distribution<int64_t> pause(cap / 2, cap);
  std::this_thread::sleep_for(std::chrono::microseconds(pause(self->rng_)));
  return 1;
}

}  // namespace layerlab::store::sqlite
