#include "study/epoch_ranking.h"

#include <cmath>
#include <limits>

#include "common/error.h"

namespace layerlab::study {

void EpochRanking::insert(double value) {
  if (std::isnan(value)) {
    ++nans_;
    return;
  }
  tree_.insert({value, next_tag_++});
}

bool EpochRanking::erase(double value) {
  if (std::isnan(value)) {
    if (nans_ == 0) return false;
    --nans_;
    return true;
  }
  auto it = tree_.lower_bound({value, 0});
  if (it == tree_.end() || it->first != value) return false;
  tree_.erase(it);
  return true;
}

double EpochRanking::nth_lowest(size_t k) const {
  if (k >= tree_.size())
    throw invalid_argument("EpochRanking: rank " + std::to_string(k) + " of " +
                           std::to_string(tree_.size()) + " finite values");
  return tree_.find_by_order(k)->first;
}

size_t EpochRanking::count_better(double value, bool maximize) const {
  if (std::isnan(value)) return tree_.size();
  if (!maximize) return tree_.order_of_key({value, 0});  // strictly lower
  // Tags never reach the maximum, so every key of `value` orders before this one.
  return tree_.size() - tree_.order_of_key({value, std::numeric_limits<uint64_t>::max()});
}

}  // namespace layerlab::study
