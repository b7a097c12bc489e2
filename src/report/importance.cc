#include "report/importance.h"

#include <algorithm>
#include <map>

namespace layerlab::report {
namespace {

using nlohmann::json;

// The trials' coordinates in [0, 1) for parameter p: its search domain's own (Domain::
// to_unit: log scale, equal cells for choices) when the study defines it and every value
// lies in it; otherwise equal cells for its distinct values in order.
std::vector<double> coordinates(const Sample& s, int p,
                                const std::vector<const CachedTrial*>& trials) {
  const auto i = static_cast<size_t>(p);
  std::vector<double> out;
  out.reserve(trials.size());
  const auto& parameters = s.view->spec.parameters;
  const auto domain = std::find_if(parameters.begin(), parameters.end(), [&](const auto& named) {
    return named.first == s.param_name(p);
  });
  if (domain != parameters.end()) {
    for (const CachedTrial* t : trials) {
      const std::optional<double> u = domain->second.to_unit(s.level_json(p, t->params[i]));
      if (!u) break;
      out.push_back(*u);
    }
    if (out.size() == trials.size()) return out;
    out.clear();
  }
  std::map<Scalar, size_t, ScalarOrder> levels(ScalarOrder{s.view});
  for (const CachedTrial* t : trials) levels.emplace(t->params[i], 0);
  size_t k = 0;
  for (auto& [level, index] : levels) index = k++;
  for (const CachedTrial* t : trials)
    out.push_back((static_cast<double>(levels.at(t->params[i])) + 0.5) /
                  static_cast<double>(levels.size()));
  return out;
}

bool constant(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [&](double x) { return x == v.front(); });
}

DatasetImportance analyse_dataset(const Sample& s, const std::string& dataset,
                                  const std::vector<const CachedTrial*>& trials,
                                  const FanovaOptions& options) {
  DatasetImportance d;
  d.dataset = dataset;
  d.n = trials.size();
  std::vector<int> params;
  std::vector<std::vector<double>> columns;
  for (int p : s.varied_params()) {
    std::vector<double> c = coordinates(s, p, trials);
    if (constant(c)) continue;  // varies on other datasets only
    params.push_back(p);
    columns.push_back(std::move(c));
  }
  if (params.empty()) {
    d.verdict = ImportanceVerdict::kNothingVaries;
    return d;
  }
  if (d.n < kMinImportanceTrials) {
    d.verdict = ImportanceVerdict::kTooFewTrials;
    return d;
  }
  std::vector<std::vector<double>> x(trials.size(), std::vector<double>(params.size()));
  std::vector<double> y;
  for (size_t r = 0; r < trials.size(); ++r) {
    for (size_t c = 0; c < params.size(); ++c) x[r][c] = columns[c][r];
    y.push_back(trials[r]->value);
  }
  const FanovaResult f = fanova(x, y, options);
  d.oob_r2 = f.oob_r2;
  if (f.oob_r2 < kMinExplainedR2) {
    d.verdict = ImportanceVerdict::kNoise;
    return d;
  }
  for (size_t c = 0; c < params.size(); ++c)
    d.ranked.push_back(
        {s.param_name(params[c]), f.main_effects[c], f.main_effects[c].low >= kImportantShare});
  std::stable_sort(d.ranked.begin(), d.ranked.end(),
                   [](const ParamImportance& a, const ParamImportance& b) {
                     return a.share.share > b.share.share;
                   });
  d.interactions = f.interactions;
  return d;
}

json share_json(const Share& s) {
  return {
      {"share", number_json(s.share)}, {"low", number_json(s.low)}, {"high", number_json(s.high)}};
}

}  // namespace

const char* to_string(ImportanceVerdict v) {
  switch (v) {
    case ImportanceVerdict::kShares:
      return "shares";
    case ImportanceVerdict::kTooFewTrials:
      return "too_few_trials";
    case ImportanceVerdict::kNoise:
      return "noise";
    case ImportanceVerdict::kNothingVaries:
      return "nothing_varies";
  }
  return "?";
}

std::vector<DatasetImportance> analyse_importance(const Sample& s, const FanovaOptions& options) {
  std::vector<DatasetImportance> out;
  for (const auto& [dataset, trials] : s.by_dataset())
    out.push_back(analyse_dataset(s, dataset, trials, options));
  return out;
}

json to_json(const std::vector<DatasetImportance>& importance) {
  json out = json::array();
  for (const DatasetImportance& d : importance) {
    json ranked = json::array();
    for (const ParamImportance& p : d.ranked) {
      json item = share_json(p.share);
      item["parameter"] = p.parameter;
      item["important"] = p.important;
      ranked.push_back(std::move(item));
    }
    json item = {{"dataset", d.dataset},
                 {"n", d.n},
                 {"min_n", kMinImportanceTrials},
                 {"verdict", to_string(d.verdict)},
                 {"ranked", std::move(ranked)}};
    if (d.verdict == ImportanceVerdict::kShares || d.verdict == ImportanceVerdict::kNoise)
      item["oob_r2"] = number_json(d.oob_r2);
    if (d.verdict == ImportanceVerdict::kShares) item["interactions"] = share_json(d.interactions);
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace layerlab::report
