#include "analysis/pareto.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "study/leaderboard.h"

namespace layerlab::analysis {
namespace {

using nlohmann::json;

bool has_cost(double c) {
  return std::isfinite(c) && c >= 0;
}

double cost_of(const CachedTrial& t, ParetoCost c) {
  return c == ParetoCost::kParameterCount ? t.parameter_count : t.seconds;
}

// A parameter count is an integer: print it as one.
json count_or_null(double v) {
  return std::isfinite(v) && std::abs(v) < 9e15 ? json(static_cast<int64_t>(v)) : json(nullptr);
}

}  // namespace

const char* to_string(ParetoCost c) {
  return c == ParetoCost::kParameterCount ? "parameter_count" : "seconds";
}

std::vector<size_t> non_dominated(std::span<const ParetoPoint> points, bool maximize) {
  const auto better = [maximize](double a, double b) { return maximize ? a > b : a < b; };
  std::vector<size_t> order;
  for (size_t i = 0; i < points.size(); ++i)
    if (!std::isnan(points[i].value) && has_cost(points[i].cost)) order.push_back(i);
  // Cheapest first; at one cost the best value first; then by number.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const ParetoPoint& p = points[a];
    const ParetoPoint& q = points[b];
    if (p.cost != q.cost) return p.cost < q.cost;
    if (p.value != q.value) return better(p.value, q.value);
    return p.number < q.number;
  });
  // Sweep by cost: a point is on the front when it has its cost's best value and that value
  // beats everything cheaper (anything cheaper and at least as good dominates it).
  std::vector<size_t> front;
  std::optional<double> cheaper_best;  // the best value of every strictly cheaper point
  for (size_t i = 0; i < order.size();) {
    const double cost = points[order[i]].cost;
    const double group_best = points[order[i]].value;
    const bool beats = !cheaper_best || better(group_best, *cheaper_best);
    for (; i < order.size() && points[order[i]].cost == cost; ++i)
      if (beats && points[order[i]].value == group_best) front.push_back(order[i]);
    if (beats) cheaper_best = group_best;
  }
  return front;
}

std::vector<DatasetPareto> pareto_fronts(const StudyView& v) {
  // The study's datasets in its order, then others with trials (as the leaderboards do).
  std::vector<DatasetPareto> out;
  std::map<std::string, size_t> at;
  const auto dataset = [&](const std::string& name) -> DatasetPareto& {
    auto [it, added] = at.emplace(name, out.size());
    if (added) out.push_back(DatasetPareto{name, {}, {}});
    return out[it->second];
  };
  for (const std::string& d : v.spec.datasets) dataset(d);
  for (size_t i = 0; i < v.trials.size(); ++i) {
    const CachedTrial& t = v.trials[i];
    DatasetPareto& d = dataset(v.datasets[static_cast<size_t>(t.dataset)]);
    if (study::ranks(t.status) && !std::isnan(t.value)) d.ranked.push_back(i);
  }
  for (DatasetPareto& d : out) {
    std::sort(d.ranked.begin(), d.ranked.end(),
              [&](size_t a, size_t b) { return v.trials[a].number < v.trials[b].number; });
    for (ParetoCost c : kParetoCosts) {
      ParetoFront f{c, {}, 0};
      std::vector<ParetoPoint> points;
      for (size_t i : d.ranked) {
        const CachedTrial& t = v.trials[i];
        points.push_back({t.number, t.value, cost_of(t, c)});
        if (!has_cost(points.back().cost)) ++f.without_cost;
      }
      for (size_t k : non_dominated(points, v.spec.maximize)) f.trials.push_back(d.ranked[k]);
      d.fronts.push_back(std::move(f));
    }
  }
  return out;
}

json pareto_trial_json(const StudyView& v, const CachedTrial& t) {
  json params = json::object();
  for (size_t i = 0; i < v.param_names.size() && i < t.params.size(); ++i)
    if (!t.params[i].missing()) params[v.param_names[i]] = v.scalar_json(t.params[i]);
  return {{"id", t.id},
          {"number", t.number},
          {"value", number_or_null(t.value)},
          {"parameter_count", count_or_null(t.parameter_count)},
          {"seconds", number_or_null(t.seconds)},
          {"params", std::move(params)}};
}

json pareto_json(const StudyView& v, const std::vector<DatasetPareto>& fronts) {
  json out = json::array();
  for (const DatasetPareto& d : fronts) {
    json by_cost = json::object();
    for (const ParetoFront& f : d.fronts) {
      json trials = json::array();
      for (size_t i : f.trials) trials.push_back(pareto_trial_json(v, v.trials[i]));
      by_cost[to_string(f.cost)] = {{"without_cost", f.without_cost},
                                    {"trials", std::move(trials)}};
    }
    out.push_back({{"dataset", d.dataset}, {"ranked", d.ranked.size()}, {"fronts", by_cost}});
  }
  return out;
}

json pareto_view(const StudyView& v, size_t limit) {
  const std::vector<DatasetPareto> fronts = pareto_fronts(v);
  json datasets = pareto_json(v, fronts);
  for (size_t k = 0; k < fronts.size(); ++k) {
    const DatasetPareto& d = fronts[k];
    // Evenly spaced by number, and every trial of a front.
    std::set<size_t> keep;
    const size_t total = d.ranked.size();
    if (limit == 0 || total <= limit) {
      keep.insert(d.ranked.begin(), d.ranked.end());
    } else {
      for (size_t i = 0; i < limit; ++i) keep.insert(d.ranked[i * total / limit]);
      for (const ParetoFront& f : d.fronts) keep.insert(f.trials.begin(), f.trials.end());
    }
    std::vector<size_t> rows(keep.begin(), keep.end());
    std::sort(rows.begin(), rows.end(),
              [&](size_t a, size_t b) { return v.trials[a].number < v.trials[b].number; });
    json ids = json::array(), numbers = json::array(), values = json::array(),
         counts = json::array(), seconds = json::array(), params = json::object();
    for (const std::string& name : v.param_names) params[name] = json::array();
    for (size_t i : rows) {
      const CachedTrial& t = v.trials[i];
      ids.push_back(t.id);
      numbers.push_back(t.number);
      values.push_back(number_or_null(t.value));
      counts.push_back(count_or_null(t.parameter_count));
      seconds.push_back(number_or_null(t.seconds));
      for (size_t p = 0; p < v.param_names.size(); ++p)
        params[v.param_names[p]].push_back(p < t.params.size() ? v.scalar_json(t.params[p])
                                                               : json(nullptr));
    }
    datasets[k]["points"] = {{"total", total},
                             {"returned", rows.size()},
                             {"id", std::move(ids)},
                             {"number", std::move(numbers)},
                             {"value", std::move(values)},
                             {"parameter_count", std::move(counts)},
                             {"seconds", std::move(seconds)},
                             {"params", std::move(params)}};
  }
  return {{"metric", v.spec.metric},
          {"goal", v.spec.maximize ? "maximize" : "minimize"},
          {"limit", limit},
          {"rule", kParetoRule},
          {"datasets", std::move(datasets)}};
}

}  // namespace layerlab::analysis
