#include "analysis/aggregates.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "common/error.h"
#include "common/moments.h"

namespace layerlab::analysis {
namespace {

using nlohmann::json;

std::string known_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "(none yet)" : out;
}

// Reads one number per trial: the y of a summary.
struct YReader {
  enum class Kind { kValue, kSeconds, kEpochs, kMetric } kind = Kind::kValue;
  int metric = -1;
  double operator()(const CachedTrial& t) const {
    switch (kind) {
      case Kind::kValue:
        return t.value;
      case Kind::kSeconds:
        return t.seconds;
      case Kind::kEpochs:
        return t.epochs_run;
      case Kind::kMetric:
        return static_cast<size_t>(metric) < t.metrics.size()
                   ? t.metrics[static_cast<size_t>(metric)]
                   : std::nan("");
    }
    return std::nan("");
  }
};

YReader y_reader(const StudyView& v, const std::string& y) {
  if (y == "value" || y.empty()) return {};
  if (y == "seconds") return {YReader::Kind::kSeconds};
  if (y == "epochs_run") return {YReader::Kind::kEpochs};
  const int m = v.metric_index(y);
  if (m < 0)
    throw invalid_argument("y: unknown '" + y + "'; use value, seconds, epochs_run or a metric: " +
                           known_list(v.metric_names));
  return {YReader::Kind::kMetric, m};
}

int param_or_throw(const StudyView& v, const char* what, const std::string& name) {
  const int i = v.param_index(name);
  if (i < 0)
    throw invalid_argument(std::string(what) + ": unknown parameter '" + name +
                           "'; the study's parameters are " + known_list(v.param_names));
  return i;
}

// Orders x values: numbers numerically before strings alphabetically.
struct ScalarLess {
  const StudyView& v;
  bool operator()(const Scalar& a, const Scalar& b) const {
    if ((a.string < 0) != (b.string < 0)) return a.string < 0;
    if (a.string < 0) return a.number < b.number;
    return v.strings[static_cast<size_t>(a.string)] < v.strings[static_cast<size_t>(b.string)];
  }
};

struct Series {
  explicit Series(const ScalarLess& less) : points(less) {}
  std::map<Scalar, Moments, ScalarLess> points;
  std::vector<double> xs, ys;  // numeric x only, for the fit
  bool numeric = true;
};

// A numeric x with more distinct values than this in one series (a continuous parameter:
// 50,000 trials, 50,000 learning rates, 5.5 MB of JSON) is summarised in this many bins.
constexpr size_t kMaxSummaryPoints = 200;

json point_json(const json& x, const Moments& m) {
  return {{"x", x}, {"mean", m.mean}, {"std", m.sd()}, {"n", m.n}, {"min", m.min}, {"max", m.max}};
}

// The series' points: one per x, or for a numeric x with more than kMaxSummaryPoints
// distinct values, consecutive x values merged into bins of about equal trial counts (a
// value never split), each at the mean x of its trials, with x_min and x_max.
json series_points(const StudyView& v, const Series& s) {
  json points = json::array();
  if (!s.numeric || s.points.size() <= kMaxSummaryPoints) {
    for (const auto& [x, m] : s.points) points.push_back(point_json(v.scalar_json(x), m));
    return points;
  }
  const size_t per_bin = (s.xs.size() + kMaxSummaryPoints - 1) / kMaxSummaryPoints;
  Moments bin;
  double x_sum = 0, x_min = 0, x_max = 0;
  for (auto it = s.points.begin(); it != s.points.end();) {
    const auto& [x, m] = *it;
    if (bin.n == 0) x_min = x.number;
    x_max = x.number;
    x_sum += x.number * static_cast<double>(m.n);
    bin.merge(m);
    if (++it == s.points.end() || bin.n >= per_bin) {
      json p = point_json(x_sum / static_cast<double>(bin.n), bin);
      p["x_min"] = x_min;
      p["x_max"] = x_max;
      points.push_back(std::move(p));
      bin = {};
      x_sum = 0;
    }
  }
  return points;
}

}  // namespace

std::optional<LinearFit> fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  if (n < 2) return std::nullopt;
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(n);
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(n);
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx == 0) return std::nullopt;  // one distinct x
  LinearFit f;
  f.n = n;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  f.r2 = syy == 0 ? 1.0 : (sxy * sxy) / (sxx * syy);
  return f;
}

json summarize(const StudyView& v, const SummaryQuery& q) {
  if (q.x.empty()) throw invalid_argument("x: required (a parameter name, e.g. hidden_layers)");
  const int xi = param_or_throw(v, "x", q.x);
  const int gi = q.group.empty() ? -1 : param_or_throw(v, "group", q.group);
  const YReader read_y = y_reader(v, q.y);
  const ScalarLess less{v};
  // (dataset, group) -> series; groups ordered like x values.
  std::map<int32_t, std::map<Scalar, Series, ScalarLess>> by_dataset;
  size_t used = 0, pruned = 0, no_value = 0;
  for (const CachedTrial& t : v.trials) {
    if (!analysed(t)) {
      ++(t.status == store::TrialStatus::kPruned ? pruned : no_value);
      continue;
    }
    const double y = read_y(t);
    const Scalar& x = t.params[static_cast<size_t>(xi)];
    if (!std::isfinite(y) || x.missing()) continue;
    const Scalar g = gi >= 0 ? t.params[static_cast<size_t>(gi)] : Scalar{};
    auto& groups = by_dataset.try_emplace(t.dataset, less).first->second;
    Series& s = groups.try_emplace(g, less).first->second;
    s.points[x].add(y);
    if (x.string >= 0) {
      s.numeric = false;
    } else {
      s.xs.push_back(x.number);
      s.ys.push_back(y);
    }
    ++used;
  }
  json series = json::array();
  for (const auto& [dataset, groups] : by_dataset) {
    for (const auto& [g, s] : groups) {
      json points = series_points(v, s);
      std::optional<LinearFit> fit;
      if (s.numeric) fit = fit_line(s.xs, s.ys);
      series.push_back({{"dataset", v.datasets[static_cast<size_t>(dataset)]},
                        {"group", gi >= 0 ? v.scalar_json(g) : json(nullptr)},
                        {"points", std::move(points)},
                        {"fit", fit ? json{{"slope", fit->slope},
                                           {"intercept", fit->intercept},
                                           {"r2", fit->r2},
                                           {"n", fit->n}}
                                    : json(nullptr)}});
    }
  }
  return {{"x", q.x},
          {"y", q.y.empty() ? "value" : q.y},
          {"group", q.group},
          {"trials", used},
          {"left_out", {{"pruned", pruned}, {"no_value", no_value}}},
          {"series", std::move(series)}};
}

json columns(const StudyView& v, const std::vector<std::string>& fields, size_t limit) {
  // Each field becomes a function of a trial.
  std::vector<std::function<json(const CachedTrial&)>> readers;
  for (const std::string& f : fields) {
    if (f == "number") {
      readers.push_back([](const CachedTrial& t) { return json(t.number); });
    } else if (f == "value") {
      readers.push_back([](const CachedTrial& t) { return number_or_null(t.value); });
    } else if (f == "seconds") {
      readers.push_back([](const CachedTrial& t) { return number_or_null(t.seconds); });
    } else if (f == "dataset") {
      readers.push_back(
          [&v](const CachedTrial& t) { return json(v.datasets[static_cast<size_t>(t.dataset)]); });
    } else if (f == "finished") {
      readers.push_back([](const CachedTrial& t) { return json(store::to_string(t.status)); });
    } else if (f.rfind("params.", 0) == 0) {
      const size_t i = static_cast<size_t>(param_or_throw(v, "fields", f.substr(7)));
      readers.push_back([&v, i](const CachedTrial& t) { return v.scalar_json(t.params[i]); });
    } else if (f.rfind("metrics.", 0) == 0) {
      const int m = v.metric_index(f.substr(8));
      if (m < 0)
        throw invalid_argument("fields: unknown metric '" + f.substr(8) +
                               "'; known: " + known_list(v.metric_names));
      readers.push_back([m](const CachedTrial& t) {
        const size_t k = static_cast<size_t>(m);
        return k < t.metrics.size() ? number_or_null(t.metrics[k]) : json(nullptr);
      });
    } else {
      throw invalid_argument("fields: unknown field '" + f +
                             "'; use number, value, seconds, dataset, finished, params.NAME or "
                             "metrics.NAME");
    }
  }
  std::vector<const CachedTrial*> rows;
  size_t pruned = 0, no_value = 0;
  for (const CachedTrial& t : v.trials) {
    if (analysed(t))
      rows.push_back(&t);
    else
      ++(t.status == store::TrialStatus::kPruned ? pruned : no_value);
  }
  std::sort(rows.begin(), rows.end(),
            [](const CachedTrial* a, const CachedTrial* b) { return a->number < b->number; });
  const size_t total = rows.size();
  if (limit > 0 && total > limit) {
    std::vector<const CachedTrial*> thinned;
    for (size_t i = 0; i < limit; ++i) thinned.push_back(rows[i * total / limit]);
    rows.swap(thinned);
  }
  json cols = json::object();
  json ids = json::array();
  for (const CachedTrial* t : rows) ids.push_back(t->id);
  cols["trial_id"] = std::move(ids);
  for (size_t f = 0; f < fields.size(); ++f) {
    json col = json::array();
    for (const CachedTrial* t : rows) col.push_back(readers[f](*t));
    cols[fields[f]] = std::move(col);
  }
  return {{"total", total},
          {"returned", rows.size()},
          {"left_out", {{"pruned", pruned}, {"no_value", no_value}}},
          {"columns", std::move(cols)}};
}

std::vector<study::Leaderboard> leaderboards(const StudyView& v, size_t limit) {
  study::LeaderboardBuilder b(v.spec.datasets, v.spec.maximize, limit);
  for (const CachedTrial& t : v.trials)
    b.add(v.datasets[static_cast<size_t>(t.dataset)], t.status, t.id, t.number, t.value);
  return b.boards();
}

}  // namespace layerlab::analysis
