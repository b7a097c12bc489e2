// The Store on a SQL database, written once for SQLite (sqlite_store.cc) and PostgreSQL
// (pg_store.cc). Every call is one transaction on the Store's connection, serialised by
// mu_; see store.h for the contract and sqlite_db.h / pg_db.h for locking and retries.
//
// Statements use SQLite's numbered placeholders (?1, ?2, ...; pg::Db translates them) and
// SQL both databases run (UPDATE ... RETURNING, INSERT ... ON CONFLICT). What truly
// differs is either a SqlDialect string or one of the protected hooks below: how a batch
// is written (SQLite: a statement per row, in process; PostgreSQL: one statement over
// arrays, since a round trip costs more than the work), how rows are locked, how claims
// and the change log behave under concurrent writers, how a params key is ordered.
//
// Db is sqlite::Db or pg::Db: query(sql, args...) returns a cursor (next(), then i64(col),
// text(col)...), exec() the number of rows changed, query_with() takes SqlValues, and
// write()/read() run a retried transaction. Private to src/store/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/mutex.h"
#include "store/store.h"

namespace layerlab::store {

// The pieces of the shared statements that differ between the databases.
struct SqlDialect {
  // The status a trial goes back to when its attempt ends unfinished (handed back, lease
  // lost): queued, or cancelled when its study was cancelled meanwhile.
  const char* back_status;
  // Appended to a SELECT whose rows the transaction then decides on (" FOR UPDATE", or ""
  // where the write transaction already holds the whole database).
  const char* lock_rows;
  // Appended to a text key of ORDER BY for bytewise order, as SQLite orders text.
  const char* bytewise;
  // LIMIT NULL is "no limit" (PostgreSQL); otherwise LIMIT -1 is (SQLite).
  bool null_limit;
};

template <typename Db>
class SqlStore : public Store {
 public:
  // ---- studies
  int64_t create_study(const std::string& name, const nlohmann::json& spec) override;
  std::optional<StudyRecord> find_study(const std::string& name) override;
  StudyRecord get_study(int64_t id) override;
  using Store::list_studies;
  std::vector<StudyRecord> list_studies(const StudyListing& which) override;
  void set_study_status(int64_t id, StudyStatus status) override;
  int64_t cancel_study(int64_t id) override;
  int64_t cancel_queued_trials(int64_t study_id) override;
  StudyCounts counts(int64_t study_id) override;

  // ---- trials
  std::vector<int64_t> add_trials(int64_t study_id, const std::vector<NewTrial>& trials) override;
  TrialRecord get_trial(int64_t id) override;
  std::vector<TrialRecord> list_trials(int64_t study_id, const TrialFilter& filter) override;
  int64_t count_trials(int64_t study_id, const TrialFilter& filter) override;
  std::vector<AttemptRecord> list_attempts(int64_t trial_id) override;
  std::vector<EpochRecord> list_epochs(int64_t trial_id, int attempt, int after_epoch) override;
  std::vector<AttemptRecord> list_attempts_of(int64_t study_id, int64_t first,
                                              int64_t last) override;
  std::vector<EpochRecord> list_latest_epochs_of(int64_t study_id, int64_t first,
                                                 int64_t last) override;
  std::vector<TrialValue> epoch_values(int64_t study_id, int epoch, EpochField field) override;

  // ---- claiming and reporting
  std::optional<Claim> claim_next(const std::string& worker_id,
                                  const ClaimOptions& options) override;
  std::vector<Claim> claim_batch(const std::string& worker_id, const ClaimOptions& options,
                                 int max) override;
  FinishedAndClaimed finish_and_claim_trials(const std::vector<TrialFinish>& finishes,
                                             const std::string& worker_id,
                                             const ClaimOptions& options, int max) override;
  int64_t expire_leases(const ClaimOptions& options) override;
  std::vector<bool> renew_leases(const std::vector<AttemptRef>& attempts,
                                 const std::string& worker_id,
                                 std::chrono::milliseconds lease) override;
  std::vector<bool> append_epochs_batch(const std::vector<EpochAppend>& appends) override;
  bool finish_trial(int64_t trial_id, int attempt, TrialStatus status, const nlohmann::json& result,
                    std::optional<double> value, const std::string& error,
                    const std::vector<EpochRow>& epochs) override;
  std::vector<bool> finish_trials(const std::vector<TrialFinish>& finishes) override;
  bool release_trial(int64_t trial_id, int attempt) override;
  std::vector<bool> give_back_trials(const std::vector<AttemptRef>& attempts) override;
  std::optional<KeptWeights> find_weights(int64_t trial_id, bool with_bytes) override;
  std::vector<KeptWeights> list_weights(int64_t study_id) override;

  // ---- broker deliveries
  std::optional<Claim> start_trial(int64_t trial_id, const std::string& worker_id,
                                   std::chrono::milliseconds lease) override;
  std::vector<Start> start_trials(const std::vector<int64_t>& trial_ids,
                                  const std::string& worker_id, std::chrono::milliseconds lease,
                                  int max_attempts) override;
  FinishedAndStarted finish_and_start_trials(const std::vector<TrialFinish>& finishes,
                                             const std::vector<int64_t>& start_ids,
                                             const std::string& worker_id,
                                             std::chrono::milliseconds lease,
                                             int max_attempts) override;
  bool fail_trial(int64_t trial_id, const std::string& error) override;

  // ---- workers and followers
  void register_worker(const WorkerInfo& info) override;
  void heartbeat_worker(const std::string& id, std::optional<int64_t> current_trial,
                        int64_t memory_bytes) override;
  void stop_worker(const std::string& id) override;
  std::vector<WorkerRecord> list_workers() override;
  std::vector<WorkerActivity> worker_activity(Time from, Time to) override;
  std::vector<FinishedSeries> finished_per_bucket(Time from, std::chrono::milliseconds bucket,
                                                  int buckets) override;
  std::vector<DurationHistogram> duration_histograms(
      const std::vector<double>& bounds_seconds) override;
  int64_t last_trial_change() override;
  std::vector<TrialRecord> trials_changed_since(int64_t after, int64_t limit) override;

  // The Db's counters are atomics: read without the lock.
  Stats stats() const override NO_THREAD_SAFETY_ANALYSIS {
    return {db_.transactions(), db_.busy_waits(), db_.retries()};
  }

 protected:
  // db_args construct the Db. The derived constructor brings the schema up to date.
  template <typename... A>
  SqlStore(const StoreOptions& options, const SqlDialect& dialect, A&&... db_args)
      : db_(std::forward<A>(db_args)...),
        label_(db_.label()),
        dialect_(dialect),
        clock_(options.clock ? options.clock : &system_clock()) {}

  // A finish checked and converted to text before the transaction.
  struct Prepared {
    std::optional<std::string> result;
    std::vector<std::optional<std::string>> extras;  // per epoch row
  };
  // How list_trials orders by a params key: joined to `from` (may be empty), ORDER BY
  // `order` (ending with the tie-break on number), with the key's `path` bound at ?path_at.
  struct ParamOrder {
    std::string from;
    std::string order;
    std::string path;
  };

  // ---- each database's own way; called under mu_ inside a write transaction, unless said.
  // Inserts the trials whose number is new (after the study was checked), logs them, and
  // returns every trial's id, in order.
  virtual std::vector<int64_t> insert_trials(int64_t study_id, const std::vector<NewTrial>& trials,
                                             const std::vector<std::string>& params, int64_t now)
      REQUIRES(mu_) = 0;
  // Claims up to max queued trials (see Store::claim_batch) after leases were expired. The
  // transaction's end: its first statement carries the COMMIT (Db::commit_with_next), so on
  // PostgreSQL it is one statement.
  virtual std::vector<Claim> claim_trials(const std::string& worker_id, const ClaimOptions& options,
                                          int max, int64_t now) REQUIRES(mu_) = 0;
  // Sets lease_expires of each attempt still running for worker_id; element i says whether
  // attempts[i]'s was (see Store::renew_leases).
  virtual std::vector<bool> extend_leases(const std::vector<AttemptRef>& attempts,
                                          const std::string& worker_id, int64_t expires)
      REQUIRES(mu_) = 0;
  // Writes the rows of each attempt that is current (see Store::append_epochs_batch);
  // extras[i] are appends[i]'s rows' extra columns as text.
  virtual std::vector<bool> write_epochs(
      const std::vector<EpochAppend>& appends,
      const std::vector<std::vector<std::optional<std::string>>>& extras) REQUIRES(mu_) = 0;
  // Applies finishes[i] for i in `which` (distinct trials) and sets applied[i].
  virtual void finish_batch(const std::vector<TrialFinish>& finishes,
                            const std::vector<Prepared>& prepared, const std::vector<size_t>& which,
                            int64_t now, std::vector<bool>& applied) REQUIRES(mu_) = 0;
  // Starts the distinct trials `ids` into out[first..] (see Store::start_trials).
  virtual void start_batch(const std::vector<int64_t>& ids, const std::string& worker_id,
                           int64_t now, int64_t expires, int max_attempts, std::vector<Start>& out,
                           size_t first) REQUIRES(mu_) = 0;
  // See Store::expire_leases.
  virtual int64_t expire(const ClaimOptions& options, int64_t now) REQUIRES(mu_) = 0;
  // The trials' statuses changed (for trials_changed_since); logged in this order.
  virtual void log_changes(const std::vector<int64_t>& ids) REQUIRES(mu_) = 0;
  // Not in a transaction: see ParamOrder. key is checked (param_key).
  virtual ParamOrder param_order(const std::string& key, int path_at, const char* dir) const = 0;
  // Under mu_, before a follower reads the change log (its own transactions).
  virtual void number_changes() REQUIRES(mu_) {}
  // Under mu_, before a transaction that claims trials (outside it): housekeeping for the
  // claims; its errors are the call's, before anything of the call is written.
  virtual void before_claims() REQUIRES(mu_) {}

  // ---- for the hooks
  // Inside a write transaction: the current attempt of a running trial is lost (its holder
  // is gone); the trial stays running, for the caller to restart or fail.
  void lose_running_attempt(int64_t trial_id, int64_t now) REQUIRES(mu_);

  // The ids an UPDATE ... RETURNING id changed, ascending; the statement is finished.
  template <typename Cursor>
  static std::vector<int64_t> returned_ids(Cursor&& returning) {
    std::vector<int64_t> ids;
    while (returning.next()) ids.push_back(returning.i64(0));
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  int64_t now_ms() const { return clock_->now().time_since_epoch().count(); }
  static Time at(int64_t ms) { return Time{std::chrono::milliseconds{ms}}; }

  // "URL: call: ", the start of every message.
  std::string where(const char* call) const { return label_ + ": " + call + ": "; }
  Error no_trial(const char* call, int64_t id) const;
  nlohmann::json parse(const std::string& text, const char* column) const;
  // A params key (a.b.c) as the caller gave it, checked: letters, digits, '_' and dots.
  void check_param_key(const std::string& key) const;

  // Db::write and Db::read run f in a transaction, retrying it; called with mu_ held. The
  // analysis cannot see through Db's templates, so f says REQUIRES(mu_) itself and the call
  // inside Db is left unchecked.
  template <typename F>
  auto write(const char* what, F&& f) REQUIRES(mu_) {
    return db_.write(what, [&]() NO_THREAD_SAFETY_ANALYSIS { return f(); });
  }
  template <typename F>
  auto read(const char* what, F&& f) REQUIRES(mu_) {
    return db_.read(what, [&]() NO_THREAD_SAFETY_ANALYSIS { return f(); });
  }

  mutable Mutex mu_;  // serialises calls on db_
  Db db_ GUARDED_BY(mu_);
  const std::string label_;  // db_.label(), for messages made without the lock
  const SqlDialect dialect_;

 private:
  Clock* clock_;
  struct Filter;
  Filter filter_sql(int64_t study_id, const TrialFilter& filter) const;
  std::vector<std::optional<std::string>> epoch_extras(const char* call,
                                                       const std::vector<EpochRow>& rows) const;
  std::string to_text(const nlohmann::json& j, const char* call, const char* what) const;
  Error no_study(const char* call, int64_t id) const;
  // After an update of the study's status that changed no row: no_study, or kFailedPrecondition
  // "study 'NAME' is already finished" (inside the same transaction).
  Error study_unchanged(const char* call, int64_t id) REQUIRES(mu_);
  Error no_worker(const char* call, const std::string& id) const;
  void check(const char* call, const ClaimOptions& o) const;
  void check_attempt(const char* call, int attempt) const;
  void require_study(const char* call, int64_t id) REQUIRES(mu_);  // inside a transaction
  int64_t cancel_queued(int64_t study_id) REQUIRES(mu_);           // inside a write
  void check_keep(const TrialFinish& f) const;
  // finish_trials' checks and conversions, before the transaction.
  std::vector<Prepared> prepare_finishes(const std::vector<TrialFinish>& finishes) const;
  void check_start(const std::string& worker_id, std::chrono::milliseconds lease,
                   int max_attempts) const;
  // Inside a write transaction: the finishes (prepared), then the starts.
  std::vector<bool> apply_finishes(const std::vector<TrialFinish>& finishes,
                                   const std::vector<Prepared>& prepared, int64_t now)
      REQUIRES(mu_);
  std::vector<Start> apply_starts(const std::vector<int64_t>& ids, const std::string& worker_id,
                                  std::chrono::milliseconds lease, int max_attempts, int64_t now)
      REQUIRES(mu_);
  void keep_weights(const TrialFinish& f, int64_t now) REQUIRES(mu_);  // inside a write
  // Inside a write transaction: see Store::release_trial and Store::give_back_trials
  // (undo_start: the give-back of an attempt that stored nothing).
  bool release(const AttemptRef& a, int64_t now) REQUIRES(mu_);
  std::string back_to_queue() const;
  bool undo_start(const AttemptRef& a, int64_t now) REQUIRES(mu_);
  bool lock_trial(int64_t trial_id) REQUIRES(mu_);  // inside a write transaction
  template <typename Cursor>
  StudyRecord read_study(const Cursor& q) const;
  template <typename Cursor>
  TrialRecord read_trial(const Cursor& q) const;
  template <typename Record, typename ReadRow>
  std::vector<Record> read_number_range(const char* call, const std::string& text, int64_t study_id,
                                        int64_t first, int64_t last, ReadRow read_row)
      EXCLUDES(mu_);
  template <typename Cursor>
  AttemptRecord read_attempt(const Cursor& q) const;
  template <typename Cursor>
  EpochRecord read_epoch(const Cursor& q) const;
};

}  // namespace layerlab::store
