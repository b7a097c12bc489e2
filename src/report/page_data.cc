#include "report/page_data.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/aggregates.h"
#include "analysis/pareto.h"
#include "analysis/views.h"

namespace layerlab::report {
namespace {

using nlohmann::json;
using study::Distribution;

// The study page's choices (study.js: variedParams, logParams, choiceParams, numericParams).
struct ParamChoices {
  std::vector<std::string> varied, log, choice, numeric;
};

ParamChoices param_choices(const study::StudySpec& spec) {
  ParamChoices c;
  for (const auto& [name, d] : spec.parameters) {
    const bool many = d.distribution == Distribution::kValues ? d.values.size() > 1 : !d.fixed();
    if (d.distribution == Distribution::kValues) c.choice.push_back(name);
    if (d.distribution == Distribution::kLogUniform || d.distribution == Distribution::kQLogUniform)
      c.log.push_back(name);
    if (!many) continue;
    c.varied.push_back(name);
    const bool numeric =
        d.distribution != Distribution::kValues ||
        std::all_of(d.values.begin(), d.values.end(), [](const json& v) { return v.is_number(); });
    if (numeric) c.numeric.push_back(name);
  }
  if (c.varied.empty())
    for (const auto& [name, d] : spec.parameters) c.varied.push_back(name);
  return c;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The learning curves of each dataset's best trial, as the study page draws them.
json best_curves(store::Store& store, const analysis::StudyView& v) {
  std::map<int32_t, const analysis::CachedTrial*> best;
  for (const analysis::CachedTrial& t : v.trials) {
    if (!std::isfinite(t.value)) continue;
    const analysis::CachedTrial*& b = best[t.dataset];
    if (!b || (v.spec.maximize ? t.value > b->value : t.value < b->value) ||
        (t.value == b->value && t.number < b->number))
      b = &t;
  }
  json out = json::array();
  for (const auto& [dataset, t] : best) {
    const store::TrialRecord record = store.get_trial(t->id);
    json curve = json::array();
    for (const store::EpochRecord& e : store.list_epochs(t->id, record.attempts))
      curve.push_back(analysis::epoch_json(e));
    out.push_back({{"trial", analysis::trial_summary(record)}, {"curve", std::move(curve)}});
  }
  return out;
}

}  // namespace

json study_page_data(store::Store& store, const store::StudyRecord& study,
                     const analysis::StudyView& v) {
  const ParamChoices c = param_choices(v.spec);
  json s =
      analysis::study_summary(study, store.counts(study.id), v.total, analysis::leaderboards(v, 1));
  s["spec"] = study.spec;
  s["datasets"] = v.spec.datasets;
  json names = json::array();
  for (const auto& [name, domain] : v.spec.parameters) names.push_back(name);
  s["parameters"] = std::move(names);
  s["best"] = analysis::best_with_trials(s["best"], [&](int64_t t) { return store.get_trial(t); });

  // x and group as the study page picks them first.
  std::string x = "seed";
  if (contains(c.varied, "hidden_layers"))
    x = "hidden_layers";
  else if (!c.numeric.empty())
    x = c.numeric.front();
  else if (!c.varied.empty())
    x = c.varied.front();
  const std::string group =
      contains(c.varied, "activation") && x != "activation" ? "activation" : "";
  std::vector<std::string> fields = {"value", "dataset"};
  for (const std::string& p : c.varied) fields.push_back("params." + p);
  return {{"study", std::move(s)},
          {"x", x},
          {"group", group},
          {"parameters", c.varied},
          {"log_params", c.log},
          {"choice_params", c.choice},
          {"metric_summary", analysis::summarize(v, {x, "value", group})},
          {"time_summary", analysis::summarize(v, {x, "seconds", ""})},
          {"history", analysis::columns(v, {"number", "value", "dataset"}, kHistoryLimit)},
          {"parcoords", analysis::columns(v, fields, kParcoordsLimit)},
          {"pareto", analysis::pareto_view(v, kParetoLimit)},
          {"curves", best_curves(store, v)}};
}

}  // namespace layerlab::report
