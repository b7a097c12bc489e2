// Store on one SQLite file. Every call is one transaction on the Store's connection
// (BEGIN IMMEDIATE for writes), serialised by mu_; see store.h for the contract and
// sqlite_db.h for the retry policy.
#include "store/sqlite_store.h"

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <regex>
#include <tuple>
#include <type_traits>

#include "common/error.h"
#include "store/migrations.h"
#include "store/sqlite_db.h"

namespace layerlab::store {
namespace {

using sqlite::Db;
using sqlite::Query;

Time at(int64_t ms) {
  return Time{std::chrono::milliseconds{ms}};
}
std::optional<Time> opt_at(std::optional<int64_t> ms) {
  if (!ms) return std::nullopt;
  return at(*ms);
}

constexpr const char* kStudyColumns = "id, name, spec, status, created_at";
constexpr const char* kTrialColumns =
    "id, study_id, number, dataset, params, status, attempts, lost, result, value, error, "
    "worker_id, created_at, started_at, finished_at, lease_expires";
constexpr const char* kEpochColumns =
    "trial_id, attempt, epoch, train_loss, val_loss, val_metric, seconds, extra";
constexpr const char* kWorkerColumns =
    "id, host, pid, device, started_at, heartbeat_at, current_trial, status, pack, memory_bytes";

// "the attempt is the trial's latest and the trial is not finished": the condition for a
// worker's writes to count (a lease may have run out with nobody claiming the trial yet).
constexpr const char* kCurrentAttempt = "attempts = ?2 AND status IN ('running', 'queued')";

// The status a trial goes back to when its attempt ends unfinished (handed back, lease
// lost): queued, or cancelled when its study was cancelled meanwhile.
constexpr const char* kBackStatus =
    "CASE WHEN (SELECT status FROM studies WHERE studies.id = trials.study_id) = 'cancelled' "
    "THEN 'cancelled' ELSE 'queued' END";

class SqliteStore final : public Store {
 public:
  SqliteStore(const StoreUrl& url, const StoreOptions& options)
      : db_(url.path, url.text,
            Db::Options{options.create_if_missing, options.busy_timeout, options.max_retries}),
        clock_(options.clock ? options.clock : &system_clock()) {
    sqlite::migrate(db_);
  }

  // ---- studies

  int64_t create_study(const std::string& name, const nlohmann::json& spec) override {
    if (name.empty()) throw invalid_argument(where("create_study") + "the study name is empty");
    std::string spec_text = to_text(spec, "create_study", "spec");
    std::lock_guard lock(mu_);
    return db_.write("create_study", [&] {
      Query q = db_.query("SELECT id FROM studies WHERE name = ?1", name);
      if (q.next())
        throw failed_precondition(where("create_study") + "a study named '" + name +
                                  "' already exists (id " + std::to_string(q.i64(0)) +
                                  "); resume it or choose another name");
      db_.exec("INSERT INTO studies (name, spec, status, created_at) VALUES (?1, ?2, ?3, ?4)", name,
               spec_text, to_string(StudyStatus::kRunning), now_ms());
      return db_.last_insert_rowid();
    });
  }

  std::optional<StudyRecord> find_study(const std::string& name) override {
    std::lock_guard lock(mu_);
    return db_.read("find_study", [&]() -> std::optional<StudyRecord> {
      Query q = db_.query(sql("SELECT ", kStudyColumns, " FROM studies WHERE name = ?1"), name);
      if (!q.next()) return std::nullopt;
      return read_study(q);
    });
  }

  StudyRecord get_study(int64_t id) override {
    std::lock_guard lock(mu_);
    return db_.read("get_study", [&] {
      Query q = db_.query(sql("SELECT ", kStudyColumns, " FROM studies WHERE id = ?1"), id);
      if (!q.next()) throw no_study("get_study", id);
      return read_study(q);
    });
  }

  std::vector<StudyRecord> list_studies() override {
    std::lock_guard lock(mu_);
    return db_.read("list_studies", [&] {
      std::vector<StudyRecord> out;
      Query q = db_.query(sql("SELECT ", kStudyColumns, " FROM studies ORDER BY id"));
      while (q.next()) out.push_back(read_study(q));
      return out;
    });
  }

  void set_study_status(int64_t id, StudyStatus status) override {
    std::lock_guard lock(mu_);
    db_.write("set_study_status", [&] {
      if (db_.exec("UPDATE studies SET status = ?2 WHERE id = ?1", id, to_string(status)) == 0)
        throw no_study("set_study_status", id);
    });
  }

  int64_t cancel_study(int64_t id) override {
    std::lock_guard lock(mu_);
    return db_.write("cancel_study", [&] {
      if (db_.exec("UPDATE studies SET status = 'cancelled' WHERE id = ?1", id) == 0)
        throw no_study("cancel_study", id);
      return log_changes(
          returned_ids(db_.query("UPDATE trials SET status = 'cancelled', finished_at = ?2 "
                                 "WHERE study_id = ?1 AND status = 'queued' RETURNING id",
                                 id, now_ms())));
    });
  }

  StudyCounts counts(int64_t study_id) override {
    std::lock_guard lock(mu_);
    return db_.read("counts", [&] {
      require_study("counts", study_id);
      StudyCounts c;
      Query q = db_.query("SELECT status, COUNT(*) FROM trials WHERE study_id = ?1 GROUP BY status",
                          study_id);
      while (q.next()) c.by_status[static_cast<size_t>(parse_trial_status(q.text(0)))] = q.i64(1);
      return c;
    });
  }

  // ---- trials

  std::vector<int64_t> add_trials(int64_t study_id, const std::vector<NewTrial>& trials) override {
    std::vector<std::string> params;
    params.reserve(trials.size());
    for (const NewTrial& t : trials) {
      std::string what = where("add_trials") + "trial " + std::to_string(t.number) + ": ";
      if (t.number < 0) throw invalid_argument(what + "the number is negative");
      if (t.dataset.empty()) throw invalid_argument(what + "the dataset is empty");
      if (t.params.is_null()) {
        params.emplace_back("{}");
        continue;
      }
      if (!t.params.is_object()) throw invalid_argument(what + "params must be a JSON object");
      params.push_back(to_text(t.params, "add_trials", "params"));
    }
    std::lock_guard lock(mu_);
    return db_.write("add_trials", [&] {
      Query s = db_.query("SELECT status FROM studies WHERE id = ?1", study_id);
      if (!s.next()) throw no_study("add_trials", study_id);
      if (s.text(0) == to_string(StudyStatus::kCancelled))
        throw failed_precondition(where("add_trials") + "study " + std::to_string(study_id) +
                                  " is cancelled");
      int64_t now = now_ms();
      std::vector<int64_t> ids;
      ids.reserve(trials.size());
      for (size_t i = 0; i < trials.size(); ++i) {
        const NewTrial& t = trials[i];
        int64_t added = db_.exec(
            "INSERT INTO trials (study_id, number, dataset, params, status, created_at, cost) "
            "VALUES (?1, ?2, ?3, ?4, 'queued', ?5, ?6) ON CONFLICT (study_id, number) DO NOTHING",
            study_id, t.number, t.dataset, params[i], now, t.cost);
        if (added == 1) {
          ids.push_back(db_.last_insert_rowid());
          log_change(ids.back());
        } else {
          Query q = db_.query("SELECT id FROM trials WHERE study_id = ?1 AND number = ?2", study_id,
                              t.number);
          q.next();
          ids.push_back(q.i64(0));
        }
      }
      return ids;
    });
  }

  TrialRecord get_trial(int64_t id) override {
    std::lock_guard lock(mu_);
    return db_.read("get_trial", [&] {
      Query q = db_.query(sql("SELECT ", kTrialColumns, " FROM trials WHERE id = ?1"), id);
      if (!q.next()) throw no_trial("get_trial", id);
      return read_trial(q);
    });
  }

  std::vector<TrialRecord> list_trials(int64_t study_id, const TrialFilter& filter) override {
    if (filter.limit < 0 || filter.offset < 0)
      throw invalid_argument(where("list_trials") + "limit and offset must be >= 0");
    FilterSql f = filter_sql(filter);
    int param_at = 0;
    std::string key = sort_key(filter, f.next, param_at);
    std::string text = sql("SELECT ", kTrialColumns, " FROM trials WHERE ", f.where, " ORDER BY ");
    if (filter.sort != TrialSort::kNumber) text += key + " IS NULL, ";
    text += key + (filter.descending ? " DESC" : "");
    if (filter.sort != TrialSort::kNumber) text += ", number";
    const int limit_at = f.next++;
    text += " LIMIT ?" + std::to_string(limit_at) + " OFFSET ?" + std::to_string(f.next++);

    std::lock_guard lock(mu_);
    return db_.read("list_trials", [&] {
      require_study("list_trials", study_id);
      Query q = db_.query(text, study_id);
      bind_filter(q, f, filter);
      if (param_at) q.bind(param_at, "$." + filter.param);
      q.bind(limit_at, filter.limit > 0 ? filter.limit : int64_t{-1});
      q.bind(limit_at + 1, filter.offset);
      std::vector<TrialRecord> out;
      while (q.next()) out.push_back(read_trial(q));
      return out;
    });
  }

  int64_t count_trials(int64_t study_id, const TrialFilter& filter) override {
    FilterSql f = filter_sql(filter);
    std::lock_guard lock(mu_);
    return db_.read("count_trials", [&] {
      require_study("count_trials", study_id);
      Query q = db_.query("SELECT COUNT(*) FROM trials WHERE " + f.where, study_id);
      bind_filter(q, f, filter);
      q.next();
      return q.i64(0);
    });
  }

  std::vector<AttemptRecord> list_attempts(int64_t trial_id) override {
    std::lock_guard lock(mu_);
    return db_.read("list_attempts", [&] {
      std::vector<AttemptRecord> out;
      Query q = db_.query(
          "SELECT trial_id, attempt, worker_id, started_at, finished_at, outcome FROM attempts "
          "WHERE trial_id = ?1 ORDER BY attempt",
          trial_id);
      while (q.next())
        out.push_back(
            {q.i64(0), q.i32(1), q.text(2), at(q.i64(3)), opt_at(q.opt_i64(4)), q.text(5)});
      return out;
    });
  }

  std::vector<EpochRecord> list_epochs(int64_t trial_id, int attempt, int after_epoch) override {
    std::lock_guard lock(mu_);
    return db_.read("list_epochs", [&] {
      std::vector<EpochRecord> out;
      Query q = db_.query(sql("SELECT ", kEpochColumns,
                              " FROM epochs WHERE trial_id = ?1 AND (?2 = 0 OR attempt = ?2) "
                              "AND epoch > ?3 ORDER BY attempt, epoch"),
                          trial_id, attempt, after_epoch);
      while (q.next()) out.push_back(read_epoch(q));
      return out;
    });
  }

  std::vector<double> epoch_values(int64_t study_id, int epoch, EpochField field,
                                   int64_t exclude_trial) override {
    const char* column = field == EpochField::kTrainLoss ? "e.train_loss"
                         : field == EpochField::kValLoss ? "e.val_loss"
                                                         : "e.val_metric";
    std::lock_guard lock(mu_);
    return db_.read("epoch_values", [&] {
      std::vector<double> out;
      Query q = db_.query(std::string("SELECT ") + column +
                              " FROM trials t JOIN epochs e ON e.trial_id = t.id AND "
                              "e.attempt = t.attempts AND e.epoch = ?2 "
                              "WHERE t.study_id = ?1 AND t.id <> ?3",
                          study_id, epoch, exclude_trial);
      while (q.next()) out.push_back(q.f64(0));
      return out;
    });
  }

  // ---- claiming and reporting

  std::optional<Claim> claim_next(const std::string& worker_id,
                                  const ClaimOptions& options) override {
    std::vector<Claim> claims = claim_batch(worker_id, options, 1);
    if (claims.empty()) return std::nullopt;
    return std::move(claims.front());
  }

  std::vector<Claim> claim_batch(const std::string& worker_id, const ClaimOptions& options,
                                 int max) override {
    check("claim_next", options);
    if (worker_id.empty()) throw invalid_argument(where("claim_next") + "empty worker id");
    if (max < 1) throw invalid_argument(where("claim_batch") + "max must be positive");
    std::lock_guard lock(mu_);
    return db_.write("claim_next", [&]() -> std::vector<Claim> {
      int64_t now = now_ms();
      expire(options, now);
      // The queued trial first in (study, highest cost, number); then, only if that one is
      // fresh, more fresh ones. A retried trial comes alone, so a trial that kills its worker
      // cannot make trials claimed with it lose attempts again and again.
      static const std::string kClaim =
          "UPDATE trials SET status = 'running', attempts = attempts + 1, worker_id = ?1, "
          "lease_expires = ?2, started_at = ?3, finished_at = NULL WHERE id IN ";
      static const std::string kAny =
          kClaim +
          "(SELECT id FROM trials WHERE status = 'queued' AND (?5 = 0 OR attempts = 0) "
          "ORDER BY study_id, cost DESC, number LIMIT ?4) "
          "RETURNING id, attempts, study_id, number, dataset, params";
      static const std::string kInStudy =
          kClaim +
          "(SELECT id FROM trials WHERE status = 'queued' AND study_id = ?6 AND "
          "(?5 = 0 OR attempts = 0) ORDER BY cost DESC, number LIMIT ?4) "
          "RETURNING id, attempts, study_id, number, dataset, params";
      const int64_t expires = now + options.lease.count();
      std::vector<Claim> claims;
      auto take = [&](int limit, bool fresh_only) {
        Query q = options.study_id
                      ? db_.query(kInStudy, worker_id, expires, now, limit, fresh_only ? 1 : 0,
                                  options.study_id)
                      : db_.query(kAny, worker_id, expires, now, limit, fresh_only ? 1 : 0);
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
    });
  }

  int64_t expire_leases(const ClaimOptions& options) override {
    check("expire_leases", options);
    std::lock_guard lock(mu_);
    return db_.write("expire_leases", [&] { return expire(options, now_ms()); });
  }

  bool renew_lease(int64_t trial_id, int attempt, const std::string& worker_id,
                   std::chrono::milliseconds lease) override {
    if (lease.count() <= 0) throw invalid_argument(where("renew_lease") + "lease must be > 0");
    check_attempt("renew_lease", attempt);
    std::lock_guard lock(mu_);
    return db_.write("renew_lease", [&] {
      int64_t expires = now_ms() + lease.count();
      return db_.exec(
                 "UPDATE trials SET lease_expires = ?4 "
                 "WHERE id = ?1 AND attempts = ?2 AND worker_id = ?3 AND status = 'running'",
                 trial_id, attempt, worker_id, expires) == 1;
    });
  }

  bool append_epochs(int64_t trial_id, int attempt, const std::vector<EpochRow>& rows) override {
    check_attempt("append_epochs", attempt);
    const auto extras = epoch_extras("append_epochs", rows);
    std::lock_guard lock(mu_);
    return db_.write("append_epochs", [&] {
      if (!db_.query(sql("SELECT 1 FROM trials WHERE id = ?1 AND ", kCurrentAttempt), trial_id,
                     attempt)
               .next())
        return false;
      insert_epochs(trial_id, attempt, rows, extras);
      return true;
    });
  }

  bool finish_trial(int64_t trial_id, int attempt, TrialStatus status, const nlohmann::json& result,
                    std::optional<double> value, const std::string& error,
                    const std::vector<EpochRow>& epochs) override {
    return finish_trials({{trial_id, attempt, status, result, value, error, epochs}})[0];
  }

  std::vector<bool> finish_trials(const std::vector<TrialFinish>& finishes) override {
    struct Prepared {
      std::optional<std::string> result;
      std::vector<std::optional<std::string>> extras;
    };
    std::vector<Prepared> prepared;
    for (const TrialFinish& f : finishes) {  // every check before the transaction
      if (!is_finished(f.status))
        throw invalid_argument(where("finish_trial") + "'" + to_string(f.status) +
                               "' is not a finished status");
      check_attempt("finish_trial", f.attempt);
      Prepared p;
      p.extras = epoch_extras("finish_trial", f.epochs);
      if (!f.result.is_null()) p.result = to_text(f.result, "finish_trial", "result");
      prepared.push_back(std::move(p));
    }
    std::lock_guard lock(mu_);
    return db_.write("finish_trial", [&] {
      const int64_t now = now_ms();
      std::vector<bool> applied;
      for (size_t i = 0; i < finishes.size(); ++i) {
        const TrialFinish& f = finishes[i];
        const int64_t changed = db_.exec(
            sql("UPDATE trials SET status = ?3, result = ?4, value = ?5, error = ?6, "
                "finished_at = ?7, lease_expires = NULL WHERE id = ?1 AND ",
                kCurrentAttempt),
            f.trial_id, f.attempt, to_string(f.status), prepared[i].result, f.value, f.error, now);
        if (changed == 0) {
          if (!db_.query("SELECT 1 FROM trials WHERE id = ?1", f.trial_id).next())
            throw no_trial("finish_trial", f.trial_id);
          applied.push_back(false);
          continue;
        }
        db_.exec(
            "UPDATE attempts SET outcome = ?3, finished_at = ?4 WHERE trial_id = ?1 AND "
            "attempt = ?2",
            f.trial_id, f.attempt, to_string(f.status), now);
        log_change(f.trial_id);
        insert_epochs(f.trial_id, f.attempt, f.epochs, prepared[i].extras);
        applied.push_back(true);
      }
      return applied;
    });
  }

  bool release_trial(int64_t trial_id, int attempt) override {
    check_attempt("release_trial", attempt);
    std::lock_guard lock(mu_);
    return db_.write("release_trial", [&] {
      int64_t now = now_ms();
      int64_t changed = db_.exec(
          sql("UPDATE trials SET status = ", kBackStatus,
              ", lease_expires = NULL, finished_at = CASE WHEN ", kBackStatus,
              " = 'cancelled' THEN ?3 END WHERE id = ?1 AND attempts = ?2 AND status = 'running'"),
          trial_id, attempt, now);
      if (changed == 0) return false;
      log_change(trial_id);
      db_.exec(
          "UPDATE attempts SET outcome = 'released', finished_at = ?3 "
          "WHERE trial_id = ?1 AND attempt = ?2",
          trial_id, attempt, now);
      return true;
    });
  }

  // ---- broker deliveries

  std::optional<Claim> start_trial(int64_t trial_id, const std::string& worker_id,
                                   std::chrono::milliseconds lease) override {
    Start s = std::move(start_trials({trial_id}, worker_id, lease, 0).front());
    if (!s.known) throw no_trial("start_trial", trial_id);
    return std::move(s.claim);
  }

  std::vector<Start> start_trials(const std::vector<int64_t>& trial_ids,
                                  const std::string& worker_id, std::chrono::milliseconds lease,
                                  int max_attempts) override {
    if (worker_id.empty()) throw invalid_argument(where("start_trial") + "empty worker id");
    if (lease.count() <= 0) throw invalid_argument(where("start_trial") + "lease must be > 0");
    if (max_attempts < 0) throw invalid_argument(where("start_trial") + "max_attempts < 0");
    std::lock_guard lock(mu_);
    return db_.write("start_trial", [&] {
      const int64_t now = now_ms();
      const int64_t expires = now + lease.count();
      std::vector<Start> out;
      for (int64_t trial_id : trial_ids) {
        Start& s = out.emplace_back();
        s.known = trial_exists(trial_id);
        if (!s.known) continue;
        lose_running_attempt(trial_id, now);
        if (max_attempts > 0 &&
            db_.exec("UPDATE trials SET status = 'failed', error = 'delivered ' || lost || "
                     "' times without a result (its workers died)', finished_at = ?2, "
                     "lease_expires = NULL WHERE id = ?1 AND status = 'running' AND lost >= ?3",
                     trial_id, now, max_attempts) == 1) {
          log_change(trial_id);
          s.exhausted = true;
          continue;
        }
        Query q = db_.query(
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
      return out;
    });
  }

  bool fail_trial(int64_t trial_id, const std::string& error) override {
    std::lock_guard lock(mu_);
    return db_.write("fail_trial", [&] {
      const int64_t now = now_ms();
      if (!trial_exists(trial_id)) throw no_trial("fail_trial", trial_id);
      lose_running_attempt(trial_id, now);
      if (db_.exec("UPDATE trials SET status = 'failed', error = ?2, finished_at = ?3, "
                   "lease_expires = NULL WHERE id = ?1 AND status IN ('queued', 'running')",
                   trial_id, error, now) == 0)
        return false;
      log_change(trial_id);
      return true;
    });
  }

  // ---- workers

  void register_worker(const WorkerInfo& info) override {
    if (info.id.empty()) throw invalid_argument(where("register_worker") + "empty worker id");
    std::lock_guard lock(mu_);
    db_.write("register_worker", [&] {
      db_.exec(
          "INSERT INTO workers (id, host, pid, device, started_at, heartbeat_at, current_trial, "
          "status, pack, memory_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?5, NULL, 'idle', ?6, 0) "
          "ON CONFLICT (id) DO UPDATE SET "
          "host = excluded.host, pid = excluded.pid, device = excluded.device, "
          "started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at, "
          "current_trial = NULL, status = 'idle', pack = excluded.pack, memory_bytes = 0",
          info.id, info.host, info.pid, info.device, now_ms(), int64_t{info.pack});
    });
  }

  void heartbeat_worker(const std::string& id, std::optional<int64_t> current_trial,
                        int64_t memory_bytes) override {
    std::lock_guard lock(mu_);
    db_.write("heartbeat_worker", [&] {
      WorkerStatus status = current_trial ? WorkerStatus::kBusy : WorkerStatus::kIdle;
      if (db_.exec("UPDATE workers SET heartbeat_at = ?2, current_trial = ?3, status = ?4, "
                   "memory_bytes = ?5 WHERE id = ?1",
                   id, now_ms(), current_trial, to_string(status), memory_bytes) == 0)
        throw no_worker("heartbeat_worker", id);
    });
  }

  void stop_worker(const std::string& id) override {
    std::lock_guard lock(mu_);
    db_.write("stop_worker", [&] {
      if (db_.exec("UPDATE workers SET heartbeat_at = ?2, current_trial = NULL, "
                   "status = 'stopped' WHERE id = ?1",
                   id, now_ms()) == 0)
        throw no_worker("stop_worker", id);
    });
  }

  std::vector<WorkerRecord> list_workers() override {
    std::lock_guard lock(mu_);
    return db_.read("list_workers", [&] {
      std::vector<WorkerRecord> out;
      Query q = db_.query(sql("SELECT ", kWorkerColumns, " FROM workers ORDER BY id"));
      while (q.next()) {
        WorkerRecord w;
        w.info = {q.text(0), q.text(1), q.i64(2), q.text(3), static_cast<int>(q.i64(8))};
        w.memory_bytes = q.i64(9);
        w.started_at = at(q.i64(4));
        w.heartbeat_at = at(q.i64(5));
        w.current_trial = q.opt_i64(6);
        w.status = parse_worker_status(q.text(7));
        out.push_back(std::move(w));
      }
      return out;
    });
  }

  int64_t last_trial_change() override {
    std::lock_guard lock(mu_);
    return db_.read("last_trial_change", [&] {
      Query q = db_.query("SELECT COALESCE(MAX(seq), 0) FROM trial_changes");
      q.next();
      return q.i64(0);
    });
  }

  std::vector<TrialRecord> trials_changed_since(int64_t after, int64_t limit) override {
    if (limit < 1) throw invalid_argument(where("trials_changed_since") + "limit must be >= 1");
    std::lock_guard lock(mu_);
    return db_.read("trials_changed_since", [&] {
      std::vector<TrialRecord> out;
      // A trial changed twice appears once, with its last change number.
      Query q = db_.query(sql("SELECT ", kTrialColumns,
                              ", c.seq FROM (SELECT trial_id, MAX(seq) AS seq FROM trial_changes "
                              "WHERE seq > ?1 GROUP BY trial_id ORDER BY seq LIMIT ?2) c "
                              "JOIN trials ON trials.id = c.trial_id ORDER BY c.seq"),
                          after, limit);
      while (q.next()) {
        out.push_back(read_trial(q));
        out.back().seq = q.i64(16);
      }
      return out;
    });
  }

  Stats stats() const override { return {db_.transactions(), db_.busy_waits(), db_.retries()}; }

 private:
  // The extra columns of epoch rows as JSON text, checked before any transaction starts.
  std::vector<std::optional<std::string>> epoch_extras(const char* call,
                                                       const std::vector<EpochRow>& rows) {
    std::vector<std::optional<std::string>> extras;
    extras.reserve(rows.size());
    for (const EpochRow& r : rows) {
      if (r.epoch < 0) throw invalid_argument(where(call) + "negative epoch");
      extras.push_back(r.extra.is_null() ? std::nullopt
                                         : std::optional(to_text(r.extra, call, "extra")));
    }
    return extras;
  }

  // Inside a write transaction: an epoch written twice keeps the last version.
  void insert_epochs(int64_t trial_id, int attempt, const std::vector<EpochRow>& rows,
                     const std::vector<std::optional<std::string>>& extras) {
    for (size_t i = 0; i < rows.size(); ++i) {
      const EpochRow& r = rows[i];
      db_.exec(
          "INSERT OR REPLACE INTO epochs (trial_id, attempt, epoch, train_loss, val_loss, "
          "val_metric, seconds, extra) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
          trial_id, attempt, r.epoch, r.train_loss, r.val_loss, r.val_metric, r.seconds, extras[i]);
    }
  }

  // Inside a write transaction: trial_id's status changed (for Store::trials_changed_since).
  void log_change(int64_t trial_id) {
    db_.exec("INSERT INTO trial_changes (trial_id) VALUES (?1)", trial_id);
  }
  // The ids an UPDATE ... RETURNING id changed (the statement is finished on return).
  static std::vector<int64_t> returned_ids(Query returning) {
    std::vector<int64_t> ids;
    while (returning.next()) ids.push_back(returning.i64(0));
    return ids;
  }
  // log_change for each; returns how many.
  int64_t log_changes(const std::vector<int64_t>& ids) {
    for (int64_t id : ids) log_change(id);
    return static_cast<int64_t>(ids.size());
  }

  template <typename... S>
  static std::string sql(const S&... parts) {
    std::string s;
    (s += ... += parts);
    return s;
  }

  std::string where(const char* call) const { return db_.label() + ": " + call + ": "; }
  Error no_study(const char* call, int64_t id) const {
    return not_found(where(call) + "no study with id " + std::to_string(id));
  }
  Error no_trial(const char* call, int64_t id) const {
    return not_found(where(call) + "no trial with id " + std::to_string(id));
  }
  Error no_worker(const char* call, const std::string& id) const {
    return not_found(where(call) + "no worker '" + id + "' (register it first)");
  }

  int64_t now_ms() const { return clock_->now().time_since_epoch().count(); }

  void check(const char* call, const ClaimOptions& o) const {
    if (o.lease.count() <= 0) throw invalid_argument(where(call) + "lease must be > 0");
    if (o.max_attempts < 1) throw invalid_argument(where(call) + "max_attempts must be >= 1");
    if (o.study_id < 0) throw invalid_argument(where(call) + "negative study id");
  }

  void check_attempt(const char* call, int attempt) const {
    if (attempt < 1) throw invalid_argument(where(call) + "attempt numbers start at 1");
  }

  // Inside a transaction.
  void require_study(const char* call, int64_t id) {
    if (!db_.query("SELECT 1 FROM studies WHERE id = ?1", id).next()) throw no_study(call, id);
  }

  // Inside a write transaction: the attempt a claim or delivery just started.
  void record_attempt(const Claim& c, const std::string& worker_id, int64_t now) {
    db_.exec(
        "INSERT INTO attempts (trial_id, attempt, worker_id, started_at) "
        "VALUES (?1, ?2, ?3, ?4)",
        c.trial_id, c.attempt, worker_id, now);
    log_change(c.trial_id);
  }

  // Inside a transaction.
  bool trial_exists(int64_t trial_id) {
    return db_.query("SELECT 1 FROM trials WHERE id = ?1", trial_id).next();
  }

  // Inside a write transaction: the current attempt of a running trial is lost (its holder
  // is gone); the trial stays running, for the caller to restart or fail.
  void lose_running_attempt(int64_t trial_id, int64_t now) {
    db_.exec(
        "UPDATE attempts SET outcome = 'lost', finished_at = ?2 WHERE (trial_id, attempt) IN "
        "(SELECT id, attempts FROM trials WHERE id = ?1 AND status = 'running')",
        trial_id, now);
    db_.exec("UPDATE trials SET lost = lost + 1 WHERE id = ?1 AND status = 'running'", trial_id);
  }

  // Inside a write transaction; see Store::expire_leases.
  int64_t expire(const ClaimOptions& o, int64_t now) {
    constexpr const char* kExpired =
        "status = 'running' AND lease_expires < ?1 AND (?2 = 0 OR study_id = ?2)";
    if (!db_.query(sql("SELECT 1 FROM trials WHERE ", kExpired, " LIMIT 1"), now, o.study_id)
             .next())
      return 0;  // the common case: one indexed probe
    db_.exec(sql("UPDATE attempts SET outcome = 'lost', finished_at = ?1 WHERE "
                 "(trial_id, attempt) IN (SELECT id, attempts FROM trials WHERE ",
                 kExpired, ")"),
             now, o.study_id);
    int64_t failed = log_changes(returned_ids(db_.query(
        sql("UPDATE trials SET status = 'failed', lost = lost + 1, lease_expires = NULL, "
            "finished_at = ?1, error = 'worker lost ' || (lost + 1) || ' times (lease expired; "
            "last worker ' || COALESCE(worker_id, '?') || ')' WHERE ",
            kExpired, " AND lost + 1 >= ?3 RETURNING id"),
        now, o.study_id, o.max_attempts)));
    int64_t requeued = log_changes(returned_ids(
        db_.query(sql("UPDATE trials SET status = ", kBackStatus,
                      ", lost = lost + 1, lease_expires = NULL, finished_at = CASE WHEN ",
                      kBackStatus, " = 'cancelled' THEN ?1 END WHERE ", kExpired, " RETURNING id"),
                  now, o.study_id)));
    return failed + requeued;
  }

  // The WHERE clause of a trial filter: study ?1, then statuses and dataset from ?2 on.
  struct FilterSql {
    std::string where;
    std::vector<const char*> statuses;  // distinct, in a fixed order: the SQL variants stay few
    int dataset_at = 0;
    int next = 2;  // the next free placeholder
  };

  static FilterSql filter_sql(const TrialFilter& filter) {
    FilterSql f;
    f.where = "study_id = ?1";
    for (TrialStatus s : kAllTrialStatuses)
      if (std::find(filter.statuses.begin(), filter.statuses.end(), s) != filter.statuses.end())
        f.statuses.push_back(to_string(s));
    if (!f.statuses.empty()) {
      f.where += " AND status IN (";
      for (size_t i = 0; i < f.statuses.size(); ++i)
        f.where += (i ? ", ?" : "?") + std::to_string(f.next++);
      f.where += ")";
    }
    if (!filter.dataset.empty()) {
      f.dataset_at = f.next++;
      f.where += " AND dataset = ?" + std::to_string(f.dataset_at);
    }
    return f;
  }

  static void bind_filter(Query& q, const FilterSql& f, const TrialFilter& filter) {
    for (size_t i = 0; i < f.statuses.size(); ++i) q.bind(static_cast<int>(2 + i), f.statuses[i]);
    if (f.dataset_at) q.bind(f.dataset_at, filter.dataset);
  }

  // The ORDER BY expression for the filter's sort key; binds the parameter's JSON path
  // (kParam) at the next placeholder.
  std::string sort_key(const TrialFilter& f, int& next, int& param_at) const {
    switch (f.sort) {
      case TrialSort::kNumber:
        return "number";
      case TrialSort::kValue:
        return "value";
      case TrialSort::kStarted:
        return "started_at";
      case TrialSort::kFinished:
        return "finished_at";
      case TrialSort::kDuration:
        return "(finished_at - started_at)";
      case TrialSort::kParam: {
        static const std::regex kKey("[A-Za-z0-9_]+(\\.[A-Za-z0-9_]+)*");
        if (!std::regex_match(f.param, kKey))
          throw invalid_argument(where("list_trials") + "cannot sort by parameter '" + f.param +
                                 "': expected a name of letters, digits, '_' (dots for nesting)");
        param_at = next++;
        return "json_extract(params, ?" + std::to_string(param_at) + ")";
      }
    }
    throw internal_error(where("list_trials") + "unknown sort key");
  }

  std::string to_text(const nlohmann::json& j, const char* call, const char* what) const {
    try {
      return j.dump();
    } catch (const nlohmann::json::exception& e) {
      throw invalid_argument(where(call) + what + " cannot be stored as JSON: " + e.what());
    }
  }

  nlohmann::json parse(const std::string& text, const char* column) const {
    try {
      return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw failed_precondition(db_.label() + ": " + column + " holds invalid JSON: " + e.what());
    }
  }

  StudyRecord read_study(const Query& q) const {
    return {q.i64(0), q.text(1), parse(q.text(2), "studies.spec"), parse_study_status(q.text(3)),
            at(q.i64(4))};
  }

  TrialRecord read_trial(const Query& q) const {
    TrialRecord t;
    t.id = q.i64(0);
    t.study_id = q.i64(1);
    t.number = q.i64(2);
    t.dataset = q.text(3);
    t.params = parse(q.text(4), "trials.params");
    t.status = parse_trial_status(q.text(5));
    t.attempts = q.i32(6);
    t.lost = q.i32(7);
    if (!q.is_null(8)) t.result = parse(q.text(8), "trials.result");
    t.value = q.opt_f64(9);
    t.error = q.text(10);
    t.worker_id = q.text(11);
    t.created_at = at(q.i64(12));
    t.started_at = opt_at(q.opt_i64(13));
    t.finished_at = opt_at(q.opt_i64(14));
    t.lease_expires = opt_at(q.opt_i64(15));
    return t;
  }

  EpochRecord read_epoch(const Query& q) const {
    EpochRecord r;
    r.trial_id = q.i64(0);
    r.attempt = q.i32(1);
    r.row.epoch = q.i32(2);
    r.row.train_loss = q.f64(3);
    r.row.val_loss = q.f64(4);
    r.row.val_metric = q.f64(5);
    r.row.seconds = q.f64(6);
    if (!q.is_null(7)) r.row.extra = parse(q.text(7), "epochs.extra");
    return r;
  }

  mutable std::mutex mu_;  // serialises calls on db_
  Db db_;                  // GUARDED_BY(mu_) (its counters are atomics)
  Clock* clock_;
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
