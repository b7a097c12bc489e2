#include "report/depth.h"

#include <cmath>
#include <map>

namespace layerlab::report {
namespace {

using nlohmann::json;

std::string group_label(const Sample& s, const std::vector<int>& split,
                        const std::vector<Scalar>& key) {
  std::string out;
  for (size_t i = 0; i < split.size(); ++i) {
    const json v = s.level_json(split[i], key[i]);
    std::string part;
    if (v.is_boolean())
      part = (v.get<bool>() ? "" : "no ") + s.param_name(split[i]);
    else
      part = v.is_string() ? v.get<std::string>() : v.dump();
    out += (out.empty() ? "" : " \u00b7 ") + part;
  }
  return out.empty() ? "all" : out;
}

std::string depth_text(double d) {
  return number_json(d).dump();
}

}  // namespace

std::optional<Plateau> find_plateau(const std::vector<DepthPoint>& points, bool maximize) {
  if (points.empty()) return std::nullopt;
  auto better = [maximize](double a, double b) { return maximize ? a > b : a < b; };
  size_t best = 0;
  for (size_t i = 1; i < points.size(); ++i)
    if (better(points[i].metric.mean, points[best].metric.mean)) best = i;
  Plateau p;
  p.best_depth = points[best].depth;
  p.best_mean = points[best].metric.mean;
  const double se = points[best].metric.se().value_or(0.0);
  p.threshold = maximize ? p.best_mean - se : p.best_mean + se;
  for (const DepthPoint& q : points) {
    if (maximize ? q.metric.mean >= p.threshold : q.metric.mean <= p.threshold) {
      p.plateau_depth = q.depth;
      break;
    }
  }
  p.best_is_deepest = best + 1 == points.size();
  const double deepest = points.back().metric.mean;
  p.deeper_worse = !p.best_is_deepest && (maximize ? deepest < p.threshold : deepest > p.threshold);
  p.one_depth = points.size() == 1;
  p.observed = !p.one_depth && !(p.best_is_deepest && p.plateau_depth == p.best_depth);
  return p;
}

std::string plateau_verdict(const Plateau& p) {
  if (p.one_depth) return "one depth only: no plateau can be judged";
  if (!p.observed)
    return "no plateau observed: the best mean is at the deepest depth (" +
           depth_text(p.best_depth) + ") and no shallower depth is within its standard error";
  std::string out = "plateau from depth " + depth_text(p.plateau_depth);
  if (p.plateau_depth == p.best_depth)
    out += " (the best depth)";
  else
    out += " (within one standard error of the best, depth " + depth_text(p.best_depth) + ")";
  if (p.best_is_deepest) out += "; the best is the deepest depth tried";
  if (p.deeper_worse) out += "; deeper networks do worse";
  return out;
}

DepthAnalysis analyse_depth(const Sample& s) {
  DepthAnalysis a;
  const int depth = s.param(kDepthParam);
  if (depth < 0) {
    a.note = "the study has no hidden_layers parameter: no depth analysis";
    return a;
  }
  std::vector<int> split;
  if (const int act = s.param("activation"); act >= 0) split.push_back(act);
  for (const char* name : {"batch_norm", "residual"})
    if (s.varies(s.param(name))) split.push_back(s.param(name));
  for (int p : split) a.split_by.push_back(s.param_name(p));

  const ScalarsOrder order{ScalarOrder{s.view}};
  for (const auto& [dataset, trials] : s.by_dataset()) {
    std::map<std::vector<Scalar>, std::map<double, Moments>, ScalarsOrder> groups(order);
    for (const CachedTrial* t : trials) {
      const Scalar& d = t->params[static_cast<size_t>(depth)];
      if (d.string >= 0 || !std::isfinite(d.number)) continue;
      std::vector<Scalar> key;
      for (int p : split) key.push_back(t->params[static_cast<size_t>(p)]);
      groups[key][d.number].add(t->value);
    }
    for (const auto& [key, by_depth] : groups) {
      DepthCurve c;
      c.dataset = dataset;
      for (size_t i = 0; i < split.size(); ++i)
        c.group[s.param_name(split[i])] = s.level_json(split[i], key[i]);
      c.label = group_label(s, split, key);
      for (const auto& [d, m] : by_depth) c.points.push_back({d, m});
      c.plateau = *find_plateau(c.points, s.maximize());
      a.curves.push_back(std::move(c));
    }
  }
  if (a.curves.empty()) a.note = "no analysed trial has a numeric hidden_layers";
  return a;
}

json to_json(const DepthPoint& p) {
  return {{"depth", number_json(p.depth)},      {"n", p.metric.n},
          {"mean", number_json(p.metric.mean)}, {"se", number_json(p.metric.se())},
          {"sd", number_json(p.metric.sd())},   {"min", number_json(p.metric.min)},
          {"max", number_json(p.metric.max)}};
}

json to_json(const DepthAnalysis& a) {
  json curves = json::array();
  for (const DepthCurve& c : a.curves) {
    json points = json::array();
    for (const DepthPoint& p : c.points) points.push_back(to_json(p));
    const Plateau& p = c.plateau;
    curves.push_back({{"dataset", c.dataset},
                      {"group", c.group},
                      {"label", c.label},
                      {"points", std::move(points)},
                      {"plateau",
                       {{"best_depth", number_json(p.best_depth)},
                        {"best_mean", number_json(p.best_mean)},
                        {"threshold", number_json(p.threshold)},
                        {"plateau_depth", number_json(p.plateau_depth)},
                        {"best_is_deepest", p.best_is_deepest},
                        {"deeper_worse", p.deeper_worse},
                        {"one_depth", p.one_depth},
                        {"observed", p.observed},
                        {"verdict", plateau_verdict(p)}}}});
  }
  return {{"parameter", kDepthParam},
          {"split_by", a.split_by},
          {"note", a.note.empty() ? json(nullptr) : json(a.note)},
          {"rule", kPlateauRule},
          {"curves", std::move(curves)}};
}

}  // namespace layerlab::report
