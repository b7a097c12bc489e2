// Coordinator: turns a study's sampler into queued trials in the store (the first step of
// "the life of a trial"). Within each transaction trials are numbered by shape
// (study::pack_key), so that workers training packs find same-shape trials together. The store is
// the only state: a coordinator started again on the same study continues from the trials already
// stored, and re-adding a stored number changes nothing, so resuming never duplicates work.
//
// Thread-safety: one thread drives a Coordinator.
#pragma once

#include <cstdint>
#include <memory>

#include "queue/trial_queue.h"
#include "store/store.h"
#include "study/sampler.h"
#include "study/spec.h"

namespace layerlab::study {

class Coordinator {
 public:
  // `queue` receives the new trial ids (publish); the store-backed queue ignores them.
  Coordinator(store::Store& store, queue::TrialQueue& queue, StudySpec spec, int64_t study_id);

  // Adds the trials the sampler has ready and publishes them. The first call also publishes
  // the trials already queued in the store (a coordinator stopped between storing and
  // publishing must not strand them; a duplicate delivery is skipped by the worker). On an
  // error nothing is lost: the next call stores (idempotently) and publishes again. Non-adaptive
  // samplers: every remaining trial, in transactions of a few thousand. Adaptive (tpe): up to
  // `max_in_flight` queued or running. Returns how many were added.
  int64_t top_up(int64_t max_in_flight);

  // True once every trial of the study is stored and finished (none queued or running).
  bool complete();

  int64_t total_trials() const { return total_; }
  const StudySpec& spec() const { return spec_; }
  int64_t study_id() const { return study_id_; }

 private:
  std::vector<Observation> observations();
  std::vector<Suggestion> pending();

  store::Store& store_;
  queue::TrialQueue& queue_;
  StudySpec spec_;
  int64_t study_id_;
  std::unique_ptr<Sampler> sampler_;
  int64_t total_;
  int64_t next_number_;  // the first number not yet stored
  bool republished_ = false;
};

}  // namespace layerlab::study
