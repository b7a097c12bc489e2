// Reading a study's trials a page at a time, so that a caller holds one page however large
// the study (a study of 50,000 trials read whole is hundreds of MB of records).
#pragma once

#include <cstdint>
#include <functional>

#include "store/store.h"

namespace layerlab::store {

inline constexpr int64_t kTrialPage = 1000;

// Calls each(t) for the study's trials that `filter` selects (statuses, dataset, value...),
// by number, in keyset pages of `page` trials (each page reads its own rows, not the ones
// before it). Stops when each returns false. `filter` must keep its order (by number,
// ascending) and have no limit, offset or after_number: the pages set those.
void for_each_trial(Store& store, int64_t study_id, TrialFilter filter,
                    const std::function<bool(const TrialRecord&)>& each, int64_t page = kTrialPage);

// The same a page at a time (never an empty one): for readers that fetch what goes with a
// page's trials in one query (Store::list_attempts_of).
void for_each_trial_page(Store& store, int64_t study_id, TrialFilter filter,
                         const std::function<bool(const std::vector<TrialRecord>&)>& each,
                         int64_t page = kTrialPage);

}  // namespace layerlab::store
