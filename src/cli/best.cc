// layerlab best STUDY [--dataset NAME] [--save model.safetensors]: the best finished trial of
// each dataset of a study (by its metric and goal), ranked within the dataset, never across
// datasets (study/leaderboard.h), with how many trials share its value. --save needs one
// dataset: the study's only one or --dataset. It saves the model kept in the store for that
// trial (a study with keep_weights) as it is, without training; otherwise the trial is
// trained again on the CPU with its weights kept, checked against its record bit for bit (as
// `rerun`; a difference is a warning), and saved with its input standardisation as
// safetensors (model/model.h). It says which of the two it did.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "cli/commands.h"
#include "cli/kept_model.h"
#include "cli/store_flag.h"
#include "cli/study_ref.h"
#include "cli/trial_table.h"
#include "common/error.h"
#include "common/strings.h"
#include "common/text_safety.h"
#include "model/model.h"
#include "study/leaderboard.h"
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

// The board of the dataset asked for; kInvalidArgument naming the study's datasets (and
// the closest one) for another name.
const study::StoredLeaderboard& board_of(const std::vector<study::StoredLeaderboard>& boards,
                                         const study::StudySpec& spec, const std::string& dataset) {
  for (const study::StoredLeaderboard& b : boards)
    if (b.board.dataset == dataset) return b;
  const std::string close = closest_match(dataset, spec.datasets);
  throw invalid_argument(fmt::format(
      "--dataset: study {} has no dataset '{}'{}; its datasets: {}", spec.name, dataset,
      close.empty() ? "" : " (did you mean '" + close + "'?)", join(spec.datasets, ", ")));
}

}  // namespace

void add_best_command(CLI::App& app) {
  struct Flags {
    std::string url, ref, dataset, save;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "best",
      "The best finished trial of each dataset of a study; --save trains it again and saves "
      "the model");
  cmd->add_option("study", f->ref, "study name or id")->required();
  cmd->add_option("--dataset", f->dataset,
                  "the dataset whose best trial to show or save (needed with --save when the "
                  "study has several: trials rank within a dataset, never across datasets)");
  cmd->add_option("--save", f->save,
                  "save the best trial's model to this safetensors file: the one kept in the "
                  "store (keep_weights) when there is one, else trained again on the CPU and "
                  "checked against its record");
  add_store_option(cmd, f->url);
  cmd->callback([f] {
    auto store = open_existing_store(f->url);
    const auto study = resolve_study(*store, f->ref);
    const auto spec = study::StudySpec::from_json(study.spec);
    const bool several = spec.datasets.size() > 1;
    if (!f->save.empty() && several && f->dataset.empty())
      throw invalid_argument(fmt::format(
          "--save: study {} has {} datasets ({}) and each has its own best trial; name the one "
          "to save with --dataset",
          study.name, spec.datasets.size(), join(spec.datasets, ", ")));
    const auto boards = study::leaderboards(*store, study.id, spec, 1);
    const std::string name = printable(study.name), metric = printable(spec.metric);
    const std::string goal = spec.maximize ? "maximize" : "minimize";
    if (several && f->dataset.empty()) {
      if (std::all_of(boards.begin(), boards.end(), [](const auto& b) { return b.trials.empty(); }))
        throw not_found(
            fmt::format("study {} has no finished trial with a {} yet", study.name, spec.metric));
      std::cout << fmt::format(
          "best trial of each dataset of study {} by {} ({}); --dataset NAME for one\n", name,
          metric, goal);
      print_leaderboards(std::cout, boards, spec);
      return;
    }
    const study::StoredLeaderboard& board =
        board_of(boards, spec, f->dataset.empty() ? spec.datasets.at(0) : f->dataset);
    if (board.trials.empty())
      throw not_found(fmt::format("study {} has no finished trial with a {}{} yet", study.name,
                                  spec.metric, several ? " on " + board.board.dataset : ""));
    const store::TrialRecord& top = board.trials[0];
    std::cout << fmt::format("best trial of study {} on {} by {} ({}): trial {}, {} {}\n", name,
                             printable(board.board.dataset), metric, goal, top.number, metric,
                             *top.value);
    if (board.board.best_count > 1)
      std::cout << fmt::format(
          "note: {} trials of {} share this value; trial {} is the first of them by number\n",
          board.board.best_count, printable(board.board.dataset), top.number);
    print_trial_table(std::cout, board.trials, spec);
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
