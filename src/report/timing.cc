#include "report/timing.h"

#include <cmath>
#include <map>

namespace layerlab::report {
namespace {

using nlohmann::json;

std::string verdict(const TimeFit& f) {
  if (!f.fit) return "one depth only: no fit";
  if (f.points.size() < 3) return "two depths only: linearity cannot be judged";
  return *f.r2_means >= kLinearR2 ? "about linear" : "not linear";
}

}  // namespace

std::vector<TimeFit> analyse_time(const Sample& s) {
  std::vector<TimeFit> out;
  const int depth = s.param(kDepthParam);
  if (depth < 0) return out;
  for (const auto& [dataset, trials] : s.by_dataset()) {
    std::vector<double> xs, ys;
    std::map<double, Moments> by_depth;
    for (const CachedTrial* t : trials) {
      const Scalar& d = t->params[static_cast<size_t>(depth)];
      if (d.string >= 0 || !std::isfinite(d.number) || !std::isfinite(t->seconds)) continue;
      xs.push_back(d.number);
      ys.push_back(t->seconds);
      by_depth[d.number].add(t->seconds);
    }
    if (xs.empty()) continue;
    TimeFit f;
    f.dataset = dataset;
    std::vector<double> mx, my;
    for (const auto& [d, m] : by_depth) {
      f.points.push_back({d, m});
      mx.push_back(d);
      my.push_back(m.mean);
    }
    f.fit = analysis::fit_line(xs, ys);
    if (auto means = analysis::fit_line(mx, my)) f.r2_means = means->r2;
    f.verdict = verdict(f);
    out.push_back(std::move(f));
  }
  return out;
}

json to_json(const std::vector<TimeFit>& fits) {
  json out = json::array();
  for (const TimeFit& f : fits) {
    json points = json::array();
    for (const DepthPoint& p : f.points) points.push_back(to_json(p));
    json fit = nullptr;
    if (f.fit)
      fit = {{"slope", f.fit->slope},
             {"intercept", f.fit->intercept},
             {"r2", f.fit->r2},
             {"n", f.fit->n}};
    out.push_back({{"dataset", f.dataset},
                   {"n", f.fit ? f.fit->n : f.points.front().metric.n},
                   {"points", std::move(points)},
                   {"fit", std::move(fit)},
                   {"r2_means", number_json(f.r2_means)},
                   {"verdict", f.verdict}});
  }
  return out;
}

}  // namespace layerlab::report
