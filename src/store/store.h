// The store: where studies, trials, attempts, epoch records and workers live. One
// interface, one SQL implementation (src/store/sql_store.h) on SQLite (sqlite_store.cc) and
// PostgreSQL (pg_store.cc).
//
// Contract shared by every implementation:
//  - Each call is one short transaction: it happens entirely or not at all. Reads (find_*,
//    get_*, list_*, counts) see one consistent snapshot and never wait for writers (WAL).
//    Every other call is a write. SQLite: it takes the file's write lock up front (BEGIN
//    IMMEDIATE), so concurrent writers queue instead of deadlocking on a lock upgrade.
//    PostgreSQL: writers run concurrently and lock only the rows they decide on (claims
//    skip rows another claimer holds); a deadlock or serialization failure is retried.
//  - A transaction that cannot get the database (locked by others past the busy timeout,
//    after the bounded, jittered retries) throws Error kUnavailable: retry after a backoff.
//    PostgreSQL: one that kept losing races to other writers (serialization failures,
//    deadlocks) throws kAborted, which means the same.
//    Bad input throws kInvalidArgument, a missing id kNotFound; nothing is written then.
//  - Thread-safety: a Store is safe to share between threads; calls are serialised on its
//    single connection. For parallel writers open one Store per process (or thread) on the
//    same URL.
//  - Results are keyed by (trial, attempt): a worker's writes count only while its attempt
//    is the trial's current one, so a duplicate or late report never changes a result.
//
// Errors name the store (URL with the password hidden), the call and the database message,
// e.g. "sqlite:/x/layerlab.db: claim_next: database is locked (gave up after 7 tries over
// 35012 ms)", "sqlite:notes.txt: open: file is not a database (is this a layerlab store?)".
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/clock.h"
#include "store/outage.h"
#include "store/records.h"

namespace layerlab::store {

inline constexpr const char* kDefaultStoreUrl = "sqlite:layerlab.db";

struct StoreOptions {
  Clock* clock = nullptr;                        // nullptr: system_clock(); must outlive the Store
  bool create_if_missing = true;                 // false: a missing database is kNotFound
  std::chrono::milliseconds busy_timeout{5000};  // wait for the lock, per try
  int max_retries = 6;  // further tries of a whole transaction after busy_timeout ran out
  // The process's stop flag (SIGTERM): once set, a PostgreSQL server that is away is not
  // waited for: the call fails kUnavailable at once ("... (not retried: stopping)") instead
  // of after the retries, so a process told to stop does. nullptr: never. Must outlive the
  // Store.
  const std::atomic<bool>* stop = nullptr;
  // Shared by the connections of a server (see outage.h); nullptr: each call waits for a
  // database that is away, up to the retries above.
  std::shared_ptr<Outage> outage;
  // false: a call that cannot reach a PostgreSQL server does not wait for it: it connects
  // again once, at once (the server may be back since the old connection died), then fails
  // kUnavailable. For a server's request connections, so that a request that happens to be
  // the first to find the database away does not hold its connection and network thread
  // for the retries above while other requests queue behind them; its change feed waits.
  // Opening the store still waits as above.
  bool wait_when_away = true;
  // How the store names itself at the head of its messages; "": its URL, password masked
  // (StoreUrl::text). A server whose errors anyone may read names it without its location.
  std::string label;
};

// Retry policy for claiming.
struct ClaimOptions {
  int64_t study_id = 0;                     // 0: any running study
  std::chrono::milliseconds lease{30'000};  // renew before it runs out
  int max_attempts = 3;                     // lost attempts before a trial is failed
  // With study_id 0: the studies after this one first, then from the lowest. A worker passes
  // the study it claimed from last, so that its claims take turns among the studies with
  // queued trials (a small study is not left waiting behind a large one's every trial).
  int64_t after_study = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  // ---- studies
  // Creates a running study. A name already in the store is kFailedPrecondition (resume
  // with find_study instead); an empty name is kInvalidArgument.
  virtual int64_t create_study(const std::string& name, const nlohmann::json& spec) = 0;
  virtual std::optional<StudyRecord> find_study(const std::string& name) = 0;
  virtual StudyRecord get_study(int64_t id) = 0;                                 // kNotFound
  virtual std::vector<StudyRecord> list_studies(const StudyListing& which) = 0;  // by id
  std::vector<StudyRecord> list_studies() { return list_studies(StudyListing{}); }
  // kNotFound for an unknown study; kFailedPrecondition, changing nothing, for a cancelled
  // one: a cancelled study stays cancelled (a `run` whose last trials end after the cancel
  // does not turn it finished). Marking it finished also drops the change log's superseded
  // rows of its trials (see trials_changed_since: nothing a follower sees moves).
  virtual void set_study_status(int64_t id, StudyStatus status) = 0;
  // Marks the study finished (set_study_status); false, changing nothing, when it was
  // cancelled meanwhile.
  bool finish_study(int64_t id);
  // Marks a running study cancelled and its queued trials cancelled, in one transaction;
  // running trials finish normally (a lease that expires then cancels instead of
  // requeueing). Returns the number of trials cancelled. kNotFound for an unknown study;
  // kFailedPrecondition "study 'NAME' is already finished" (or cancelled), changing nothing,
  // for one that is not running: the status is checked by the update itself, so a study
  // that finishes meanwhile is never turned cancelled.
  virtual int64_t cancel_study(int64_t id) = 0;
  // Cancels the study's queued trials, leaving the study's status as it is (a study whose
  // time budget ran out: its running trials finish, nothing more starts). Returns how many.
  virtual int64_t cancel_queued_trials(int64_t study_id) = 0;
  virtual StudyCounts counts(int64_t study_id) = 0;

  // ---- trials
  // Adds queued trials in one transaction and returns their ids in order. Idempotent on
  // (study, number): a number already stored keeps its row and its id is returned, so a
  // resumed coordinator cannot duplicate work. kNotFound for an unknown study,
  // kFailedPrecondition for a cancelled one, kInvalidArgument for a negative number, an
  // empty dataset or params that are not a JSON object (null is taken as {}).
  virtual std::vector<int64_t> add_trials(int64_t study_id,
                                          const std::vector<NewTrial>& trials) = 0;
  virtual TrialRecord get_trial(int64_t id) = 0;  // kNotFound
  virtual std::vector<TrialRecord> list_trials(int64_t study_id, const TrialFilter& filter) = 0;
  // How many trials list_trials would return without limit and offset.
  virtual int64_t count_trials(int64_t study_id, const TrialFilter& filter) = 0;
  virtual std::vector<AttemptRecord> list_attempts(int64_t trial_id) = 0;  // by attempt
  // Epoch records of one trial, by (attempt, epoch); attempt 0 means every attempt. Only
  // epochs numbered above `after_epoch` (a follower of a running trial asks for the new ones).
  virtual std::vector<EpochRecord> list_epochs(int64_t trial_id, int attempt = 0,
                                               int after_epoch = -1) = 0;
  // A page of trials' attempts and curves in one query each instead of two per trial
  // (export): the attempts of the study's trials numbered from `first` to `last`, by
  // (number, attempt), and the epochs of each one's latest attempt (TrialRecord::attempts),
  // by (number, epoch). kNotFound for an unknown study.
  virtual std::vector<AttemptRecord> list_attempts_of(int64_t study_id, int64_t first,
                                                      int64_t last) = 0;
  virtual std::vector<EpochRecord> list_latest_epochs_of(int64_t study_id, int64_t first,
                                                         int64_t last) = 0;

  // `field` after `epoch` epochs for every trial of the study, from each trial's latest
  // attempt (what a pruner compares a trial against), in no particular order. NaN for a
  // missing measurement; trials without that epoch are left out. Reads every trial of the
  // study: a worker reads it now and then and keeps the values (worker/pruning.h).
  virtual std::vector<TrialValue> epoch_values(int64_t study_id, int epoch, EpochField field) = 0;

  // ---- claiming and reporting (the store-backed queue and the workers)
  // One write transaction: first expires leases (see expire_leases), then takes the queued
  // trial with the lowest (study id, number) (among the studies after options.after_study
  // if any has one; the highest cost first within a study), marks it running for worker_id with
  // attempt = attempts + 1 and a lease of options.lease, and records the attempt. nullopt when
  // nothing is queued.
  virtual std::optional<Claim> claim_next(const std::string& worker_id,
                                          const ClaimOptions& options) = 0;
  // As claim_next, for up to `max` trials in one transaction, so a worker on short trials
  // pays one transaction for several claims: the trial claim_next would take first, then,
  // only if it is fresh (never started), the fresh ones among the next max - 1 in queue
  // order, returned by number. A retried trial comes alone. Empty when none.
  virtual std::vector<Claim> claim_batch(const std::string& worker_id, const ClaimOptions& options,
                                         int max) = 0;
  // finish_trials(finishes), then claim_batch(worker_id, options, max), in one transaction:
  // a worker on short trials commits its results and claims its next trials with one
  // commit instead of two. Both apply or neither (an error rolls back both).
  struct FinishedAndClaimed {
    std::vector<bool> applied;  // as finish_trials returns
    std::vector<Claim> claims;  // as claim_batch returns
  };
  virtual FinishedAndClaimed finish_and_claim_trials(const std::vector<TrialFinish>& finishes,
                                                     const std::string& worker_id,
                                                     const ClaimOptions& options, int max) = 0;
  // Running trials whose lease ran out (their worker died or hung) lose their attempt
  // (outcome "lost"); a trial with options.max_attempts lost attempts becomes failed with
  // the reason ("worker lost 3 times"), the others go back to queued (cancelled if their
  // study was cancelled). options.study_id limits the sweep. Returns the trials changed.
  virtual int64_t expire_leases(const ClaimOptions& options) = 0;
  // Extends the lease of a running attempt to now + lease. false when the attempt is no
  // longer the trial's current running one (expired and taken over, finished, released).
  bool renew_lease(int64_t trial_id, int attempt, const std::string& worker_id,
                   std::chrono::milliseconds lease) {
    return renew_leases({{trial_id, attempt}}, worker_id, lease)[0];
  }
  // renew_lease for every attempt a worker holds, in one transaction (a pack of 512 renews
  // once, not 512 times); element i says whether attempts[i]'s lease was extended.
  virtual std::vector<bool> renew_leases(const std::vector<AttemptRef>& attempts,
                                         const std::string& worker_id,
                                         std::chrono::milliseconds lease) = 0;
  // Stores epoch records of an attempt in one transaction (an epoch written twice keeps
  // the last). Writes nothing and returns false when the attempt is no longer current.
  bool append_epochs(int64_t trial_id, int attempt, const std::vector<EpochRow>& rows) {
    return append_epochs_batch({{trial_id, attempt, rows}})[0];
  }
  // append_epochs for several attempts (a pack's members) in one transaction; element i
  // says whether appends[i] was current (its rows written). An attempt that is not current
  // writes nothing and keeps none of the others from being written.
  virtual std::vector<bool> append_epochs_batch(const std::vector<EpochAppend>& appends) = 0;
  // Commits the result of (trial, attempt) with a finished status. Applies only while that
  // attempt is the trial's latest one and the trial is not finished (running, or queued
  // again after a lease expiry that nobody has claimed yet); otherwise changes nothing and
  // returns false (a late duplicate). kInvalidArgument for queued/running as the status,
  // kNotFound for an unknown trial.
  // `epochs` (the attempt's epoch records not yet appended) are written in the same
  // transaction, so a result and its curve commit together; so are kept weights (see
  // TrialFinish::keep): when the finish applies, its status ranks (completed,
  // early_stopped), its value is a number and it is among the keep.top best of its study's
  // dataset, the weights are stored and those of the trial that fell out of that top are
  // deleted, in the same transaction (a crash keeps both or neither). kInvalidArgument,
  // before anything is written, for weights over kMaxWeightBytes or a top outside
  // 1..kMaxKeptPerDataset.
  virtual bool finish_trial(int64_t trial_id, int attempt, TrialStatus status,
                            const nlohmann::json& result, std::optional<double> value,
                            const std::string& error, const std::vector<EpochRow>& epochs = {}) = 0;
  // finish_trial for several attempts in one transaction (a worker on short trials);
  // element i says whether finishes[i] applied.
  virtual std::vector<bool> finish_trials(const std::vector<TrialFinish>& finishes) = 0;
  // Hands a running attempt back (SIGTERM): the trial is queued again (cancelled if its
  // study was cancelled) without counting against the retry limit; outcome "released".
  // false when the attempt is no longer current.
  virtual bool release_trial(int64_t trial_id, int attempt) = 0;
  // Hands back attempts a queue started ahead of its worker and the worker never took (a
  // broker's deliveries, claims in hand): in one transaction, each is undone as if it had
  // never started, so its trial is queued again (cancelled if its study was) with its attempt
  // count and last worker as before, and the next start is the same attempt number (a
  // fault-free study still runs every trial as attempt 1). An attempt that stored epoch
  // records is released instead (release_trial), so nothing stored is lost. Element i is
  // false when attempts[i] is no longer its trial's current running attempt.
  virtual std::vector<bool> give_back_trials(const std::vector<AttemptRef>& attempts) = 0;

  // ---- kept weights
  // The weights kept for a trial (with their bytes when with_bytes), or nullopt when none
  // are (never kept, fell out of the top, or no such trial).
  virtual std::optional<KeptWeights> find_weights(int64_t trial_id, bool with_bytes = true) = 0;
  // Every trial of the study with kept weights, without their bytes, by dataset then trial id.
  virtual std::vector<KeptWeights> list_weights(int64_t study_id) = 0;

  // ---- broker deliveries (the AMQP queue: the broker, not a lease, decides who runs what)
  // Starts an attempt of a trial the broker handed to worker_id. A queued trial becomes
  // running with attempt = attempts + 1 and a lease of `lease` (renewed with renew_lease, so
  // a takeover is noticed). A running trial was redelivered because its holder's connection
  // died: its current attempt is lost first (outcome "lost", lost + 1), then the next one
  // starts. nullopt, writing nothing, when the trial is finished or cancelled (a redelivery
  // of a committed result: acknowledge it without running). kNotFound for an unknown trial.
  virtual std::optional<Claim> start_trial(int64_t trial_id, const std::string& worker_id,
                                           std::chrono::milliseconds lease) = 0;
  // start_trial for several deliveries in one transaction (a worker on short trials takes
  // what the broker has sent ahead). Element i is for trial_ids[i]: its claim, nothing
  // (finished or cancelled), or unknown (no such trial: a message of another store).
  // max_attempts > 0: a redelivered trial whose lost attempts reach it is failed instead
  // with "delivered N times without a result (its workers died)" and not started
  // (exhausted), so the limit holds across copies of its message (a hand-back publishes a
  // copy, which the broker counts from zero).
  struct Start {
    std::optional<Claim> claim;
    bool known = true;
    bool exhausted = false;
  };
  virtual std::vector<Start> start_trials(const std::vector<int64_t>& trial_ids,
                                          const std::string& worker_id,
                                          std::chrono::milliseconds lease,
                                          int max_attempts = 0) = 0;
  // finish_trials(finishes), then start_trials(start_ids, ...), in one transaction: a worker
  // on short trials commits its results and starts what the broker sent ahead with one
  // commit instead of two. Both apply or neither (an error rolls back both). The finishes
  // come first: a trial in both is finished, then found finished (no claim).
  struct FinishedAndStarted {
    std::vector<bool> applied;  // as finish_trials returns
    std::vector<Start> starts;  // as start_trials returns
  };
  virtual FinishedAndStarted finish_and_start_trials(const std::vector<TrialFinish>& finishes,
                                                     const std::vector<int64_t>& start_ids,
                                                     const std::string& worker_id,
                                                     std::chrono::milliseconds lease,
                                                     int max_attempts) = 0;
  // Fails a trial whose deliveries ran out (the broker dead-lettered it after its delivery
  // limit): a running attempt is lost (outcome "lost", lost + 1), the trial becomes failed
  // with `error`. false, writing nothing, when it was already finished. kNotFound.
  virtual bool fail_trial(int64_t trial_id, const std::string& error) = 0;

  // ---- workers
  // Registers (or re-registers) a worker as idle, started and heartbeating now.
  virtual void register_worker(const WorkerInfo& info) = 0;
  // Records a heartbeat: busy on current_trial, or idle. kNotFound if never registered.
  // memory_bytes: the worker's backend memory in use.
  virtual void heartbeat_worker(const std::string& id, std::optional<int64_t> current_trial,
                                int64_t memory_bytes) = 0;
  virtual void stop_worker(const std::string& id) = 0;   // status stopped; kNotFound
  virtual std::vector<WorkerRecord> list_workers() = 0;  // by id
  // What each worker did, from the attempts table (nothing more is recorded for it): every
  // worker that registered or ran an attempt, by id. Counts cover all of history; alive
  // and busy cover [from, to) clipped to the worker's life (registered at started_at,
  // last seen at heartbeat_at), and an attempt still running counts as running until
  // then, so busy <= alive. A worker id that ran attempts but never registered has
  // alive = busy = 0. Reads every attempt once (the counts) and the window's attempts
  // (busy). kInvalidArgument when to < from.
  virtual std::vector<WorkerActivity> worker_activity(Time from, Time to) = 0;
  // Attempts that ended in [from, from + buckets * bucket) per worker and bucket, by worker
  // id; workers without any are left out. kInvalidArgument for bucket <= 0 or buckets
  // outside 1..100,000.
  virtual std::vector<FinishedSeries> finished_per_bucket(Time from,
                                                          std::chrono::milliseconds bucket,
                                                          int buckets) = 0;

  // ---- studies' training times
  // Trials that ended with a result (completed, pruned, early_stopped, diverged), per
  // study that has any, by study id, counted by their last attempt's training time
  // against ascending `bounds_seconds` (at most 64, each > 0; kInvalidArgument otherwise).
  virtual std::vector<DurationHistogram> duration_histograms(
      const std::vector<double>& bounds_seconds) = 0;

  // ---- following changes (the server's event stream and caches)
  // Every trial added, and every change of a trial's status, takes a change number; a
  // number, once a follower has seen it, never has a smaller one appear after it, so a
  // follower that reads from its last number misses no change. last_trial_change() is the
  // latest (where a follower starts); trials_changed_since gives the trials changed after
  // `after`, each once in its current state with TrialRecord::seq its last change, by that
  // number, at most `limit`. Both see every change committed before the call (PostgreSQL
  // numbers changes as followers read, see pg_store.cc; one committed while an older write
  // still runs may wait for that write, up to half a second, then for the next call).
  // (Epoch records of running trials are followed with list_epochs' after_epoch.)
  virtual int64_t last_trial_change() = 0;
  virtual std::vector<TrialRecord> trials_changed_since(int64_t after, int64_t limit) = 0;

  // ---- observability
  struct Stats {
    uint64_t transactions = 0;  // committed
    // Times the connection waited for another's lock: SQLite's write lock; on PostgreSQL
    // only the store-wide steps (migrating, numbering changes), not row locks.
    uint64_t busy_waits = 0;
    uint64_t retries = 0;        // whole transactions retried after the busy timeout
    uint64_t queue_vacuums = 0;  // PostgreSQL: VACUUMs of the claim queue (pg_store.cc)
    // PostgreSQL: claim transactions run on generic plans (pg::Db::plan_generically); 0
    // behind a transaction pooler, where statements go unnamed.
    uint64_t generic_plan_transactions = 0;
    // SQLite: virtual-machine steps of the statements run, a count of the work done that does
    // not depend on the machine's speed (tests check how a statement's work grows). 0 on
    // PostgreSQL.
    uint64_t vm_steps = 0;
  };
  virtual Stats stats() const = 0;
};

// A parsed store URL. sqlite:PATH (also sqlite:///PATH as SQLAlchemy/Optuna write it:
// sqlite:///rel.db, sqlite:////abs.db); postgresql://user:pass@host:port/db (or postgres://).
struct StoreUrl {
  enum class Kind { kSqlite, kPostgres } kind = Kind::kSqlite;
  // sqlite: the file (":memory:" for a private in-memory database); postgresql: the URL for
  // libpq, layerlab's own parameters (pool_mode) taken out
  std::string path;
  std::string text;  // the URL with any password replaced by ***, for messages
  // postgresql only, `?pool_mode=transaction`: the URL names a pooler (PgBouncer and the
  // like) that hands each transaction to any of its server connections, so nothing may
  // outlive a transaction on a connection (no named prepared statements, no session
  // settings). `session` (the default) is a direct connection or a session pooler.
  bool transaction_pooling = false;
};
// kInvalidArgument naming the URL (password hidden) when it is neither, or when a
// postgresql URL's pool_mode is given twice or is not session or transaction.
StoreUrl parse_store_url(std::string_view url);

// Opens (creating and migrating if needed) the store at url. A file or database that is
// not a layerlab store, or one written by a newer layerlab, is an error naming it; a
// PostgreSQL server that cannot be reached is kUnavailable, a database that does not
// exist kNotFound (it is never created: that is the administrator's choice).
std::unique_ptr<Store> open_store(std::string_view url = kDefaultStoreUrl,
                                  const StoreOptions& options = {});

}  // namespace layerlab::store
