#include "study/coordinator_pool.h"

#include <algorithm>
#include <new>
#include <vector>

#include "common/error.h"

namespace layerlab::study {

CoordinatorPool::CoordinatorPool(store::Store& store, queue::TrialQueue& queue,
                                 std::function<void(const std::string&)> report,
                                 CoordinatorPoolOptions options)
    : store_(store), report_(std::move(report)), queue_(queue), options_(options) {
  if (options_.batches_per_step < 1)
    throw invalid_argument("coordinator pool: batches_per_step must be >= 1");
}

CoordinatorPool::~CoordinatorPool() = default;

template <typename F>
bool CoordinatorPool::guarded(const store::StudyRecord& s, F&& fn) {
  std::string why;
  try {
    fn();
    return true;
  } catch (const Error& e) {
    // The store or broker away, a lost race: the caller retries the whole round later.
    if (e.code() == ErrorCode::kUnavailable || e.code() == ErrorCode::kAborted) throw;
    // Cancelled while it was fed: not broken, just no longer fed (see the end of step()).
    if (auto it = coordinators_.find(s.id); it != coordinators_.end() && it->second->stopped())
      return false;
    why = e.what();  // its spec, sampler or trials are refused: this study only
  } catch (const std::bad_alloc&) {
    why = "out of memory";  // e.g. a sampler over a search space too big to hold
  } catch (const std::exception& e) {
    why = std::string("unexpected error: ") + e.what();  // a library's: this study only
  }
  broken_.insert(s.id);
  coordinators_.erase(s.id);
  report_("study '" + s.name + "': cannot coordinate it: " + why);
  return false;
}

int64_t CoordinatorPool::step(int64_t max_in_flight) {
  if (const int64_t dead = queue_.settle_dead_letters())
    report_(std::to_string(dead) + " trials failed: the broker dead-lettered them");
  std::vector<store::StudyRecord> running;
  for (store::StudyRecord& s : store_.list_studies({.status = store::StudyStatus::kRunning})) {
    if (broken_.count(s.id)) continue;
    if (!coordinators_.count(s.id) && !guarded(s, [&] {
          coordinators_.emplace(
              s.id, std::make_unique<Coordinator>(store_, queue_, StudySpec::from_json(s.spec),
                                                  s.id, options_.study));
        }))
      continue;
    running.push_back(std::move(s));
  }
  std::erase_if(coordinators_, [&](const auto& kv) {
    return std::none_of(running.begin(), running.end(),
                        [&](const store::StudyRecord& s) { return s.id == kv.first; });
  });

  // Round-robin from the study after the one fed last, one batch each per turn, until the
  // step's budget is spent or no study takes more.
  const auto first = std::find_if(running.begin(), running.end(),
                                  [&](const store::StudyRecord& s) { return s.id > last_fed_; });
  std::rotate(running.begin(), first, running.end());
  int budget = options_.batches_per_step;
  int64_t adaptive_added = 0;
  for (bool fed = true; fed && budget > 0;) {
    fed = false;
    for (const store::StudyRecord& s : running) {
      if (budget == 0) break;
      auto it = coordinators_.find(s.id);
      if (it == coordinators_.end() || it->second->stopped()) continue;
      int64_t added = 0;
      if (!guarded(s, [&] { added = it->second->top_up(max_in_flight, 1); })) continue;
      if (added > 0) {
        if (it->second->adaptive()) adaptive_added += added;
        --budget;
        fed = true;
        last_fed_ = s.id;
      }
    }
  }

  for (const store::StudyRecord& s : running) {
    auto it = coordinators_.find(s.id);
    if (it == coordinators_.end()) continue;
    Coordinator& c = *it->second;
    if (c.stopped()) {
      report_("study '" + s.name + "' is no longer running: no more of its trials are queued");
      coordinators_.erase(it);
      continue;
    }
    bool complete = false;
    if (!guarded(s, [&] { complete = c.complete(); }) || !complete) continue;
    store_.set_study_status(s.id, store::StudyStatus::kFinished);
    report_("study '" + s.name + "' finished: " + std::to_string(c.total_trials()) + " trials");
    coordinators_.erase(it);
  }
  return adaptive_added;
}

}  // namespace layerlab::study
