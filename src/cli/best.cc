// layerlab best STUDY [--save model.safetensors]: the best finished trial of a study (by its
// metric and goal); with --save, the model kept in the store for that trial (a study with
// keep_weights) is saved as it is, without training; otherwise the trial is trained again on
// the CPU with its weights kept, checked against its record bit for bit (as `rerun`; a
// difference is a warning), and saved with its input standardisation as safetensors
// (model/model.h). It says which of the two it did.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/kept_model.h"
#include "cli/store_flag.h"
#include "cli/study_ref.h"
#include "cli/trial_table.h"
#include "common/error.h"
#include "common/text_safety.h"
#include "model/model.h"
#include "study/rerun.h"
#include "study/trained_model.h"

namespace layerlab::cli {
namespace {

// The retrained model with what the record says of it.
model::Model export_model(const study::StoredTrial& t, const study::Retrained& r) {
  model::Model m = study::trained_model(r.outcome, r.data);
  m.info.insert({{"study", t.study.name},
                 {"trial", std::to_string(t.trial.number)},
                 {"status", store::to_string(t.trial.status)},
                 {"metric", t.spec.metric},
                 {"goal", t.spec.maximize ? "maximize" : "minimize"},
                 {"metric_value", t.trial.value ? fmt::format("{}", *t.trial.value) : ""},
                 {"reproduced", r.difference ? "false" : "true"}});
  return m;
}

std::string shape_text(const model::Model& m) {
  std::string s = std::to_string(m.architecture.inputs);
  for (int w : m.architecture.hidden) s += " -> " + std::to_string(w);
  return s + " -> " + std::to_string(m.architecture.outputs);
}

void print_saved(const std::string& path, const model::Model& m) {
  std::cout << fmt::format("saved {} ({} parameters, {} {}{}{}, {})\n", path,
                           m.architecture.parameter_count(), shape_text(m), printable(m.activation),
                           m.architecture.batch_norm ? ", batch norm" : "",
                           m.architecture.residual ? ", residual" : "",
                           m.classification() ? fmt::format("{} classes", m.classes)
                                              : fmt::format("{} regression targets", m.targets));
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
                  "save the best trial's model to this safetensors file: the one kept in the "
                  "store (keep_weights) when there is one, else trained again on the CPU and "
                  "checked against its record");
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
    const std::string name = printable(study.name), metric = printable(spec.metric);
    std::cout << fmt::format("best trial of study {} by {} ({}): trial {}, {} {}\n", name, metric,
                             spec.maximize ? "maximize" : "minimize", top.number, metric,
                             *top.value);
    print_trial_table(std::cout, best, spec);
    if (f->save.empty()) return;

    const std::string where =
        fmt::format("the model kept for trial {} of study {}", top.number, study.name);
    if (const std::optional<model::Model> kept = find_kept_model(*store, top.id, where)) {
      model::save_model(f->save, *kept);
      std::cout << fmt::format(
          "using the model kept in the store for trial {} (keep_weights): not trained again\n",
          top.number);
      print_saved(f->save, *kept);
      return;
    }
    std::cout << fmt::format("no model kept in the store for trial {}", top.number)
              << (spec.keep_top > 0 ? "" : " (the study has no keep_weights)") << "\n";
    const study::StoredTrial t = study::load_stored_trial(*store, study, top, /*for_export=*/true);
    std::cout << fmt::format("training trial {} again on the CPU ({} thread{}) to save it\n",
                             top.number, t.threads, t.threads == 1 ? "" : "s");
    std::cout.flush();
    const study::Retrained r = study::retrain(t, /*keep_parameters=*/true);
    const std::vector<std::string> lines = study::describe_rerun(t, r);
    if (r.difference)
      std::cout << "warning: the retrained model differs from the record; saving it anyway\n";
    for (const auto& line : lines) std::cout << printable(line) << "\n";
    const nn::TrainResult& result = r.outcome.result;
    if (result.status == nn::TrialStatus::kEarlyStopped && result.best_epoch > 0 &&
        static_cast<size_t>(result.best_epoch) != result.epochs.size())
      std::cout << fmt::format(
          "note: trial {} stopped early; the saved weights are those of its last epoch ({}), "
          "its {} is from its best epoch ({})\n",
          top.number, result.epochs.size(), metric, result.best_epoch);
    const model::Model m = export_model(t, r);
    model::save_model(f->save, m);
    print_saved(f->save, m);
  });
}

}  // namespace layerlab::cli
