#include "study/coordinator_pool.h"

#include "common/error.h"

namespace layerlab::study {

CoordinatorPool::CoordinatorPool(store::Store& store, queue::TrialQueue& queue,
                                 std::function<void(const std::string&)> report)
    : store_(store), report_(std::move(report)), queue_(queue) {}

CoordinatorPool::~CoordinatorPool() = default;

void CoordinatorPool::step(int64_t max_in_flight) {
  if (const int64_t dead = queue_.settle_dead_letters())
    report_(std::to_string(dead) + " trials failed: the broker dead-lettered them");
  std::set<int64_t> running;
  for (const store::StudyRecord& s : store_.list_studies()) {
    if (s.status != store::StudyStatus::kRunning || broken_.count(s.id)) continue;
    running.insert(s.id);
    auto it = coordinators_.find(s.id);
    if (it == coordinators_.end()) {
      try {
        it = coordinators_
                 .emplace(s.id, std::make_unique<Coordinator>(store_, queue_,
                                                              StudySpec::from_json(s.spec), s.id))
                 .first;
      } catch (const Error& e) {
        if (e.code() != ErrorCode::kInvalidArgument) throw;
        broken_.insert(s.id);
        report_("study '" + s.name + "': cannot coordinate it: " + e.what());
        continue;
      }
    }
    Coordinator& c = *it->second;
    c.top_up(max_in_flight);
    if (c.complete()) {
      store_.set_study_status(s.id, store::StudyStatus::kFinished);
      running.erase(s.id);
      report_("study '" + s.name + "' finished: " + std::to_string(c.total_trials()) + " trials");
    }
  }
  std::erase_if(coordinators_, [&](const auto& kv) { return !running.count(kv.first); });
}

}  // namespace layerlab::study
