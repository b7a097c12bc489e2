#include "store/trial_pages.h"

#include "common/error.h"

namespace layerlab::store {

void for_each_trial_page(Store& store, int64_t study_id, TrialFilter filter,
                         const std::function<bool(const std::vector<TrialRecord>&)>& each,
                         int64_t page) {
  if (filter.sort != TrialSort::kNumber || filter.descending || filter.limit != 0 ||
      filter.offset != 0 || filter.after_number || page < 1)
    throw invalid_argument(
        "for_each_trial: pages go by number, ascending, with no limit, offset or after_number "
        "of their own, and hold at least one trial");
  filter.limit = page;
  while (true) {
    const std::vector<TrialRecord> trials = store.list_trials(study_id, filter);
    if (trials.empty() || !each(trials)) return;
    if (static_cast<int64_t>(trials.size()) < page) return;
    filter.after_number = trials.back().number;
  }
}

void for_each_trial(Store& store, int64_t study_id, TrialFilter filter,
                    const std::function<bool(const TrialRecord&)>& each, int64_t page) {
  for_each_trial_page(
      store, study_id, std::move(filter),
      [&](const std::vector<TrialRecord>& trials) {
        for (const TrialRecord& t : trials)
          if (!each(t)) return false;
        return true;
      },
      page);
}

}  // namespace layerlab::store
