// A SQLite connection for the store: RAII handle, cached prepared statements, and
// transactions retried as a whole when another connection holds the lock. Private to
// src/store/.
//
// Not thread-safe: one thread at a time (SqliteStore serialises calls with its mutex).
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/error.h"
#include "store/sql_value.h"

namespace layerlab::store::sqlite {

class Db;

// An error from SQLite; rc is the extended result code. The ErrorCode says what to do:
// busy/locked -> kUnavailable, not a database / cannot open -> kInvalidArgument,
// corrupt -> kFailedPrecondition, I/O or disk full -> kUnavailable, else kInternal.
class SqliteError : public Error {
 public:
  SqliteError(int rc, const std::string& message);
  int rc() const { return rc_; }
  bool busy() const;  // SQLITE_BUSY or SQLITE_LOCKED: another connection has the lock

 private:
  int rc_;
};

// One use of a cached statement: binds arguments, steps, and on destruction resets the
// statement, so no read stays open.
class Query {
 public:
  Query(sqlite3_stmt* stmt, const Db& db) : stmt_(stmt), db_(&db) {}
  Query(Query&& other) noexcept : stmt_(std::exchange(other.stmt_, nullptr)), db_(other.db_) {}
  Query& operator=(Query&&) = delete;
  ~Query();

  void bind(int i, int64_t v);
  void bind(int i, int v) { bind(i, static_cast<int64_t>(v)); }
  void bind(int i, double v);  // NaN is stored as NULL
  void bind(int i, std::string_view v);
  void bind(int i, const std::string& v) { bind(i, std::string_view(v)); }
  void bind(int i, const char* v) { bind(i, std::string_view(v)); }
  void bind(int i, std::nullopt_t);
  void bind(int i, Blob v);
  template <typename T>
  void bind(int i, const std::optional<T>& v) {
    if (v) {
      bind(i, *v);
    } else {
      bind(i, std::nullopt);
    }
  }

  bool next();  // steps; true while a row is available
  void run();   // steps to the end, ignoring rows

  bool is_null(int col) const;
  int64_t i64(int col) const;
  int i32(int col) const { return static_cast<int>(i64(col)); }
  double f64(int col) const;  // NULL -> NaN
  std::optional<double> opt_f64(int col) const;
  std::optional<int64_t> opt_i64(int col) const;
  std::string text(int col) const;  // NULL -> ""
  std::string blob(int col) const;  // NULL -> ""

 private:
  sqlite3_stmt* stmt_;
  const Db* db_;
};

class Db {
 public:
  struct Options {
    bool create_if_missing = true;
    std::chrono::milliseconds busy_timeout{5000};
    int max_retries = 6;
  };
  // Opens path and sets WAL, synchronous=NORMAL, foreign keys. `label` names the
  // database in messages (the store URL).
  Db(const std::string& path, std::string label, const Options& options);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // A use of the cached statement for sql with args bound to ?1, ?2, ...
  template <typename... A>
  Query query(std::string_view sql, const A&... args) {
    Query q(statement(sql), *this);
    int i = 0;
    (q.bind(++i, args), ...);
    return q;
  }
  // As query, with a parameter list built at run time.
  Query query_with(std::string_view sql, const std::vector<SqlValue>& values);
  // Runs sql to the end; returns the number of rows it changed.
  template <typename... A>
  int64_t exec(std::string_view sql, const A&... args) {
    query(sql, args...).run();
    return changes();
  }
  // Runs a script of several statements (migrations); no parameters.
  void exec_script(const char* sql);

  // Inside a write transaction: nothing to do (BEGIN IMMEDIATE already holds the
  // database's one write lock); the counterpart of pg::Db::lock_exclusive.
  bool lock_exclusive(int64_t /*key*/) { return false; }

  int64_t changes() const;
  int64_t last_insert_rowid() const;

  // Runs body in a write (BEGIN IMMEDIATE) or read (BEGIN) transaction named `step` and
  // commits. When the lock cannot be had (busy after busy_timeout), the whole transaction
  // is rolled back and retried after a jittered backoff, up to max_retries times; then
  // kUnavailable. Any other error rolls back and propagates. body must only touch the
  // database (it may run more than once).
  template <typename F>
  auto write(const char* step, F&& body) {
    return transact(true, step, std::forward<F>(body));
  }
  template <typename F>
  auto read(const char* step, F&& body) {
    return transact(false, step, std::forward<F>(body));
  }

  // PostgreSQL's Db sends COMMIT with the statement after this call (pg_db.h); SQLite commits
  // in this process, with no round trip to save.
  void commit_with_next() {}
  // PostgreSQL's Db keeps the rest of the transaction on generic plans (pg_db.h); SQLite
  // compiles each statement once already.
  void plan_generically() {}

  // Throws SqliteError for rc with the label, the current step, `what` and SQLite's message.
  [[noreturn]] void fail(int rc, std::string_view what) const;
  const std::string& label() const { return label_; }

  // Counters; safe to read from any thread.
  uint64_t transactions() const { return transactions_.load(std::memory_order_relaxed); }
  uint64_t busy_waits() const { return busy_waits_.load(std::memory_order_relaxed); }
  uint64_t retries() const { return retries_.load(std::memory_order_relaxed); }
  // Virtual-machine steps of the queries run (Store::Stats::vm_steps).
  uint64_t vm_steps() const { return vm_steps_.load(std::memory_order_relaxed); }
  void count_steps(int steps) const { vm_steps_.fetch_add(steps, std::memory_order_relaxed); }

 private:
  template <typename F>
  auto transact(bool write, const char* step, F&& body) {
    using R = std::invoke_result_t<F&>;
    if constexpr (std::is_void_v<R>) {
      run_transaction(write, step, [&] { body(); });
    } else {
      std::optional<R> out;
      run_transaction(write, step, [&] { out.emplace(body()); });
      return std::move(*out);
    }
  }
  void run_transaction(bool write, const char* step, const std::function<void()>& body);
  void rollback_quietly();
  sqlite3_stmt* statement(std::string_view sql);
  static int on_busy(void* self, int count);
  void configure();

  sqlite3* db_ = nullptr;
  std::string label_;
  Options options_;
  const char* step_ = "open";  // the call in progress, for messages
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, sqlite3_stmt*, Hash, std::equal_to<>> statements_;
  std::chrono::steady_clock::time_point busy_since_;
  std::minstd_rand rng_;
  std::atomic<uint64_t> transactions_{0};
  std::atomic<uint64_t> busy_waits_{0};
  std::atomic<uint64_t> retries_{0};
  mutable std::atomic<uint64_t> vm_steps_{0};  // counted as a Query ends, const or not
};

}  // namespace layerlab::store::sqlite
