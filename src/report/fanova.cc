#include "report/fanova.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace layerlab::report {
namespace {

using Matrix = std::vector<std::vector<double>>;

// splitmix64: small, and the same sequence on every platform (the standard distributions
// are not), so a report's intervals are reproducible.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }

 private:
  uint64_t state_;
};

struct Node {
  int feature = -1;  // -1: a leaf
  double threshold = 0;
  int left = -1, right = -1;
  double value = 0;
};
using Tree = std::vector<Node>;

// CART regression: each split minimises the children's squared error over every column and
// every threshold between two distinct values (the midpoint), down to single rows.
class TreeBuilder {
 public:
  TreeBuilder(const Matrix& x, const std::vector<double>& y, int max_depth)
      : x_(x), y_(y), max_depth_(max_depth) {}

  Tree build(std::vector<size_t> rows) {
    rows_ = std::move(rows);
    nodes_.clear();
    grow(0, rows_.size(), 0);
    return std::move(nodes_);
  }

 private:
  struct Split {
    int feature = -1;
    double threshold = 0;
  };

  int grow(size_t begin, size_t end, int depth) {
    const int id = static_cast<int>(nodes_.size());
    nodes_.emplace_back();
    double sum = 0;
    for (size_t i = begin; i < end; ++i) sum += y_[rows_[i]];
    const double mean = sum / static_cast<double>(end - begin);
    nodes_[static_cast<size_t>(id)].value = mean;
    if (end - begin < 2 || depth >= max_depth_) return id;
    const Split split = best_split(begin, end, mean);
    if (split.feature < 0) return id;
    const auto f = static_cast<size_t>(split.feature);
    const auto middle = std::partition(rows_.begin() + static_cast<std::ptrdiff_t>(begin),
                                       rows_.begin() + static_cast<std::ptrdiff_t>(end),
                                       [&](size_t r) { return x_[r][f] < split.threshold; });
    const auto mid = static_cast<size_t>(middle - rows_.begin());
    const int left = grow(begin, mid, depth + 1);
    const int right = grow(mid, end, depth + 1);
    Node& node = nodes_[static_cast<size_t>(id)];
    node.feature = split.feature;
    node.threshold = split.threshold;
    node.left = left;
    node.right = right;
    return id;
  }

  // The split with the largest drop in squared error, on y centred at the node's mean (the
  // drop is then sL^2/nL + sR^2/nR); none when no split drops it by more than rounding.
  Split best_split(size_t begin, size_t end, double mean) {
    const size_t n = end - begin;
    double total = 0;
    for (size_t i = begin; i < end; ++i) total += (y_[rows_[i]] - mean) * (y_[rows_[i]] - mean);
    Split best;
    double best_gain = 1e-12 * total;
    const size_t columns = x_[rows_[begin]].size();
    for (size_t f = 0; f < columns; ++f) {
      pairs_.clear();
      for (size_t i = begin; i < end; ++i)
        pairs_.emplace_back(x_[rows_[i]][f], y_[rows_[i]] - mean);
      std::sort(pairs_.begin(), pairs_.end());
      double left_sum = 0;
      for (size_t i = 1; i < n; ++i) {
        left_sum += pairs_[i - 1].second;
        if (!(pairs_[i - 1].first < pairs_[i].first)) continue;
        const double nl = static_cast<double>(i), nr = static_cast<double>(n - i);
        const double gain = left_sum * left_sum / nl + left_sum * left_sum / nr;
        if (gain > best_gain) {
          best_gain = gain;
          best = {static_cast<int>(f), (pairs_[i - 1].first + pairs_[i].first) / 2};
        }
      }
    }
    return best;
  }

  const Matrix& x_;
  const std::vector<double>& y_;
  const int max_depth_;
  std::vector<size_t> rows_;
  Tree nodes_;
  std::vector<std::pair<double, double>> pairs_;
};

double predict(const Tree& tree, const std::vector<double>& x) {
  size_t at = 0;
  while (tree[at].feature >= 0)
    at = static_cast<size_t>(x[static_cast<size_t>(tree[at].feature)] < tree[at].threshold
                                 ? tree[at].left
                                 : tree[at].right);
  return tree[at].value;
}

// A leaf's box: [lo[j], hi[j]) in every column.
struct Leaf {
  std::vector<double> lo, hi;
  double value = 0;
  double volume = 0;
};

void collect_leaves(const Tree& tree, size_t at, std::vector<double>& lo, std::vector<double>& hi,
                    std::vector<Leaf>& out) {
  const Node& node = tree[at];
  if (node.feature < 0) {
    double volume = 1;
    for (size_t j = 0; j < lo.size(); ++j) volume *= hi[j] - lo[j];
    out.push_back({lo, hi, node.value, volume});
    return;
  }
  const auto f = static_cast<size_t>(node.feature);
  const double saved_lo = lo[f], saved_hi = hi[f];
  hi[f] = std::clamp(node.threshold, saved_lo, saved_hi);
  collect_leaves(tree, static_cast<size_t>(node.left), lo, hi, out);
  hi[f] = saved_hi;
  lo[f] = std::clamp(node.threshold, saved_lo, saved_hi);
  collect_leaves(tree, static_cast<size_t>(node.right), lo, hi, out);
  lo[f] = saved_lo;
}

// The tree's main-effect shares per column, then the interactions' share; empty when the
// tree is constant over the space (nothing to share out).
std::vector<double> decompose(const Tree& tree, size_t columns) {
  std::vector<Leaf> leaves;
  std::vector<double> lo(columns, 0.0), hi(columns, 1.0);
  collect_leaves(tree, 0, lo, hi, leaves);
  double mean = 0;
  for (const Leaf& l : leaves) mean += l.volume * l.value;
  double variance = 0;
  for (const Leaf& l : leaves) variance += l.volume * (l.value - mean) * (l.value - mean);
  if (!(variance > 0)) return {};
  std::vector<double> shares(columns + 1, 0.0);
  double main_sum = 0;
  std::vector<double> cuts, marginal;
  for (size_t i = 0; i < columns; ++i) {
    cuts.assign({0.0, 1.0});
    for (const Leaf& l : leaves) {
      cuts.push_back(l.lo[i]);
      cuts.push_back(l.hi[i]);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    // The mean over the other columns at each interval of column i: every leaf adds its
    // centred value times its volume in the other columns across the intervals it spans.
    marginal.assign(cuts.size(), 0.0);
    for (const Leaf& l : leaves) {
      const double width = l.hi[i] - l.lo[i];
      if (!(width > 0)) continue;
      const auto a = std::lower_bound(cuts.begin(), cuts.end(), l.lo[i]) - cuts.begin();
      const auto b = std::lower_bound(cuts.begin(), cuts.end(), l.hi[i]) - cuts.begin();
      const double c = (l.value - mean) * l.volume / width;
      marginal[static_cast<size_t>(a)] += c;
      marginal[static_cast<size_t>(b)] -= c;
    }
    double m = 0, vi = 0;
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      m += marginal[k];
      vi += (cuts[k + 1] - cuts[k]) * m * m;
    }
    shares[i] = vi / variance;
    main_sum += shares[i];
  }
  shares[columns] = std::max(0.0, 1 - main_sum);
  return shares;
}

struct OutOfBag {
  std::vector<double> sum;
  std::vector<int> count;
};

// The mean of the trees' shares (main effects, then interactions) of a forest fitted to
// `pool` (row ids, repeats allowed); oob, when given, gathers each row's predictions by
// the trees that did not draw it.
std::vector<double> forest_shares(const Matrix& x, const std::vector<double>& y,
                                  const std::vector<size_t>& pool, int trees,
                                  const FanovaOptions& o, Rng& rng, OutOfBag* oob) {
  const size_t columns = x[0].size();
  std::vector<double> mean(columns + 1, 0.0);
  int counted = 0;
  TreeBuilder builder(x, y, o.max_depth);
  std::vector<char> in_bag;
  for (int t = 0; t < trees; ++t) {
    const size_t m = std::min(pool.size(), o.max_rows_per_tree);
    std::vector<size_t> rows(m);
    for (size_t& r : rows) r = pool[rng.below(pool.size())];
    if (oob) {
      in_bag.assign(y.size(), 0);
      for (size_t r : rows) in_bag[r] = 1;
    }
    const Tree tree = builder.build(std::move(rows));
    if (oob)
      for (size_t r : pool)
        if (!in_bag[r]) {
          in_bag[r] = 1;  // once per tree, whatever the pool repeats
          oob->sum[r] += predict(tree, x[r]);
          ++oob->count[r];
        }
    const std::vector<double> shares = decompose(tree, columns);
    if (shares.empty()) continue;
    for (size_t j = 0; j <= columns; ++j) mean[j] += shares[j];
    ++counted;
  }
  if (counted > 0)
    for (double& v : mean) v /= counted;
  return mean;
}

// The q-quantile of sorted values, interpolated linearly.
double quantile(const std::vector<double>& sorted, double q) {
  const double at = q * static_cast<double>(sorted.size() - 1);
  const auto i = static_cast<size_t>(at);
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (at - static_cast<double>(i)) * (sorted[i + 1] - sorted[i]);
}

}  // namespace

FanovaResult fanova(const Matrix& x, const std::vector<double>& y, const FanovaOptions& o) {
  FanovaResult out;
  const size_t n = y.size();
  if (n < 2 || x.size() != n) return out;
  const size_t columns = x[0].size();
  out.main_effects.resize(columns);
  Rng rng(o.seed);

  std::vector<size_t> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = i;
  OutOfBag oob{std::vector<double>(n, 0.0), std::vector<int>(n, 0)};
  const std::vector<double> shares = forest_shares(x, y, all, o.trees, o, rng, &oob);

  double y_mean = 0;
  for (size_t i = 0; i < n; ++i)
    if (oob.count[i] > 0) {
      y_mean += y[i];
      ++out.oob_rows;
    }
  if (out.oob_rows > 0) {
    y_mean /= static_cast<double>(out.oob_rows);
    double residual = 0, total = 0;
    for (size_t i = 0; i < n; ++i) {
      if (oob.count[i] == 0) continue;
      const double predicted = oob.sum[i] / oob.count[i];
      residual += (y[i] - predicted) * (y[i] - predicted);
      total += (y[i] - y_mean) * (y[i] - y_mean);
    }
    out.oob_r2 = total > 0 ? 1 - residual / total : 0;
  }

  std::vector<std::vector<double>> replicates(columns + 1);
  std::vector<size_t> pool(n);
  for (int b = 0; b < o.resamples; ++b) {
    for (size_t& r : pool) r = rng.below(n);
    const std::vector<double> s = forest_shares(x, y, pool, o.resample_trees, o, rng, nullptr);
    for (size_t j = 0; j <= columns; ++j) replicates[j].push_back(s[j]);
  }
  const double tail = (1 - o.interval) / 2;
  for (size_t j = 0; j <= columns; ++j) {
    Share& s = j < columns ? out.main_effects[j] : out.interactions;
    s.share = shares[j];
    s.low = s.high = shares[j];
    if (replicates[j].empty()) continue;
    std::sort(replicates[j].begin(), replicates[j].end());
    s.low = std::min(s.share, quantile(replicates[j], tail));
    s.high = std::max(s.share, quantile(replicates[j], 1 - tail));
  }
  return out;
}

}  // namespace layerlab::report
