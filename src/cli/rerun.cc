// layerlab rerun STUDY TRIAL: trains a stored trial again on the CPU with its recorded
// thread count and compares the curve and final metrics with the record, bit for bit
// (every number but wall-clock seconds). Exit 0 when identical, kNotReproduced (4) when
// not; the store is only read.
#include "study/rerun.h"

#include <iostream>

#include "cli/commands.h"
#include "cli/store_flag.h"
#include "cli/study_ref.h"
#include "common/text_safety.h"

namespace layerlab::cli {
namespace {

// The exit code of `rerun` when the rerun differs from the record.
constexpr int kNotReproduced = 4;

}  // namespace

void add_rerun_command(CLI::App& app) {
  struct Flags {
    std::string url, ref;
    int64_t number = -1;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "rerun", "Train a stored trial again on the CPU and check it reproduces bit for bit");
  cmd->add_option("study", f->ref, "study name or id")->required();
  cmd->add_option("trial", f->number, "trial number (the # column of `layerlab trials`)")
      ->required();
  add_store_option(cmd, f->url);
  cmd->footer(
      "Exit status: 0 reproduced bit for bit, 4 a number differs (the first difference and "
      "the provenance fields that differ are printed), 2 unknown study or trial, 3 a trial that "
      "cannot be rerun (unfinished, failed, trained on a GPU).");
  cmd->callback([f] {
    auto store = open_existing_store(f->url);
    const auto study = resolve_study(*store, f->ref);
    const study::StoredTrial t = study::load_stored_trial(*store, study, f->number);
    const study::Retrained r = study::retrain(t, /*keep_parameters=*/false);
    for (const auto& line : study::describe_rerun(t, r)) std::cout << printable(line) << "\n";
    if (r.difference) command_exit_code() = kNotReproduced;
  });
}

}  // namespace layerlab::cli
