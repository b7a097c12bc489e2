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
          CoordinatorOptions options = options_.study;
          options.clock = options_.clock;
          auto c = std::make_unique<Coordinator>(store_, queue_, StudySpec::from_json(s.spec), s.id,
                                                 options);
          // Windowed from its first publishing (pace_publishing sizes it from then on).
          if (options_.publish_horizon.count() > 0)
            c->set_publish_window(std::max<int64_t>(1, max_in_flight));
          coordinators_.emplace(s.id, std::move(c));
        }))
      continue;
    running.push_back(std::move(s));
  }
  std::erase_if(coordinators_, [&](const auto& kv) {
    return std::none_of(running.begin(), running.end(),
                        [&](const store::StudyRecord& s) { return s.id == kv.first; });
  });
  std::erase_if(paces_, [&](const auto& kv) { return !coordinators_.count(kv.first); });

  // Round-robin from the study after the one fed last, one batch each per turn, until the
  // step's budget is spent or no study takes more.
  const auto first = std::find_if(running.begin(), running.end(),
                                  [&](const store::StudyRecord& s) { return s.id > last_fed_; });
  std::rotate(running.begin(), first, running.end());
  int budget = options_.batches_per_step;
  int64_t adaptive_added = 0;
  std::set<int64_t> topped_up;
  for (bool fed = true; fed && budget > 0;) {
    fed = false;
    for (const store::StudyRecord& s : running) {
      if (budget == 0) break;
      auto it = coordinators_.find(s.id);
      if (it == coordinators_.end() || it->second->stopped()) continue;
      int64_t added = 0;
      topped_up.insert(s.id);
      if (!guarded(s, [&] { added = it->second->top_up(max_in_flight, 1); })) continue;
      if (added > 0) {
        if (it->second->adaptive()) adaptive_added += added;
        --budget;
        fed = true;
        last_fed_ = s.id;
      }
    }
  }

  // The studies the budget left out still publish what their windows allow.
  for (const store::StudyRecord& s : running) {
    auto it = coordinators_.find(s.id);
    if (it != coordinators_.end() && !topped_up.count(s.id))
      guarded(s, [&] { it->second->publish(); });
  }
  const int64_t drained = pace_publishing(max_in_flight);
  // A window that grew takes effect now, not a round later (a new study's first windows
  // would otherwise lag its workers by a round each).
  for (const store::StudyRecord& s : running) {
    auto it = coordinators_.find(s.id);
    auto pace = paces_.find(s.id);
    if (it == coordinators_.end() || pace == paces_.end()) continue;
    // A study found broken here is no longer coordinated (guarded drops it).
    if (pace->second.grew && !guarded(s, [&] { it->second->publish(); })) continue;
    pace->second.waiting = it->second->waiting();
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
    if (!store_.finish_study(s.id)) {
      report_("study '" + s.name + "' was cancelled: its last running trials have ended");
      coordinators_.erase(it);
      continue;
    }
    report_(
        "study '" + s.name + "' finished: " +
        (c.out_of_time() ? c.out_of_time_note() : std::to_string(c.total_trials()) + " trials"));
    coordinators_.erase(it);
  }
  return adaptive_added + drained;
}

// Each study's window for its next publishing. Measured at most every kPaceInterval (a
// worker starts deliveries in batches, so a shorter look sees bursts, not a pace): what it
// starts in publish_horizon at that pace, at least `floor`, and at least half the last window
// (one look at which long trials happen to start none does not shut the study's window).
// Between measures a window its workers drained (every trial waiting at the last step has
// started) doubles. Returns the trials started from drained windows (those workers may be
// waiting for more) and a new study's first window.
int64_t CoordinatorPool::pace_publishing(int64_t floor) {
  if (options_.publish_horizon.count() <= 0) return 0;
  constexpr std::chrono::milliseconds kPaceInterval{100};
  const store::Time now = options_.clock->now();
  floor = std::max<int64_t>(1, floor);
  int64_t drained = 0;
  for (auto& [id, c] : coordinators_) {
    PublishPace& p = paces_[id];
    const int64_t started = c->started();
    const int64_t before = p.window;
    if (p.window == 0) {  // a study new to the pool: the next round measures its pace soon
      p = {.window = floor,
           .measured_started = started,
           .measured_at = now,
           .last_started = started};
      drained += p.window;
    } else {
      const bool was_drained = p.waiting > 0 && started - p.last_started >= p.waiting;
      if (was_drained) drained += started - p.last_started;
      int64_t window = was_drained ? 2 * p.window : p.window;
      if (const auto elapsed = now - p.measured_at; elapsed >= kPaceInterval) {
        const double per_ms = static_cast<double>(started - p.measured_started) /
                              static_cast<double>(elapsed.count());
        const auto at_pace = static_cast<int64_t>(per_ms * options_.publish_horizon.count());
        window = std::max({floor, at_pace, p.window / 2, was_drained ? window : 0});
        p.measured_started = started;
        p.measured_at = now;
      }
      p.window = window;
      p.last_started = started;
    }
    p.grew = before > 0 && p.window > before;
    c->set_publish_window(p.window);
  }
  return drained;
}

}  // namespace layerlab::study
