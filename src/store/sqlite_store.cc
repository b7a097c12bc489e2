// Store on one SQLite file: the shared SQL store (sql_store.h) with SQLite's ways. A write
// transaction holds the file's one write lock (BEGIN IMMEDIATE), and a statement costs no
// round trip, so batches are a statement per row and nothing needs a row lock.
#include "store/sqlite_store.h"

#include <filesystem>
#include <tuple>

#include "common/error.h"
#include "store/schema.h"
#include "store/sql_store.h"
#include "store/sqlite_db.h"

namespace layerlab::store {

extern template class SqlStore<sqlite::Db>;

namespace {

using sqlite::Db;

// "the attempt ?2 is the trial's latest and the trial is not finished": the condition for a
// worker's writes to count (a lease may have run out with nobody claiming the trial yet).
constexpr const char* kCurrentAttempt = "attempts = ?2 AND status IN ('running', 'queued')";

constexpr SqlDialect kSqlite{
    "CASE WHEN (SELECT status FROM studies WHERE studies.id = trials.study_id) = 'cancelled' "
    "THEN 'cancelled' ELSE 'queued' END",
    "", "", false};

class SqliteStore final : public SqlStore<Db> {
 public:
  SqliteStore(const StoreUrl& url, const StoreOptions& options)
      : SqlStore(
            options, kSqlite, url.path, url.text,
            Db::Options{options.create_if_missing, options.busy_timeout, options.max_retries}) {
    // A missing file was refused before opening (open_sqlite_store); an empty one is a new
    // store.
    migrate(db_, sqlite::schema(), true, now_ms());
  }

  Stats stats() const override NO_THREAD_SAFETY_ANALYSIS {  // db_'s counters are atomic
    Stats s = SqlStore::stats();
    s.vm_steps = db_.vm_steps();
    return s;
  }

 private:
  std::vector<int64_t> insert_trials(int64_t study_id, const std::vector<NewTrial>& trials,
                                     const std::vector<std::string>& params, int64_t now) override
      REQUIRES(mu_) {
    std::vector<int64_t> ids;
    ids.reserve(trials.size());
    for (size_t i = 0; i < trials.size(); ++i) {
      const NewTrial& t = trials[i];
      auto q = db_.query(
          "INSERT INTO trials (study_id, number, dataset, params, status, created_at, cost) "
          "VALUES (?1, ?2, ?3, ?4, 'queued', ?5, ?6) ON CONFLICT (study_id, number) DO NOTHING "
          "RETURNING id",
          study_id, t.number, t.dataset, params[i], now, t.cost);
      if (q.next()) {
        ids.push_back(q.i64(0));
        q.run();
        log_changes({ids.back()});
        continue;
      }
      auto old = db_.query("SELECT id FROM trials WHERE study_id = ?1 AND number = ?2", study_id,
                           t.number);
      old.next();
      ids.push_back(old.i64(0));
    }
    return ids;
  }

  std::vector<Claim> claim_trials(const std::string& worker_id, const ClaimOptions& options,
                                  int max, int64_t now) override REQUIRES(mu_) {
    // The queued trial first in (study, highest cost, number); then, only if that one is
    // fresh, the fresh ones among the next max - 1 in that order (as PostgreSQL's one walk
    // of its queue takes them). A retried trial comes alone, so a trial that kills its worker
    // cannot make trials claimed with it lose attempts again and again. Without a study, the
    // order starts after options.after_study and wraps around: two walks of the index, one
    // on each side of it, their at most 2 x max rows sorted by turn.
    static const std::string kClaim =
        "UPDATE trials SET status = 'running', attempts = attempts + 1, worker_id = ?1, "
        "lease_expires = ?2, started_at = ?3, finished_at = NULL WHERE id IN ";
    static const std::string kAny =
        kClaim +
        "(SELECT id FROM (SELECT id, attempts FROM ("
        "SELECT * FROM (SELECT 0 AS turn, id, attempts, study_id, cost, number FROM trials "
        "WHERE status = 'queued' AND study_id > ?6 ORDER BY study_id, cost DESC, number "
        "LIMIT ?4) UNION ALL "
        "SELECT * FROM (SELECT 1, id, attempts, study_id, cost, number FROM trials "
        "WHERE status = 'queued' AND study_id <= ?6 ORDER BY study_id, cost DESC, number "
        "LIMIT ?4)) ORDER BY turn, study_id, cost DESC, number LIMIT ?4) "
        "WHERE ?5 = 0 OR attempts = 0) "
        "RETURNING id, attempts, study_id, number, dataset, params";
    static const std::string kInStudy =
        kClaim +
        "(SELECT id FROM (SELECT id, attempts FROM trials WHERE status = 'queued' AND "
        "study_id = ?6 ORDER BY cost DESC, number LIMIT ?4) WHERE ?5 = 0 OR attempts = 0) "
        "RETURNING id, attempts, study_id, number, dataset, params";
    const int64_t expires = now + options.lease.count();
    std::vector<Claim> claims;
    auto take = [&](int limit, bool fresh_only) REQUIRES(mu_) {
      auto q = options.study_id ? db_.query(kInStudy, worker_id, expires, now, limit,
                                            fresh_only ? 1 : 0, options.study_id)
                                : db_.query(kAny, worker_id, expires, now, limit,
                                            fresh_only ? 1 : 0, options.after_study);
      while (q.next())
        claims.push_back(Claim{q.i64(0), q.i32(1), q.i64(2), q.i64(3), q.text(4),
                               parse(q.text(5), "trials.params"), at(expires)});
    };
    take(1, false);
    if (claims.empty()) return claims;
    if (max > 1 && claims.front().attempt == 1) take(max - 1, true);
    // The first claim is the one to start with; the ones taken ahead follow by number.
    std::sort(claims.begin() + 1, claims.end(), [](const Claim& a, const Claim& b) {
      return std::tie(a.study_id, a.number) < std::tie(b.study_id, b.number);
    });
    for (const Claim& c : claims) record_attempt(c, worker_id, now);
    return claims;
  }

  std::vector<bool> extend_leases(const std::vector<AttemptRef>& attempts,
                                  const std::string& worker_id, int64_t expires) override
      REQUIRES(mu_) {
    std::vector<bool> renewed;
    for (const AttemptRef& a : attempts)
      renewed.push_back(
          db_.exec("UPDATE trials SET lease_expires = ?4 "
                   "WHERE id = ?1 AND attempts = ?2 AND worker_id = ?3 AND status = 'running'",
                   a.trial_id, a.attempt, worker_id, expires) == 1);
    return renewed;
  }

  std::vector<bool> write_epochs(
      const std::vector<EpochAppend>& appends,
      const std::vector<std::vector<std::optional<std::string>>>& extras) override REQUIRES(mu_) {
    std::vector<bool> applied;
    for (size_t a = 0; a < appends.size(); ++a) {
      const EpochAppend& e = appends[a];
      applied.push_back(
          db_.query(std::string("SELECT 1 FROM trials WHERE id = ?1 AND ") + kCurrentAttempt,
                    e.trial_id, e.attempt)
              .next());
      if (applied.back()) insert_epochs(e.trial_id, e.attempt, e.rows, extras[a]);
    }
    return applied;
  }

  void finish_batch(const std::vector<TrialFinish>& finishes, const std::vector<Prepared>& prepared,
                    const std::vector<size_t>& which, int64_t now,
                    std::vector<bool>& applied) override REQUIRES(mu_) {
    static const std::string kFinish =
        std::string(
            "UPDATE trials SET status = ?3, result = ?4, value = ?5, error = ?6, "
            "finished_at = ?7, lease_expires = NULL WHERE id = ?1 AND ") +
        kCurrentAttempt;
    for (size_t i : which) {
      const TrialFinish& f = finishes[i];
      if (db_.exec(kFinish, f.trial_id, f.attempt, to_string(f.status), prepared[i].result, f.value,
                   f.error, now) == 0) {
        if (!db_.query("SELECT 1 FROM trials WHERE id = ?1", f.trial_id).next())
          throw no_trial("finish_trial", f.trial_id);
        continue;
      }
      db_.exec(
          "UPDATE attempts SET outcome = ?3, finished_at = ?4 WHERE trial_id = ?1 AND "
          "attempt = ?2",
          f.trial_id, f.attempt, to_string(f.status), now);
      log_changes({f.trial_id});
      insert_epochs(f.trial_id, f.attempt, f.epochs, prepared[i].extras);
      applied[i] = true;
    }
  }

  void start_batch(const std::vector<int64_t>& ids, const std::string& worker_id, int64_t now,
                   int64_t expires, int max_attempts, std::vector<Start>& out,
                   size_t first) override REQUIRES(mu_) {
    for (size_t i = 0; i < ids.size(); ++i) {
      const int64_t trial_id = ids[i];
      Start& s = out[first + i];
      s.known = db_.query("SELECT 1 FROM trials WHERE id = ?1", trial_id).next();
      if (!s.known) continue;
      lose_running_attempt(trial_id, now);
      if (max_attempts > 0 &&
          db_.exec("UPDATE trials SET status = 'failed', error = 'delivered ' || lost || "
                   "' times without a result (its workers died)', finished_at = ?2, "
                   "lease_expires = NULL WHERE id = ?1 AND status = 'running' AND lost >= ?3",
                   trial_id, now, max_attempts) == 1) {
        log_changes({trial_id});
        s.exhausted = true;
        continue;
      }
      auto q = db_.query(
          "UPDATE trials SET status = 'running', attempts = attempts + 1, worker_id = ?2, "
          "lease_expires = ?3, started_at = ?4, finished_at = NULL "
          "WHERE id = ?1 AND status IN ('queued', 'running') "
          "RETURNING id, attempts, study_id, number, dataset, params",
          trial_id, worker_id, expires, now);
      if (!q.next()) continue;
      s.claim = Claim{q.i64(0),   q.i32(1),  q.i64(2),
                      q.i64(3),   q.text(4), parse(q.text(5), "trials.params"),
                      at(expires)};
      q.run();
      record_attempt(*s.claim, worker_id, now);
    }
  }

  int64_t expire(const ClaimOptions& o, int64_t now) override REQUIRES(mu_) {
    constexpr const char* kExpired =
        "status = 'running' AND lease_expires < ?1 AND (?2 = 0 OR study_id = ?2)";
    if (!db_.query(std::string("SELECT 1 FROM trials WHERE ") + kExpired + " LIMIT 1", now,
                   o.study_id)
             .next())
      return 0;  // the common case: one indexed probe
    db_.exec(std::string("UPDATE attempts SET outcome = 'lost', finished_at = ?1 WHERE "
                         "(trial_id, attempt) IN (SELECT id, attempts FROM trials WHERE ") +
                 kExpired + ")",
             now, o.study_id);
    std::vector<int64_t> failed = returned_ids(db_.query(
        std::string("UPDATE trials SET status = 'failed', lost = lost + 1, lease_expires = NULL, "
                    "finished_at = ?1, error = 'worker lost ' || (lost + 1) || ' times (lease "
                    "expired; last worker ' || COALESCE(worker_id, '?') || ')' WHERE ") +
            kExpired + " AND lost + 1 >= ?3 RETURNING id",
        now, o.study_id, o.max_attempts));
    std::vector<int64_t> requeued = returned_ids(db_.query(
        std::string("UPDATE trials SET status = ") + dialect_.back_status +
            ", lost = lost + 1, lease_expires = NULL, finished_at = CASE WHEN " +
            dialect_.back_status + " = 'cancelled' THEN ?1 END WHERE " + kExpired + " RETURNING id",
        now, o.study_id));
    log_changes(failed);
    log_changes(requeued);
    return static_cast<int64_t>(failed.size() + requeued.size());
  }

  void log_changes(const std::vector<int64_t>& ids) override REQUIRES(mu_) {
    for (int64_t id : ids) db_.exec("INSERT INTO trial_changes (trial_id) VALUES (?1)", id);
  }

  // JSON null and a missing key sort last; then SQLite's own order of json_extract values.
  ParamOrder param_order(const std::string& key, int path_at, const char* dir) const override {
    const std::string value = "json_extract(params, ?" + std::to_string(path_at) + ")";
    return {"", value + " IS NULL, " + value + dir + ", number", "$." + key};
  }

  // Inside a write transaction: an epoch written twice keeps the last version.
  void insert_epochs(int64_t trial_id, int attempt, const std::vector<EpochRow>& rows,
                     const std::vector<std::optional<std::string>>& extras) REQUIRES(mu_) {
    for (size_t i = 0; i < rows.size(); ++i) {
      const EpochRow& r = rows[i];
      db_.exec(
          "INSERT OR REPLACE INTO epochs (trial_id, attempt, epoch, train_loss, val_loss, "
          "val_metric, seconds, extra) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
          trial_id, attempt, r.epoch, r.train_loss, r.val_loss, r.val_metric, r.seconds, extras[i]);
    }
  }

  // Inside a write transaction: the attempt a claim or delivery just started.
  void record_attempt(const Claim& c, const std::string& worker_id, int64_t now) REQUIRES(mu_) {
    db_.exec(
        "INSERT INTO attempts (trial_id, attempt, worker_id, started_at) VALUES (?1, ?2, ?3, ?4)",
        c.trial_id, c.attempt, worker_id, now);
    log_changes({c.trial_id});
  }
};

}  // namespace

std::unique_ptr<Store> open_sqlite_store(const StoreUrl& url, const StoreOptions& options) {
  if (!options.create_if_missing && url.path != ":memory:") {
    std::error_code ec;
    if (!std::filesystem::exists(url.path, ec))
      throw not_found(url.text + ": no database file at '" + url.path + "'");
  }
  return std::make_unique<SqliteStore>(url, options);
}

}  // namespace layerlab::store
