// Coordinator: turns a study's sampler into queued trials in the store (the first step of
// "the life of a trial"). Within each transaction trials are numbered by shape
// (study::pack_key), so that workers training packs find same-shape trials together. The store is
// the only state: a coordinator started again on the same study continues from the trials already
// stored, and re-adding a stored number changes nothing, so resuming never duplicates work.
//
// Non-adaptive samplers are fed in bounded steps: each top_up stores at most a few batches,
// and only while fewer than max_queued of the study's trials wait unclaimed, so a study of
// 10^8 trials holds a bounded window of queued rows (topped up as workers claim them)
// instead of filling the disk and starving the other studies of the store.
//
// A broker delivers in the order trials were published, so with one (serve's studies share
// its queue) the stored trials can also be published only a few at a time
// (set_publish_window): a study submitted later then waits behind that many of an earlier
// one's trials, not behind all it has stored.
//
// Thread-safety: one thread drives a Coordinator.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "queue/trial_queue.h"
#include "store/clock.h"
#include "store/store.h"
#include "study/sampler.h"
#include "study/spec.h"

namespace layerlab::study {

// Trials are stored in transactions of kTrialBatch (the last one of a study smaller), each
// numbered by shape; batch boundaries do not depend on timing or on the options below, so a
// study's trial numbers do not either.
inline constexpr int64_t kTrialBatch = 2000;

struct CoordinatorOptions {
  // Non-adaptive samplers: a batch is stored only while fewer than this many trials of the
  // study are queued (stored, not yet claimed); queued rows stay below max_queued + kTrialBatch.
  int64_t max_queued = 10'000;
  // Batches one top_up call stores at most (both kinds of sampler).
  int batches_per_call = 5;
  // Reads the time budget (budget.hours): the system clock, or a test's ManualClock.
  const store::Clock* clock = &store::system_clock();
};

class Coordinator {
 public:
  // `queue` receives the new trial ids (publish); the store-backed queue ignores them.
  Coordinator(store::Store& store, queue::TrialQueue& queue, StudySpec spec, int64_t study_id,
              CoordinatorOptions options = {});

  // Adds the trials the sampler has ready and publishes them. The first call also publishes
  // the trials already queued in the store (a coordinator stopped between storing and
  // publishing must not strand them; a duplicate delivery is skipped by the worker). On an
  // error nothing is lost: the next call stores (idempotently) and publishes again.
  // At most `max_batches` batches (default: options.batches_per_call). Non-adaptive
  // samplers: while fewer than options.max_queued trials are queued. Adaptive (tpe): up to
  // `max_in_flight` queued or running. Returns how many were added.
  //
  // A study found cancelled meanwhile (the store refuses its new trials) is stopped():
  // that call throws kFailedPrecondition "study 'NAME' was cancelled...", later calls store
  // nothing and return 0; the study is complete() once its running trials end (`run` then
  // reports it cancelled: the store keeps it so).
  // CoordinatorPool (`serve`) takes it as the end of that study's feeding, not an error.
  //
  // A study with budget.hours runs out of time that long after it was created (its
  // created_at in the store, so a resumed study gets no new time): the first call after
  // that cancels the study's queued trials and every later call stores and publishes
  // nothing; the running trials finish, and the study is complete() once they have.
  int64_t top_up(int64_t max_in_flight, int max_batches = 0);

  // At most `trials` of the study's trials published and not yet started; stored trials
  // beyond it wait unpublished (queued in the store) until publish() or top_up finds room.
  // 0 (the default): every stored trial is published at once. Adaptive studies ignore it:
  // max_in_flight bounds them already.
  void set_publish_window(int64_t trials);

  // Publishes the stored trials the window held back, as far as it now allows; returns how
  // many. Without a window (or with nothing held back) it reads nothing.
  int64_t publish();

  // Published trials seen leaving the queue (started, or finished otherwise) so far: counted
  // by publish() and top_up while a window is set, so a caller can size the window from
  // the pace at which the study's trials start.
  int64_t started() const { return started_; }
  // Published trials not yet started at the last look (after its publishing), under a window.
  int64_t waiting() const { return waiting_; }

  // True once every trial of the study is stored and finished (none queued or running), or
  // once its time budget ran out or it was found cancelled (stopped()) and none is queued or
  // running.
  bool complete();

  // Whether the study's time budget ran out (seen by a top_up call); then out_of_time_note()
  // says so for the study's output: "budget of 2 hours reached: 37 of 100 trials stored...".
  bool out_of_time() const { return out_of_time_; }
  std::string out_of_time_note() const;

  // The study was found cancelled when trials were added: no more are.
  bool stopped() const { return stopped_; }

  // Whether the sampler learns from finished trials (tpe): then few trials are in flight.
  bool adaptive() const { return sampler_->adaptive(); }
  int64_t total_trials() const { return total_; }
  const StudySpec& spec() const { return spec_; }
  int64_t study_id() const { return study_id_; }

 private:
  // Adaptive samplers: the queued and running trials as suggestions; first brings finished_
  // up to date with the trials that left that set since the last call.
  std::vector<Suggestion> pending();
  void sync_observations();
  void observe(const store::TrialRecord& r);
  // Publishes what the window allows of held_, given `queued` (the study's queued trials,
  // held ones included, as counted just now).
  int64_t publish_held(int64_t queued);

  store::Store& store_;
  queue::TrialQueue& queue_;
  StudySpec spec_;
  int64_t study_id_;
  std::unique_ptr<Sampler> sampler_;
  int64_t total_;
  int64_t next_number_;  // the first number not yet stored
  CoordinatorOptions options_;
  bool republished_ = false;
  bool stopped_ = false;
  // budget.hours: when the study runs out of time (nullopt: no budget), and whether it has.
  std::optional<store::Time> deadline_;
  bool out_of_time_ = false;
  // The publish window (0: none), the stored trials it holds back (in number order), the
  // published ones not yet started at the last look, and started().
  int64_t publish_window_ = 0;
  std::deque<int64_t> held_;
  int64_t waiting_ = 0;
  int64_t started_ = 0;
  // Adaptive samplers only. finished_: the finished trials (cancelled ones aside) by
  // number; unfinished_: the ids of the trials queued or running at the last look.
  bool synced_ = false;
  std::vector<Observation> finished_;
  std::unordered_set<int64_t> unfinished_;
};

}  // namespace layerlab::study
