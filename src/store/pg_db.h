// A PostgreSQL connection for the store (libpq): parameterised prepared statements, results,
// and transactions retried as a whole when the server is away or a transaction loses a
// race. Private to src/store/.
//
// Retry policy (the PostgreSQL counterpart of sqlite_db.h's):
//  - A try waits up to busy_timeout for what it needs: the server (a lost or refused
//    connection is re-established, polling with short jittered pauses) and each row lock
//    another writer holds (lock_timeout).
//  - A try that fails for a transient reason (connection refused or lost, server starting
//    or shutting down, serialization failure 40001, deadlock 40P01, lock timeout 55P03, too
//    many connections) is rolled back and the whole transaction runs again after a
//    jittered exponential pause, up to max_retries more times; then Error kUnavailable
//    "URL: call: message (gave up after N tries over M ms)", or kAborted when the last try
//    lost a race (40001, 40P01): both mean "call again after a pause".
//  - Anything else (bad input, constraint violations, a missing database, a wrong password)
//    is not retried.
//  - Once Options::stop is set (the process was told to stop), a server that is away is no
//    longer waited for: a failed connection is not polled again and a kUnavailable try is
//    not retried ("... (not retried: stopping)"), so SIGTERM is not held up by the retries
//    above (35 s at the defaults). A lost race (kAborted) is still retried: the server is
//    there and the retry is short.
//  - With Options::outage, a call that begins while the database is known away (another
//    call failed to reach it, and none has since) makes one try and is not retried when
//    it cannot connect ("... (not retried: found away by an earlier call)"); see outage.h.
//  - With Options::wait_when_away false, a call connects again at most once, at once, when
//    it cannot reach the server ("... (not retried: this connection does not wait for a
//    database that is away)"). The constructor's connection still waits.
//  - A connection lost while COMMIT was in flight is resolved, where possible, by asking
//    the server about the transaction id afterwards (txid_status), so a write that did
//    commit is not applied a second time. A transaction found committed that way returns
//    nothing: a write with a result (a claim, a finish) is then kUnavailable "... it did
//    commit, but its answer was lost", not retried here. Only when the answer carrying
//    that id was lost too does the retry run blind (a claim may then take a second trial,
//    left to its lease; a finish report false; a create_study find its own study).
//
// Statements are written with SQLite's numbered placeholders (?1, ?2, ...), as the
// statements the two stores share are; they are sent to the server as $1, $2, ...
//
// Round trips: BEGIN and the first statement go together (libpq's pipeline mode), each
// further statement is one, and COMMIT one: a write of one statement costs two. A body that
// marks its last statement (commit_with_next) sends COMMIT with it: one round trip fewer,
// and the locks that statement takes are released when the server is done with it, not
// when its client, perhaps not scheduled for a while, gets round to committing.
// Statements are prepared once per connection (cached by their text).
//
// Behind a transaction pooler (Options::transaction_pooling: PgBouncer's pool_mode =
// transaction and the like) each transaction may run on a different server connection, so
// nothing is left on one between transactions: statements go unnamed (parsed each time),
// and lock_timeout and idle_in_transaction_session_timeout are set for each transaction
// (set_config(..., true), in the round trip of its BEGIN) instead of once per session.
//
// Not thread-safe: one thread at a time (PgStore serialises calls with its mutex).
#pragma once

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
#include "store/outage.h"
#include "store/sql_value.h"

// libpq's types, without its header (it stays private to pg_db.cc).
struct pg_conn;
struct pg_result;

namespace layerlab::store::pg {

// An error from the server or libpq. sqlstate is the five-character SQLSTATE ("" for a
// connection failure); transient() says whether a retry of the transaction may succeed.
class PgError : public Error {
 public:
  PgError(ErrorCode code, const std::string& message, std::string sqlstate, bool transient)
      : Error(code, message), sqlstate_(std::move(sqlstate)), transient_(transient) {}
  const std::string& sqlstate() const { return sqlstate_; }
  bool transient() const { return transient_; }

 private:
  std::string sqlstate_;
  bool transient_;
};

// A statement parameter: its value as text (nullopt: NULL) and its type. Types come from
// the C++ type, never from the value, so a statement is prepared with the same types
// whatever the first call binds (an empty optional<int64_t> is still a bigint).
struct Param {
  std::optional<std::string> text;
  unsigned type = 0;  // a PostgreSQL type OID; 0: inferred by the server
};

Param param(int64_t v);
Param param(int v);
Param param(double v);  // NaN is NULL; infinities are kept
Param param(bool v);
Param param(std::string_view v);
inline Param param(const std::string& v) {
  return param(std::string_view(v));
}
inline Param param(const char* v) {
  return param(std::string_view(v));
}
Param param(std::nullopt_t);
Param param(Blob v);  // BYTEA, sent in its hex text form
// Arrays (for unnest() batches); NaN elements and empty optionals are NULL.
Param param(const std::vector<int64_t>& v);
Param param(const std::vector<int>& v);
Param param(const std::vector<double>& v);
Param param(const std::vector<std::string>& v);
Param param(const std::vector<std::optional<std::string>>& v);
Param param(const std::vector<std::optional<double>>& v);
template <typename T>
Param param(const std::optional<T>& v) {
  if (v) return param(*v);
  Param p = param(T{});
  p.text.reset();
  return p;
}

// The rows of one statement. Text results; columns by index, rows either by index or as a
// cursor (next() moves to the next row; the one-argument accessors read that row), as
// sqlite::Query reads them.
class Result {
 public:
  Result() = default;
  explicit Result(pg_result* r);
  Result(Result&&) noexcept = default;
  Result& operator=(Result&&) noexcept = default;

  int rows() const;
  bool empty() const { return rows() == 0; }
  int64_t affected() const;  // rows an INSERT/UPDATE/DELETE changed

  bool is_null(int row, int col) const;
  int64_t i64(int row, int col) const;
  int i32(int row, int col) const { return static_cast<int>(i64(row, col)); }
  bool boolean(int row, int col) const;
  double f64(int row, int col) const;  // NULL -> NaN
  std::optional<double> opt_f64(int row, int col) const;
  std::optional<int64_t> opt_i64(int row, int col) const;
  std::string text(int row, int col) const;  // NULL -> ""
  std::string blob(int row, int col) const;  // a BYTEA's bytes; NULL -> ""

  bool next() { return ++row_ < rows(); }
  bool is_null(int col) const { return is_null(row_, col); }
  int64_t i64(int col) const { return i64(row_, col); }
  int i32(int col) const { return i32(row_, col); }
  bool boolean(int col) const { return boolean(row_, col); }
  double f64(int col) const { return f64(row_, col); }
  std::optional<double> opt_f64(int col) const { return opt_f64(row_, col); }
  std::optional<int64_t> opt_i64(int col) const { return opt_i64(row_, col); }
  std::string text(int col) const { return text(row_, col); }
  std::string blob(int col) const { return blob(row_, col); }

 private:
  struct Clear {
    void operator()(pg_result* r) const;
  };
  std::unique_ptr<pg_result, Clear> r_;
  int row_ = -1;  // the cursor's row
};

class Db {
 public:
  struct Options {
    std::chrono::milliseconds busy_timeout{5000};
    int max_retries = 6;
    const std::atomic<bool>* stop = nullptr;  // see the retry policy above; must outlive Db
    std::shared_ptr<Outage> outage;           // the same; nullptr: none shared
    bool transaction_pooling = false;         // see above
    bool wait_when_away = true;               // StoreOptions::wait_when_away
  };
  // Connects (retrying transient failures for up to busy_timeout), then sets up the
  // session. `conninfo` is a postgresql:// URL or a libpq keyword string; `label` names the
  // database in messages (the URL with the password hidden).
  Db(const std::string& conninfo, std::string label, const Options& options);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Runs sql (a prepared statement, cached by its text) with args bound to ?1 or $1, ...
  template <typename... A>
  Result query(std::string_view sql, const A&... args) {
    Param params[] = {param(args)..., Param{}};  // one spare: never a zero-length array
    return run_prepared(sql, params, sizeof...(A));
  }
  // As query, with a parameter list built at run time (a filter's optional conditions).
  Result query_with(std::string_view sql, const std::vector<Param>& params) {
    return run_prepared(sql, params.data(), params.size());
  }
  Result query_with(std::string_view sql, const std::vector<SqlValue>& values);
  // As query; returns the number of rows changed.
  template <typename... A>
  int64_t exec(std::string_view sql, const A&... args) {
    return query(sql, args...).affected();
  }
  // Runs a script of several statements (migrations); no parameters.
  void exec_script(const std::string& sql);

  // Runs body in a write or read transaction named `step` and commits.
  // A write runs at READ COMMITTED: writers run concurrently, each statement sees what was
  // committed before it started, and a row another writer changed is waited for (its lock)
  // and re-checked, so read-modify-writes lock their rows first (UPDATE ... RETURNING,
  // SELECT ... FOR UPDATE). A read runs on one snapshot (REPEATABLE READ READ ONLY) and
  // never waits for writers. See the retry policy above; body must only touch the database
  // (it may run more than once).
  template <typename F>
  auto write(const char* step, F&& body) {
    return transact(true, step, std::forward<F>(body));
  }
  template <typename F>
  auto read(const char* step, F&& body) {
    return transact(false, step, std::forward<F>(body));
  }

  // Inside a write transaction: the next statement is the transaction's last. It goes to the
  // server with the COMMIT (and the transaction id for an answer lost on the way) in one
  // round trip; a statement after it is an internal error. (SQLite's Db has the same call:
  // there it changes nothing.)
  void commit_with_next();
  // Inside a transaction: its prepared statements from the next one on run on generic plans
  // (SET LOCAL plan_cache_mode = force_generic_plan, sent with that statement), made once per
  // connection. For hot transactions whose statements PostgreSQL would otherwise plan anew
  // at every call: a LIMIT or a range on a parameter makes each custom plan look cheaper
  // than the generic one (the lease probe took ten times longer to plan than to run, the
  // claim about a quarter of its run time). Behind a transaction pooler statements go unnamed,
  // planned with their values at every call: no effect there.
  // (SQLite's Db has the same call: there it changes nothing.)
  void plan_generically();

  // Inside a write transaction: takes the transaction-level advisory lock `key`, for the
  // few steps that must run one at a time (migrations, numbering changes); never on the
  // path of a trial. Returns whether it had to wait (counted in busy_waits).
  bool lock_exclusive(int64_t key);

  // Runs a command that cannot run inside a transaction (VACUUM) outside any, as `step` in
  // messages, retried as a transaction is (it must be safe to run twice). Counted in
  // maintenance().
  void maintain(const char* step, const char* sql);

  const std::string& label() const { return label_; }

  // Counters; safe to read from any thread.
  uint64_t transactions() const { return transactions_.load(std::memory_order_relaxed); }
  uint64_t busy_waits() const { return busy_waits_.load(std::memory_order_relaxed); }
  uint64_t retries() const { return retries_.load(std::memory_order_relaxed); }
  uint64_t maintenance() const { return maintenance_.load(std::memory_order_relaxed); }
  // Statements that carried plan_generically's setting (one per transaction that used it).
  uint64_t generic_plans() const { return generic_plans_.load(std::memory_order_relaxed); }

 private:
  template <typename F>
  auto transact(bool write, const char* step, F&& body) {
    using R = std::invoke_result_t<F&>;
    if constexpr (std::is_void_v<R>) {
      run_transaction(write, step, [&] { body(); });
    } else {
      std::optional<R> out;
      run_transaction(write, step, [&] { out.emplace(body()); });
      // A try whose COMMIT answer was lost, found committed afterwards: its result is gone
      // with the answer. The caller learns so instead of reading a result never computed.
      if (!out) throw answer_lost();
      return std::move(*out);
    }
  }
  void run_transaction(bool write, const char* step, const std::function<void()>& body);
  PgError answer_lost() const;
  Result run_prepared(std::string_view sql, const Param* params, size_t n);
  Result pipelined(std::string_view sql, bool prepare, const std::vector<unsigned>& types,
                   const std::vector<const char*>& values);
  void begin_now();
  [[noreturn]] void after_last_statement(std::string_view sql);
  // Runs a parameterless simple-protocol command and checks its last result.
  Result run_simple(const char* sql);
  void commit(bool write, std::optional<std::string>& in_doubt_xid);
  std::string xact_status(const std::string& xid);  // "committed", "aborted", "in progress"
  // kInvalidArgument when libpq cannot read conninfo_, without libpq's own message.
  void refuse_unreadable_conninfo() const;
  void connect_within(std::chrono::milliseconds budget, bool wait = true);
  bool connected() const;
  void setup_session();
  // The statement as the server gets it (dollar placeholders), converted once.
  const std::string& server_text(std::string_view sql);
  // Behind a transaction pooler: what setup_session sets, for the transaction just begun.
  const char* transaction_settings() const {
    return options_.transaction_pooling ? transaction_settings_.c_str() : nullptr;
  }
  void rollback_quietly();
  [[noreturn]] void fail(pg_result* r, std::string_view what);
  [[noreturn]] void fail_connection();
  // After try `attempt` (from 0, the first at `start`) failed transiently: counts the retry
  // and pauses, or past max_retries throws `last` with how long it was tried.
  void before_retry(const PgError& last, int attempt, std::chrono::steady_clock::time_point start);
  void pause(int attempt);
  bool stopping() const { return options_.stop && options_.stop->load(); }
  // Why a try that could not reach the server (or, when stopping, any kUnavailable try) is
  // not tried again: a suffix for its message; empty when it is retried as usual.
  std::string_view not_retried(bool connection_lost) const;
  // A transaction or maintenance statement went through: clears Options::outage.
  void reached();
  void transaction_done();  // counts it, and reached()

  pg_conn* conn_ = nullptr;
  std::string conninfo_;
  std::string label_;
  Options options_;
  std::string transaction_settings_;  // the statement transaction_settings() returns
  const char* step_ = "open";         // the call in progress, for messages
  bool known_away_ = false;           // the call began with Options::outage known
  bool in_transaction_ = false;
  bool pending_begin_ = false;  // BEGIN not sent yet: it goes with the first statement
  bool commit_next_ = false;    // COMMIT goes with the next statement (commit_with_next)
  bool generic_next_ = false;   // SET LOCAL goes with the next statement (plan_generically)
  bool committed_ = false;      // it went, and the body may run no further statement
  std::optional<std::string> in_doubt_xid_;  // that COMMIT's transaction id, its answer lost
  bool pending_write_ = false;
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::string, Hash, std::equal_to<>> statements_;  // sql->name
  // sql -> the text the server gets ($1 for ?1); kept across connections
  std::unordered_map<std::string, std::string, Hash, std::equal_to<>> server_texts_;
  uint64_t next_statement_ = 0;
  std::minstd_rand rng_;
  std::atomic<uint64_t> transactions_{0};
  std::atomic<uint64_t> busy_waits_{0};
  std::atomic<uint64_t> retries_{0};
  std::atomic<uint64_t> maintenance_{0};
  std::atomic<uint64_t> generic_plans_{0};
};

}  // namespace layerlab::store::pg
