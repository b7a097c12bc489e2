// Store on a PostgreSQL database: the shared SQL store (sql_store.h) with PostgreSQL's
// ways; see store.h for the contract and pg_db.h for locking and the retry policy.
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
#include <limits>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "common/error.h"
#include "store/pg_db.h"
#include "store/schema.h"
#include "store/sql_store.h"

namespace layerlab::store {

extern template class SqlStore<pg::Db>;

namespace {

using pg::Db;
using pg::Result;

// FOR SHARE in back_status waits for a cancel_study in flight, which in turn cancels a
// trial requeued before it.
constexpr SqlDialect kPostgres{
    "CASE WHEN (SELECT status FROM studies WHERE studies.id = trials.study_id FOR SHARE) = "
    "'cancelled' THEN 'cancelled' ELSE 'queued' END",
    " FOR UPDATE", " COLLATE \"C\"", true};

// Logs a change of each trial id in $1 (numbered later, see number_changes).
constexpr const char* kLogChanges =
    "INSERT INTO trial_changes (trial_id) SELECT t FROM unnest($1::bigint[]) WITH ORDINALITY "
    "AS u(t, o) ORDER BY o";

// Claims delete their rows from queued_trials, and a B-tree keeps the entries of deleted
// rows until a VACUUM removes them: every claim walks the dead head of the queue first, so
// claims grow dearer with every trial claimed since the last VACUUM (autovacuum looks once
// a minute, and acts only past 20% of the table dead). A claim that logs the change whose
// id (cluster-wide, one per trial claimed or finished) is a multiple of
// kVacuumEveryChanges vacuums the table before this store's next claim: claims log about
// half the changes, so that is about one VACUUM per kVacuumEveryChanges trials claimed,
// however many workers claim them. SKIP_LOCKED: a VACUUM already running (another
// worker's, or autovacuum) is enough. INDEX_CLEANUP ON: a dead head that is a small part of
// a long queue is too small for VACUUM to clean the indexes unasked.
constexpr int64_t kVacuumEveryChanges = 4096;
constexpr const char* kVacuumQueue = "VACUUM (SKIP_LOCKED, INDEX_CLEANUP ON) queued_trials";

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
  auto p = [&](int i, const char* type) {
    std::string s = "$";
    s.append(std::to_string(first + i)).append(type);
    return s;
  };
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

class PgStore final : public SqlStore<Db> {
 public:
  PgStore(const StoreUrl& url, const StoreOptions& options)
      : SqlStore(options, kPostgres, url.path, url.text,
                 Db::Options{options.busy_timeout, options.max_retries, options.stop,
                             options.outage, url.transaction_pooling, options.wait_when_away}) {
    migrate(db_, pg::schema(), options.create_if_missing, now_ms());
  }

 private:
  std::vector<int64_t> insert_trials(int64_t study_id, const std::vector<NewTrial>& trials,
                                     const std::vector<std::string>& params, int64_t now) override
      REQUIRES(mu_) {
    std::vector<int64_t> numbers;
    std::vector<std::string> datasets;
    std::vector<double> costs;
    for (const NewTrial& t : trials) {
      numbers.push_back(t.number);
      datasets.push_back(t.dataset);
      costs.push_back(t.cost);
    }
    Result q = db_.query(
        "WITH input AS (SELECT * FROM unnest($2::bigint[], $3::text[], $4::text[], "
        "$6::float8[]) WITH ORDINALITY AS u(number, dataset, params, cost, ord)), "
        "ins AS (INSERT INTO trials (study_id, number, dataset, params, status, created_at, "
        "cost) SELECT $1, number, dataset, params, 'queued', $5, cost FROM input ORDER BY ord "
        "ON CONFLICT (study_id, number) DO NOTHING RETURNING id, number), "
        "logged AS (INSERT INTO trial_changes (trial_id) SELECT id FROM ins ORDER BY id) "
        "SELECT number, id FROM ins UNION ALL "
        "SELECT number, id FROM trials WHERE study_id = $1 AND number = ANY($2::bigint[])",
        study_id, numbers, datasets, params, now, costs);
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
  }

  std::vector<Claim> claim_trials(const std::string& worker_id, const ClaimOptions& options,
                                  int max, int64_t now) override REQUIRES(mu_) {
    // One statement: the queued trial first in (study, highest cost, number); then, only if
    // that one is fresh, the fresh ones among the next max - 1. A retried trial comes alone,
    // so a trial that kills its worker cannot make trials claimed with it lose attempts again
    // and again. The statement also records the attempts and their change numbers, in the order
    // the claims are returned: the first, then the ones taken ahead by number.
    // Claims delete their rows from queued_trials (schema version 7), skipping the rows
    // another claimer holds (SKIP LOCKED) instead of queueing behind it. A row another
    // claimer has already deleted is skipped without a lock, so a claim locks only the
    // trials it takes, and never the one another worker is finishing. The update re-checks
    // that the trial is still queued (a trial cancelled meanwhile is left, its row dropped).
    // The index is walked from its head once per claim (it was twice: the first trial, then
    // the ones ahead): the entries of the rows earlier claims deleted stay there until a
    // VACUUM, several hundred per claim, more with more claimers. The candidates not taken
    // (those behind a retried first; the retried ones behind a fresh first) stay queued,
    // locked until this claim commits.
    // Without a study, the queue's order starts after options.after_study ($5) and wraps
    // around: two walks of the index, the second only if the first finds too few (a LIMIT
    // over UNION ALL stops pulling, and so locking, once it has enough).
    // The COMMIT goes in the statement's round trip (claim_batch).
    auto walk = [](const std::string& turn, const std::string& where) {
      return "SELECT * FROM (SELECT " + turn +
             " AS turn, trial_id, attempts, study_id, cost, number FROM queued_trials WHERE " +
             where + " ORDER BY study_id, cost DESC, number LIMIT $4 FOR UPDATE SKIP LOCKED) w";
    };
    auto statement = [](const std::string& candidates, const std::string& order) {
      return "WITH cand AS (" + candidates +
             "), "
             "head AS (SELECT trial_id, attempts FROM cand ORDER BY " +
             order +
             " LIMIT 1), "
             "taken AS (DELETE FROM queued_trials WHERE trial_id IN (SELECT trial_id FROM cand "
             "WHERE trial_id = (SELECT trial_id FROM head) OR "
             "(attempts = 0 AND (SELECT attempts FROM head) = 0)) RETURNING trial_id AS id), "
             "c AS (UPDATE trials SET status = 'running', attempts = attempts + 1, "
             "worker_id = $1, lease_expires = $2, started_at = $3, finished_at = NULL "
             "WHERE id IN (SELECT id FROM taken) AND status = 'queued' "
             "RETURNING id, attempts, study_id, number, dataset, params, "
             "id = (SELECT trial_id FROM head) AS first), "
             "a AS (INSERT INTO attempts (trial_id, attempt, worker_id, started_at) "
             "SELECT id, attempts, $1, $3 FROM c), "
             "l AS (INSERT INTO trial_changes (trial_id) SELECT id FROM c "
             "ORDER BY first DESC, study_id, number RETURNING id) "
             "SELECT id, attempts, study_id, number, dataset, params, "
             "(SELECT bool_or(id % " +
             std::to_string(kVacuumEveryChanges) +
             " = 0) FROM l) FROM c "
             "ORDER BY first DESC, study_id, number";
    };
    static const std::string kAny = statement(
        walk("0", "study_id > $5") + " UNION ALL " + walk("1", "study_id <= $5") + " LIMIT $4",
        "turn, study_id, cost DESC, number");
    static const std::string kStudy = statement(walk("0", "study_id = $5"), "cost DESC, number");
    const int64_t expires = now + options.lease.count();
    Result q = options.study_id
                   ? db_.query(kStudy, worker_id, expires, now, int64_t{max}, options.study_id)
                   : db_.query(kAny, worker_id, expires, now, int64_t{max}, options.after_study);
    std::vector<Claim> claims;
    for (int i = 0; i < q.rows(); ++i)
      claims.push_back(Claim{q.i64(i, 0), q.i32(i, 1), q.i64(i, 2), q.i64(i, 3), q.text(i, 4),
                             parse(q.text(i, 5), "trials.params"), at(expires)});
    vacuum_due_ = !q.empty() && q.boolean(0, 6);
    return claims;
  }

  void before_claims() override REQUIRES(mu_) {
    if (!vacuum_due_) return;
    vacuum_due_ = false;  // one try: a vacuum that keeps failing must not stop the claims
    db_.maintain("vacuum queued_trials", kVacuumQueue);
  }

  Stats stats() const override NO_THREAD_SAFETY_ANALYSIS {
    Stats s = SqlStore::stats();
    s.queue_vacuums = db_.maintenance();
    s.generic_plan_transactions = db_.generic_plans();
    return s;
  }

  // One statement for all of a worker's leases (a GPU pack holds hundreds): one round trip,
  // not one each. The rows are locked in id order, as the other writers lock them.
  std::vector<bool> extend_leases(const std::vector<AttemptRef>& attempts,
                                  const std::string& worker_id, int64_t expires) override
      REQUIRES(mu_) {
    std::vector<int64_t> ids;
    std::vector<int> numbers;
    for (const AttemptRef& a : attempts) {
      ids.push_back(a.trial_id);
      numbers.push_back(a.attempt);
    }
    static const std::string kRenew =
        "WITH mine AS (SELECT t.id FROM trials t JOIN unnest($1::bigint[], $2::int[]) AS "
        "u(id, attempt) ON t.id = u.id AND t.attempts = u.attempt WHERE t.worker_id = $3 AND "
        "t.status = 'running' ORDER BY t.id FOR UPDATE OF t) "
        "UPDATE trials SET lease_expires = $4 FROM mine WHERE trials.id = mine.id "
        "RETURNING trials.id, trials.attempts";
    auto q = db_.query(kRenew, ids, numbers, worker_id, expires);
    std::set<std::pair<int64_t, int>> renewed;
    while (q.next()) renewed.insert({q.i64(0), q.i32(1)});
    std::vector<bool> out;
    for (const AttemptRef& a : attempts) out.push_back(renewed.count({a.trial_id, a.attempt}));
    return out;
  }

  std::vector<bool> write_epochs(
      const std::vector<EpochAppend>& appends,
      const std::vector<std::vector<std::optional<std::string>>>& extras) override REQUIRES(mu_) {
    EpochBatch batch;
    std::vector<int64_t> ids;
    for (size_t a = 0; a < appends.size(); ++a) {
      ids.push_back(appends[a].trial_id);
      for (size_t i = 0; i < appends[a].rows.size(); ++i)
        batch.add(appends[a].trial_id, appends[a].attempt, appends[a].rows[i], extras[a][i]);
    }
    batch = batch.deduplicated();
    // One statement for every attempt: which are current (the trial's latest, and the trial
    // not finished: a lease may have run out with nobody claiming the trial yet), and the
    // rows of those.
    static const std::string kAppend =
        "WITH ok AS (SELECT id, attempts FROM trials WHERE id = ANY($9::bigint[]) AND "
        "status IN ('running', 'queued')), "
        "rows AS (" +
        insert_epochs(1, "(e.trial_id, e.attempt) IN (SELECT id, attempts FROM ok)") +
        ") SELECT id, attempts FROM ok";
    auto q = db_.query(kAppend, batch.trial, batch.attempt, batch.epoch, batch.train_loss,
                       batch.val_loss, batch.val_metric, batch.seconds, batch.extra, ids);
    std::set<std::pair<int64_t, int>> current;
    while (q.next()) current.insert({q.i64(0), q.i32(1)});
    std::vector<bool> applied;
    for (const EpochAppend& a : appends) applied.push_back(current.count({a.trial_id, a.attempt}));
    return applied;
  }

  // Inside the finish_trials transaction: applies the finishes at `which` (distinct trials)
  // in two statements whatever their number, and sets applied[i] for those that count.
  void finish_batch(const std::vector<TrialFinish>& finishes, const std::vector<Prepared>& prepared,
                    const std::vector<size_t>& which, int64_t now,
                    std::vector<bool>& applied) override REQUIRES(mu_) {
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
                   int64_t expires, int max_attempts, std::vector<Start>& out,
                   size_t first) override REQUIRES(mu_) {
    // t: the rows, locked; x: redelivered ones out of attempts ($5 > 0), failed; s: the rest,
    // started; q: the queued ones' rows in queued_trials, deleted (schema version 8), but not
    // one a store-queue claimer holds (it re-checks the trial's status and drops it).
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
        "q AS (DELETE FROM queued_trials WHERE trial_id IN (SELECT trial_id FROM queued_trials "
        "WHERE trial_id IN (SELECT id FROM t WHERE status = 'queued') FOR UPDATE SKIP LOCKED)), "
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

  // Inside a write transaction; see Store::expire_leases.
  int64_t expire(const ClaimOptions& o, int64_t now) override REQUIRES(mu_) {
    constexpr const char* kExpired =
        "status = 'running' AND lease_expires < $1 AND ($2 = 0 OR study_id = $2)";
    // The common case: one indexed probe. (ORDER BY keeps it on the lease index: with
    // LIMIT alone a generic plan expects a match early in a sequential scan, and scans
    // the whole table when, as usual, nothing has expired.)
    if (db_.query(std::string("SELECT 1 FROM trials WHERE ") + kExpired +
                      " ORDER BY lease_expires LIMIT 1",
                  now, o.study_id)
            .empty())
      return 0;
    // Lock the expired rows first; one another transaction holds (being finished, renewed or
    // expired right now) is left to it, and a row renewed meanwhile fails the re-check.
    std::vector<int64_t> ids =
        returned_ids(db_.query(std::string("SELECT id FROM trials WHERE ") + kExpired +
                                   " ORDER BY id FOR UPDATE SKIP LOCKED",
                               now, o.study_id));
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
    std::vector<int64_t> requeued = returned_ids(
        db_.query(std::string("UPDATE trials SET status = ") + dialect_.back_status +
                      ", lost = lost + 1, lease_expires = NULL, finished_at = CASE WHEN " +
                      dialect_.back_status +
                      " = 'cancelled' THEN $1 END WHERE id = ANY($2::bigint[]) AND "
                      "status = 'running' RETURNING id",
                  now, ids));
    changed.insert(changed.end(), requeued.begin(), requeued.end());
    log_changes(changed);
    return static_cast<int64_t>(changed.size());
  }

  // Numbers the logged changes of finished transactions (see the top of this file); its own
  // transaction, before a follower reads.
  // A change committed while an older transaction still runs waits for it: briefly, so a
  // follower sees what was committed before it asked (store transactions take
  // milliseconds); past kNumberingWait the rest waits for the next call.
  void number_changes() override REQUIRES(mu_) {
    const auto give_up = std::chrono::steady_clock::now() + kNumberingWait;
    std::optional<int64_t> upto;  // the newest change committed when this call began
    while (true) {
      const bool waiting = write("number_changes", [&]() REQUIRES(mu_) {
        Result pending =
            db_.query("SELECT MAX(id) FROM trial_changes WHERE seq IS NULL AND id <= $1",
                      upto.value_or(std::numeric_limits<int64_t>::max()));
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

  void log_changes(const std::vector<int64_t>& ids) override REQUIRES(mu_) {
    if (!ids.empty()) db_.exec(kLogChanges, ids);
  }

  // SQLite's json_extract order: missing (or JSON null) last, numbers and booleans (as 1/0)
  // by value before strings, objects and arrays by their text (bytewise). path is the key
  // as a JSON path array ({a,b,c}).
  ParamOrder param_order(const std::string& key, int path_at, const char* dir) const override {
    ParamOrder p;
    p.from =
        " CROSS JOIN LATERAL (SELECT (j IS NULL OR json_typeof(j) = 'null') AS k_missing, "
        "CASE WHEN json_typeof(j) IN ('number', 'boolean') THEN 0 ELSE 1 END AS k_rank, "
        "CASE json_typeof(j) WHEN 'number' THEN (j #>> '{}')::numeric "
        "WHEN 'boolean' THEN CASE WHEN j::text = 'true' THEN 1 ELSE 0 END END AS k_num, "
        "CASE json_typeof(j) WHEN 'string' THEN j #>> '{}' WHEN 'object' THEN j::text "
        "WHEN 'array' THEN j::text END AS k_text "
        "FROM (SELECT params::json #> ?";
    p.from.append(std::to_string(path_at)).append("::text[] AS j) p) k");
    p.order.append("k_missing, k_rank").append(dir).append(", k_num").append(dir);
    p.order.append(", k_text COLLATE \"C\"").append(dir).append(", number");
    p.path.append("{").append(key).append("}");
    std::replace(p.path.begin(), p.path.end(), '.', ',');
    return p;
  }

  bool vacuum_due_ GUARDED_BY(mu_) = false;  // a claim passed a vacuum boundary
};

}  // namespace

std::unique_ptr<Store> open_postgres_store(const StoreUrl& url, const StoreOptions& options) {
  return std::make_unique<PgStore>(url, options);
}

}  // namespace layerlab::store
