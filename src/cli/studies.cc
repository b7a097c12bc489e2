// layerlab studies: every study in the store with its progress and each dataset's best value.
#include <fmt/format.h>

#include <iostream>

#include "analysis/views.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/store_flag.h"
#include "cli/trial_table.h"
#include "common/text_safety.h"
#include "study/leaderboard.h"
#include "study/spec.h"

namespace layerlab::cli {

void add_studies_command(CLI::App& app) {
  auto url = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("studies", "List the studies in a store");
  add_store_option(cmd, *url);
  cmd->add_flag("--json", *json, "JSON output");
  cmd->callback([url, json] {
    auto store = open_existing_store(*url);
    nlohmann::json out = nlohmann::json::array();
    if (!*json)
      std::cout << fmt::format("{:>4}  {:<32} {:<10} {:>9} {:>9}  {}\n", "id", "name", "status",
                               "finished", "trials", "best");
    for (const auto& s : store->list_studies()) {
      const auto spec = study::StudySpec::from_json(s.spec);
      const auto counts = store->counts(s.id);
      // Each dataset's best: a value on one dataset says nothing about another.
      const auto boards = boards_of(study::leaderboards(*store, s.id, spec, 1));
      if (*json) {
        out.push_back({{"id", s.id},
                       {"name", s.name},
                       {"status", store::to_string(s.status)},
                       {"finished", counts.finished()},
                       {"trials", spec.total_trials()},
                       {"metric", spec.metric},
                       {"best", analysis::best_per_dataset(boards)}});
        continue;
      }
      const std::string best = best_summary(spec.metric, boards);
      std::cout << fmt::format("{:>4}  {:<32} {:<10} {:>9} {:>9}  {}\n", s.id, printable(s.name),
                               store::to_string(s.status), counts.finished(), spec.total_trials(),
                               best.empty() ? "-" : printable(best));
    }
    if (*json) std::cout << out.dump(2) << "\n";
  });
}

}  // namespace layerlab::cli
