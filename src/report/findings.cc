#include "report/findings.h"

#include "analysis/views.h"

namespace layerlab::report {

using nlohmann::json;

Findings analyse(const StudyView& view) {
  Findings f;
  f.sample = select_trials(view);
  // The 2015 depth questions only where the study asks them: it varies the depth.
  if (f.sample.varies(f.sample.param(kDepthParam))) {
    f.depth = analyse_depth(f.sample);
    f.time = analyse_time(f.sample);
  } else {
    f.depth.note = "the study does not vary hidden_layers: no depth analysis";
  }
  f.effects = analyse_effects(f.sample);
  f.importance = analyse_importance(f.sample);
  f.best = best_configurations(f.sample);
  f.pareto = analysis::pareto_fronts(view);
  return f;
}

json findings_json(const Findings& f, const store::StudyRecord& study,
                   const store::StudyCounts& counts) {
  const StudyView& v = *f.sample.view;
  json varied = json::array();
  for (int p : f.sample.varied_params()) varied.push_back(f.sample.param_name(p));
  using store::TrialStatus;
  const json left_out = {
      {"pruned", f.sample.pruned},
      {"no_value", f.sample.no_value},
      {"diverged", counts[TrialStatus::kDiverged]},
      {"failed", counts[TrialStatus::kFailed]},
      {"cancelled", counts[TrialStatus::kCancelled]},
      {"not_finished", counts[TrialStatus::kQueued] + counts[TrialStatus::kRunning]},
  };
  json rules = {{"sample", kSampleRule},
                {"effects", kEffectRule},
                {"importance", kImportanceRule},
                {"best", kBestRule},
                {"pareto", analysis::kParetoRule}};
  const bool varies_depth = f.sample.varies(f.sample.param(kDepthParam));
  if (varies_depth) {
    rules["plateau"] = kPlateauRule;
    rules["time"] = kTimeRule;
  }
  return {
      {"report", "layerlab report"},
      {"version", 1},
      {"study",
       {{"id", study.id},
        {"name", study.name},
        {"status", store::to_string(study.status)},
        {"created_at", analysis::iso_time(study.created_at)},
        {"metric", v.spec.metric},
        {"goal", v.spec.maximize ? "maximize" : "minimize"},
        {"method", v.spec.method},
        {"datasets", v.spec.datasets},
        {"varied_parameters", std::move(varied)},
        {"varies_depth", varies_depth}}},
      {"trials",
       {{"planned", v.total},
        {"stored", counts.total()},
        {"counts", analysis::counts_json(counts)},
        {"analysed", f.sample.trials.size()},
        {"left_out", left_out}}},
      {"rules", std::move(rules)},
      {"depth", to_json(f.depth)},
      {"time", to_json(f.time)},
      {"effects", to_json(f.effects)},
      {"importance", to_json(f.importance)},
      {"best", to_json(f.best)},
      {"pareto", analysis::pareto_json(v, f.pareto)},
  };
}

}  // namespace layerlab::report
