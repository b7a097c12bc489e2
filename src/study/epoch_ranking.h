// The values of a set of trials after one epoch, ranked, for pruners: how many are finite,
// how many are NaN (diverged), the k-th lowest finite one and how many are strictly better
// than a value, each in O(log n), with values added and removed one at a time. A worker
// keeps one per (study, epoch) and updates it as values arrive, so a pruning decision does
// not sort every other trial's value again (a study of N trials then took O(N^2 log N)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>
#include <functional>
#include <span>
#include <utility>

namespace layerlab::study {

class EpochRanking {
 public:
  EpochRanking() = default;
  explicit EpochRanking(std::span<const double> values) {
    for (double v : values) insert(v);
  }

  void insert(double value);
  // Removes one occurrence of `value` (NaN: one NaN); false when there is none.
  bool erase(double value);

  size_t finite() const { return tree_.size(); }
  size_t nans() const { return nans_; }
  // The k-th lowest finite value, k < finite().
  double nth_lowest(size_t k) const;
  // How many finite values are strictly better than `value` for the goal (NaN: all).
  size_t count_better(double value, bool maximize) const;

 private:
  // Values tagged with an insertion counter, so equal values are distinct keys; GNU's
  // policy-based tree keeps subtree sizes for the order statistics.
  using Key = std::pair<double, uint64_t>;
  using Tree = __gnu_pbds::tree<Key, __gnu_pbds::null_type, std::less<Key>, __gnu_pbds::rb_tree_tag,
                                __gnu_pbds::tree_order_statistics_node_update>;
  Tree tree_;
  uint64_t next_tag_ = 0;
  size_t nans_ = 0;
};

}  // namespace layerlab::study
