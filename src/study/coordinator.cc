#include "study/coordinator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "common/error.h"
#include "store/trial_pages.h"

namespace layerlab::study {
namespace {

// Multiply-adds per training example over the whole run, without the input layer (the
// dataset is not loaded here): enough to start the longest trials first.
double relative_cost(const TrialSpec& t) {
  const std::vector<int> widths = t.params.hidden_widths();
  double per_example = 0;
  for (size_t i = 1; i < widths.size(); ++i) per_example += double(widths[i - 1]) * widths[i];
  if (!widths.empty()) per_example += widths.back() + widths.front();
  return per_example * t.params.epochs;
}

TrialSpec trial_of(const store::TrialRecord& r) {
  return TrialSpec::from_stored(r.params, r.dataset);
}

}  // namespace

Coordinator::Coordinator(store::Store& store, queue::TrialQueue& queue, StudySpec spec,
                         int64_t study_id, CoordinatorOptions options)
    : store_(store),
      queue_(queue),
      spec_(std::move(spec)),
      study_id_(study_id),
      sampler_(make_sampler(spec_)),
      total_(spec_.total_trials()),
      next_number_(store.counts(study_id).total()),
      options_(options) {
  if (options_.max_queued < 1 || options_.batches_per_call < 1)
    throw invalid_argument("coordinator: max_queued and batches_per_call must be >= 1");
  if (spec_.budget_hours > 0)
    deadline_ = store_.get_study(study_id_).created_at +
                std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::duration<double, std::ratio<3600>>(spec_.budget_hours));
}

int64_t Coordinator::top_up(int64_t max_in_flight, int max_batches) {
  if (stopped_ || out_of_time_) return 0;
  if (deadline_ && options_.clock->now() >= *deadline_) {
    // Marked only once they are cancelled: a store away now leaves it to the next call.
    store_.cancel_queued_trials(study_id_);
    out_of_time_ = true;
    held_.clear();
    return 0;
  }
  if (max_batches <= 0) max_batches = options_.batches_per_call;
  if (!republished_) {
    store::TrialFilter queued;
    queued.statuses = {store::TrialStatus::kQueued};
    for (const store::TrialRecord& r : store_.list_trials(study_id_, queued)) held_.push_back(r.id);
    republished_ = true;
  }
  // Counts of the unfinished trials only, which an index reads without the finished ones
  // (a study of 50,000 is called on every 25 ms).
  const auto count = [&](store::TrialStatus s) {
    return store_.count_trials(study_id_, {.statuses = {s}});
  };
  int64_t room = total_ - next_number_;
  if (room <= 0) {
    publish();
    return 0;
  }
  int64_t queued = count(store::TrialStatus::kQueued);
  publish_held(queued);
  std::vector<Suggestion> in_flight;
  if (sampler_->adaptive()) {
    room = std::min(room, max_in_flight - queued - count(store::TrialStatus::kRunning));
    if (room <= 0) return 0;
    in_flight = pending();
  }
  int64_t added = 0;
  for (int batches = 0; batches < max_batches && room > 0; ++batches) {
    // The window: workers that claim nothing leave the rest of a big study unstored.
    if (!sampler_->adaptive() && queued >= options_.max_queued) break;
    std::vector<std::pair<std::string, store::NewTrial>> keyed;
    // Batches end at multiples of kTrialBatch, however the calls fall.
    const int64_t size = std::min(room, kTrialBatch - next_number_ % kTrialBatch);
    for (int64_t i = 0; i < size; ++i) {
      std::optional<Suggestion> s = sampler_->suggest(next_number_ + i, finished_, in_flight);
      if (!s) break;
      nlohmann::json params = s->trial.to_json();
      params.erase("dataset");
      keyed.emplace_back(pack_key(s->trial), store::NewTrial{0, s->trial.dataset, std::move(params),
                                                             relative_cost(s->trial)});
      if (sampler_->adaptive()) in_flight.push_back(std::move(*s));  // the constant liar sees it
    }
    if (keyed.empty()) break;
    // Numbered by shape within the transaction: trials that can share a pack are claimed
    // (and published) one after another, so a worker's packs fill.
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<store::NewTrial> batch;
    for (auto& [key, t] : keyed) {
      t.number = next_number_ + static_cast<int64_t>(batch.size());
      batch.push_back(std::move(t));
    }
    std::vector<int64_t> ids;
    try {
      ids = store_.add_trials(study_id_, batch);
    } catch (const Error& e) {
      // Cancelled since the caller saw it running: stop feeding it. Any other refusal (or
      // one for a study still running) propagates as it is.
      if (e.code() != ErrorCode::kFailedPrecondition ||
          store_.get_study(study_id_).status != store::StudyStatus::kCancelled)
        throw;
      stopped_ = true;
      throw failed_precondition("study '" + spec_.name + "' was cancelled: no more of its " +
                                "trials are queued (" + std::to_string(next_number_) + " of " +
                                std::to_string(total_) + " stored)");
    }
    if (sampler_->adaptive()) unfinished_.insert(ids.begin(), ids.end());
    const int64_t n = static_cast<int64_t>(batch.size());
    next_number_ += n;
    added += n;
    room -= n;
    queued += n;
    held_.insert(held_.end(), ids.begin(), ids.end());
    publish_held(queued);
  }
  return added;
}

void Coordinator::set_publish_window(int64_t trials) {
  if (trials < 0) throw invalid_argument("coordinator: negative publish window");
  publish_window_ = trials;
}

int64_t Coordinator::publish() {
  if (stopped_ || out_of_time_ || (held_.empty() && (publish_window_ == 0 || sampler_->adaptive())))
    return 0;
  return publish_held(store_.count_trials(study_id_, {.statuses = {store::TrialStatus::kQueued}}));
}

int64_t Coordinator::publish_held(int64_t queued) {
  const bool windowed = publish_window_ > 0 && !sampler_->adaptive();
  // Published and not started: the queued trials less those held back (a trial claimed or
  // failed otherwise leaves both counts; never below zero).
  const int64_t waiting = std::max<int64_t>(0, queued - static_cast<int64_t>(held_.size()));
  if (windowed) started_ += std::max<int64_t>(0, waiting_ - waiting);
  const int64_t room = windowed ? std::max<int64_t>(0, publish_window_ - waiting)
                                : static_cast<int64_t>(held_.size());
  const auto n = static_cast<int64_t>(std::min<size_t>(held_.size(), static_cast<size_t>(room)));
  if (n > 0) {
    queue_.publish(study_id_, std::vector<int64_t>(held_.begin(), held_.begin() + n));
    held_.erase(held_.begin(), held_.begin() + n);
  }
  waiting_ = waiting + n;
  return n;
}

bool Coordinator::complete() {
  // `run` asks every 25 ms: nothing is counted while trials remain to store, then only the
  // unfinished ones (an index range, not the whole study).
  if (next_number_ < total_ && !out_of_time_ && !stopped_) return false;
  return store_.count_trials(study_id_, {.statuses = {store::TrialStatus::kQueued,
                                                      store::TrialStatus::kRunning}}) == 0;
}

std::string Coordinator::out_of_time_note() const {
  return fmt::format(
      "budget of {} hours reached: {} of {} trials stored, the queued ones cancelled",
      spec_.budget_hours, next_number_, total_);
}

// Finished trials stay finished (the store changes only running trials' statuses), so the
// observations are read once and then followed: a trial that leaves the queued and running
// set is read when it does. Every trial passes through that set in this coordinator's sight:
// the ones stored before it started are read by sync_observations, the ones it adds (or
// another coordinator added under the same numbers) are returned by add_trials.
void Coordinator::sync_observations() {
  finished_.clear();  // a sync that threw part-way starts again from nothing
  unfinished_.clear();
  store::for_each_trial(store_, study_id_, {}, [&](const store::TrialRecord& r) {
    observe(r);
    return true;
  });
  synced_ = true;
}

void Coordinator::observe(const store::TrialRecord& r) {
  using store::TrialStatus;
  if (r.status == TrialStatus::kQueued || r.status == TrialStatus::kRunning) {
    unfinished_.insert(r.id);
    return;
  }
  if (r.status == TrialStatus::kCancelled) return;
  const bool ok =
      r.value.has_value() && r.status != TrialStatus::kFailed && r.status != TrialStatus::kDiverged;
  Observation o{r.number, trial_of(r), ok ? *r.value : std::nan(""), ok};
  // In number order, as samplers have always been given them; trials mostly finish in
  // about that order, so this is mostly an append.
  auto at = std::upper_bound(finished_.begin(), finished_.end(), o.number,
                             [](int64_t n, const Observation& x) { return n < x.number; });
  finished_.insert(at, std::move(o));
}

std::vector<Suggestion> Coordinator::pending() {
  if (!synced_) sync_observations();
  store::TrialFilter f;
  f.statuses = {store::TrialStatus::kQueued, store::TrialStatus::kRunning};
  std::vector<Suggestion> out;
  std::unordered_set<int64_t> still;
  for (const store::TrialRecord& r : store_.list_trials(study_id_, f)) {
    out.push_back({r.number, trial_of(r)});
    still.insert(r.id);
  }
  // The trials finished since the last call, all read before anything changes here: a store
  // gone away meanwhile throws, and the next call finds the same ones.
  std::vector<store::TrialRecord> finished;
  for (int64_t id : unfinished_)
    if (!still.count(id)) finished.push_back(store_.get_trial(id));
  unfinished_ = std::move(still);
  for (const store::TrialRecord& r : finished) observe(r);
  return out;
}

}  // namespace layerlab::study
