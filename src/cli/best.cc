// layerlab best STUDY [--save model.safetensors]: the best finished trial of a study (by its
// metric and goal); with --save, the trial is trained again on the CPU with its weights
// kept, checked against its record bit for bit (as `rerun`; a difference is a warning), and
// saved with its input standardisation as safetensors (model/model.h).
#include <fmt/format.h>

#include <cstring>
#include <iostream>

#include "cli/commands.h"
#include "cli/reproduce.h"
#include "cli/store_flag.h"
#include "cli/study_ref.h"
#include "cli/trial_table.h"
#include "common/error.h"
#include "data/dataset.h"
#include "model/model.h"
#include "nn/registries.h"

namespace layerlab::cli {
namespace {

using nlohmann::json;

// The standardisation the training used: study::prepare_data keeps only its result, so it is
// fitted again on the same split and checked to give the training's features exactly.
data::Scaler training_scaler(const study::TrialSpec& spec, const study::PreparedData& prepared) {
  const data::Dataset all = data::load(spec.dataset);
  data::Split raw = data::split(all, spec.validation_fraction, spec.split_seed, spec.stratify);
  data::Scaler scaler = data::fit_scaler(raw.train);
  data::apply_scaler(scaler, raw.train);
  const auto& x = prepared.split.train.x;
  if (raw.train.x.size() != x.size() ||
      std::memcmp(raw.train.x.data(), x.data(), x.size() * sizeof(float)) != 0)
    throw internal_error("best --save: the standardisation fitted again on " + spec.dataset +
                         " does not give the features the training used");
  return scaler;
}

model::Model export_model(const StoredTrial& t, const Retrained& r) {
  const study::TrialSpec& spec = t.trial_spec;
  const data::Dataset& train = r.data.split.train;
  const nn::TrainResult& result = r.outcome.result;
  model::Model m;
  m.architecture.inputs = train.features;
  m.architecture.hidden = spec.params.hidden_widths();
  m.architecture.outputs = r.data.task.outputs();
  m.architecture.activation = nn::activations().get(spec.params.activation);
  m.architecture.batch_norm = spec.params.batch_norm;
  m.architecture.residual = spec.params.residual;
  m.activation = spec.params.activation;
  m.classes = r.data.task.classes;
  m.targets = r.data.task.targets;
  m.class_names = train.class_names;
  m.feature_names = train.feature_names;
  m.scaler = training_scaler(spec, r.data);
  m.parameters = result.parameters;
  m.running_mean = result.running_mean;
  m.running_var = result.running_var;
  const json here = study::provenance(*backend::make_backend("cpu", t.threads));
  m.info = {{"dataset", spec.dataset},
            {"params", spec.to_json().dump()},
            {"study", t.study.name},
            {"trial", std::to_string(t.trial.number)},
            {"status", store::to_string(t.trial.status)},
            {"metric", t.spec.metric},
            {"goal", t.spec.maximize ? "maximize" : "minimize"},
            {"metric_value", t.trial.value ? fmt::format("{}", *t.trial.value) : ""},
            {"epochs", std::to_string(result.epochs.size())},
            {"reproduced", r.difference ? "false" : "true"},
            {"layerlab_version", here["layerlab_version"].get<std::string>()},
            {"layerlab_revision", here["revision"].get<std::string>()},
            {"provenance", here.dump()}};
  return m;
}

std::string shape_text(const model::Model& m) {
  std::string s = std::to_string(m.architecture.inputs);
  for (int w : m.architecture.hidden) s += " -> " + std::to_string(w);
  return s + " -> " + std::to_string(m.architecture.outputs);
}

}  // namespace

void add_best_command(CLI::App& app) {
  struct Flags {
    std::string url, ref, save;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "best", "The best finished trial of a study; --save trains it again and saves the model");
  cmd->add_option("study", f->ref, "study name or id")->required();
  cmd->add_option("--save", f->save,
                  "train the best trial again on the CPU, check it against its record and save "
                  "the model to this safetensors file");
  add_store_option(cmd, f->url);
  cmd->callback([f] {
    auto store = open_existing_store(f->url);
    const auto study = resolve_study(*store, f->ref);
    const auto spec = study::StudySpec::from_json(study.spec);
    const auto best = leaders(*store, study.id, spec, 1);
    if (best.empty())
      throw not_found(
          fmt::format("study {} has no finished trial with a {} yet", study.name, spec.metric));
    const store::TrialRecord& top = best[0];
    std::cout << fmt::format("best trial of study {} by {} ({}): trial {}, {} {}\n", study.name,
                             spec.metric, spec.maximize ? "maximize" : "minimize", top.number,
                             spec.metric, *top.value);
    print_trial_table(std::cout, best, spec);
    if (f->save.empty()) return;

    const StoredTrial t = load_stored_trial(*store, study, top, /*for_export=*/true);
    std::cout << fmt::format("training trial {} again on the CPU ({} thread{}) to save it\n",
                             top.number, t.threads, t.threads == 1 ? "" : "s");
    std::cout.flush();
    const Retrained r = retrain(t, /*keep_parameters=*/true);
    const std::vector<std::string> lines = describe_rerun(t, r);
    if (r.difference)
      std::cout << "warning: the retrained model differs from the record; saving it anyway\n";
    for (const auto& line : lines) std::cout << line << "\n";
    const nn::TrainResult& result = r.outcome.result;
    if (result.status == nn::TrialStatus::kEarlyStopped && result.best_epoch > 0 &&
        static_cast<size_t>(result.best_epoch) != result.epochs.size())
      std::cout << fmt::format(
          "note: trial {} stopped early; the saved weights are those of its last epoch ({}), "
          "its {} is from its best epoch ({})\n",
          top.number, result.epochs.size(), spec.metric, result.best_epoch);
    const model::Model m = export_model(t, r);
    model::save_model(f->save, m);
    std::cout << fmt::format("saved {} ({} parameters, {} {}{}{}, {})\n", f->save,
                             m.architecture.parameter_count(), shape_text(m), m.activation,
                             m.architecture.batch_norm ? ", batch norm" : "",
                             m.architecture.residual ? ", residual" : "",
                             m.classification() ? fmt::format("{} classes", m.classes)
                                                : fmt::format("{} regression targets", m.targets));
  });
}

}  // namespace layerlab::cli
