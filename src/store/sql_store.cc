#include "store/sql_store.h"

#include <cmath>
#include <map>
#include <set>

#include "common/error.h"
#include "store/pg_db.h"
#include "store/sql_value.h"
#include "store/sqlite_db.h"

namespace layerlab::store {
namespace {

std::optional<Time> opt_at(std::optional<int64_t> ms) {
  if (!ms) return std::nullopt;
  return Time{std::chrono::milliseconds{*ms}};
}

template <typename... S>
std::string sql(const S&... parts) {
  std::string s;
  (s += ... += parts);
  return s;
}

constexpr const char* kStudyColumns = "id, name, spec, status, created_at";
constexpr const char* kTrialColumns =
    "id, study_id, number, dataset, params, status, attempts, lost, result, value, error, "
    "worker_id, created_at, started_at, finished_at, lease_expires";
constexpr const char* kAttemptColumns =
    "a.trial_id, a.attempt, a.worker_id, a.started_at, a.finished_at, a.outcome";
constexpr const char* kEpochColumns =
    "trial_id, attempt, epoch, train_loss, val_loss, val_metric, seconds, extra";
constexpr const char* kWorkerColumns =
    "id, host, pid, device, started_at, heartbeat_at, current_trial, status, pack, memory_bytes";

// The count of WorkerActivity an attempt's outcome (AttemptRecord::outcome) adds to:
// "" is running; nullptr for cancelled.
int64_t WorkerActivity::*activity_count(const std::string& outcome) {
  if (outcome == "completed" || outcome == "pruned" || outcome == "early_stopped" ||
      outcome == "diverged")
    return &WorkerActivity::done;
  if (outcome == "failed") return &WorkerActivity::failed;
  if (outcome == "lost") return &WorkerActivity::lost;
  if (outcome == "released") return &WorkerActivity::released;
  if (outcome.empty()) return &WorkerActivity::running;
  return nullptr;
}

// The series of FinishedSeries an ended attempt counts in; nullptr for the others.
std::vector<int64_t> FinishedSeries::*finished_series(const std::string& outcome) {
  int64_t WorkerActivity::*count = activity_count(outcome);
  if (count == &WorkerActivity::done) return &FinishedSeries::done;
  if (count == &WorkerActivity::failed) return &FinishedSeries::failed;
  if (count == &WorkerActivity::lost) return &FinishedSeries::lost;
  return nullptr;
}

}  // namespace

// ---- studies

template <typename Db>
int64_t SqlStore<Db>::create_study(const std::string& name, const nlohmann::json& spec) {
  if (name.empty()) throw invalid_argument(where("create_study") + "the study name is empty");
  std::string spec_text = to_text(spec, "create_study", "spec");
  MutexLock lock(mu_);
  return write("create_study", [&]() REQUIRES(mu_) {
    auto q = db_.query("SELECT id FROM studies WHERE name = ?1", name);
    if (q.next())
      throw failed_precondition(where("create_study") + "a study named '" + name +
                                "' already exists (id " + std::to_string(q.i64(0)) +
                                "); resume it or choose another name");
    // A creator racing this one (its row not yet committed when the check ran) wins.
    auto added = db_.query(
        "INSERT INTO studies (name, spec, status, created_at) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT (name) DO NOTHING RETURNING id",
        name, spec_text, to_string(StudyStatus::kRunning), now_ms());
    if (!added.next())
      throw failed_precondition(where("create_study") + "a study named '" + name +
                                "' already exists; resume it or choose another name");
    return added.i64(0);
  });
}

template <typename Db>
std::optional<StudyRecord> SqlStore<Db>::find_study(const std::string& name) {
  MutexLock lock(mu_);
  return read("find_study", [&]() REQUIRES(mu_) -> std::optional<StudyRecord> {
    auto q = db_.query(sql("SELECT ", kStudyColumns, " FROM studies WHERE name = ?1"), name);
    if (!q.next()) return std::nullopt;
    return read_study(q);
  });
}

template <typename Db>
StudyRecord SqlStore<Db>::get_study(int64_t id) {
  MutexLock lock(mu_);
  return read("get_study", [&]() REQUIRES(mu_) {
    auto q = db_.query(sql("SELECT ", kStudyColumns, " FROM studies WHERE id = ?1"), id);
    if (!q.next()) throw no_study("get_study", id);
    return read_study(q);
  });
}

template <typename Db>
std::vector<StudyRecord> SqlStore<Db>::list_studies(const StudyListing& which) {
  MutexLock lock(mu_);
  return read("list_studies", [&]() REQUIRES(mu_) {
    std::vector<StudyRecord> out;
    // Without specs the column reads as NULL (it never is stored so) and is left unparsed.
    const std::string select =
        sql("SELECT ", which.specs ? kStudyColumns : "id, name, NULL, status, created_at",
            " FROM studies");
    auto q = which.status
                 ? db_.query(select + " WHERE status = ?1 ORDER BY id", to_string(*which.status))
                 : db_.query(select + " ORDER BY id");
    while (q.next()) out.push_back(read_study(q));
    return out;
  });
}

template <typename Db>
void SqlStore<Db>::set_study_status(int64_t id, StudyStatus status) {
  MutexLock lock(mu_);
  write("set_study_status", [&]() REQUIRES(mu_) {
    // A cancelled study stays cancelled, whatever ends after the cancel (run's last trials).
    if (db_.exec("UPDATE studies SET status = ?2 WHERE id = ?1 AND status <> 'cancelled'", id,
                 to_string(status)) == 0)
      throw study_unchanged("set_study_status", id);
    // A follower needs only each trial's last change (trials_changed_since returns a
    // trial once, with it): a finished study's earlier ones (queued, started) go, two of
    // the three rows a trial leaves. Numbers not yet given (PostgreSQL) stay.
    // Each trial's last change comes from a window over the study's changes: one pass and a
    // sort. (Joining each change to its trial's MAX ran on SQLite as a nested loop, the log
    // has no index on trial_id: 0.6 s at the end of a 2,000-trial study, 49 s at 20,000.)
    if (status == StudyStatus::kFinished)
      db_.exec(
          "DELETE FROM trial_changes WHERE seq IN (SELECT seq FROM (SELECT c.seq, "
          "MAX(c.seq) OVER (PARTITION BY c.trial_id) AS last FROM trial_changes c JOIN trials t "
          "ON t.id = c.trial_id WHERE t.study_id = ?1 AND c.seq IS NOT NULL) w WHERE seq < last)",
          id);
  });
}

// Not SqlStore's: every Store keeps a cancelled study cancelled (set_study_status).
bool Store::finish_study(int64_t id) {
  try {
    set_study_status(id, StudyStatus::kFinished);
    return true;
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kFailedPrecondition) throw;
    return false;
  }
}

template <typename Db>
int64_t SqlStore<Db>::cancel_study(int64_t id) {
  MutexLock lock(mu_);
  return write("cancel_study", [&]() REQUIRES(mu_) {
    // Checked by the update itself: a study that finishes meanwhile is not turned cancelled.
    if (db_.exec("UPDATE studies SET status = 'cancelled' WHERE id = ?1 AND status = 'running'",
                 id) == 0)
      throw study_unchanged("cancel_study", id);
    return cancel_queued(id);
  });
}

template <typename Db>
int64_t SqlStore<Db>::cancel_queued_trials(int64_t study_id) {
  MutexLock lock(mu_);
  return write("cancel_queued_trials", [&]() REQUIRES(mu_) {
    require_study("cancel_queued_trials", study_id);
    return cancel_queued(study_id);
  });
}

template <typename Db>
int64_t SqlStore<Db>::cancel_queued(int64_t study_id) {
  std::vector<int64_t> ids =
      returned_ids(db_.query("UPDATE trials SET status = 'cancelled', finished_at = ?2 "
                             "WHERE study_id = ?1 AND status = 'queued' RETURNING id",
                             study_id, now_ms()));
  log_changes(ids);
  return static_cast<int64_t>(ids.size());
}

template <typename Db>
StudyCounts SqlStore<Db>::counts(int64_t study_id) {
  MutexLock lock(mu_);
  return read("counts", [&]() REQUIRES(mu_) {
    require_study("counts", study_id);
    StudyCounts c;
    auto q = db_.query("SELECT status, COUNT(*) FROM trials WHERE study_id = ?1 GROUP BY status",
                       study_id);
    while (q.next()) c.by_status[static_cast<size_t>(parse_trial_status(q.text(0)))] = q.i64(1);
    return c;
  });
}

// ---- trials

template <typename Db>
std::vector<int64_t> SqlStore<Db>::add_trials(int64_t study_id,
                                              const std::vector<NewTrial>& trials) {
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
  MutexLock lock(mu_);
  return write("add_trials", [&]() REQUIRES(mu_) {
    auto s = db_.query("SELECT status FROM studies WHERE id = ?1", study_id);
    if (!s.next()) throw no_study("add_trials", study_id);
    if (s.text(0) == to_string(StudyStatus::kCancelled))
      throw failed_precondition(where("add_trials") + "study " + std::to_string(study_id) +
                                " is cancelled");
    if (trials.empty()) return std::vector<int64_t>{};
    return insert_trials(study_id, trials, params, now_ms());
  });
}

template <typename Db>
TrialRecord SqlStore<Db>::get_trial(int64_t id) {
  MutexLock lock(mu_);
  return read("get_trial", [&]() REQUIRES(mu_) {
    auto q = db_.query(sql("SELECT ", kTrialColumns, " FROM trials WHERE id = ?1"), id);
    if (!q.next()) throw no_trial("get_trial", id);
    return read_trial(q);
  });
}

namespace {

bool only_unfinished(const std::vector<TrialStatus>& statuses) {
  return !statuses.empty() && std::all_of(statuses.begin(), statuses.end(), [](TrialStatus s) {
    return s == TrialStatus::kQueued || s == TrialStatus::kRunning;
  });
}

}  // namespace

// The WHERE clause of a trial filter and its parameters: study ?1, then the statuses and
// the dataset. The statuses are distinct and in a fixed order, so the variants stay few.
template <typename Db>
struct SqlStore<Db>::Filter {
  std::string where;
  std::vector<SqlValue> params;
  std::string next() const { return "?" + std::to_string(params.size() + 1); }
};

template <typename Db>
typename SqlStore<Db>::Filter SqlStore<Db>::filter_sql(int64_t study_id,
                                                       const TrialFilter& filter) const {
  Filter f;
  f.where = "study_id = ?1";
  f.params.emplace_back(study_id);
  std::string in;
  for (TrialStatus s : kAllTrialStatuses) {
    if (std::find(filter.statuses.begin(), filter.statuses.end(), s) == filter.statuses.end())
      continue;
    in += (in.empty() ? "" : ", ") + f.next();
    f.params.emplace_back(std::string(to_string(s)));
  }
  if (!in.empty()) f.where += " AND status IN (" + in + ")";
  if (filter.lost_only) f.where += " AND lost > 0";
  if (filter.value) {
    f.where += " AND value = " + f.next();
    f.params.emplace_back(*filter.value);
  }
  if (!filter.dataset.empty()) {
    f.where += " AND dataset = " + f.next();
    f.params.emplace_back(filter.dataset);
  }
  if (filter.after_number) {
    f.where += " AND number > " + f.next();
    f.params.emplace_back(*filter.after_number);
  }
  return f;
}

template <typename Db>
std::vector<TrialRecord> SqlStore<Db>::list_trials(int64_t study_id, const TrialFilter& filter) {
  if (filter.limit < 0 || filter.offset < 0)
    throw invalid_argument(where("list_trials") + "limit and offset must be >= 0");
  Filter f = filter_sql(study_id, filter);
  std::string from = "trials";
  std::string order;
  const char* dir = filter.descending ? " DESC" : "";
  switch (filter.sort) {
    case TrialSort::kNumber:
      // The unfinished trials are few however large the study: "+number" keeps SQLite from
      // walking the whole study in number order to avoid sorting them (the coordinator of an
      // adaptive study asks every 25 ms). Other selections are read in that order.
      order = sql(only_unfinished(filter.statuses) ? "+number" : "number", dir);
      break;
    case TrialSort::kParam: {
      check_param_key(filter.param);
      ParamOrder p = param_order(filter.param, static_cast<int>(f.params.size()) + 1, dir);
      from += p.from;
      order = p.order;
      f.params.emplace_back(std::move(p.path));
      break;
    }
    default: {
      const char* key = filter.sort == TrialSort::kValue      ? "value"
                        : filter.sort == TrialSort::kStarted  ? "started_at"
                        : filter.sort == TrialSort::kFinished ? "finished_at"
                                                              : "(finished_at - started_at)";
      order = sql(key, " IS NULL, ", key, dir, ", number");
    }
  }
  std::string text =
      sql("SELECT ", kTrialColumns, " FROM ", from, " WHERE ", f.where, " ORDER BY ", order);
  text += " LIMIT " + f.next();
  if (filter.limit > 0) {
    f.params.emplace_back(filter.limit);
  } else if (dialect_.null_limit) {
    f.params.emplace_back();
  } else {
    f.params.emplace_back(int64_t{-1});
  }
  text += " OFFSET " + f.next();
  f.params.emplace_back(filter.offset);

  MutexLock lock(mu_);
  return read("list_trials", [&]() REQUIRES(mu_) {
    require_study("list_trials", study_id);
    auto q = db_.query_with(text, f.params);
    std::vector<TrialRecord> out;
    while (q.next()) out.push_back(read_trial(q));
    return out;
  });
}

template <typename Db>
int64_t SqlStore<Db>::count_trials(int64_t study_id, const TrialFilter& filter) {
  Filter f = filter_sql(study_id, filter);
  std::string text = "SELECT COUNT(*) FROM trials WHERE " + f.where;
  MutexLock lock(mu_);
  return read("count_trials", [&]() REQUIRES(mu_) {
    require_study("count_trials", study_id);
    auto q = db_.query_with(text, f.params);
    q.next();
    return q.i64(0);
  });
}

template <typename Db>
std::vector<AttemptRecord> SqlStore<Db>::list_attempts(int64_t trial_id) {
  MutexLock lock(mu_);
  return read("list_attempts", [&]() REQUIRES(mu_) {
    std::vector<AttemptRecord> out;
    auto q = db_.query(sql("SELECT ", kAttemptColumns,
                           " FROM attempts a WHERE a.trial_id = ?1 ORDER BY a.attempt"),
                       trial_id);
    while (q.next()) out.push_back(read_attempt(q));
    return out;
  });
}

// Records joined to the study's trials numbered first..last: `text`'s parameters are the
// study ?1 and the bounds ?2, ?3; each row is read by read_row.
template <typename Db>
template <typename Record, typename ReadRow>
std::vector<Record> SqlStore<Db>::read_number_range(const char* call, const std::string& text,
                                                    int64_t study_id, int64_t first, int64_t last,
                                                    ReadRow read_row) {
  MutexLock lock(mu_);
  return read(call, [&]() REQUIRES(mu_) {
    require_study(call, study_id);
    std::vector<Record> out;
    auto q = db_.query(text, study_id, first, last);
    while (q.next()) out.push_back(read_row(q));
    return out;
  });
}

template <typename Db>
std::vector<AttemptRecord> SqlStore<Db>::list_attempts_of(int64_t study_id, int64_t first,
                                                          int64_t last) {
  return read_number_range<AttemptRecord>(
      "list_attempts_of",
      sql("SELECT ", kAttemptColumns,
          " FROM trials t JOIN attempts a ON a.trial_id = t.id WHERE t.study_id = ?1 AND "
          "t.number >= ?2 AND t.number <= ?3 ORDER BY t.number, a.attempt"),
      study_id, first, last, [&](const auto& q) { return read_attempt(q); });
}

template <typename Db>
std::vector<EpochRecord> SqlStore<Db>::list_latest_epochs_of(int64_t study_id, int64_t first,
                                                             int64_t last) {
  // No column of epochs is also one of trials: kEpochColumns need no qualifier.
  return read_number_range<EpochRecord>(
      "list_latest_epochs_of",
      sql("SELECT ", kEpochColumns,
          " FROM trials t JOIN epochs e ON e.trial_id = t.id AND e.attempt = t.attempts WHERE "
          "t.study_id = ?1 AND t.number >= ?2 AND t.number <= ?3 ORDER BY t.number, e.epoch"),
      study_id, first, last, [&](const auto& q) { return read_epoch(q); });
}

template <typename Db>
std::vector<EpochRecord> SqlStore<Db>::list_epochs(int64_t trial_id, int attempt, int after_epoch) {
  MutexLock lock(mu_);
  return read("list_epochs", [&]() REQUIRES(mu_) {
    std::vector<EpochRecord> out;
    auto q = db_.query(sql("SELECT ", kEpochColumns,
                           " FROM epochs WHERE trial_id = ?1 AND (?2 = 0 OR attempt = ?2) "
                           "AND epoch > ?3 ORDER BY attempt, epoch"),
                       trial_id, attempt, after_epoch);
    while (q.next()) out.push_back(read_epoch(q));
    return out;
  });
}

template <typename Db>
std::vector<TrialValue> SqlStore<Db>::epoch_values(int64_t study_id, int epoch, EpochField field) {
  const char* column = field == EpochField::kTrainLoss ? "e.train_loss"
                       : field == EpochField::kValLoss ? "e.val_loss"
                                                       : "e.val_metric";
  MutexLock lock(mu_);
  return read("epoch_values", [&]() REQUIRES(mu_) {
    std::vector<TrialValue> out;
    auto q = db_.query(sql("SELECT t.id, ", column,
                           " FROM trials t JOIN epochs e ON e.trial_id = t.id AND "
                           "e.attempt = t.attempts AND e.epoch = ?2 WHERE t.study_id = ?1"),
                       study_id, epoch);
    while (q.next()) out.push_back({q.i64(0), q.f64(1)});
    return out;
  });
}

// ---- claiming and reporting

template <typename Db>
std::optional<Claim> SqlStore<Db>::claim_next(const std::string& worker_id,
                                              const ClaimOptions& options) {
  std::vector<Claim> claims = claim_batch(worker_id, options, 1);
  if (claims.empty()) return std::nullopt;
  return std::move(claims.front());
}

template <typename Db>
std::vector<Claim> SqlStore<Db>::claim_batch(const std::string& worker_id,
                                             const ClaimOptions& options, int max) {
  return finish_and_claim_trials({}, worker_id, options, max).claims;
}

template <typename Db>
Store::FinishedAndClaimed SqlStore<Db>::finish_and_claim_trials(
    const std::vector<TrialFinish>& finishes, const std::string& worker_id,
    const ClaimOptions& options, int max) {
  const std::vector<Prepared> prepared = prepare_finishes(finishes);  // every check first
  check("claim_next", options);
  if (worker_id.empty()) throw invalid_argument(where("claim_next") + "empty worker id");
  if (max < 1) throw invalid_argument(where("claim_batch") + "max must be positive");
  MutexLock lock(mu_);
  before_claims();
  return write(finishes.empty() ? "claim_next" : "finish_and_claim_trials", [&]() REQUIRES(mu_) {
    const int64_t now = now_ms();
    FinishedAndClaimed out;
    out.applied = apply_finishes(finishes, prepared, now);
    // The lease probe and the claim, on plans made once per connection: PostgreSQL planned
    // both anew at every call (their LIMIT and lease range on parameters), 0.53 s of
    // planning against 1.8 s of running them over 50,000 empty trials (pg_stat_statements).
    db_.plan_generically();
    expire(options, now);
    // The claim is the transaction's last statement (one, on PostgreSQL): its COMMIT goes
    // with it, so the rows it locks are free again as soon as the server has run both.
    db_.commit_with_next();
    out.claims = claim_trials(worker_id, options, max, now);
    return out;
  });
}

template <typename Db>
int64_t SqlStore<Db>::expire_leases(const ClaimOptions& options) {
  check("expire_leases", options);
  MutexLock lock(mu_);
  return write("expire_leases", [&]() REQUIRES(mu_) { return expire(options, now_ms()); });
}

template <typename Db>
std::vector<bool> SqlStore<Db>::renew_leases(const std::vector<AttemptRef>& attempts,
                                             const std::string& worker_id,
                                             std::chrono::milliseconds lease) {
  if (lease.count() <= 0) throw invalid_argument(where("renew_lease") + "lease must be > 0");
  for (const AttemptRef& a : attempts) check_attempt("renew_lease", a.attempt);
  if (attempts.empty()) return {};
  MutexLock lock(mu_);
  return write("renew_lease", [&]() REQUIRES(mu_) {
    return extend_leases(attempts, worker_id, now_ms() + lease.count());
  });
}

template <typename Db>
std::vector<bool> SqlStore<Db>::append_epochs_batch(const std::vector<EpochAppend>& appends) {
  std::vector<std::vector<std::optional<std::string>>> extras;
  for (const EpochAppend& a : appends) {
    check_attempt("append_epochs", a.attempt);
    extras.push_back(epoch_extras("append_epochs", a.rows));
  }
  if (appends.empty()) return {};
  MutexLock lock(mu_);
  return write("append_epochs", [&]() REQUIRES(mu_) { return write_epochs(appends, extras); });
}

template <typename Db>
bool SqlStore<Db>::finish_trial(int64_t trial_id, int attempt, TrialStatus status,
                                const nlohmann::json& result, std::optional<double> value,
                                const std::string& error, const std::vector<EpochRow>& epochs) {
  return finish_trials({{trial_id, attempt, status, result, value, error, epochs}})[0];
}

template <typename Db>
std::vector<typename SqlStore<Db>::Prepared> SqlStore<Db>::prepare_finishes(
    const std::vector<TrialFinish>& finishes) const {
  std::vector<Prepared> prepared;
  for (const TrialFinish& f : finishes) {
    if (!is_finished(f.status))
      throw invalid_argument(where("finish_trial") + "'" + to_string(f.status) +
                             "' is not a finished status");
    check_attempt("finish_trial", f.attempt);
    check_keep(f);
    Prepared p;
    p.extras = epoch_extras("finish_trial", f.epochs);
    if (!f.result.is_null()) p.result = to_text(f.result, "finish_trial", "result");
    prepared.push_back(std::move(p));
  }
  return prepared;
}

template <typename Db>
std::vector<bool> SqlStore<Db>::apply_finishes(const std::vector<TrialFinish>& finishes,
                                               const std::vector<Prepared>& prepared, int64_t now) {
  std::set<int64_t> ids;
  for (const TrialFinish& f : finishes) ids.insert(f.trial_id);
  std::vector<bool> applied(finishes.size(), false);
  if (finishes.empty()) return applied;
  if (ids.size() == finishes.size()) {
    std::vector<size_t> all(finishes.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    finish_batch(finishes, prepared, all, now, applied);
  } else {
    // A trial reported twice in one call: one at a time, so the second sees the first.
    for (size_t i = 0; i < finishes.size(); ++i)
      finish_batch(finishes, prepared, {i}, now, applied);
  }
  for (size_t i = 0; i < finishes.size(); ++i)
    if (applied[i] && finishes[i].keep) keep_weights(finishes[i], now);
  return applied;
}

template <typename Db>
std::vector<bool> SqlStore<Db>::finish_trials(const std::vector<TrialFinish>& finishes) {
  const std::vector<Prepared> prepared = prepare_finishes(finishes);  // every check first
  MutexLock lock(mu_);
  return write("finish_trial",
               [&]() REQUIRES(mu_) { return apply_finishes(finishes, prepared, now_ms()); });
}

template <typename Db>
Store::FinishedAndStarted SqlStore<Db>::finish_and_start_trials(
    const std::vector<TrialFinish>& finishes, const std::vector<int64_t>& start_ids,
    const std::string& worker_id, std::chrono::milliseconds lease, int max_attempts) {
  const std::vector<Prepared> prepared = prepare_finishes(finishes);  // every check first
  if (!start_ids.empty()) check_start(worker_id, lease, max_attempts);
  MutexLock lock(mu_);
  return write("finish_and_start_trials", [&]() REQUIRES(mu_) {
    const int64_t now = now_ms();
    FinishedAndStarted out;
    out.applied = apply_finishes(finishes, prepared, now);
    out.starts = apply_starts(start_ids, worker_id, lease, max_attempts, now);
    return out;
  });
}

template <typename Db>
bool SqlStore<Db>::release_trial(int64_t trial_id, int attempt) {
  check_attempt("release_trial", attempt);
  MutexLock lock(mu_);
  return write("release_trial", [&]() REQUIRES(mu_) {
    return release({trial_id, attempt}, now_ms());
  });
}

template <typename Db>
std::vector<bool> SqlStore<Db>::give_back_trials(const std::vector<AttemptRef>& attempts) {
  for (const AttemptRef& a : attempts) check_attempt("give_back_trials", a.attempt);
  if (attempts.empty()) return {};
  MutexLock lock(mu_);
  return write("give_back_trials", [&]() REQUIRES(mu_) {
    const int64_t now = now_ms();
    std::vector<bool> given(attempts.size(), false);
    for (size_t i = 0; i < attempts.size(); ++i)
      given[i] = undo_start(attempts[i], now) || release(attempts[i], now);
    return given;
  });
}

// The SET clause of a running trial going back to the queue (cancelled, finished at ?3, if
// its study was).
template <typename Db>
std::string SqlStore<Db>::back_to_queue() const {
  return sql("status = ", dialect_.back_status, ", lease_expires = NULL, finished_at = CASE WHEN ",
             dialect_.back_status, " = 'cancelled' THEN ?3 END");
}

template <typename Db>
bool SqlStore<Db>::release(const AttemptRef& a, int64_t now) {
  const int64_t changed = db_.exec(sql("UPDATE trials SET ", back_to_queue(),
                                       " WHERE id = ?1 AND attempts = ?2 AND status = 'running'"),
                                   a.trial_id, a.attempt, now);
  if (changed == 0) return false;
  log_changes({a.trial_id});
  db_.exec(
      "UPDATE attempts SET outcome = 'released', finished_at = ?3 "
      "WHERE trial_id = ?1 AND attempt = ?2",
      a.trial_id, a.attempt, now);
  return true;
}

// The trial gets back what the start changed: its attempt count, and the worker and start
// time of its previous attempt (none before the first); the attempt's row goes. Only while
// the attempt stored no epoch records (deleting its row would delete them).
template <typename Db>
bool SqlStore<Db>::undo_start(const AttemptRef& a, int64_t now) {
  const int64_t changed =
      db_.exec(sql("UPDATE trials SET ", back_to_queue(),
                   ", attempts = ?4, "
                   "worker_id = (SELECT p.worker_id FROM attempts p WHERE p.trial_id = ?1 AND "
                   "p.attempt = ?4), "
                   "started_at = (SELECT p.started_at FROM attempts p WHERE p.trial_id = ?1 AND "
                   "p.attempt = ?4) "
                   "WHERE id = ?1 AND attempts = ?2 AND status = 'running' AND NOT EXISTS "
                   "(SELECT 1 FROM epochs e WHERE e.trial_id = ?1 AND e.attempt = ?2)"),
               a.trial_id, a.attempt, now, a.attempt - 1);
  if (changed == 0) return false;
  log_changes({a.trial_id});
  db_.exec("DELETE FROM attempts WHERE trial_id = ?1 AND attempt = ?2", a.trial_id, a.attempt);
  return true;
}

// ---- kept weights

namespace {

// The PostgreSQL advisory lock of one (study, dataset) board of kept weights: FNV-1a, the
// same in every build, so workers of different builds take the same lock.
int64_t board_key(int64_t study_id, const std::string& dataset) {
  uint64_t h = 14695981039346656037ull;
  auto mix = [&](unsigned char c) {
    h ^= c;
    h *= 1099511628211ull;
  };
  for (char c : std::string("layerlab.trial_weights:") + std::to_string(study_id) + ":" + dataset)
    mix(static_cast<unsigned char>(c));
  return static_cast<int64_t>(h);
}

}  // namespace

template <typename Db>
void SqlStore<Db>::check_keep(const TrialFinish& f) const {
  if (!f.keep) return;
  const std::string what = where("finish_trial") + "trial id " + std::to_string(f.trial_id) + ": ";
  if (!f.keep->bytes) throw invalid_argument(what + "weights to keep are missing");
  if (static_cast<int64_t>(f.keep->bytes->size()) > kMaxWeightBytes)
    throw invalid_argument(what + "weights of " + std::to_string(f.keep->bytes->size()) +
                           " bytes are over the limit of " + std::to_string(kMaxWeightBytes) +
                           " bytes (64 MiB) a store keeps for one trial");
  if (f.keep->top < 1 || f.keep->top > kMaxKeptPerDataset)
    throw invalid_argument(what + "keep top must be in 1.." + std::to_string(kMaxKeptPerDataset) +
                           ", got " + std::to_string(f.keep->top));
}

// The weights of a finished trial enter its board (study, dataset) when they rank within
// the top; the board's weights beyond the top go. Finishes that keep weights on one board
// take its lock (PostgreSQL: an advisory lock; SQLite's writer holds the database), so
// two concurrent ones cannot both leave top + 1 rows.
template <typename Db>
void SqlStore<Db>::keep_weights(const TrialFinish& f, int64_t now) {
  const bool ranks = f.status == TrialStatus::kCompleted || f.status == TrialStatus::kEarlyStopped;
  if (!ranks || !f.value || std::isnan(*f.value)) return;  // as study/leaderboard.h ranks
  auto t = db_.query("SELECT study_id, dataset, number FROM trials WHERE id = ?1", f.trial_id);
  if (!t.next()) return;
  const int64_t study_id = t.i64(0);
  const std::string dataset = t.text(1);
  const int64_t number = t.i64(2);
  db_.lock_exclusive(board_key(study_id, dataset));
  const KeepWeights& k = *f.keep;
  const char* better = k.maximize ? " > " : " < ";
  auto ahead =
      db_.query(sql("SELECT COUNT(*) FROM trial_weights w JOIN trials t ON t.id = w.trial_id "
                    "WHERE w.study_id = ?1 AND w.dataset = ?2 AND w.trial_id <> ?5 AND (t.value",
                    better, "?3 OR (t.value = ?3 AND t.number < ?4))"),
                study_id, dataset, *f.value, number, f.trial_id);
  ahead.next();
  if (ahead.i64(0) >= k.top) return;  // not among the best: nothing to keep
  db_.exec(
      "INSERT INTO trial_weights (trial_id, study_id, dataset, bytes, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (trial_id) DO UPDATE SET "
      "bytes = excluded.bytes, created_at = excluded.created_at",
      f.trial_id, study_id, dataset, Blob{*k.bytes}, now);
  db_.exec(sql("DELETE FROM trial_weights WHERE study_id = ?1 AND dataset = ?2 AND trial_id NOT IN "
               "(SELECT w.trial_id FROM trial_weights w JOIN trials t ON t.id = w.trial_id "
               "WHERE w.study_id = ?1 AND w.dataset = ?2 ORDER BY t.value",
               k.maximize ? " DESC" : "", ", t.number LIMIT ?3)"),
           study_id, dataset, int64_t{k.top});
}

template <typename Db>
std::optional<KeptWeights> SqlStore<Db>::find_weights(int64_t trial_id, bool with_bytes) {
  MutexLock lock(mu_);
  return read("find_weights", [&]() REQUIRES(mu_) -> std::optional<KeptWeights> {
    auto q = db_.query(sql("SELECT trial_id, study_id, dataset, length(bytes), created_at",
                           with_bytes ? ", bytes" : "", " FROM trial_weights WHERE trial_id = ?1"),
                       trial_id);
    if (!q.next()) return std::nullopt;
    KeptWeights w{q.i64(0), q.i64(1), q.text(2), q.i64(3), at(q.i64(4)), {}};
    if (with_bytes) w.bytes = q.blob(5);
    return w;
  });
}

template <typename Db>
std::vector<KeptWeights> SqlStore<Db>::list_weights(int64_t study_id) {
  MutexLock lock(mu_);
  return read("list_weights", [&]() REQUIRES(mu_) {
    require_study("list_weights", study_id);
    std::vector<KeptWeights> out;
    auto q = db_.query(sql("SELECT trial_id, study_id, dataset, length(bytes), created_at "
                           "FROM trial_weights WHERE study_id = ?1 ORDER BY dataset",
                           dialect_.bytewise, ", trial_id"),
                       study_id);
    while (q.next()) out.push_back({q.i64(0), q.i64(1), q.text(2), q.i64(3), at(q.i64(4)), {}});
    return out;
  });
}

// ---- broker deliveries

template <typename Db>
std::optional<Claim> SqlStore<Db>::start_trial(int64_t trial_id, const std::string& worker_id,
                                               std::chrono::milliseconds lease) {
  Start s = std::move(start_trials({trial_id}, worker_id, lease, 0).front());
  if (!s.known) throw no_trial("start_trial", trial_id);
  return std::move(s.claim);
}

template <typename Db>
void SqlStore<Db>::check_start(const std::string& worker_id, std::chrono::milliseconds lease,
                               int max_attempts) const {
  if (worker_id.empty()) throw invalid_argument(where("start_trial") + "empty worker id");
  if (lease.count() <= 0) throw invalid_argument(where("start_trial") + "lease must be > 0");
  if (max_attempts < 0) throw invalid_argument(where("start_trial") + "max_attempts < 0");
}

template <typename Db>
std::vector<Store::Start> SqlStore<Db>::apply_starts(const std::vector<int64_t>& ids,
                                                     const std::string& worker_id,
                                                     std::chrono::milliseconds lease,
                                                     int max_attempts, int64_t now) {
  std::vector<Start> out(ids.size());
  if (ids.empty()) return out;
  const int64_t expires = now + lease.count();
  if (std::set<int64_t>(ids.begin(), ids.end()).size() == ids.size()) {
    start_batch(ids, worker_id, now, expires, max_attempts, out, 0);
  } else {
    // A trial delivered twice in one call: one at a time, so the second sees the first.
    for (size_t i = 0; i < ids.size(); ++i)
      start_batch({ids[i]}, worker_id, now, expires, max_attempts, out, i);
  }
  return out;
}

template <typename Db>
std::vector<Store::Start> SqlStore<Db>::start_trials(const std::vector<int64_t>& trial_ids,
                                                     const std::string& worker_id,
                                                     std::chrono::milliseconds lease,
                                                     int max_attempts) {
  check_start(worker_id, lease, max_attempts);
  MutexLock lock(mu_);
  return write("start_trial", [&]() REQUIRES(mu_) {
    return apply_starts(trial_ids, worker_id, lease, max_attempts, now_ms());
  });
}

template <typename Db>
bool SqlStore<Db>::fail_trial(int64_t trial_id, const std::string& error) {
  MutexLock lock(mu_);
  return write("fail_trial", [&]() REQUIRES(mu_) {
    const int64_t now = now_ms();
    if (!lock_trial(trial_id)) throw no_trial("fail_trial", trial_id);
    lose_running_attempt(trial_id, now);
    if (db_.exec("UPDATE trials SET status = 'failed', error = ?2, finished_at = ?3, "
                 "lease_expires = NULL WHERE id = ?1 AND status IN ('queued', 'running')",
                 trial_id, error, now) == 0)
      return false;
    log_changes({trial_id});
    return true;
  });
}

// ---- workers and followers

template <typename Db>
void SqlStore<Db>::register_worker(const WorkerInfo& info) {
  if (info.id.empty()) throw invalid_argument(where("register_worker") + "empty worker id");
  MutexLock lock(mu_);
  write("register_worker", [&]() REQUIRES(mu_) {
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

template <typename Db>
void SqlStore<Db>::heartbeat_worker(const std::string& id, std::optional<int64_t> current_trial,
                                    int64_t memory_bytes) {
  MutexLock lock(mu_);
  write("heartbeat_worker", [&]() REQUIRES(mu_) {
    WorkerStatus status = current_trial ? WorkerStatus::kBusy : WorkerStatus::kIdle;
    if (db_.exec("UPDATE workers SET heartbeat_at = ?2, current_trial = ?3, status = ?4, "
                 "memory_bytes = ?5 WHERE id = ?1",
                 id, now_ms(), current_trial, to_string(status), memory_bytes) == 0)
      throw no_worker("heartbeat_worker", id);
  });
}

template <typename Db>
void SqlStore<Db>::stop_worker(const std::string& id) {
  MutexLock lock(mu_);
  write("stop_worker", [&]() REQUIRES(mu_) {
    if (db_.exec("UPDATE workers SET heartbeat_at = ?2, current_trial = NULL, "
                 "status = 'stopped' WHERE id = ?1",
                 id, now_ms()) == 0)
      throw no_worker("stop_worker", id);
  });
}

template <typename Db>
std::vector<WorkerRecord> SqlStore<Db>::list_workers() {
  MutexLock lock(mu_);
  return read("list_workers", [&]() REQUIRES(mu_) {
    std::vector<WorkerRecord> out;
    auto q =
        db_.query(sql("SELECT ", kWorkerColumns, " FROM workers ORDER BY id", dialect_.bytewise));
    while (q.next()) {
      WorkerRecord w;
      w.info = {q.text(0), q.text(1), q.i64(2), q.text(3), q.i32(8)};
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

template <typename Db>
std::vector<WorkerActivity> SqlStore<Db>::worker_activity(Time from, Time to) {
  if (to < from)
    throw invalid_argument(where("worker_activity") + "the window ends before it starts");
  const int64_t lo = from.time_since_epoch().count();
  const int64_t hi = to.time_since_epoch().count();
  MutexLock lock(mu_);
  return read("worker_activity", [&]() REQUIRES(mu_) {
    struct Life {
      int64_t begin = 0, end = 0;           // the window clipped to the worker's life
      int64_t run_begin = 0, run_end = -1;  // the busy interval being merged
    };
    std::map<std::string, WorkerActivity> by_id;
    std::map<std::string, Life> lives;
    auto activity = [&](const std::string& id) -> WorkerActivity& {
      WorkerActivity& a = by_id[id];
      a.worker_id = id;
      return a;
    };
    auto w = db_.query("SELECT id, started_at, heartbeat_at FROM workers");
    while (w.next()) {
      Life& l = lives[w.text(0)];
      l.begin = std::max(lo, w.i64(1));
      l.end = std::max(l.begin, std::min(hi, w.i64(2)));
      activity(w.text(0)).alive = std::chrono::milliseconds{l.end - l.begin};
    }
    auto counts =
        db_.query("SELECT worker_id, outcome, COUNT(*) FROM attempts GROUP BY worker_id, outcome");
    while (counts.next()) {
      if (int64_t WorkerActivity::*count = activity_count(counts.text(1)))
        activity(counts.text(0)).*count += counts.i64(2);
    }
    // Busy: the union of the worker's attempts within its clipped window, merged in order
    // of start (clipping keeps that order).
    auto runs = db_.query(
        "SELECT worker_id, started_at, finished_at FROM attempts "
        "WHERE started_at < ?2 AND (finished_at IS NULL OR finished_at > ?1) ORDER BY started_at",
        lo, hi);
    while (runs.next()) {
      auto it = lives.find(runs.text(0));
      if (it == lives.end()) continue;  // never registered: no life to measure against
      Life& l = it->second;
      const int64_t begin = std::max(runs.i64(1), l.begin);
      const int64_t end = std::min(runs.opt_i64(2).value_or(l.end), l.end);
      if (end <= begin) continue;
      if (begin > l.run_end) {
        if (l.run_end > l.run_begin)
          by_id[it->first].busy += std::chrono::milliseconds{l.run_end - l.run_begin};
        l.run_begin = begin;
        l.run_end = end;
      } else {
        l.run_end = std::max(l.run_end, end);
      }
    }
    std::vector<WorkerActivity> out;
    for (auto& [id, a] : by_id) {
      auto it = lives.find(id);
      if (it != lives.end() && it->second.run_end > it->second.run_begin)
        a.busy += std::chrono::milliseconds{it->second.run_end - it->second.run_begin};
      out.push_back(std::move(a));
    }
    return out;
  });
}

template <typename Db>
std::vector<FinishedSeries> SqlStore<Db>::finished_per_bucket(Time from,
                                                              std::chrono::milliseconds bucket,
                                                              int buckets) {
  if (bucket.count() <= 0)
    throw invalid_argument(where("finished_per_bucket") + "bucket must be > 0");
  if (buckets < 1 || buckets > 100'000)
    throw invalid_argument(where("finished_per_bucket") + "buckets must be in 1..100000");
  const int64_t lo = from.time_since_epoch().count();
  const int64_t hi = lo + bucket.count() * buckets;
  MutexLock lock(mu_);
  return read("finished_per_bucket", [&]() REQUIRES(mu_) {
    std::map<std::string, FinishedSeries> by_id;
    auto q = db_.query(
        "SELECT worker_id, (finished_at - ?1) / ?2, outcome, COUNT(*) FROM attempts "
        "WHERE finished_at >= ?1 AND finished_at < ?3 GROUP BY 1, 2, 3",
        lo, bucket.count(), hi);
    while (q.next()) {
      std::vector<int64_t> FinishedSeries::*series = finished_series(q.text(2));
      const int64_t i = q.i64(1);
      if (!series || i < 0 || i >= buckets) continue;
      FinishedSeries& f = by_id[q.text(0)];
      if (f.worker_id.empty()) {
        f.worker_id = q.text(0);
        f.done.assign(static_cast<size_t>(buckets), 0);
        f.failed.assign(static_cast<size_t>(buckets), 0);
        f.lost.assign(static_cast<size_t>(buckets), 0);
      }
      (f.*series)[static_cast<size_t>(i)] += q.i64(3);
    }
    std::vector<FinishedSeries> out;
    for (auto& [id, f] : by_id) out.push_back(std::move(f));
    return out;
  });
}

template <typename Db>
std::vector<DurationHistogram> SqlStore<Db>::duration_histograms(
    const std::vector<double>& bounds_seconds) {
  if (bounds_seconds.size() > 64)
    throw invalid_argument(where("duration_histograms") + "at most 64 bounds");
  std::vector<SqlValue> params;
  std::string bucket = "CASE";
  for (size_t i = 0; i < bounds_seconds.size(); ++i) {
    const double b = bounds_seconds[i];
    if (!(b > 0) || !std::isfinite(b) || (i > 0 && !(b > bounds_seconds[i - 1])))
      throw invalid_argument(where("duration_histograms") +
                             "bounds must be finite, positive and ascending");
    params.emplace_back(static_cast<int64_t>(std::llround(b * 1000)));
    bucket += " WHEN finished_at - started_at <= ?" + std::to_string(params.size()) + " THEN " +
              std::to_string(i);
  }
  bucket = params.empty() ? "0" : bucket + " ELSE " + std::to_string(params.size()) + " END";
  const std::string text =
      sql("SELECT study_id, ", bucket,
          ", COUNT(*), SUM(CAST(finished_at - started_at AS DOUBLE PRECISION)) FROM trials "
          "WHERE status IN ('completed', 'pruned', 'early_stopped', 'diverged') AND "
          "started_at IS NOT NULL AND finished_at IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2");
  MutexLock lock(mu_);
  return read("duration_histograms", [&]() REQUIRES(mu_) {
    std::vector<DurationHistogram> out;
    auto q = db_.query_with(text, params);
    while (q.next()) {
      if (out.empty() || out.back().study_id != q.i64(0)) {
        out.emplace_back();
        out.back().study_id = q.i64(0);
        out.back().counts.assign(bounds_seconds.size() + 1, 0);
      }
      DurationHistogram& h = out.back();
      const int64_t i = q.i64(1);
      if (i < 0 || i >= static_cast<int64_t>(h.counts.size())) continue;
      h.counts[static_cast<size_t>(i)] += q.i64(2);
      h.count += q.i64(2);
      h.sum_seconds += q.f64(3) / 1000;
    }
    return out;
  });
}

template <typename Db>
int64_t SqlStore<Db>::last_trial_change() {
  MutexLock lock(mu_);
  number_changes();
  return read("last_trial_change", [&]() REQUIRES(mu_) {
    auto q = db_.query("SELECT COALESCE(MAX(seq), 0) FROM trial_changes");
    q.next();
    return q.i64(0);
  });
}

template <typename Db>
std::vector<TrialRecord> SqlStore<Db>::trials_changed_since(int64_t after, int64_t limit) {
  if (limit < 1) throw invalid_argument(where("trials_changed_since") + "limit must be >= 1");
  MutexLock lock(mu_);
  number_changes();
  return read("trials_changed_since", [&]() REQUIRES(mu_) {
    std::vector<TrialRecord> out;
    // A trial changed twice appears once, with its last change number.
    auto q = db_.query(sql("SELECT ", kTrialColumns,
                           ", c.seq FROM (SELECT trial_id, MAX(seq) AS seq FROM trial_changes "
                           "WHERE seq > ?1 GROUP BY trial_id ORDER BY 2 LIMIT ?2) c "
                           "JOIN trials ON trials.id = c.trial_id ORDER BY c.seq"),
                       after, limit);
    while (q.next()) {
      out.push_back(read_trial(q));
      out.back().seq = q.i64(16);
    }
    return out;
  });
}

// ---- helpers

template <typename Db>
void SqlStore<Db>::lose_running_attempt(int64_t trial_id, int64_t now) {
  db_.exec(
      "UPDATE attempts SET outcome = 'lost', finished_at = ?2 WHERE (trial_id, attempt) IN "
      "(SELECT id, attempts FROM trials WHERE id = ?1 AND status = 'running')",
      trial_id, now);
  db_.exec("UPDATE trials SET lost = lost + 1 WHERE id = ?1 AND status = 'running'", trial_id);
}

template <typename Db>
bool SqlStore<Db>::lock_trial(int64_t trial_id) {
  return db_.query(sql("SELECT 1 FROM trials WHERE id = ?1", dialect_.lock_rows), trial_id).next();
}

template <typename Db>
void SqlStore<Db>::require_study(const char* call, int64_t id) {
  if (!db_.query("SELECT 1 FROM studies WHERE id = ?1", id).next()) throw no_study(call, id);
}

template <typename Db>
std::vector<std::optional<std::string>> SqlStore<Db>::epoch_extras(
    const char* call, const std::vector<EpochRow>& rows) const {
  std::vector<std::optional<std::string>> extras;
  extras.reserve(rows.size());
  for (const EpochRow& r : rows) {
    if (r.epoch < 0) throw invalid_argument(where(call) + "negative epoch");
    extras.push_back(r.extra.is_null() ? std::nullopt
                                       : std::optional(to_text(r.extra, call, "extra")));
  }
  return extras;
}

template <typename Db>
void SqlStore<Db>::check_param_key(const std::string& key) const {
  if (key.size() > kMaxParamKey)
    throw invalid_argument(where("list_trials") + "cannot sort by a parameter name of " +
                           std::to_string(key.size()) + " bytes (at most " +
                           std::to_string(kMaxParamKey) + ")");
  if (!is_param_key(key))
    throw invalid_argument(where("list_trials") + "cannot sort by parameter '" + key +
                           "': expected a name of letters, digits, '_' (dots for nesting)");
}

template <typename Db>
Error SqlStore<Db>::no_study(const char* call, int64_t id) const {
  return not_found(where(call) + "no study with id " + std::to_string(id));
}
template <typename Db>
Error SqlStore<Db>::study_unchanged(const char* call, int64_t id) {
  auto q = db_.query("SELECT name, status FROM studies WHERE id = ?1", id);
  if (!q.next()) return no_study(call, id);
  return failed_precondition(where(call) + "study '" + q.text(0) + "' is already " + q.text(1));
}
template <typename Db>
Error SqlStore<Db>::no_trial(const char* call, int64_t id) const {
  return not_found(where(call) + "no trial with id " + std::to_string(id));
}
template <typename Db>
Error SqlStore<Db>::no_worker(const char* call, const std::string& id) const {
  return not_found(where(call) + "no worker '" + id + "' (register it first)");
}

template <typename Db>
void SqlStore<Db>::check(const char* call, const ClaimOptions& o) const {
  if (o.lease.count() <= 0) throw invalid_argument(where(call) + "lease must be > 0");
  if (o.max_attempts < 1) throw invalid_argument(where(call) + "max_attempts must be >= 1");
  if (o.study_id < 0) throw invalid_argument(where(call) + "negative study id");
  if (o.after_study < 0) throw invalid_argument(where(call) + "negative after_study");
}

template <typename Db>
void SqlStore<Db>::check_attempt(const char* call, int attempt) const {
  if (attempt < 1) throw invalid_argument(where(call) + "attempt numbers start at 1");
}

template <typename Db>
std::string SqlStore<Db>::to_text(const nlohmann::json& j, const char* call,
                                  const char* what) const {
  try {
    return j.dump();
  } catch (const nlohmann::json::exception& e) {
    throw invalid_argument(where(call) + what + " cannot be stored as JSON: " + e.what());
  }
}

template <typename Db>
nlohmann::json SqlStore<Db>::parse(const std::string& text, const char* column) const {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw failed_precondition(db_.label() + ": " + column + " holds invalid JSON: " + e.what());
  }
}

template <typename Db>
template <typename Cursor>
StudyRecord SqlStore<Db>::read_study(const Cursor& q) const {
  return {q.i64(0), q.text(1), q.is_null(2) ? nlohmann::json() : parse(q.text(2), "studies.spec"),
          parse_study_status(q.text(3)), at(q.i64(4))};
}

template <typename Db>
template <typename Cursor>
TrialRecord SqlStore<Db>::read_trial(const Cursor& q) const {
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

template <typename Db>
template <typename Cursor>
AttemptRecord SqlStore<Db>::read_attempt(const Cursor& q) const {
  return {q.i64(0), q.i32(1), q.text(2), at(q.i64(3)), opt_at(q.opt_i64(4)), q.text(5)};
}

template <typename Db>
template <typename Cursor>
EpochRecord SqlStore<Db>::read_epoch(const Cursor& q) const {
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

template class SqlStore<sqlite::Db>;
template class SqlStore<pg::Db>;

}  // namespace layerlab::store
