#include "server/change_feed.h"

#include <fmt/format.h>

#include "analysis/views.h"
#include "common/error.h"
#include "server/http_util.h"

namespace layerlab::server {

ChangeFeed::ChangeFeed(std::unique_ptr<store::Store> store, analysis::StudyCache& cache,
                       EventHub& hub, std::chrono::milliseconds interval)
    : store_(std::move(store)),
      cache_(cache),
      hub_(hub),
      interval_(interval),
      cursor_(store_->last_trial_change()) {
  // Trials already running when the server starts: their epochs from now on are streamed.
  for (const store::StudyRecord& s :
       store_->list_studies({.status = store::StudyStatus::kRunning, .specs = false})) {
    for (const store::TrialRecord& t :
         store_->list_trials(s.id, {.statuses = {store::TrialStatus::kRunning}})) {
      Followed f{t.study_id, t.attempts, -1};
      const auto epochs = store_->list_epochs(t.id, t.attempts);
      if (!epochs.empty()) f.last_epoch = epochs.back().row.epoch;
      running_[t.id] = f;
    }
  }
}

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
    } catch (const std::exception& e) {
      // The store is unavailable for now (locked, restarting), or a poll failed otherwise
      // (out of memory): try again next poll; say so once per distinct error.
      ++errors_;
      if (e.what() != last_error) log_line(std::string("following the store: ") + e.what());
      last_error = e.what();
    }
    for (auto waited = std::chrono::milliseconds(0); waited < interval_ && !stop_;
         waited += std::chrono::milliseconds(10))
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void ChangeFeed::read_epochs(int64_t trial_id, Followed& f, std::vector<Event>& events) {
  for (const store::EpochRecord& e : store_->list_epochs(trial_id, f.attempt, f.last_epoch)) {
    nlohmann::json j = analysis::epoch_json(e);
    j["study_id"] = f.study_id;
    events.push_back({"epoch", f.study_id, j.dump()});
    f.last_epoch = e.row.epoch;
  }
}

void ChangeFeed::poll_once() {
  std::vector<Event> events;
  std::vector<std::pair<int64_t, Followed>> ended;  // followed trials that stopped running
  bool resync = false;
  for (;;) {
    const std::vector<store::TrialRecord> changed =
        store_->trials_changed_since(cursor_, kTrialsPerPoll);
    if (changed.empty()) break;
    cursor_ = changed.back().seq;
    cache_.apply(changed);  // the cache needs every change, streamed or not
    for (const store::TrialRecord& t : changed) {
      auto it = running_.find(t.id);
      if (t.status == store::TrialStatus::kRunning) {
        if (it == running_.end() || it->second.attempt != t.attempts)
          running_[t.id] = Followed{t.study_id, t.attempts, -1};
      } else if (it != running_.end()) {
        ended.emplace_back(*it);
        running_.erase(it);
      }
    }
    resync = resync || events.size() + changed.size() > static_cast<size_t>(kTrialsPerPoll);
    if (!resync)
      for (const store::TrialRecord& t : changed)
        events.push_back({"trial", t.study_id, analysis::trial_summary(t).dump()});
    if (changed.size() < static_cast<size_t>(kTrialsPerPoll)) break;
  }

  // New epochs of the running trials, and the last ones of those that just finished.
  std::vector<Event> epochs;
  for (auto& [id, f] : running_) read_epochs(id, f, epochs);
  for (auto& [id, f] : ended) read_epochs(id, f, epochs);
  if (!resync && epochs.size() <= kEpochsPerPoll)
    events.insert(events.end(), epochs.begin(), epochs.end());
  else
    resync = true;
  if (resync) events.assign(1, Event{"resync", 0, "{}"});

  const store::Time now =
      std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
  for (const store::WorkerRecord& w : store_->list_workers()) {
    auto state = std::make_tuple(static_cast<int>(w.status), w.current_trial.value_or(0),
                                 analysis::worker_alive(w, now));
    auto [it, added] = workers_.try_emplace(w.info.id, state);
    if (!added && it->second == state) continue;
    it->second = state;
    events.push_back({"worker", 0, analysis::worker_json(w, now).dump()});
  }
  for (const store::StudyRecord& s : store_->list_studies({.specs = false})) {
    const int status = static_cast<int>(s.status);
    auto [it, added] = studies_.try_emplace(s.id, status);
    if (!added && it->second == status) continue;
    it->second = status;
    cache_.touch(s.id);
    events.push_back(
        {"study", s.id,
         nlohmann::json{{"id", s.id}, {"name", s.name}, {"status", to_string(s.status)}}.dump()});
  }
  cache_.refresh(*store_);  // before the events: a client that refetches gets the new state
  hub_.publish(events);
  ++polls_;
}

}  // namespace layerlab::server
