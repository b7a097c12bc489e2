#include "report/importance.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "report/stats.h"

namespace layerlab::report {
namespace {

using nlohmann::json;

// Group ids of the trials by the value of parameter p (quantile bins for a numeric one with
// many values).
std::vector<int> groups_of(const Sample& s, int p, const std::vector<const CachedTrial*>& trials,
                           ParamImportance& out) {
  const auto i = static_cast<size_t>(p);
  bool numeric = true;
  std::vector<double> x;
  x.reserve(trials.size());
  for (const CachedTrial* t : trials) {
    const Scalar& v = t->params[i];
    numeric = numeric && v.string < 0 && std::isfinite(v.number);
    x.push_back(v.number);
  }
  if (numeric) {
    std::vector<double> sorted = x;
    std::sort(sorted.begin(), sorted.end());
    const auto distinct = std::unique(sorted.begin(), sorted.end()) - sorted.begin();
    if (distinct > kImportanceBins) {
      out.binned = true;
      return quantile_bins(x, kImportanceBins, &out.groups);
    }
  }
  std::map<Scalar, int, ScalarOrder> index(ScalarOrder{s.view});
  std::vector<int> group;
  group.reserve(trials.size());
  for (const CachedTrial* t : trials)
    group.push_back(index.emplace(t->params[i], static_cast<int>(index.size())).first->second);
  out.groups = static_cast<int>(index.size());
  return group;
}

}  // namespace

std::vector<int> quantile_bins(const std::vector<double>& x, int bins, int* groups) {
  const size_t n = x.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&x](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<int> out(n, 0);
  int id = -1, last_bin = -1;
  for (size_t r = 0; r < n; ++r) {
    const size_t i = order[r];
    if (r > 0 && x[i] == x[order[r - 1]]) {  // a tie stays in its value's bin
      out[i] = id;
      continue;
    }
    const int bin = static_cast<int>(r * static_cast<size_t>(bins) / n);
    if (bin != last_bin) {
      ++id;
      last_bin = bin;
    }
    out[i] = id;
  }
  if (groups) *groups = id + 1;
  return out;
}

std::vector<DatasetImportance> analyse_importance(const Sample& s) {
  std::vector<DatasetImportance> out;
  const std::vector<int> params = s.varied_params();
  for (const auto& [dataset, trials] : s.by_dataset()) {
    DatasetImportance d;
    d.dataset = dataset;
    d.n = trials.size();
    std::vector<double> y;
    Moments m;
    for (const CachedTrial* t : trials) {
      y.push_back(t->value);
      m.add(t->value);
    }
    d.variance = m.n ? m.m2 / static_cast<double>(m.n) : 0;
    double sum = 0;
    for (int p : params) {
      ParamImportance imp;
      imp.parameter = s.param_name(p);
      const std::vector<int> group = groups_of(s, p, trials, imp);
      if (imp.groups < 2) continue;  // constant on this dataset
      imp.share = explained_share(y, group, imp.groups);
      sum += imp.share;
      d.ranked.push_back(imp);
    }
    std::stable_sort(
        d.ranked.begin(), d.ranked.end(),
        [](const ParamImportance& a, const ParamImportance& b) { return a.share > b.share; });
    d.rest = std::max(0.0, 1 - sum);
    out.push_back(std::move(d));
  }
  return out;
}

json to_json(const std::vector<DatasetImportance>& importance) {
  json out = json::array();
  for (const DatasetImportance& d : importance) {
    json ranked = json::array();
    for (const ParamImportance& p : d.ranked)
      ranked.push_back({{"parameter", p.parameter},
                        {"share", number_json(p.share)},
                        {"groups", p.groups},
                        {"binned", p.binned}});
    out.push_back({{"dataset", d.dataset},
                   {"n", d.n},
                   {"variance", number_json(d.variance)},
                   {"ranked", std::move(ranked)},
                   {"rest", number_json(d.rest)}});
  }
  return out;
}

}  // namespace layerlab::report
