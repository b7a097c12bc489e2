#include "worker/pruning.h"

#include <algorithm>

namespace layerlab::worker {
namespace {

// Reads take at most about 1/kReadAgainAfter of a slot's time: each (study, epoch) is read
// again once kReadAgainAfter rounds of reads (one of each) could have run.
constexpr int kReadAgainAfter = 20;
// (study, epoch) pairs whose values a slot keeps; the least recently used go first (a
// worker that serves study after study keeps only the recent ones).
constexpr size_t kMaxKept = 64;

}  // namespace

PruningView::Values& PruningView::values_for(const Key& key, Clock::time_point now) {
  auto it = values_.find(key);
  if (it == values_.end()) {
    if (values_.size() >= kMaxKept) {
      auto oldest = std::min_element(
          values_.begin(), values_.end(),
          [](const auto& a, const auto& b) { return a.second.used_at < b.second.used_at; });
      read_costs_ -= oldest->second.read_cost;
      values_.erase(oldest);
    }
    it = values_.emplace(key, Values{}).first;
  }
  it->second.used_at = now;
  return it->second;
}

void PruningView::read_again(Values& v, const Read& read) {
  const Clock::time_point started = now_();
  const std::vector<store::TrialValue> rows = read();
  Values fresh;
  fresh.by_trial.reserve(rows.size() + v.own.size());
  for (const store::TrialValue& r : rows) fresh.by_trial.emplace(r.trial_id, r.value);
  // Own values the store does not have yet (not flushed) stay; the store's win otherwise.
  for (const auto& [trial, value] : v.own)
    if (fresh.by_trial.emplace(trial, value).second) fresh.own.emplace(trial, value);
  for (const auto& [trial, value] : fresh.by_trial) fresh.ranking.insert(value);
  fresh.read = true;
  fresh.used_at = v.used_at;
  fresh.read_at = now_();
  fresh.read_cost = fresh.read_at - started;
  read_costs_ += fresh.read_cost - v.read_cost;
  v = std::move(fresh);
}

bool PruningView::should_prune(const study::Pruner& pruner, int64_t study_id,
                               store::EpochField field, int epoch, int64_t trial_id, double value,
                               bool maximize, const Read& read) {
  const Clock::time_point now = now_();
  Values& v = values_for({study_id, epoch, field}, now);
  if (!v.read || now - v.read_at >= kReadAgainAfter * read_costs_) read_again(v, read);
  // The others: without this trial's value (the store's, of an earlier flush, if any).
  auto it = v.by_trial.find(trial_id);
  if (it != v.by_trial.end()) v.ranking.erase(it->second);
  const bool prune = pruner.should_prune(epoch, value, v.ranking, maximize);
  v.ranking.insert(value);
  v.by_trial[trial_id] = value;
  v.own[trial_id] = value;
  return prune;
}

}  // namespace layerlab::worker
