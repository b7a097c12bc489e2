// Store on a PostgreSQL database. Every call is one transaction on the Store's connection,
// serialised by mu_; see store.h for the contract (the same as SqliteStore's, call for
// call) and pg_db.h for locking and the retry policy.
//
// No store-wide lock: writers run concurrently at READ COMMITTED, and every
// read-modify-write below first locks the rows it decides on (UPDATE ... RETURNING, SELECT
// ... FOR UPDATE; claims skip rows another claimer holds), so a decision never rests on a
// row that changed underneath. Deadlocks and serialization failures (40P01, 40001) are
// retried by pg_db.
//
// The change log keeps its guarantee (a follower never misses a change) without ordering
// the writers: a writer logs changes unnumbered, stamped with its transaction id;
// number_changes() numbers only the changes of transactions below the oldest running one
// (finished, so nothing can appear among them later), one numbering at a time, before a
// follower reads. A number, once visible, has every smaller number visible too.
//
// Batches are single statements over unnest()ed arrays, so a call costs a few round trips
// whatever its size.
#include "store/pg_store.h"

#include <algorithm>
#include <mutex>
#include <regex>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "common/error.h"
#include "store/pg_db.h"
#include "store/pg_migrations.h"

namespace layerlab::store {
namespace {

using pg::Db;
using pg::Param;
using pg::Result;

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

// The status a trial goes back to when its attempt ends unfinished (handed back, lease
// lost): queued, or cancelled when its study was cancelled meanwhile. FOR SHARE waits for a
// cancel_study in flight, which in turn cancels a trial requeued before it.
constexpr const char* kBackStatus =
    "CASE WHEN (SELECT status FROM studies WHERE studies.id = trials.study_id FOR SHARE) = "
    "'cancelled' THEN 'cancelled' ELSE 'queued' END";

// Logs a change of each trial id in $1 (numbered later, see number_changes).
constexpr const char* kLogChanges =
    "INSERT INTO trial_changes (trial_id) SELECT t FROM unnest($1::bigint[]) WITH ORDINALITY "
    "AS u(t, o) ORDER BY o";

// Numbering the change log (see the top of this file): one numbering at a time, under this
// advisory lock; only when something is waiting for a number.
constexpr int64_t kNumberingLock = 7809643637400461667;
constexpr auto kNumberingWait = std::chrono::milliseconds(500);
constexpr const char* kNumberChanges =
    "UPDATE trial_changes c SET seq = n.seq FROM (SELECT id, nextval('trial_change_numbers') "
    "AS seq FROM (SELECT id FROM trial_changes WHERE seq IS NULL AND "
    "xid < pg_snapshot_xmin(pg_current_snapshot()) ORDER BY xid, id) o) n WHERE c.id = n.id";

// Epoch rows from parallel arrays bound at $first.. $first+7 (see EpochBatch), those
// passing `where` (on e.trial_id, e.attempt...); an epoch written again keeps the last
// version (the arrays hold each key once).
std::string insert_epochs(int first, const std::string& where = "") {
  auto p = [&](int i, const char* type) { return "$" + std::to_string(first + i) + type; };
  return "INSERT INTO epochs (trial_id, attempt, epoch, train_loss, val_loss, val_metric, "
         "seconds, extra) SELECT e.* FROM unnest(" +
         p(0, "::bigint[], ") + p(1, "::int[], ") + p(2, "::int[], ") + p(3, "::float8[], ") +
         p(4, "::float8[], ") + p(5, "::float8[], ") + p(6, "::float8[], ") + p(7, "::text[]") +
         ") AS e(trial_id, attempt, epoch, train_loss, val_loss, val_metric, seconds, extra)" +
         (where.empty() ? "" : " WHERE " + where) +
         " ON CONFLICT (trial_id, attempt, epoch) DO UPDATE SET "
         "train_loss = excluded.train_loss, val_loss = excluded.val_loss, "
         "val_metric = excluded.val_metric, seconds = excluded.seconds, extra = excluded.extra";
}

// Epoch rows for one statement, as the parallel arrays of insert_epochs().
struct EpochBatch {
  std::vector<int64_t> trial;
  std::vector<int> attempt;
  std::vector<int> epoch;
  std::vector<double> train_loss, val_loss, val_metric, seconds;
  std::vector<std::optional<std::string>> extra;

  void add(int64_t trial_id, int attempt_no, const EpochRow& r,
           const std::optional<std::string>& extra_text) {
    trial.push_back(trial_id);
    attempt.push_back(attempt_no);
    epoch.push_back(r.epoch);
    train_loss.push_back(r.train_loss);
    val_loss.push_back(r.val_loss);
    val_metric.push_back(r.val_metric);
    seconds.push_back(r.seconds);
    extra.push_back(extra_text);
  }
  bool empty() const { return trial.empty(); }

  // One row per (trial, attempt, epoch), the last one given (as repeated INSERT OR REPLACE
  // would leave it; ON CONFLICT cannot update a row twice in one statement).
  EpochBatch deduplicated() const {
    std::set<std::tuple<int64_t, int, int>> seen;
    std::vector<size_t> keep;
    for (size_t i = trial.size(); i-- > 0;)
      if (seen.insert({trial[i], attempt[i], epoch[i]}).second) keep.push_back(i);
    std::reverse(keep.begin(), keep.end());
    if (keep.size() == trial.size()) return *this;
    EpochBatch out;
    for (size_t i : keep) {
      out.trial.push_back(trial[i]);
      out.attempt.push_back(attempt[i]);
      out.epoch.push_back(epoch[i]);
      out.train_loss.push_back(train_loss[i]);
      out.val_loss.push_back(val_loss[i]);
      out.val_metric.push_back(val_metric[i]);
      out.seconds.push_back(seconds[i]);
      out.extra.push_back(extra[i]);
    }
    return out;
  }
};

class PgStore final : public Store {
 public:
  PgStore(const StoreUrl& url, const StoreOptions& options)
      : db_(url.path, url.text, Db::Options{options.busy_timeout, options.max_retries}),
        clock_(options.clock ? options.clock : &system_clock()) {
    pg::migrate(db_, options.create_if_missing, now_ms());
  }

  // ---- studies

  int64_t create_study(const std::string& name, const nlohmann::json& spec) override {
    if (name.empty()) throw invalid_argument(where("create_study") + "the study name is empty");
    std::string spec_text = to_text(spec, "create_study", "spec");
    std::lock_guard lock(mu_);
    return db_.write("create_study", [&] {
      Result q = db_.query("SELECT id FROM studies WHERE name = $1", name);
      if (!q.empty())
        throw failed_precondition(where("create_study") + "a study named '" + name +
                                  "' already exists (id " + std::to_string(q.i64(0, 0)) +
                                  "); resume it or choose another name");
      // A creator racing this one (its row not yet committed when the check ran) wins.
      Result added = db_.query(
          "INSERT INTO studies (name, spec, status, created_at) VALUES ($1, $2, $3, $4) "
          "ON CONFLICT (name) DO NOTHING RETURNING id",
          name, spec_text, to_string(StudyStatus::kRunning), now_ms());
      if (added.empty())
        throw failed_precondition(where("create_study") + "a study named '" + name +
                                  "' already exists; resume it or choose another name");
      return added.i64(0, 0);
    });
  }

  std::optional<StudyRecord> find_study(const std::string& name) override {
    std::lock_guard lock(mu_);
    return db_.read("find_study", [&]() -> std::optional<StudyRecord> {
      Result q = db_.query(sql("SELECT ", kStudyColumns, " FROM studies WHERE name = $1"), name);
      if (q.empty()) return std::nullopt;
      return read_study(q, 0);
    });
  }

  StudyRecord get_study(int64_t id) override {
    std::lock_guard lock(mu_);
    return db_.read("get_study", [&] {
      Result q = db_.query(sql("SELECT ", kStudyColumns, " FROM studies WHERE id = $1"), id);
      if (q.empty()) throw no_study("get_study", id);
      return read_study(q, 0);
    });
  }

  std::vector<StudyRecord> list_studies() override {
    std::lock_guard lock(mu_);
    return db_.read("list_studies", [&] {
      std::vector<StudyRecord> out;
      Result q = db_.query(sql("SELECT ", kStudyColumns, " FROM studies ORDER BY id"));
      for (int i = 0; i < q.rows(); ++i) out.push_back(read_study(q, i));
      return out;
    });
  }

  void set_study_status(int64_t id, StudyStatus status) override {
    std::lock_guard lock(mu_);
    db_.write("set_study_status", [&] {
      if (db_.exec("UPDATE studies SET status = $2 WHERE id = $1", id, to_string(status)) == 0)
        throw no_study("set_study_status", id);
    });
  }

  int64_t cancel_study(int64_t id) override {
    std::lock_guard lock(mu_);
    return db_.write("cancel_study", [&] {
      if (db_.exec("UPDATE studies SET status = 'cancelled' WHERE id = $1", id) == 0)
        throw no_study("cancel_study", id);
      return log_changes(
          returned_ids(db_.query("UPDATE trials SET status = 'cancelled', finished_at = $2 "
                                 "WHERE study_id = $1 AND status = 'queued' RETURNING id",
                                 id, now_ms())));
    });
  }

  StudyCounts counts(int64_t study_id) override {
    std::lock_guard lock(mu_);
    return db_.read("counts", [&] {
      require_study("counts", study_id);
      StudyCounts c;
      Result q = db_.query(
          "SELECT status, COUNT(*) FROM trials WHERE study_id = $1 GROUP BY status", study_id);
      for (int i = 0; i < q.rows(); ++i)
        c.by_status[static_cast<size_t>(parse_trial_status(q.text(i, 0)))] = q.i64(i, 1);
      return c;
    });
  }

  // ---- trials

  std::vector<int64_t> add_trials(int64_t study_id, const std::vector<NewTrial>& trials) override {
    std::vector<int64_t> numbers;
    std::vector<std::string> datasets;
    std::vector<std::string> params;
    std::vector<double> costs;
    numbers.reserve(trials.size());
    datasets.reserve(trials.size());
    params.reserve(trials.size());
    costs.reserve(trials.size());
    for (const NewTrial& t : trials) {
      std::string what = where("add_trials") + "trial " + std::to_string(t.number) + ": ";
      if (t.number < 0) throw invalid_argument(what + "the number is negative");
      if (t.dataset.empty()) throw invalid_argument(what + "the dataset is empty");
      if (t.params.is_null()) {
        params.emplace_back("{}");
      } else {
        if (!t.params.is_object()) throw invalid_argument(what + "params must be a JSON object");
        params.push_back(to_text(t.params, "add_trials", "params"));
      }
      numbers.push_back(t.number);
      datasets.push_back(t.dataset);
      costs.push_back(t.cost);
    }
    std::lock_guard lock(mu_);
    return db_.write("add_trials", [&] {
      Result s = db_.query("SELECT status FROM studies WHERE id = $1", study_id);
      if (s.empty()) throw no_study("add_trials", study_id);
      if (s.text(0, 0) == to_string(StudyStatus::kCancelled))
        throw failed_precondition(where("add_trials") + "study " + std::to_string(study_id) +
                                  " is cancelled");
      if (trials.empty()) return std::vector<int64_t>{};
      // One statement: insert the new numbers in order (a number already stored, or given
      // twice, keeps its first row), log them, and return every number's id. The main
      // query's snapshot predates the inserts, so old and new rows come from one side each.
      Result q = db_.query(
          "WITH input AS (SELECT * FROM unnest($2::bigint[], $3::text[], $4::text[], "
          "$6::float8[]) WITH ORDINALITY AS u(number, dataset, params, cost, ord)), "
          "ins AS (INSERT INTO trials (study_id, number, dataset, params, status, created_at, "
          "cost) SELECT $1, number, dataset, params, 'queued', $5, cost FROM input ORDER BY ord "
          "ON CONFLICT (study_id, number) DO NOTHING RETURNING id, number), "
          "logged AS (INSERT INTO trial_changes (trial_id) SELECT id FROM ins ORDER BY id) "
          "SELECT number, id FROM ins UNION ALL "
          "SELECT number, id FROM trials WHERE study_id = $1 AND number = ANY($2::bigint[])",
          study_id, numbers, datasets, params, now_ms(), costs);
      std::unordered_map<int64_t, int64_t> id_of;
      for (int i = 0; i < q.rows(); ++i) id_of.emplace(q.i64(i, 0), q.i64(i, 1));
      if (id_of.size() < std::set<int64_t>(numbers.begin(), numbers.end()).size()) {
        // Another writer added some of these numbers after the statement's snapshot (its
        // insert was waited for, then skipped): a new statement sees them.
        Result late = db_.query(
            "SELECT number, id FROM trials WHERE study_id = $1 AND "
            "number = ANY($2::bigint[])",
            study_id, numbers);
        for (int i = 0; i < late.rows(); ++i) id_of.emplace(late.i64(i, 0), late.i64(i, 1));
      }
      std::vector<int64_t> ids;
      ids.reserve(trials.size());
      for (int64_t n : numbers) ids.push_back(id_of.at(n));
      return ids;
    });
  }

  TrialRecord get_trial(int64_t id) override {
    std::lock_guard lock(mu_);
    return db_.read("get_trial", [&] {
      Result q = db_.query(sql("SELECT ", kTrialColumns, " FROM trials WHERE id = $1"), id);
      if (q.empty()) throw no_trial("get_trial", id);
      return read_trial(q, 0);
    });
  }

  std::vector<TrialRecord> list_trials(int64_t study_id, const TrialFilter& filter) override {
    if (filter.limit < 0 || filter.offset < 0)
      throw invalid_argument(where("list_trials") + "limit and offset must be >= 0");
    Filter f = filter_sql(study_id, filter);
    std::string from = "trials";
    std::string order;
    const char* dir = filter.descending ? " DESC" : "";
    if (filter.sort == TrialSort::kParam) {
      // SQLite's json_extract order: missing (or JSON null) last, numbers and booleans
      // (as 1/0) by value before strings, objects and arrays by their text (bytewise).
      from +=
          " CROSS JOIN LATERAL (SELECT (j IS NULL OR json_typeof(j) = 'null') AS k_missing, "
          "CASE WHEN json_typeof(j) IN ('number', 'boolean') THEN 0 ELSE 1 END AS k_rank, "
          "CASE json_typeof(j) WHEN 'number' THEN (j #>> '{}')::numeric "
          "WHEN 'boolean' THEN CASE WHEN j::text = 'true' THEN 1 ELSE 0 END END AS k_num, "
          "CASE json_typeof(j) WHEN 'string' THEN j #>> '{}' WHEN 'object' THEN j::text "
          "WHEN 'array' THEN j::text END AS k_text "
          "FROM (SELECT params::json #> $" +
          std::to_string(f.params.size() + 1) + "::text[] AS j) p) k";
      f.params.push_back(pg::param(param_path(filter.param)));
      order = std::string("k_missing, k_rank") + dir + ", k_num" + dir + ", k_text COLLATE \"C\"" +
              dir + ", number";
    } else if (filter.sort == TrialSort::kNumber) {
      order = std::string("number") + dir;
    } else {
      std::string key = sort_key(filter.sort);
      order = key + " IS NULL, " + key + dir + ", number";
    }
    std::string text =
        sql("SELECT ", kTrialColumns, " FROM ", from, " WHERE ", f.where, " ORDER BY ", order);
    text += " LIMIT $" + std::to_string(f.params.size() + 1);
    f.params.push_back(pg::param(filter.limit > 0 ? std::optional<int64_t>(filter.limit)
                                                  : std::optional<int64_t>()));
    text += " OFFSET $" + std::to_string(f.params.size() + 1);
    f.params.push_back(pg::param(filter.offset));

    std::lock_guard lock(mu_);
    return db_.read("list_trials", [&] {
      require_study("list_trials", study_id);
      Result q = db_.query_with(text, f.params);
      std::vector<TrialRecord> out;
      for (int i = 0; i < q.rows(); ++i) out.push_back(read_trial(q, i));
      return out;
    });
  }

  int64_t count_trials(int64_t study_id, const TrialFilter& filter) override {
    Filter f = filter_sql(study_id, filter);
    std::string text = "SELECT COUNT(*) FROM trials WHERE " + f.where;
    std::lock_guard lock(mu_);
    return db_.read("count_trials", [&] {
      require_study("count_trials", study_id);
      return db_.query_with(text, f.params).i64(0, 0);
    });
  }

  std::vector<AttemptRecord> list_attempts(int64_t trial_id) override {
    std::lock_guard lock(mu_);
    return db_.read("list_attempts", [&] {
      std::vector<AttemptRecord> out;
      Result q = db_.query(
          "SELECT trial_id, attempt, worker_id, started_at, finished_at, outcome FROM attempts "
          "WHERE trial_id = $1 ORDER BY attempt",
          trial_id);
      for (int i = 0; i < q.rows(); ++i)
        out.push_back({q.i64(i, 0), q.i32(i, 1), q.text(i, 2), at(q.i64(i, 3)),
                       opt_at(q.opt_i64(i, 4)), q.text(i, 5)});
      return out;
    });
  }

  std::vector<EpochRecord> list_epochs(int64_t trial_id, int attempt, int after_epoch) override {
    std::lock_guard lock(mu_);
    return db_.read("list_epochs", [&] {
      std::vector<EpochRecord> out;
      Result q = db_.query(sql("SELECT ", kEpochColumns,
                               " FROM epochs WHERE trial_id = $1 AND ($2 = 0 OR attempt = $2) "
                               "AND epoch > $3 ORDER BY attempt, epoch"),
                           trial_id, attempt, after_epoch);
      for (int i = 0; i < q.rows(); ++i) out.push_back(read_epoch(q, i));
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
      Result q = db_.query(std::string("SELECT ") + column +
                               " FROM trials t JOIN epochs e ON e.trial_id = t.id AND "
                               "e.attempt = t.attempts AND e.epoch = $2 "
                               "WHERE t.study_id = $1 AND t.id <> $3",
                           study_id, epoch, exclude_trial);
      for (int i = 0; i < q.rows(); ++i) out.push_back(q.f64(i, 0));
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
      // Each statement also records the attempts and their change numbers (in the order
      // the claims are returned: the first, then the ones taken ahead by number).
      // Claimers skip the rows another claimer holds (SKIP LOCKED) instead of queueing behind
      // it; a row locked is re-checked, so a trial claimed meanwhile is never taken twice.
      static const std::string kClaim =
          "WITH c AS (UPDATE trials SET status = 'running', attempts = attempts + 1, "
          "worker_id = $1, lease_expires = $2, started_at = $3, finished_at = NULL "
          "WHERE id = ANY(ARRAY";
      static const std::string kRecord =
          " RETURNING id, attempts, study_id, number, dataset, params), "
          "a AS (INSERT INTO attempts (trial_id, attempt, worker_id, started_at) "
          "SELECT id, attempts, $1, $3 FROM c), "
          "l AS (INSERT INTO trial_changes (trial_id) SELECT id FROM c ORDER BY study_id, number) "
          "SELECT * FROM c ORDER BY study_id, number";
      static const std::string kAny =
          kClaim +
          "(SELECT id FROM trials WHERE status = 'queued' AND ($5 = 0 OR attempts = 0) "
          "ORDER BY study_id, cost DESC, number LIMIT $4 FOR UPDATE SKIP LOCKED))" +
          kRecord;
      static const std::string kInStudy =
          kClaim +
          "(SELECT id FROM trials WHERE status = 'queued' AND study_id = $6 AND "
          "($5 = 0 OR attempts = 0) ORDER BY cost DESC, number LIMIT $4 FOR UPDATE SKIP LOCKED))" +
          kRecord;
      const int64_t expires = now + options.lease.count();
      std::vector<Claim> claims;
      auto take = [&](int64_t limit, bool fresh_only) {
        Result q = options.study_id
                       ? db_.query(kInStudy, worker_id, expires, now, limit, fresh_only ? 1 : 0,
                                   options.study_id)
                       : db_.query(kAny, worker_id, expires, now, limit, fresh_only ? 1 : 0);
        for (int i = 0; i < q.rows(); ++i)
          claims.push_back(Claim{q.i64(i, 0), q.i32(i, 1), q.i64(i, 2), q.i64(i, 3), q.text(i, 4),
                                 parse(q.text(i, 5), "trials.params"), at(expires)});
      };
      take(1, false);
      // The first claim is the one to start with; the ones taken ahead follow by number.
      if (!claims.empty() && max > 1 && claims.front().attempt == 1) take(max - 1, true);
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
                 "UPDATE trials SET lease_expires = $4 "
                 "WHERE id = $1 AND attempts = $2 AND worker_id = $3 AND status = 'running'",
                 trial_id, attempt, worker_id, expires) == 1;
    });
  }

  bool append_epochs(int64_t trial_id, int attempt, const std::vector<EpochRow>& rows) override {
    check_attempt("append_epochs", attempt);
    const auto extras = epoch_extras("append_epochs", rows);
    EpochBatch batch;
    for (size_t i = 0; i < rows.size(); ++i) batch.add(trial_id, attempt, rows[i], extras[i]);
    batch = batch.deduplicated();
    std::lock_guard lock(mu_);
    // One statement: the check that the attempt is current (the trial's latest, and the trial
    // not finished: a lease may have run out with nobody claiming the trial yet), and the
    // rows if it is.
    static const std::string kAppend =
        "WITH ok AS (SELECT 1 FROM trials WHERE id = $9 AND attempts = $10 AND "
        "status IN ('running', 'queued')), "
        "rows AS (" +
        insert_epochs(1, "EXISTS (SELECT 1 FROM ok)") + ") SELECT EXISTS (SELECT 1 FROM ok)";
    return db_.write("append_epochs", [&] {
      return db_
          .query(kAppend, batch.trial, batch.attempt, batch.epoch, batch.train_loss, batch.val_loss,
                 batch.val_metric, batch.seconds, batch.extra, trial_id, attempt)
          .boolean(0, 0);
    });
  }

  bool finish_trial(int64_t trial_id, int attempt, TrialStatus status, const nlohmann::json& result,
                    std::optional<double> value, const std::string& error,
                    const std::vector<EpochRow>& epochs) override {
    return finish_trials({{trial_id, attempt, status, result, value, error, epochs}})[0];
  }

  std::vector<bool> finish_trials(const std::vector<TrialFinish>& finishes) override {
    std::vector<Prepared> prepared;
    std::unordered_set<int64_t> ids;
    bool distinct = true;
    for (const TrialFinish& f : finishes) {  // every check before the transaction
      if (!is_finished(f.status))
        throw invalid_argument(where("finish_trial") + "'" + to_string(f.status) +
                               "' is not a finished status");
      check_attempt("finish_trial", f.attempt);
      Prepared p;
      p.extras = epoch_extras("finish_trial", f.epochs);
      if (!f.result.is_null()) p.result = to_text(f.result, "finish_trial", "result");
      prepared.push_back(std::move(p));
      distinct = ids.insert(f.trial_id).second && distinct;
    }
    std::lock_guard lock(mu_);
    return db_.write("finish_trial", [&] {
      const int64_t now = now_ms();
      std::vector<bool> applied(finishes.size(), false);
      if (distinct) {
        std::vector<size_t> all(finishes.size());
        for (size_t i = 0; i < all.size(); ++i) all[i] = i;
        finish_batch(finishes, prepared, all, now, applied);
      } else {
        // A trial reported twice in one call: one at a time, so the second sees the first.
        for (size_t i = 0; i < finishes.size(); ++i)
          finish_batch(finishes, prepared, {i}, now, applied);
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
              " = 'cancelled' THEN $3 END WHERE id = $1 AND attempts = $2 AND status = 'running'"),
          trial_id, attempt, now);
      if (changed == 0) return false;
      log_changes({trial_id});
      db_.exec(
          "UPDATE attempts SET outcome = 'released', finished_at = $3 "
          "WHERE trial_id = $1 AND attempt = $2",
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
    const bool distinct =
        std::set<int64_t>(trial_ids.begin(), trial_ids.end()).size() == trial_ids.size();
    std::lock_guard lock(mu_);
    return db_.write("start_trial", [&] {
      const int64_t now = now_ms();
      const int64_t expires = now + lease.count();
      std::vector<Start> out(trial_ids.size());
      if (distinct) {
        start_batch(trial_ids, worker_id, now, expires, max_attempts, out, 0);
      } else {
        // A trial delivered twice in one call: one at a time, so the second sees the first.
        for (size_t i = 0; i < trial_ids.size(); ++i)
          start_batch({trial_ids[i]}, worker_id, now, expires, max_attempts, out, i);
      }
      return out;
    });
  }

  bool fail_trial(int64_t trial_id, const std::string& error) override {
    std::lock_guard lock(mu_);
    return db_.write("fail_trial", [&] {
      const int64_t now = now_ms();
      if (!lock_trial(trial_id)) throw no_trial("fail_trial", trial_id);
      lose_running_attempt(trial_id, now);
      if (db_.exec("UPDATE trials SET status = 'failed', error = $2, finished_at = $3, "
                   "lease_expires = NULL WHERE id = $1 AND status IN ('queued', 'running')",
                   trial_id, error, now) == 0)
        return false;
      log_changes({trial_id});
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
          "status, pack, memory_bytes) VALUES ($1, $2, $3, $4, $5, $5, NULL, 'idle', $6, 0) "
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
      if (db_.exec("UPDATE workers SET heartbeat_at = $2, current_trial = $3, status = $4, "
                   "memory_bytes = $5 WHERE id = $1",
                   id, now_ms(), current_trial, to_string(status), memory_bytes) == 0)
        throw no_worker("heartbeat_worker", id);
    });
  }

  void stop_worker(const std::string& id) override {
    std::lock_guard lock(mu_);
    db_.write("stop_worker", [&] {
      if (db_.exec("UPDATE workers SET heartbeat_at = $2, current_trial = NULL, "
                   "status = 'stopped' WHERE id = $1",
                   id, now_ms()) == 0)
        throw no_worker("stop_worker", id);
    });
  }

  std::vector<WorkerRecord> list_workers() override {
    std::lock_guard lock(mu_);
    return db_.read("list_workers", [&] {
      std::vector<WorkerRecord> out;
      // Bytewise, as SQLite orders text.
      Result q =
          db_.query(sql("SELECT ", kWorkerColumns, " FROM workers ORDER BY id COLLATE \"C\""));
      for (int i = 0; i < q.rows(); ++i) {
        WorkerRecord w;
        w.info = {q.text(i, 0), q.text(i, 1), q.i64(i, 2), q.text(i, 3),
                  static_cast<int>(q.i64(i, 8))};
        w.memory_bytes = q.i64(i, 9);
        w.started_at = at(q.i64(i, 4));
        w.heartbeat_at = at(q.i64(i, 5));
        w.current_trial = q.opt_i64(i, 6);
        w.status = parse_worker_status(q.text(i, 7));
        out.push_back(std::move(w));
      }
      return out;
    });
  }

  int64_t last_trial_change() override {
    std::lock_guard lock(mu_);
    number_changes();
    return db_.read("last_trial_change", [&] {
      return db_.query("SELECT COALESCE(MAX(seq), 0) FROM trial_changes").i64(0, 0);
    });
  }

  std::vector<TrialRecord> trials_changed_since(int64_t after, int64_t limit) override {
    if (limit < 1) throw invalid_argument(where("trials_changed_since") + "limit must be >= 1");
    std::lock_guard lock(mu_);
    number_changes();
    return db_.read("trials_changed_since", [&] {
      std::vector<TrialRecord> out;
      // A trial changed twice appears once, with its last change number.
      Result q = db_.query(sql("SELECT ", kTrialColumns,
                               ", c.seq FROM (SELECT trial_id, MAX(seq) AS seq FROM trial_changes "
                               "WHERE seq > $1 GROUP BY trial_id ORDER BY 2 LIMIT $2) c "
                               "JOIN trials ON trials.id = c.trial_id ORDER BY c.seq"),
                           after, limit);
      for (int i = 0; i < q.rows(); ++i) {
        out.push_back(read_trial(q, i));
        out.back().seq = q.i64(i, 16);
      }
      return out;
    });
  }

  Stats stats() const override { return {db_.transactions(), db_.busy_waits(), db_.retries()}; }

 private:
  // A finish checked and converted before the transaction.
  struct Prepared {
    std::optional<std::string> result;
    std::vector<std::optional<std::string>> extras;
  };

  // Inside the finish_trials transaction: applies the finishes at `which` (distinct trials)
  // in two statements whatever their number, and sets applied[i] for those that count.
  void finish_batch(const std::vector<TrialFinish>& finishes, const std::vector<Prepared>& prepared,
                    const std::vector<size_t>& which, int64_t now, std::vector<bool>& applied) {
    std::vector<int64_t> ids;
    std::vector<int> attempts;
    std::vector<std::string> statuses;
    std::vector<std::optional<std::string>> results;
    std::vector<std::optional<double>> values;
    std::vector<std::string> errors;
    for (size_t i : which) {
      const TrialFinish& f = finishes[i];
      ids.push_back(f.trial_id);
      attempts.push_back(f.attempt);
      statuses.emplace_back(to_string(f.status));
      results.push_back(prepared[i].result);
      values.push_back(f.value);
      errors.push_back(f.error);
    }
    EpochBatch epochs;
    for (size_t i : which)
      for (size_t e = 0; e < finishes[i].epochs.size(); ++e)
        epochs.add(finishes[i].trial_id, finishes[i].attempt, finishes[i].epochs[e],
                   prepared[i].extras[e]);
    epochs = epochs.deduplicated();
    // One statement: the trials that take their result, their attempts' outcomes, their
    // epochs and their change numbers (in the order given).
    static const std::string kFinish =
        "WITH u AS (SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::text[], "
        "$5::float8[], $6::text[]) WITH ORDINALITY AS u(id, attempt, status, result, value, "
        "error, ord)), "
        "done AS (UPDATE trials SET status = u.status, result = u.result, value = u.value, "
        "error = u.error, finished_at = $7, lease_expires = NULL FROM u "
        "WHERE trials.id = u.id AND trials.attempts = u.attempt AND "
        "trials.status IN ('running', 'queued') RETURNING trials.id, u.attempt, u.status, u.ord), "
        "outcome AS (UPDATE attempts SET outcome = done.status, finished_at = $7 FROM done "
        "WHERE attempts.trial_id = done.id AND attempts.attempt = done.attempt), "
        "epoch_rows AS (" +
        insert_epochs(8, "e.trial_id IN (SELECT id FROM done)") +
        "), "
        "logged AS (INSERT INTO trial_changes (trial_id) SELECT id FROM done ORDER BY ord) "
        "SELECT id FROM done";
    Result done = db_.query(kFinish, ids, attempts, statuses, results, values, errors, now,
                            epochs.trial, epochs.attempt, epochs.epoch, epochs.train_loss,
                            epochs.val_loss, epochs.val_metric, epochs.seconds, epochs.extra);
    std::unordered_set<int64_t> finished;
    for (int r = 0; r < done.rows(); ++r) finished.insert(done.i64(r, 0));
    if (finished.size() < which.size()) {
      // Late duplicates return false; an unknown trial is an error (the transaction rolls
      // back: nothing is written).
      std::unordered_set<int64_t> known;
      Result k = db_.query("SELECT id FROM trials WHERE id = ANY($1::bigint[])", ids);
      for (int r = 0; r < k.rows(); ++r) known.insert(k.i64(r, 0));
      for (int64_t id : ids)
        if (!known.count(id)) throw no_trial("finish_trial", id);
    }
    for (size_t i : which) applied[i] = finished.count(finishes[i].trial_id) > 0;
  }

  // Inside a write transaction: starts the distinct trials `ids` (see Store::start_trials)
  // into out[first..] in one statement: their rows are locked, a running attempt is lost,
  // the next one starts, and the attempts and changes are logged.
  void start_batch(const std::vector<int64_t>& ids, const std::string& worker_id, int64_t now,
                   int64_t expires, int max_attempts, std::vector<Start>& out, size_t first) {
    // t: the rows, locked; x: redelivered ones out of attempts ($5 > 0), failed; s: the rest,
    // started.
    static const std::string kStart =
        "WITH t AS (SELECT id, status, attempts, lost + CASE WHEN status = 'running' THEN 1 "
        "ELSE 0 END AS lost FROM trials WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE), "
        "lost AS (UPDATE attempts SET outcome = 'lost', finished_at = $4 FROM t "
        "WHERE attempts.trial_id = t.id AND attempts.attempt = t.attempts AND "
        "t.status = 'running'), "
        "x AS (UPDATE trials SET status = 'failed', lost = t.lost, finished_at = $4, "
        "lease_expires = NULL, error = 'delivered ' || t.lost || "
        "' times without a result (its workers died)' FROM t WHERE trials.id = t.id AND "
        "t.status = 'running' AND $5 > 0 AND t.lost >= $5 RETURNING trials.id), "
        "s AS (UPDATE trials SET status = 'running', attempts = t.attempts + 1, lost = t.lost, "
        "worker_id = $2, lease_expires = $3, started_at = $4, finished_at = NULL FROM t "
        "WHERE trials.id = t.id AND t.status IN ('queued', 'running') AND "
        "NOT (t.status = 'running' AND $5 > 0 AND t.lost >= $5) "
        "RETURNING trials.id, trials.attempts, trials.study_id, trials.number, trials.dataset, "
        "trials.params), "
        "a AS (INSERT INTO attempts (trial_id, attempt, worker_id, started_at) "
        "SELECT id, attempts, $2, $4 FROM s), "
        "l AS (INSERT INTO trial_changes (trial_id) SELECT id FROM (SELECT id FROM s UNION ALL "
        "SELECT id FROM x) c ORDER BY id) "
        "SELECT t.id, s.id IS NOT NULL, s.attempts, s.study_id, s.number, s.dataset, s.params, "
        "x.id IS NOT NULL FROM t LEFT JOIN s ON s.id = t.id LEFT JOIN x ON x.id = t.id";
    Result q = db_.query(kStart, ids, worker_id, expires, now, max_attempts);
    std::unordered_map<int64_t, int> row_of;
    for (int r = 0; r < q.rows(); ++r) row_of.emplace(q.i64(r, 0), r);
    for (size_t i = 0; i < ids.size(); ++i) {
      Start& s = out[first + i];
      auto it = row_of.find(ids[i]);
      s.known = it != row_of.end();
      if (!s.known) continue;
      s.exhausted = q.boolean(it->second, 7);
      if (!q.boolean(it->second, 1)) continue;
      const int r = it->second;
      s.claim = Claim{ids[i],      q.i32(r, 2),  q.i64(r, 3),
                      q.i64(r, 4), q.text(r, 5), parse(q.text(r, 6), "trials.params"),
                      at(expires)};
    }
  }

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

  // Numbers the logged changes of finished transactions (see the top of this file); its own
  // transaction, before a follower reads.
  // A change committed while an older transaction still runs waits for it: briefly, so a
  // follower sees what was committed before it asked (store transactions take
  // milliseconds); past kNumberingWait the rest waits for the next call.
  void number_changes() {
    const auto give_up = std::chrono::steady_clock::now() + kNumberingWait;
    std::optional<int64_t> upto;  // the newest change committed when this call began
    while (true) {
      const bool waiting = db_.write("number_changes", [&] {
        Result pending = db_.query(
            "SELECT MAX(id) FROM trial_changes WHERE seq IS NULL AND id <= COALESCE($1, id)", upto);
        if (pending.is_null(0, 0)) return false;
        if (!upto) upto = pending.i64(0, 0);
        db_.lock_exclusive(kNumberingLock);
        db_.exec(kNumberChanges);
        return !db_.query("SELECT 1 FROM trial_changes WHERE seq IS NULL AND id <= $1 LIMIT 1",
                          *upto)
                    .empty();
      });
      if (!waiting || std::chrono::steady_clock::now() >= give_up) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  // Inside a write transaction: the trials' statuses changed (for trials_changed_since);
  // logged in this order. Returns how many.
  int64_t log_changes(const std::vector<int64_t>& ids) {
    if (!ids.empty()) db_.exec(kLogChanges, ids);
    return static_cast<int64_t>(ids.size());
  }
  // The ids an UPDATE ... RETURNING id changed, ascending (RETURNING has no order).
  static std::vector<int64_t> returned_ids(const Result& returning) {
    std::vector<int64_t> ids;
    for (int i = 0; i < returning.rows(); ++i) ids.push_back(returning.i64(i, 0));
    std::sort(ids.begin(), ids.end());
    return ids;
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
    if (db_.query("SELECT 1 FROM studies WHERE id = $1", id).empty()) throw no_study(call, id);
  }

  // Inside a write transaction: locks the trial's row until the end of the transaction
  // (what follows decides on its current state). false for an unknown trial.
  bool lock_trial(int64_t trial_id) {
    return !db_.query("SELECT 1 FROM trials WHERE id = $1 FOR UPDATE", trial_id).empty();
  }

  // Inside a write transaction: the current attempt of a running trial is lost (its holder
  // is gone); the trial stays running, for the caller to restart or fail.
  void lose_running_attempt(int64_t trial_id, int64_t now) {
    db_.exec(
        "UPDATE attempts SET outcome = 'lost', finished_at = $2 WHERE (trial_id, attempt) IN "
        "(SELECT id, attempts FROM trials WHERE id = $1 AND status = 'running')",
        trial_id, now);
    db_.exec("UPDATE trials SET lost = lost + 1 WHERE id = $1 AND status = 'running'", trial_id);
  }

  // Inside a write transaction; see Store::expire_leases.
  int64_t expire(const ClaimOptions& o, int64_t now) {
    constexpr const char* kExpired =
        "status = 'running' AND lease_expires < $1 AND ($2 = 0 OR study_id = $2)";
    // The common case: one indexed probe. (ORDER BY keeps it on the lease index: with
    // LIMIT alone a generic plan expects a match early in a sequential scan, and scans
    // the whole table when, as usual, nothing has expired.)
    if (db_.query(sql("SELECT 1 FROM trials WHERE ", kExpired, " ORDER BY lease_expires LIMIT 1"),
                  now, o.study_id)
            .empty())
      return 0;
    // Lock the expired rows first; one another transaction holds (being finished, renewed or
    // expired right now) is left to it, and a row renewed meanwhile fails the re-check.
    std::vector<int64_t> ids = returned_ids(db_.query(
        sql("SELECT id FROM trials WHERE ", kExpired, " ORDER BY id FOR UPDATE SKIP LOCKED"), now,
        o.study_id));
    if (ids.empty()) return 0;
    db_.exec(
        "UPDATE attempts SET outcome = 'lost', finished_at = $1 WHERE (trial_id, attempt) IN "
        "(SELECT id, attempts FROM trials WHERE id = ANY($2::bigint[]))",
        now, ids);
    std::vector<int64_t> changed = returned_ids(db_.query(
        "UPDATE trials SET status = 'failed', lost = lost + 1, lease_expires = NULL, "
        "finished_at = $1, error = 'worker lost ' || (lost + 1) || ' times (lease expired; "
        "last worker ' || COALESCE(worker_id, '?') || ')' WHERE id = ANY($2::bigint[]) AND "
        "lost + 1 >= $3 RETURNING id",
        now, ids, o.max_attempts));
    std::vector<int64_t> requeued = returned_ids(db_.query(
        sql("UPDATE trials SET status = ", kBackStatus,
            ", lost = lost + 1, lease_expires = NULL, finished_at = CASE WHEN ", kBackStatus,
            " = 'cancelled' THEN $1 END WHERE id = ANY($2::bigint[]) AND "
            "status = 'running' RETURNING id"),
        now, ids));
    changed.insert(changed.end(), requeued.begin(), requeued.end());
    return log_changes(changed);
  }

  // The WHERE clause of a trial filter and its parameters: study $1, then the statuses and
  // the dataset.
  struct Filter {
    std::string where;
    std::vector<Param> params;
  };

  static Filter filter_sql(int64_t study_id, const TrialFilter& filter) {
    Filter f;
    f.where = "study_id = $1";
    f.params.push_back(pg::param(study_id));
    std::vector<std::string> statuses;  // distinct, in a fixed order
    for (TrialStatus s : kAllTrialStatuses)
      if (std::find(filter.statuses.begin(), filter.statuses.end(), s) != filter.statuses.end())
        statuses.emplace_back(to_string(s));
    if (!statuses.empty()) {
      f.where += " AND status = ANY($" + std::to_string(f.params.size() + 1) + "::text[])";
      f.params.push_back(pg::param(statuses));
    }
    if (!filter.dataset.empty()) {
      f.where += " AND dataset = $" + std::to_string(f.params.size() + 1);
      f.params.push_back(pg::param(filter.dataset));
    }
    return f;
  }

  static std::string sort_key(TrialSort sort) {
    switch (sort) {
      case TrialSort::kValue:
        return "value";
      case TrialSort::kStarted:
        return "started_at";
      case TrialSort::kFinished:
        return "finished_at";
      case TrialSort::kDuration:
        return "(finished_at - started_at)";
      case TrialSort::kNumber:
      case TrialSort::kParam:
        break;
    }
    return "number";
  }

  // A params key (a.b.c) as a json path array literal ({a,b,c}); only letters, digits, '_'
  // and dots, as for SQLite.
  std::string param_path(const std::string& key) const {
    static const std::regex kKey("[A-Za-z0-9_]+(\\.[A-Za-z0-9_]+)*");
    if (!std::regex_match(key, kKey))
      throw invalid_argument(where("list_trials") + "cannot sort by parameter '" + key +
                             "': expected a name of letters, digits, '_' (dots for nesting)");
    std::string path = "{" + key + "}";
    std::replace(path.begin(), path.end(), '.', ',');
    return path;
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

  StudyRecord read_study(const Result& q, int row) const {
    return {q.i64(row, 0), q.text(row, 1), parse(q.text(row, 2), "studies.spec"),
            parse_study_status(q.text(row, 3)), at(q.i64(row, 4))};
  }

  TrialRecord read_trial(const Result& q, int row) const {
    TrialRecord t;
    t.id = q.i64(row, 0);
    t.study_id = q.i64(row, 1);
    t.number = q.i64(row, 2);
    t.dataset = q.text(row, 3);
    t.params = parse(q.text(row, 4), "trials.params");
    t.status = parse_trial_status(q.text(row, 5));
    t.attempts = q.i32(row, 6);
    t.lost = q.i32(row, 7);
    if (!q.is_null(row, 8)) t.result = parse(q.text(row, 8), "trials.result");
    t.value = q.opt_f64(row, 9);
    t.error = q.text(row, 10);
    t.worker_id = q.text(row, 11);
    t.created_at = at(q.i64(row, 12));
    t.started_at = opt_at(q.opt_i64(row, 13));
    t.finished_at = opt_at(q.opt_i64(row, 14));
    t.lease_expires = opt_at(q.opt_i64(row, 15));
    return t;
  }

  EpochRecord read_epoch(const Result& q, int row) const {
    EpochRecord r;
    r.trial_id = q.i64(row, 0);
    r.attempt = q.i32(row, 1);
    r.row.epoch = q.i32(row, 2);
    r.row.train_loss = q.f64(row, 3);
    r.row.val_loss = q.f64(row, 4);
    r.row.val_metric = q.f64(row, 5);
    r.row.seconds = q.f64(row, 6);
    if (!q.is_null(row, 7)) r.row.extra = parse(q.text(row, 7), "epochs.extra");
    return r;
  }

  mutable std::mutex mu_;  // serialises calls on db_
  Db db_;                  // GUARDED_BY(mu_) (its counters are atomics)
  Clock* clock_;
};

}  // namespace

std::unique_ptr<Store> open_postgres_store(const StoreUrl& url, const StoreOptions& options) {
  return std::make_unique<PgStore>(url, options);
}

}  // namespace layerlab::store
