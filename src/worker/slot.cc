#include "worker/slot.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <new>
#include <random>
#include <thread>

#include "backend/backend.h"
#include "common/error.h"
#include "queue/trial_queue.h"
#include "study/pruner.h"
#include "study/spec.h"
#include "study/trained_model.h"
#include "study/trial.h"
#include "study/trial_report.h"
#include "worker/backoff.h"
#include "worker/heartbeat.h"
#include "worker/pruning.h"

namespace layerlab::worker {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kFlushInterval{1000};  // epochs reach the store at least this often
// ... and this often where a pruner decides (a flush at every decision, one commit per trial
// and epoch, took half of a 50,000-trial pruned study's time).
constexpr milliseconds kFlushBeforeDecisions{100};
constexpr size_t kMaxCachedDatasets = 16;
// Results of trials shorter than kShortTrial are committed together, up to
// kMaxBatchedResults (or a pack) at a time and never later than kMaxResultDelay; a pack's
// members commit together whatever their length. 32, as many as a worker holds per slot
// while trials are short: queue_bench (empty trials, AMQP + PostgreSQL) ran 1.2-1.4x faster
// at 16 workers and 1.2x at 2 than with 8 (docs/benchmarks.md).
constexpr milliseconds kShortTrial{20};
constexpr size_t kMaxBatchedResults = 32;
constexpr milliseconds kMaxResultDelay{100};

// The stored reason of a trial that threw something other than a layerlab::Error.
std::string failure_reason(const std::exception& e, size_t pack_size = 1) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) {
    std::string why = "out of memory: the trial needed more memory than the worker could allocate";
    if (pack_size > 1) why += " (a pack of " + std::to_string(pack_size) + " trials)";
    return why + " (" + e.what() + ")";
  }
  return std::string("unexpected error: ") + e.what();
}

// A failure reason fit to store and show: at most kMaxReason bytes, valid UTF-8 (a message
// quoting bad input must neither fill the store nor make its JSON unwritable).
constexpr size_t kMaxReason = 2000;
std::string storable_reason(std::string why) {
  if (why.size() > kMaxReason) why = why.substr(0, kMaxReason) + "...";
  const std::string quoted =
      nlohmann::json(why).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return nlohmann::json::parse(quoted).get<std::string>();
}

}  // namespace

// A study's parsed spec and its pruner, read once per study a slot meets (outside the
// anonymous namespace: Slot::Loop, which has external linkage, holds them).
struct StudyContext {
  study::StudySpec spec;
  std::unique_ptr<study::Pruner> pruner;
};

class Slot::Loop {
 public:
  Loop(const WorkerOptions& options, const std::atomic<bool>& stop, std::string id,
       SlotServices services)
      : options_(options),
        stop_(stop),
        id_(std::move(id)),
        store_(services.store),
        backend_(services.backend),
        queue_(services.queue),
        clock_(services.clock),
        faults_(services.faults) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    with_backoff(
        [&] {
          store_.register_worker({id_, host, getpid(), backend_.name(), options_.pack});
        },
        stop_);
    heartbeat_ = std::make_unique<Heartbeat>(store_, id_);
  }

  ~Loop() {
    heartbeat_.reset();
    try {
      store_.stop_worker(id_);
    } catch (const std::exception&) {
      // The store is away (or anything else failed) as the worker exits: nothing to do in a
      // destructor; its heartbeat age tells readers it is gone.
    }
  }

  WorkerSummary run() {
    milliseconds idle_wait{100};
    while (!stop_) {
      std::optional<queue::Delivery> d;
      try {
        // Results waiting to be committed must not wait for the queue as well.
        d = queue_.receive(unreported_.empty() ? milliseconds(200) : milliseconds(0));
      } catch (const Error& e) {
        if (!retryable(e)) throw;
        sleep_unless(&stop_, idle_wait);
        idle_wait = std::min(idle_wait * 2, milliseconds(5000));
        continue;
      }
      idle_wait = milliseconds(100);
      if (!d) {
        commit_results();
        if (options_.exit_when_done && study_over()) break;
        continue;
      }
      process(take(std::move(*d)));
    }
    commit_results();
    return summary_;
  }

 private:
  bool study_over() {
    const store::StudyRecord s =
        with_backoff([&] { return store_.get_study(options_.study_id); }, stop_);
    return s.status != store::StudyStatus::kRunning;
  }

  const StudyContext& study_context(int64_t study_id) {
    auto it = studies_.find(study_id);
    if (it != studies_.end()) return it->second;
    const store::StudyRecord rec = with_backoff([&] { return store_.get_study(study_id); }, stop_);
    StudyContext c;
    c.spec = study::StudySpec::from_json(rec.spec);
    study::PrunerConfig pc;
    pc.type = c.spec.early_terminate.type;
    pc.min_epochs = c.spec.early_terminate.min_epochs;
    pc.eta = c.spec.early_terminate.eta;
    pc.warmup_epochs = c.spec.early_terminate.warmup_epochs;
    c.pruner = study::make_pruner(pc);
    return studies_.emplace(study_id, std::move(c)).first->second;
  }

  const study::PreparedData& prepared(const study::TrialSpec& spec) {
    const std::string key = spec.dataset + "|" + std::to_string(spec.validation_fraction) + "|" +
                            std::to_string(spec.stratify) + "|" + std::to_string(spec.split_seed);
    auto it = data_.find(key);
    if (it != data_.end()) return it->second;
    if (data_.size() >= kMaxCachedDatasets) data_.clear();
    return data_.emplace(key, study::prepare_data(spec)).first->second;
  }

  void fail(const queue::Delivery& d, const std::string& reason) {
    const std::string why = storable_reason(reason);
    store::TrialFinish f{d.trial_id,
                         d.attempt,
                         store::TrialStatus::kFailed,
                         nlohmann::json{{"status", "failed"}, {"message", why}},
                         std::nullopt,
                         why,
                         {}};
    report(d, std::move(f), /*short_trial=*/false);
  }

  // Results of short trials wait (briefly) to share one transaction; a result is acked
  // only once committed.
  void report(const queue::Delivery& d, store::TrialFinish f, bool short_trial) {
    unreported_.push_back({d, std::move(f)});
    if (unreported_.size() == 1) oldest_unreported_ = clock_.now();
    if (!short_trial || unreported_.size() >= std::max<size_t>(kMaxBatchedResults, options_.pack) ||
        clock_.now() - oldest_unreported_ > kMaxResultDelay)
      commit_results();
  }

  void commit_results() {
    if (unreported_.empty()) return;
    std::vector<store::TrialFinish> finishes;
    for (const auto& u : unreported_) finishes.push_back(u.finish);
    const std::vector<bool> committed =
        with_backoff([&] { return queue_.finish(finishes); }, stop_);
    for (size_t i = 0; i < unreported_.size(); ++i) {
      faults_.at(CrashPoint::kAfterCommit, unreported_[i].delivery.number);
      queue_.ack(unreported_[i].delivery);
      ++(committed[i] ? summary_.trials : summary_.late);
    }
    unreported_.clear();
  }

  // Takes up to options_.pack deliveries: the one waited for and what the queue has ready.
  std::vector<queue::Delivery> take(queue::Delivery first) {
    std::vector<queue::Delivery> out{std::move(first)};
    while (static_cast<int>(out.size()) < options_.pack && !stop_) {
      std::optional<queue::Delivery> more;
      try {
        more = queue_.receive(milliseconds(0));
      } catch (const Error& e) {
        if (!retryable(e)) throw;
        break;  // train what is in hand; the next receive() backs off
      }
      if (!more) break;
      out.push_back(std::move(*more));
    }
    return out;
  }

  // A trial of a pack, with what the epoch callback needs of it.
  struct Member {
    queue::Delivery delivery;
    study::TrialSpec spec;
    const StudyContext* study = nullptr;
    std::vector<store::EpochRow> pending;  // epochs not yet in the store
    bool lost = false;
  };

  // Parses each delivery (a bad one fails alone) and trains them in packs of equal
  // study::pack_key. A retried trial trains alone: if it is the one killing workers, it
  // takes no pack mates with it.
  void process(std::vector<queue::Delivery> deliveries) {
    if (std::any_of(deliveries.begin(), deliveries.end(),
                    [](const queue::Delivery& d) { return d.attempt > 1; }))
      commit_results();  // see report(): nothing waits beside a retry
    std::vector<std::pair<std::string, std::vector<Member>>> packs;
    for (queue::Delivery& d : deliveries) {
      Member m;
      try {
        faults_.at(CrashPoint::kBeforeTraining, d.number);
        m.study = &study_context(d.study_id);
        m.spec = study::TrialSpec::from_stored(d.params, d.dataset);
      } catch (const Error& e) {
        if (retryable(e)) throw;
        fail(d, e.what());  // bad parameters or study: the trial fails, no retry
        continue;
      } catch (const std::exception& e) {
        fail(d, failure_reason(e));  // out of memory, a JSON type error...: the same
        continue;
      }
      const std::string key =
          d.attempt > 1 ? "retry " + std::to_string(d.trial_id) : study::pack_key(m.spec);
      m.delivery = std::move(d);
      auto it = std::find_if(packs.begin(), packs.end(), [&](auto& p) { return p.first == key; });
      if (it == packs.end()) it = packs.insert(packs.end(), {key, {}});
      it->second.push_back(std::move(m));
    }
    for (auto& [key, members] : packs) {
      if (stop_) {
        hand_back(members);
        continue;
      }
      heartbeat_->set_current(members[0].delivery.trial_id);
      train(members);
      heartbeat_->set_current(0);
    }
  }

  void hand_back(std::vector<Member>& members) {
    commit_results();
    for (const Member& m : members) {
      with_backoff([&] { queue_.requeue(m.delivery); }, stop_);
      ++summary_.handed_back;
    }
  }

  // The epochs of a pack's members not yet in the store, in one transaction: a pack of 512
  // on a GPU writes once a second, not 512 times.
  void flush(std::vector<Member>& members) {
    std::vector<store::EpochAppend> appends;
    for (const Member& m : members)
      if (!m.pending.empty())
        appends.push_back({m.delivery.trial_id, m.delivery.attempt, m.pending});
    last_flush_ = clock_.now();
    if (appends.empty()) return;
    // An attempt no longer current writes nothing; its loss is the lease keeper's to report.
    with_backoff([&] { return store_.append_epochs_batch(appends); }, stop_);
    for (Member& m : members) m.pending.clear();
  }

  // At the end of each epoch of the pack: its members' rows go to the store together, at
  // least every kFlushInterval.
  void after_epochs(std::vector<Member>& members) {
    if (clock_.now() - last_flush_ > kFlushInterval) flush(members);
  }

  // True to go on training member i, false to stop it (pruned, lost, or the worker stops).
  bool after_epoch(std::vector<Member>& members, size_t i, const nn::EpochRecord& r,
                   bool& interrupted) {
    Member& m = members[i];
    const queue::Delivery& d = m.delivery;
    m.pending.push_back(study::epoch_row(r));
    const StudyContext& sc = *m.study;
    const bool decide = sc.pruner && sc.pruner->decides_at(r.epoch);
    // Other workers' pruning decisions see this value soon, without a commit per epoch.
    if (decide && clock_.now() - last_flush_ > kFlushBeforeDecisions) flush(members);
    // Results of earlier short trials do not wait for the end of a long one.
    if (!unreported_.empty() && clock_.now() - oldest_unreported_ > kMaxResultDelay)
      commit_results();
    if (r.epoch == 1) faults_.at(CrashPoint::kAfterEpoch, d.number);
    if (stop_) interrupted = true;
    if (queue_.lost(d)) m.lost = true;
    if (interrupted || m.lost) return false;
    if (!decide) return true;
    const study::EpochMetric metric = study::epoch_metric(sc.spec.metric);
    return !pruning_.should_prune(
        *sc.pruner, d.study_id, metric.field, r.epoch, d.trial_id, metric.of(r), sc.spec.maximize,
        [&] {
          return with_backoff(
              [&] { return store_.epoch_values(d.study_id, r.epoch, metric.field); }, stop_);
        });
  }

  void train(std::vector<Member>& members) {
    const auto started = clock_.now();
    std::vector<study::TrialSpec> specs;
    for (const Member& m : members) specs.push_back(m.spec);
    bool interrupted = false;
    auto on_epoch = [&](int i, const nn::EpochRecord& r) {
      heartbeat_->set_memory(backend_.memory_in_use());
      return after_epoch(members, static_cast<size_t>(i), r, interrupted);
    };
    last_flush_ = clock_.now();
    // A study with keep_weights needs its trials' final weights (copied off the device).
    const bool keep = std::any_of(members.begin(), members.end(),
                                  [](const Member& m) { return m.study->spec.keep_top > 0; });
    std::vector<study::TrialOutcome> outcomes;
    try {
      outcomes = study::run_trials(specs, prepared(specs[0]), backend_, on_epoch, keep,
                                   [&] { after_epochs(members); });
    } catch (const Error& e) {
      if (retryable(e)) throw;  // the store or broker away for too long: the worker stops
      for (const Member& m : members) fail(m.delivery, e.what());
      return;
    } catch (const std::exception& e) {
      // Anything else training threw (out of memory, a library's exception): the trials end
      // `failed` with the reason, committed like any result; the worker, its memory released
      // by the unwinding, goes on with the next delivery instead of dying on every retry.
      const std::string why = failure_reason(e, members.size());
      for (const Member& m : members) fail(m.delivery, why);
      return;
    }
    if (interrupted) {
      hand_back(members);
      return;
    }
    const auto per_trial = (clock_.now() - started) / members.size();
    for (size_t i = 0; i < members.size(); ++i) {
      Member& m = members[i];
      const queue::Delivery& d = m.delivery;
      if (m.lost) {
        queue_.ack(d);  // not ours any more: stop holding it
        ++summary_.lost;
        continue;
      }
      faults_.at(CrashPoint::kAfterTraining, d.number);
      const study::TrialReport r = study::make_report(outcomes[i], m.study->spec.metric, id_);
      // The result, the rest of its curve and its weights to keep commit in one
      // transaction, a pack's members together (below). A retried trial's result is
      // committed at once: if it is the one killing workers, nothing else waits in memory
      // with it.
      const bool batch = d.attempt == 1 && (per_trial < kShortTrial || members.size() > 1);
      store::TrialFinish f{d.trial_id, d.attempt,           r.status, r.result, r.value,
                           r.error,    std::move(m.pending)};
      study::ModelToKeep k =
          study::model_to_keep(outcomes[i], prepared(specs[0]), m.study->spec, r, d.number);
      f.keep = std::move(k.keep);
      if (!k.skipped.empty()) f.result["weights_not_kept"] = storable_reason(k.skipped);
      report(d, std::move(f), batch);
    }
    if (members.size() > 1) commit_results();
  }

  WorkerOptions options_;
  const std::atomic<bool>& stop_;
  std::string id_;
  store::Store& store_;
  backend::Backend& backend_;
  queue::TrialQueue& queue_;
  const store::Clock& clock_;
  FaultHook& faults_;
  std::unique_ptr<Heartbeat> heartbeat_;
  std::map<int64_t, StudyContext> studies_;
  PruningView pruning_;
  std::map<std::string, study::PreparedData> data_;
  struct Unreported {
    queue::Delivery delivery;
    store::TrialFinish finish;
  };
  std::vector<Unreported> unreported_;
  store::Time oldest_unreported_;
  store::Time last_flush_;  // when the pack in training last wrote its epochs
  WorkerSummary summary_;
};

Slot::Slot(const WorkerOptions& options, const std::atomic<bool>& stop, std::string id,
           SlotServices services)
    : loop_(std::make_unique<Loop>(options, stop, std::move(id), services)) {}

Slot::~Slot() = default;

WorkerSummary Slot::run() {
  return loop_->run();
}

}  // namespace layerlab::worker
