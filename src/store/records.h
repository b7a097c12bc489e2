// The rows the store keeps, as plain values. The store knows nothing of training: trial
// parameters, results and a study's spec are JSON values to it; `value` is the study's
// metric, extracted by the caller.
//
// Times are milliseconds since the Unix epoch (UTC), read from the Store's Clock.
// Metric doubles round-trip NaN as SQL NULL (read back as NaN); infinities are kept.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace layerlab::store {

using Time = std::chrono::sys_time<std::chrono::milliseconds>;

enum class StudyStatus { kRunning, kFinished, kCancelled };

// queued -> running -> one of the finished statuses; running -> queued again when a lease
// expires or the worker hands the trial back; queued -> cancelled with the study.
enum class TrialStatus {
  kQueued,
  kRunning,
  kCompleted,
  kPruned,
  kEarlyStopped,
  kDiverged,
  kFailed,
  kCancelled,
};
inline constexpr size_t kTrialStatusCount = 8;
inline constexpr std::array<TrialStatus, kTrialStatusCount> kAllTrialStatuses = {
    TrialStatus::kQueued, TrialStatus::kRunning,      TrialStatus::kCompleted,
    TrialStatus::kPruned, TrialStatus::kEarlyStopped, TrialStatus::kDiverged,
    TrialStatus::kFailed, TrialStatus::kCancelled,
};

// idle: registered, no trial; busy: training current_trial; stopped: exited cleanly.
// A worker that died keeps its last status; readers judge it by heartbeat age.
enum class WorkerStatus { kIdle, kBusy, kStopped };

// Names as stored and shown ("running", "early_stopped", ...); parse_* throw
// kInvalidArgument listing the known names.
const char* to_string(StudyStatus s);
const char* to_string(TrialStatus s);
const char* to_string(WorkerStatus s);
StudyStatus parse_study_status(std::string_view name);
TrialStatus parse_trial_status(std::string_view name);
WorkerStatus parse_worker_status(std::string_view name);

// True for the statuses a trial ends in (everything but queued and running).
bool is_finished(TrialStatus s);

struct StudyRecord {
  int64_t id = 0;
  std::string name{};
  nlohmann::json spec{};
  StudyStatus status = StudyStatus::kRunning;
  Time created_at{};
};

// Trials of one study per status.
struct StudyCounts {
  std::array<int64_t, kTrialStatusCount> by_status{};
  int64_t operator[](TrialStatus s) const { return by_status[static_cast<size_t>(s)]; }
  int64_t total() const;
  int64_t finished() const;  // all but queued and running
};

// A trial as the coordinator writes it: `number` is unique within the study and is what
// makes add_trials idempotent.
struct NewTrial {
  int64_t number = 0;
  std::string dataset{};
  nlohmann::json params = nlohmann::json::object();  // fully resolved, seed included
  double cost = 0;  // relative estimate; queued trials are claimed highest cost first
};

struct TrialRecord {
  int64_t id = 0;
  int64_t study_id = 0;
  int64_t number = 0;
  std::string dataset{};
  nlohmann::json params{};
  TrialStatus status = TrialStatus::kQueued;
  int attempts = 0;         // attempts started (claims), released ones included, given-back not
  int lost = 0;             // attempts whose lease expired (counted against the retry limit)
  nlohmann::json result{};  // null until finished
  std::optional<double> value{};  // the study metric, if the trial produced one
  std::string error{};            // why it failed/diverged; "" otherwise
  std::string worker_id{};        // worker of the current or last attempt; "" if none
  Time created_at{};
  std::optional<Time> started_at{};  // start of the current or last attempt
  std::optional<Time> finished_at{};
  std::optional<Time> lease_expires{};  // set while running
  int64_t seq = 0;  // set by Store::trials_changed_since: the number of its last change
};

// One execution of a trial. outcome is "" while it runs, then the trial status it ended
// with ("completed", "pruned", ...), "released" (handed back) or "lost" (lease expired).
struct AttemptRecord {
  int64_t trial_id = 0;
  int attempt = 0;
  std::string worker_id{};
  Time started_at{};
  std::optional<Time> finished_at{};
  std::string outcome{};
};

// Names one attempt of one trial.
struct AttemptRef {
  int64_t trial_id = 0;
  int attempt = 0;
};

// Metrics of one epoch; NaN means "not measured" (or a diverged loss).
struct EpochRow {
  int epoch = 0;
  double train_loss = 0;
  double val_loss = 0;
  double val_metric = 0;
  double seconds = 0;
  nlohmann::json extra{};  // anything else (learning rate, accuracy on train...); may be null
};

// A metric column of the epoch records (what a pruner compares).
enum class EpochField { kTrainLoss, kValLoss, kValMetric };

// One trial's value of an EpochField after some epoch (Store::epoch_values).
struct TrialValue {
  int64_t trial_id = 0;
  double value = 0;
  bool operator==(const TrialValue&) const = default;
};

struct EpochRecord {
  int64_t trial_id = 0;
  int attempt = 0;
  EpochRow row;
};

// Kept models (a study's keep_weights): the weights of each dataset's best trials, stored
// with their result. The store does not read them; to it they are bytes (a safetensors
// file, model/model.h).
inline constexpr int64_t kMaxWeightBytes = int64_t{64} << 20;  // one trial's weights
inline constexpr int kMaxKeptPerDataset = 100;                 // keep_weights.top at most

// What a finish asks the store to keep: the trial's weights, kept when the trial ranks
// among the `top` best of its study's dataset by its value (higher first when maximize;
// equal values by trial number), as leaderboards rank (study/leaderboard.h).
struct KeepWeights {
  std::shared_ptr<const std::string> bytes;  // not null; at most kMaxWeightBytes
  int top = 1;                               // 1..kMaxKeptPerDataset
  bool maximize = true;
};

// Weights kept for one trial (Store::find_weights, list_weights).
struct KeptWeights {
  int64_t trial_id = 0;
  int64_t study_id = 0;
  std::string dataset{};
  int64_t size = 0;  // bytes
  Time created_at{};
  std::string bytes{};  // only when asked for
};

// Epoch records of one attempt, for Store::append_epochs_batch.
struct EpochAppend {
  int64_t trial_id = 0;
  int attempt = 0;
  std::vector<EpochRow> rows;
};

// A finished attempt's report, for Store::finish_trials.
struct TrialFinish {
  int64_t trial_id = 0;
  int attempt = 0;
  TrialStatus status = TrialStatus::kCompleted;
  nlohmann::json result;
  std::optional<double> value;
  std::string error;
  std::vector<EpochRow> epochs;
  std::optional<KeepWeights> keep{};  // see KeepWeights; written in the same transaction
};

// What a worker says about itself when it starts.
struct WorkerInfo {
  std::string id{};  // unique; e.g. host:pid:random
  std::string host{};
  int64_t pid = 0;
  std::string device{};  // "cpu", "cuda:0", ...
  int pack = 1;          // trials trained at once in one batched computation
};

struct WorkerRecord {
  WorkerInfo info;
  Time started_at{};
  Time heartbeat_at{};
  std::optional<int64_t> current_trial{};
  WorkerStatus status = WorkerStatus::kIdle;
  int64_t memory_bytes = 0;  // backend memory in use at the last heartbeat
};

// What one worker did, from the attempts it ran (Store::worker_activity). The counts cover
// the store's whole history (they only grow: Prometheus counters); busy and alive cover
// the window asked for.
struct WorkerActivity {
  std::string worker_id{};
  int64_t done =
      0;  // attempts that ended with a result: completed, pruned, early_stopped, diverged
  int64_t failed = 0;    // attempts whose trial failed on this worker (training threw)
  int64_t lost = 0;      // attempts it lost: its lease expired, or the broker redelivered the trial
  int64_t released = 0;  // attempts it handed back (SIGTERM)
  int64_t running = 0;   // attempts it holds now
  // Within the window, clipped to the worker's life (registration to last heartbeat):
  std::chrono::milliseconds alive{0};  // how long it was registered and heartbeating
  std::chrono::milliseconds busy{0};   // how long it ran at least one attempt (busy <= alive)
};

// Attempts that ended in each of `buckets` equal intervals from `from`, of one worker
// (Store::finished_per_bucket); index i counts [from + i * bucket, from + (i + 1) * bucket).
struct FinishedSeries {
  std::string worker_id{};
  std::vector<int64_t> done{};    // as WorkerActivity::done
  std::vector<int64_t> failed{};  // as WorkerActivity::failed
  std::vector<int64_t> lost{};    // as WorkerActivity::lost
};

// Finished trials of one study by training time (finished_at - started_at of the attempt
// that produced the result), for a histogram: counts[i] trials took <= bounds[i] seconds
// and more than bounds[i - 1] (not cumulative); the last element counts the rest.
struct DurationHistogram {
  int64_t study_id = 0;
  std::vector<int64_t> counts{};  // bounds.size() + 1
  double sum_seconds = 0;
  int64_t count = 0;
};

// A trial handed to a worker by claim_next: the worker trains it and reports with
// (trial_id, attempt), which is the key of every later write.
struct Claim {
  int64_t trial_id = 0;
  int attempt = 0;
  int64_t study_id = 0;
  int64_t number = 0;
  std::string dataset{};
  nlohmann::json params{};
  Time lease_expires{};
};

enum class TrialSort { kNumber, kValue, kStarted, kFinished, kDuration, kParam };

// A key of params to sort by: names of letters, digits and '_' joined by single dots
// ("opt.lr"), at most kMaxParamKey bytes. Checked in one pass (it comes from requests).
constexpr size_t kMaxParamKey = 200;
bool is_param_key(std::string_view key);

// Which studies list_studies returns. A listing of every study's spec costs a JSON parse per
// study: the callers that run often (serve's coordinator and change feed, /healthz, the
// queue's state) ask for the running ones, or for none of the specs.
struct StudyListing {
  std::optional<StudyStatus> status{};  // only studies in this status; none: all
  bool specs = true;                    // false: StudyRecord::spec is left null
};

// Selection and order for list_trials. Rows without the sort key (no value yet, not
// finished...) come last in either direction; ties are broken by number.
struct TrialFilter {
  std::vector<TrialStatus> statuses{};  // empty: every status
  std::string dataset{};                // "": every dataset
  TrialSort sort = TrialSort::kNumber;
  std::string param{};  // for kParam: a key of params (is_param_key)
  bool descending = false;
  int64_t limit = 0;  // 0: no limit
  int64_t offset = 0;
  bool lost_only = false;         // only trials with a lost attempt (a worker died holding them)
  std::optional<double> value{};  // only trials whose value is exactly this (not NaN)
  // Only trials numbered above this: with sort kNumber ascending and a limit, the next page
  // after one ending at this number (a keyset page costs its own rows; an offset costs all
  // the rows before it too).
  std::optional<int64_t> after_number{};
};

}  // namespace layerlab::store
