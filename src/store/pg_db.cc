#include "store/pg_db.h"

#include <libpq-fe.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>
#include <thread>

#include "common/stop_sleep.h"

namespace layerlab::store::pg {
namespace {

// Type OIDs (catalog/pg_type.h, stable across versions).
constexpr unsigned kBool = 16;
constexpr unsigned kInt8 = 20;
constexpr unsigned kInt4 = 23;
constexpr unsigned kText = 25;
constexpr unsigned kBytea = 17;
constexpr unsigned kFloat8 = 701;
constexpr unsigned kInt4Array = 1007;
constexpr unsigned kTextArray = 1009;
constexpr unsigned kInt8Array = 1016;
constexpr unsigned kFloat8Array = 1022;

// What a try not retried because of Options::stop, Options::outage or
// Options::wait_when_away says.
constexpr std::string_view kStopping = " (not retried: stopping)";
constexpr std::string_view kKnownAway = " (not retried: found away by an earlier call)";
constexpr std::string_view kNoWait =
    " (not retried: this connection does not wait for a database that is away)";

// Writes run at READ COMMITTED and lock the rows they change; reads see one snapshot.
constexpr const char* kBeginWrite = "BEGIN";
constexpr const char* kBeginRead = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
// The transaction id, if the transaction wrote anything, rides along with COMMIT: when the
// connection breaks before COMMIT's answer arrives, the server can still say whether it
// committed (txid_status).
constexpr const char* kTransactionId = "SELECT txid_current_if_assigned()::text";
constexpr const char* kCommitWrite = "SELECT txid_current_if_assigned()::text; COMMIT";
constexpr const char* kGenericPlans = "SET LOCAL plan_cache_mode = force_generic_plan";

std::string double_text(double v) {
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

// An element of a text[] literal: always quoted, with \ and " escaped.
void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

template <typename T, typename F>
Param array(const std::vector<T>& v, unsigned type, F&& element) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    element(s, v[i]);
  }
  s += '}';
  return {std::move(s), type};
}

void append_double(std::string& s, double d) {
  if (std::isnan(d)) {
    s += "NULL";
  } else {
    s += double_text(d);
  }
}

// The first line of a libpq or server message, without the trailing newline.
std::string first_line(const char* message) {
  std::string m = message ? message : "";
  if (size_t nl = m.find('\n'); nl != std::string::npos) m.resize(nl);
  while (!m.empty() && (m.back() == ' ' || m.back() == '\r')) m.pop_back();
  if (m.empty()) m = "unknown error";
  return m;
}

bool contains(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}

// What a failed statement means: its ErrorCode and whether retrying the transaction may
// help.
std::pair<ErrorCode, bool> classify(const std::string& state, bool connection_lost) {
  if (connection_lost) return {ErrorCode::kUnavailable, true};
  const std::string cls = state.substr(0, 2);
  if (state == "40001" || state == "40P01") return {ErrorCode::kAborted, true};  // lost a race
  if (cls == "08" || state == "57P01" || state == "57P02" || state == "57P03" || state == "53300" ||
      state == "55P03")
    return {ErrorCode::kUnavailable, true};
  if (cls == "53" || cls == "58") return {ErrorCode::kUnavailable, false};  // disk full, I/O
  if (cls == "28") return {ErrorCode::kInvalidArgument, false};             // authorization
  if (state == "3D000") return {ErrorCode::kNotFound, false};               // no such database
  if (cls == "22") return {ErrorCode::kInvalidArgument, false};             // data exception
  if (state == "XX001" || state == "XX002") return {ErrorCode::kFailedPrecondition, false};
  return {ErrorCode::kInternal, false};
}

// A failed connection attempt has no SQLSTATE in libpq; the few failures that no retry can
// fix are recognised by their (server or libpq) message. Anything else (refused, timed
// out, starting up, shutting down, unknown host...) is worth waiting for.
std::pair<ErrorCode, bool> classify_connect(const std::string& m) {
  if (contains(m, "password authentication failed") || contains(m, "no password supplied") ||
      contains(m, "pg_hba.conf") || (contains(m, "role \"") && contains(m, "does not exist")) ||
      contains(m, "permission denied for database") || contains(m, "invalid connection option") ||
      contains(m, "invalid URI") || contains(m, "invalid integer value") ||
      contains(m, "missing \"=\"") || contains(m, "invalid sslmode"))
    return {ErrorCode::kInvalidArgument, false};
  if (contains(m, "database \"") && contains(m, "does not exist"))
    return {ErrorCode::kNotFound, false};
  return {ErrorCode::kUnavailable, true};
}

void ignore_notice(void*, const char*) {}

// sql with SQLite's numbered placeholders (?1) as PostgreSQL's ($1); quoted text and
// identifiers are left alone.
std::string dollar_placeholders(std::string_view sql) {
  std::string out(sql);
  char quote = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?' && i + 1 < out.size() && out[i + 1] >= '0' && out[i + 1] <= '9') {
      out[i] = '$';
    }
  }
  return out;
}

// The start of a statement, for messages.
std::string snippet(std::string_view sql) {
  std::string s(sql.substr(0, 80));
  for (char& c : s)
    if (c == '\n' || c == '\t') c = ' ';
  if (s.size() > 60 || sql.size() > 80) s = s.substr(0, 57) + "...";
  return s;
}

}  // namespace

// ---- parameters

Param param(int64_t v) {
  return {std::to_string(v), kInt8};
}
Param param(int v) {
  return {std::to_string(v), kInt4};
}
Param param(double v) {
  if (std::isnan(v)) return {std::nullopt, kFloat8};
  return {double_text(v), kFloat8};
}
Param param(bool v) {
  return {v ? "t" : "f", kBool};
}
Param param(std::string_view v) {
  return {std::string(v), kText};
}
Param param(std::nullopt_t) {
  return {std::nullopt, 0};
}
Param param(Blob v) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s = "\\x";
  s.reserve(2 + 2 * v.bytes.size());
  for (unsigned char c : v.bytes) {
    s += kHex[c >> 4];
    s += kHex[c & 15];
  }
  return {std::move(s), kBytea};
}
Param param(const std::vector<int64_t>& v) {
  return array(v, kInt8Array, [](std::string& s, int64_t x) { s += std::to_string(x); });
}
Param param(const std::vector<int>& v) {
  return array(v, kInt4Array, [](std::string& s, int x) { s += std::to_string(x); });
}
Param param(const std::vector<double>& v) {
  return array(v, kFloat8Array, append_double);
}
Param param(const std::vector<std::string>& v) {
  return array(v, kTextArray, [](std::string& s, const std::string& x) { append_quoted(s, x); });
}
Param param(const std::vector<std::optional<std::string>>& v) {
  return array(v, kTextArray, [](std::string& s, const std::optional<std::string>& x) {
    if (x) {
      append_quoted(s, *x);
    } else {
      s += "NULL";
    }
  });
}
Param param(const std::vector<std::optional<double>>& v) {
  return array(v, kFloat8Array, [](std::string& s, const std::optional<double>& x) {
    append_double(s, x ? *x : std::numeric_limits<double>::quiet_NaN());
  });
}

// ---- Result

void Result::Clear::operator()(pg_result* r) const {
  PQclear(r);
}

Result::Result(pg_result* r) : r_(r) {}

int Result::rows() const {
  return r_ ? PQntuples(r_.get()) : 0;
}

int64_t Result::affected() const {
  if (!r_) return 0;
  const char* n = PQcmdTuples(r_.get());
  int64_t v = 0;
  std::from_chars(n, n + std::strlen(n), v);
  return v;
}

bool Result::is_null(int row, int col) const {
  return PQgetisnull(r_.get(), row, col) != 0;
}

int64_t Result::i64(int row, int col) const {
  const char* s = PQgetvalue(r_.get(), row, col);
  int64_t v = 0;
  std::from_chars(s, s + PQgetlength(r_.get(), row, col), v);
  return v;
}

bool Result::boolean(int row, int col) const {
  return PQgetvalue(r_.get(), row, col)[0] == 't';
}

double Result::f64(int row, int col) const {
  if (is_null(row, col)) return std::numeric_limits<double>::quiet_NaN();
  const char* s = PQgetvalue(r_.get(), row, col);
  double v = 0;
  std::from_chars(s, s + PQgetlength(r_.get(), row, col), v);
  return v;
}

std::optional<double> Result::opt_f64(int row, int col) const {
  if (is_null(row, col)) return std::nullopt;
  return f64(row, col);
}

std::optional<int64_t> Result::opt_i64(int row, int col) const {
  if (is_null(row, col)) return std::nullopt;
  return i64(row, col);
}

std::string Result::text(int row, int col) const {
  if (is_null(row, col)) return {};
  return {PQgetvalue(r_.get(), row, col), static_cast<size_t>(PQgetlength(r_.get(), row, col))};
}

std::string Result::blob(int row, int col) const {
  if (is_null(row, col)) return {};
  // The server sends BYTEA as hex text (bytea_output = hex, the default); PQunescapeBytea
  // reads that and the older escape form.
  size_t n = 0;
  unsigned char* bytes =
      PQunescapeBytea(reinterpret_cast<const unsigned char*>(PQgetvalue(r_.get(), row, col)), &n);
  if (!bytes) throw internal_error("PostgreSQL: out of memory decoding a BYTEA value");
  std::string out(reinterpret_cast<const char*>(bytes), n);
  PQfreemem(bytes);
  return out;
}

// ---- Db

// libpq's own message for a URL it cannot read quotes the piece it stumbled on, which may be
// the password ("invalid percent-encoded token: ..."), so it is not passed on.
void Db::refuse_unreadable_conninfo() const {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo_.c_str(), &error);
  PQfreemem(error);
  if (options) {
    PQconninfoFree(options);
    return;
  }
  throw PgError(ErrorCode::kInvalidArgument,
                label_ +
                    ": libpq cannot read this URL (its message is not shown: it may quote "
                    "the password); check the %XX escapes and the parameter names",
                "", false);
}

Db::Db(const std::string& conninfo, std::string label, const Options& options)
    : conninfo_(conninfo),
      label_(std::move(label)),
      options_(options),
      rng_(static_cast<unsigned>(std::random_device{}() ^ static_cast<unsigned>(::getpid()))) {
  refuse_unreadable_conninfo();
  auto start = std::chrono::steady_clock::now();
  try {
    connect_within(options_.busy_timeout);
  } catch (const PgError& e) {
    PQfinish(conn_);  // no destructor runs for a constructor that throws
    conn_ = nullptr;
    if (!e.transient()) throw;
    auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    throw PgError(e.code(),
                  std::string(e.what()) + " (gave up after " + std::to_string(waited.count()) +
                      " ms; is the server running and reachable?)",
                  e.sqlstate(), true);
  } catch (...) {
    PQfinish(conn_);
    conn_ = nullptr;
    throw;
  }
}

Db::~Db() {
  if (conn_) PQfinish(conn_);
}

bool Db::connected() const {
  return conn_ && PQstatus(conn_) == CONNECTION_OK;
}

// Connects, or reconnects a lost connection, polling for up to `budget`.
void Db::connect_within(std::chrono::milliseconds budget, bool wait) {
  const auto start = std::chrono::steady_clock::now();
  // libpq's connect_timeout is whole seconds, at least 2.
  const std::string connect_timeout = std::to_string(
      std::max<int64_t>(2, std::chrono::duration_cast<std::chrono::seconds>(budget).count() + 1));
  statements_.clear();
  in_transaction_ = false;
  for (int attempt = 0;; ++attempt) {
    if (conn_) {
      // A new connection rather than PQreset: nothing of the old one's state (a pipeline
      // cut short, a transaction) survives.
      PQfinish(conn_);
      conn_ = nullptr;
    }
    {
      // Defaults first: what the URL says overrides them.
      const char* keys[] = {"connect_timeout",
                            "application_name",
                            "keepalives_idle",
                            "keepalives_interval",
                            "keepalives_count",
                            "dbname",
                            nullptr};
      const char* values[] = {connect_timeout.c_str(), "layerlab", "30", "10", "3",
                              conninfo_.c_str(),       nullptr};
      conn_ = PQconnectdbParams(keys, values, 1);
      if (!conn_) throw internal_error(label_ + ": " + step_ + ": out of memory (libpq)");
    }
    if (PQstatus(conn_) == CONNECTION_OK) {
      PQsetNoticeProcessor(conn_, ignore_notice, nullptr);  // NOTICEs are not for users
      setup_session();
      return;
    }
    const std::string message = first_line(PQerrorMessage(conn_));
    auto [code, transient] = classify_connect(message);
    const std::string text = label_ + ": " + step_ + ": " + message;
    if (!transient) throw PgError(code, text, "", false);
    if (options_.outage) options_.outage->known = true;
    if (!wait || !not_retried(true).empty())
      throw PgError(code, text, "", true);  // before_retry says why
    auto elapsed = std::chrono::steady_clock::now() - start;
    if (elapsed >= budget) throw PgError(code, text, "", true);
    int64_t cap = std::min<int64_t>(500, int64_t{25} << std::min(attempt, 5));
    std::uniform_int_distribution<int64_t> pick(cap / 2, cap);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(budget - elapsed);
    sleep_unless(options_.stop, std::min(left, std::chrono::milliseconds(pick(rng_))));
  }
}

// Per-connection settings: a wait for a lock (a row another writer holds) gives up after
// busy_timeout (55P03, then the transaction is retried). Transactions here are a few
// statements sent back to back. One left open by a client that went silent (its host cut
// off, the process stopped) would hold its row locks until TCP gives up on it, hours later;
// the server ends such a session after 30 s instead. Behind a transaction pooler a session
// setting would stay on a server connection that other clients' transactions run on next,
// so the same settings go with each transaction (transaction_settings).
void Db::setup_session() {
  const std::string lock_timeout =
      std::to_string(std::max<int64_t>(1, options_.busy_timeout.count()));
  if (options_.transaction_pooling) {
    transaction_settings_ = "SELECT set_config('lock_timeout', '" + lock_timeout +
                            "', true), set_config('idle_in_transaction_session_timeout', "
                            "'30000', true)";
    return;
  }
  run_simple(("SET lock_timeout = " + lock_timeout).c_str());
  run_simple("SET idle_in_transaction_session_timeout = 30000");
}

void Db::fail(pg_result* r, std::string_view what) {
  const bool lost = !conn_ || PQstatus(conn_) != CONNECTION_OK;
  std::string state;
  std::string message;
  if (r) {
    if (const char* s = PQresultErrorField(r, PG_DIAG_SQLSTATE)) state = s;
    if (const char* m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY)) message = m;
    if (message.empty()) message = first_line(PQresultErrorMessage(r));
    PQclear(r);
  }
  if (message.empty()) message = first_line(conn_ ? PQerrorMessage(conn_) : nullptr);
  auto [code, transient] = classify(state, lost);
  std::string text = label_ + ": " + step_ + ": ";
  // The statement helps with a bug, not with a server that went away.
  if (code == ErrorCode::kInternal && !what.empty()) text += std::string(what) + ": ";
  text += message;
  if (!state.empty() && code == ErrorCode::kInternal) text += " (SQLSTATE " + state + ")";
  // A named statement another client left on the connection, one of ours gone, or another
  // client's with our name bound to our parameters: the server connection changes between
  // transactions.
  if ((state == "42P05" || state == "26000" || state == "08P01") && !options_.transaction_pooling)
    text +=
        "; is this a transaction pooler (such as PgBouncer with pool_mode = transaction)? "
        "then add ?pool_mode=transaction to the store URL";
  throw PgError(code, text, state, transient);
}

void Db::fail_connection() {
  throw PgError(ErrorCode::kUnavailable,
                label_ + ": " + step_ + ": " + first_line(conn_ ? PQerrorMessage(conn_) : nullptr),
                "", true);
}

Result Db::run_simple(const char* sql) {
  // A script cannot join a pipeline, so it cannot carry the COMMIT either.
  if (committed_ || commit_next_) after_last_statement(sql);
  if (!connected()) fail_connection();
  if (pending_begin_) begin_now();
  pg_result* r = PQexec(conn_, sql);
  ExecStatusType s = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) fail(r, snippet(sql));
  return Result(r);
}

Result Db::query_with(std::string_view sql, const std::vector<SqlValue>& values) {
  std::vector<Param> params;
  params.reserve(values.size());
  for (const SqlValue& v : values)
    params.push_back(std::visit(
        [](const auto& x) {
          if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>) {
            return param(std::nullopt);
          } else {
            return param(x);
          }
        },
        v));
  return query_with(sql, params);
}

void Db::exec_script(const std::string& sql) {
  run_simple(sql.c_str());
}

void Db::maintain(const char* step, const char* sql) {
  if (in_transaction_)
    throw internal_error(label_ + ": " + step + ": inside the transaction " + step_);
  const auto start = std::chrono::steady_clock::now();
  known_away_ = options_.outage && options_.outage->known;
  for (int attempt = 0;; ++attempt) {
    step_ = step;
    try {
      if (!connected()) connect_within(options_.busy_timeout, options_.wait_when_away);
      run_simple(sql);
      maintenance_.fetch_add(1, std::memory_order_relaxed);
      reached();
      return;
    } catch (const PgError& e) {
      if (!e.transient()) throw;
      before_retry(e, attempt, start);
    }
  }
}

Result Db::run_prepared(std::string_view sql, const Param* params, size_t n) {
  if (committed_) after_last_statement(sql);
  if (!connected()) fail_connection();
  std::vector<const char*> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = params[i].text ? params[i].text->c_str() : nullptr;
  std::vector<unsigned> types(n);
  for (size_t i = 0; i < n; ++i) types[i] = params[i].type;
  const bool unnamed = options_.transaction_pooling;
  auto it = unnamed ? statements_.end() : statements_.find(sql);
  if (pending_begin_ || commit_next_ || generic_next_)
    return pipelined(sql, !unnamed && it == statements_.end(), types, values);
  pg_result* r = nullptr;
  if (unnamed) {
    r = PQexecParams(conn_, server_text(sql).c_str(), static_cast<int>(n), types.data(),
                     values.data(), nullptr, nullptr, 0);
  } else {
    if (it == statements_.end()) {
      std::string name = "layerlab_" + std::to_string(++next_statement_);
      pg_result* p = PQprepare(conn_, name.c_str(), server_text(sql).c_str(), static_cast<int>(n),
                               types.data());
      if (!p || PQresultStatus(p) != PGRES_COMMAND_OK) fail(p, "prepare " + snippet(sql));
      PQclear(p);
      it = statements_.emplace(std::string(sql), std::move(name)).first;
    }
    r = PQexecPrepared(conn_, it->second.c_str(), static_cast<int>(n), values.data(), nullptr,
                       nullptr, 0);
  }
  ExecStatusType s = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) fail(r, snippet(sql));
  return Result(r);
}

const std::string& Db::server_text(std::string_view sql) {
  auto it = server_texts_.find(sql);
  if (it == server_texts_.end())
    it = server_texts_.emplace(std::string(sql), dollar_placeholders(sql)).first;
  return it->second;
}

// A statement with what goes in its round trip (libpq's pipeline mode): BEGIN when it is the
// transaction's first (and behind a transaction pooler, the transaction's settings), the
// generic plans' setting after plan_generically, its preparation the first time (never
// behind a transaction pooler: it goes unnamed), and the transaction id and COMMIT when it
// is the last (commit_with_next). A failure of any of them aborts the rest and is reported
// as that statement's.
Result Db::pipelined(std::string_view sql, bool prepare, const std::vector<unsigned>& types,
                     const std::vector<const char*>& values) {
  enum Command { kBegin, kSettings, kGeneric, kPrepare, kStatement, kXid, kCommit };
  std::vector<Command> commands;
  if (pending_begin_) commands.push_back(kBegin);
  if (pending_begin_ && transaction_settings()) commands.push_back(kSettings);
  if (generic_next_) commands.push_back(kGeneric);
  if (prepare) commands.push_back(kPrepare);
  commands.push_back(kStatement);
  if (commit_next_) {
    commands.push_back(kXid);
    commands.push_back(kCommit);
  }
  pending_begin_ = false;
  generic_next_ = false;
  const int n = static_cast<int>(values.size());
  const std::string text(sql);
  const bool unnamed = options_.transaction_pooling;
  const std::string name = unnamed   ? std::string()
                           : prepare ? "layerlab_" + std::to_string(++next_statement_)
                                     : statements_.find(sql)->second;
  bool sent = PQenterPipelineMode(conn_) == 1;
  for (Command c : commands) {
    if (!sent) break;
    switch (c) {
      case kBegin:
        sent = PQsendQueryParams(conn_, pending_write_ ? kBeginWrite : kBeginRead, 0, nullptr,
                                 nullptr, nullptr, nullptr, 0) == 1;
        break;
      case kSettings:
        sent = PQsendQueryParams(conn_, transaction_settings(), 0, nullptr, nullptr, nullptr,
                                 nullptr, 0) == 1;
        break;
      case kGeneric:
        sent =
            PQsendQueryParams(conn_, kGenericPlans, 0, nullptr, nullptr, nullptr, nullptr, 0) == 1;
        break;
      case kPrepare:
        sent = PQsendPrepare(conn_, name.c_str(), server_text(sql).c_str(), n, types.data()) == 1;
        break;
      case kStatement:
        sent = unnamed ? PQsendQueryParams(conn_, server_text(sql).c_str(), n, types.data(),
                                           values.data(), nullptr, nullptr, 0) == 1
                       : PQsendQueryPrepared(conn_, name.c_str(), n, values.data(), nullptr,
                                             nullptr, 0) == 1;
        break;
      case kXid:
        sent =
            PQsendQueryParams(conn_, kTransactionId, 0, nullptr, nullptr, nullptr, nullptr, 0) == 1;
        break;
      case kCommit:
        sent = PQsendQueryParams(conn_, "COMMIT", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1;
        break;
    }
  }
  sent = sent && PQpipelineSync(conn_) == 1;
  // One result per command, each followed by a null; then the sync.
  pg_result* error = nullptr;
  pg_result* out = nullptr;
  std::optional<std::string> xid;
  bool prepared = false, committed = false;
  size_t at = 0;
  while (sent) {
    pg_result* r = PQgetResult(conn_);
    if (!r) {
      if (PQstatus(conn_) != CONNECTION_OK || ++at > commands.size()) break;
      continue;
    }
    const ExecStatusType s = PQresultStatus(r);
    if (s == PGRES_PIPELINE_SYNC) {
      PQclear(r);
      break;
    }
    const Command c = at < commands.size() ? commands[at] : kStatement;
    const bool ok = s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;
    if (!ok) {
      if (!error && s != PGRES_PIPELINE_ABORTED) {
        error = r;
      } else {
        PQclear(r);
      }
      continue;
    }
    if (c == kPrepare) prepared = true;
    if (c == kGeneric) generic_plans_.fetch_add(1, std::memory_order_relaxed);
    if (c == kXid && PQntuples(r) == 1 && !PQgetisnull(r, 0, 0)) xid = PQgetvalue(r, 0, 0);
    if (c == kCommit) committed = true;
    if (c == kStatement && !out) {
      out = r;
    } else {
      PQclear(r);
    }
  }
  if (!connected() || PQexitPipelineMode(conn_) != 1) {
    // Cut short: this connection's state is unknown; the next try starts a new one. A COMMIT
    // sent whose answer is missing may have committed: the retry asks about its id first.
    if (xid && !committed) in_doubt_xid_ = xid;
    if (out) PQclear(out);
    out = nullptr;
    if (!error) {
      std::string message = first_line(conn_ ? PQerrorMessage(conn_) : nullptr);
      PQfinish(conn_);
      conn_ = nullptr;
      throw PgError(ErrorCode::kUnavailable, label_ + ": " + step_ + ": " + message, "", true);
    }
    PQfinish(conn_);
    conn_ = nullptr;
    fail(error, snippet(sql));
  }
  if (prepared) statements_.emplace(text, name);
  if (error) {
    if (out) PQclear(out);
    fail(error, snippet(sql));
  }
  if (!out || (commit_next_ && !committed)) {
    if (out) PQclear(out);
    fail(nullptr, snippet(sql));
  }
  if (commit_next_) {
    commit_next_ = false;
    committed_ = true;
    in_transaction_ = false;
  }
  return Result(out);
}

void Db::commit_with_next() {
  if (!in_transaction_ || !pending_write_)
    throw internal_error(label_ + ": " + step_ + ": commit_with_next outside a write transaction");
  commit_next_ = true;
}

void Db::plan_generically() {
  if (!in_transaction_)
    throw internal_error(label_ + ": " + step_ + ": plan_generically outside a transaction");
  generic_next_ = !options_.transaction_pooling;
}

void Db::after_last_statement(std::string_view sql) {
  throw internal_error(label_ + ": " + step_ + ": " + snippet(sql) +
                       ": a statement after the transaction's last (commit_with_next)");
}

// Starts the pending transaction on its own (before a statement that cannot join a
// pipeline: a script).
void Db::begin_now() {
  pending_begin_ = false;
  run_simple(pending_write_ ? kBeginWrite : kBeginRead);
  if (transaction_settings()) run_simple(transaction_settings());
}

bool Db::lock_exclusive(int64_t key) {
  if (query("SELECT pg_try_advisory_xact_lock($1)", key).boolean(0, 0)) return false;
  query("SELECT 1 FROM pg_advisory_xact_lock($1) AS l", key);
  busy_waits_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void Db::rollback_quietly() {
  in_transaction_ = false;
  pending_begin_ = false;
  commit_next_ = false;
  generic_next_ = false;
  committed_ = false;
  if (connected() && PQtransactionStatus(conn_) != PQTRANS_IDLE) PQclear(PQexec(conn_, "ROLLBACK"));
}

// COMMIT. For a write, also learns the transaction id (if it wrote anything) first, in the
// same round trip; in_doubt_xid keeps it when the connection breaks before COMMIT's answer.
void Db::commit(bool write, std::optional<std::string>& in_doubt_xid) {
  if (!write) {
    run_simple("COMMIT");
    return;
  }
  if (!connected()) fail_connection();
  if (!PQsendQuery(conn_, kCommitWrite)) fail(nullptr, "COMMIT");
  std::optional<std::string> xid;
  bool got_xid = false;
  pg_result* error = nullptr;
  while (pg_result* r = PQgetResult(conn_)) {
    ExecStatusType s = PQresultStatus(r);
    if (s == PGRES_TUPLES_OK && !got_xid) {
      got_xid = true;
      if (PQntuples(r) == 1 && !PQgetisnull(r, 0, 0)) xid = PQgetvalue(r, 0, 0);
      PQclear(r);
    } else if (s != PGRES_COMMAND_OK && !error) {
      error = r;
    } else {
      PQclear(r);
    }
  }
  if (!error && got_xid && connected()) return;
  // Lost before COMMIT's answer (or COMMIT failed): if the transaction had an id, ask
  // about it once connected again. Without one it wrote nothing, so a retry is safe.
  if (xid && !connected()) in_doubt_xid = xid;
  fail(error, "COMMIT");
}

std::string Db::xact_status(const std::string& xid) {
  Result r = query("SELECT txid_status($1)", static_cast<int64_t>(std::stoll(xid)));
  return r.rows() == 1 ? r.text(0, 0) : "";
}

PgError Db::answer_lost() const {
  return PgError(ErrorCode::kUnavailable,
                 label_ + ": " + step_ +
                     ": the connection was lost as the transaction committed; it did commit, "
                     "but its answer was lost with the connection (the call may be made again: "
                     "a repeated report is refused as a duplicate)",
                 "", false);
}

void Db::before_retry(const PgError& last, int attempt,
                      std::chrono::steady_clock::time_point start) {
  if (last.code() == ErrorCode::kUnavailable) {
    const bool lost = !connected();
    std::string_view why = not_retried(lost);
    // A call that does not wait still connects again once (attempt 0 lost the connection or
    // could not make it), and gives up at the next loss.
    if (why.empty() && lost && !options_.wait_when_away && attempt > 0) why = kNoWait;
    if (!why.empty())
      throw PgError(last.code(), last.what() + std::string(why), last.sqlstate(), true);
  }
  if (attempt >= options_.max_retries) {
    auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    throw PgError(last.code(),
                  std::string(last.what()) + " (gave up after " + std::to_string(attempt + 1) +
                      " tries over " + std::to_string(waited.count()) + " ms)",
                  last.sqlstate(), true);
  }
  retries_.fetch_add(1, std::memory_order_relaxed);
  pause(attempt);
}

void Db::pause(int attempt) {
  // Full jitter on an exponential step: 20 ms, 40 ms, ... capped at 1 s.
  int64_t cap = std::min<int64_t>(1000, int64_t{20} << std::min(attempt, 6));
  std::uniform_int_distribution<int64_t> pick(cap / 2, cap);
  sleep_unless(options_.stop, std::chrono::milliseconds(pick(rng_)));
}

std::string_view Db::not_retried(bool connection_lost) const {
  if (stopping()) return kStopping;
  if (known_away_ && connection_lost) return kKnownAway;
  return {};
}

void Db::transaction_done() {
  transactions_.fetch_add(1, std::memory_order_relaxed);
  reached();
}

void Db::reached() {
  // Read first: a write to the shared flag on every transaction would bounce its cache
  // line between the server's connections.
  if (options_.outage && options_.outage->known.load(std::memory_order_relaxed))
    options_.outage->known = false;
}

void Db::run_transaction(bool write, const char* step, const std::function<void()>& body) {
  if (in_transaction_)
    throw internal_error(label_ + ": " + step + ": nested transaction inside " + step_);
  const auto start = std::chrono::steady_clock::now();
  known_away_ = options_.outage && options_.outage->known;
  std::optional<std::string> in_doubt;  // a COMMIT whose answer was lost
  for (int attempt = 0;; ++attempt) {
    step_ = step;
    try {
      if (!connected()) connect_within(options_.busy_timeout, options_.wait_when_away);
      if (in_doubt) {
        // The previous try's COMMIT was sent but its answer lost: run the body again only
        // if that transaction did not commit.
        const std::string status = xact_status(*in_doubt);
        if (status == "in progress")  // the server has not noticed the lost connection yet
          throw PgError(ErrorCode::kUnavailable,
                        label_ + ": " + step_ + ": the previous try's COMMIT is still running", "",
                        true);
        in_doubt.reset();
        if (status == "committed") {
          transaction_done();
          return;
        }
      }
      // BEGIN goes with the body's first statement.
      in_transaction_ = true;
      pending_begin_ = true;
      generic_next_ = false;
      pending_write_ = write;
      body();
      if (committed_) {  // the last statement carried the COMMIT
        committed_ = false;
        transaction_done();
        return;
      }
      if (commit_next_)
        throw internal_error(label_ + ": " + step_ +
                             ": commit_with_next, then no statement to carry the COMMIT");
      if (pending_begin_) {  // the body ran no statement: nothing to commit
        pending_begin_ = false;
        in_transaction_ = false;
        transaction_done();
        return;
      }
      commit(write, in_doubt);
      in_transaction_ = false;
      transaction_done();
      return;
    } catch (const PgError& e) {
      rollback_quietly();
      if (in_doubt_xid_) in_doubt = std::exchange(in_doubt_xid_, std::nullopt);
      if (!e.transient()) throw;
      before_retry(e, attempt, start);
    } catch (...) {
      rollback_quietly();
      throw;
    }
  }
}

}  // namespace layerlab::store::pg
