#include "server/change_feed.h"

#include <fmt/format.h>

#include <iostream>

#include "common/error.h"
#include "server/views.h"

namespace layerlab::server {

ChangeFeed::ChangeFeed(std::unique_ptr<store::Store> store, StudyCache& cache, EventHub& hub,
                       std::chrono::milliseconds interval)
    : store_(std::move(store)),
      cache_(cache),
      hub_(hub),
      interval_(interval),
      cursor_(store_->change_cursor()) {}

ChangeFeed::~ChangeFeed() {
  stop();
}

void ChangeFeed::start() {
  stop_ = false;
  thread_ = std::thread([this] { run(); });
}

void ChangeFeed::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void ChangeFeed::run() {
  std::string last_error;
  while (!stop_) {
    try {
      poll_once();
      last_error.clear();
    } catch (const Error& e) {
      // The store is unavailable for now (locked, restarting): try again next poll; say so
      // once per distinct error.
      ++errors_;
      if (e.what() != last_error) std::cerr << "server: following the store: " << e.what() << "\n";
      last_error = e.what();
    }
    for (auto waited = std::chrono::milliseconds(0); waited < interval_ && !stop_;
         waited += std::chrono::milliseconds(10))
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

int64_t ChangeFeed::study_of(int64_t trial_id) {
  auto it = trial_study_.find(trial_id);
  if (it != trial_study_.end()) return it->second;
  return trial_study_[trial_id] = store_->get_trial(trial_id).study_id;
}

void ChangeFeed::poll_once() {
  std::vector<Event> events;
  bool resync = false;
  for (;;) {
    const std::vector<store::TrialRecord> changed =
        store_->trials_changed_since(cursor_.trials, kTrialsPerPoll);
    if (changed.empty()) break;
    cursor_.trials = changed.back().seq;
    cache_.apply(changed);  // the cache needs every change, streamed or not
    for (const store::TrialRecord& t : changed) {
      if (t.status == store::TrialStatus::kRunning)
        trial_study_[t.id] = t.study_id;
      else
        trial_study_.erase(t.id);
    }
    resync = resync || events.size() + changed.size() > static_cast<size_t>(kTrialsPerPoll);
    if (!resync)
      for (const store::TrialRecord& t : changed)
        events.push_back({"trial", t.study_id, trial_summary(t).dump()});
    if (changed.size() < static_cast<size_t>(kTrialsPerPoll)) break;
  }

  const std::vector<store::EpochRecord> epochs =
      store_->epochs_since(cursor_.epochs, kEpochsPerPoll);
  if (epochs.size() == static_cast<size_t>(kEpochsPerPoll)) {
    resync = true;
    cursor_.epochs = store_->change_cursor().epochs;  // skip the flood; clients refetch
  } else if (!epochs.empty()) {
    cursor_.epochs = epochs.back().seq;
    if (!resync)
      for (const store::EpochRecord& e : epochs) {
        const int64_t study = study_of(e.trial_id);
        nlohmann::json j = epoch_json(e);
        j["study_id"] = study;
        events.push_back({"epoch", study, j.dump()});
      }
  }
  if (resync) events.assign(1, Event{"resync", 0, "{}"});

  const store::Time now =
      std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
  for (const store::WorkerRecord& w : store_->list_workers()) {
    auto state = std::make_tuple(static_cast<int>(w.status), w.current_trial.value_or(0),
                                 worker_alive(w, now));
    auto [it, added] = workers_.try_emplace(w.info.id, state);
    if (!added && it->second == state) continue;
    it->second = state;
    events.push_back({"worker", 0, worker_json(w, now).dump()});
  }
  for (const store::StudyRecord& s : store_->list_studies()) {
    const int status = static_cast<int>(s.status);
    auto [it, added] = studies_.try_emplace(s.id, status);
    if (!added && it->second == status) continue;
    it->second = status;
    events.push_back(
        {"study", s.id,
         nlohmann::json{{"id", s.id}, {"name", s.name}, {"status", to_string(s.status)}}.dump()});
  }
  hub_.publish(events);
  ++polls_;
}

}  // namespace layerlab::server
