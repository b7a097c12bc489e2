// layerlab status STUDY: counts per status, the best trials of each dataset; with --json
// also each dataset's Pareto fronts (accuracy against parameter count and training time).
#include <fmt/format.h>

#include <iostream>

#include "analysis/pareto.h"
#include "analysis/views.h"
#include "cli/commands.h"
#include "cli/store_flag.h"
#include "cli/study_ref.h"
#include "cli/trial_table.h"
#include "common/text_safety.h"
#include "study/leaderboard.h"
#include "study/spec.h"

namespace layerlab::cli {

void add_status_command(CLI::App& app) {
  auto url = std::make_shared<std::string>();
  auto ref = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto top = std::make_shared<int>(5);
  CLI::App* cmd =
      app.add_subcommand("status", "Progress of a study and the best trials of each dataset");
  cmd->add_option("study", *ref, "study name or id")->required();
  add_store_option(cmd, *url);
  cmd->add_option("--top", *top, "best trials shown for each dataset")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_flag("--json", *json, "JSON output");
  cmd->callback([url, ref, json, top] {
    auto store = open_existing_store(*url);
    const auto s = resolve_study(*store, *ref);
    const auto spec = study::StudySpec::from_json(s.spec);
    const auto counts = store->counts(s.id);
    const auto boards = study::leaderboards(*store, s.id, spec, static_cast<size_t>(*top));
    if (*json) {
      nlohmann::json by_status = nlohmann::json::object();
      for (auto st : store::kAllTrialStatuses) by_status[store::to_string(st)] = counts[st];
      nlohmann::json out = {{"id", s.id},
                            {"name", s.name},
                            {"status", store::to_string(s.status)},
                            {"trials", spec.total_trials()},
                            {"counts", by_status},
                            {"metric", spec.metric},
                            {"best", analysis::best_per_dataset(boards_of(boards))},
                            {"leaderboards", leaderboards_json(boards)}};
      // The non-dominated trials of each dataset, read through the view the dashboard and
      // the report use (analysis/pareto.h has the rule).
      analysis::StudyCache cache(*store);
      cache.with_study(s.id, [&](analysis::StudyView& v) {
        out["pareto"] = analysis::pareto_json(v, analysis::pareto_fronts(v));
      });
      std::cout << out.dump(2) << "\n";
      return;
    }
    std::cout << fmt::format("study {} (id {}): {}, {} of {} trials finished\n", printable(s.name),
                             s.id, store::to_string(s.status), counts.finished(),
                             spec.total_trials());
    for (auto st : store::kAllTrialStatuses)
      if (counts[st]) std::cout << fmt::format("  {:<14} {}\n", store::to_string(st), counts[st]);
    std::cout << "best (" << printable(spec.metric) << ", " << (spec.maximize ? "max" : "min")
              << ") per dataset\n";
    print_leaderboards(std::cout, boards, spec);
  });
}

}  // namespace layerlab::cli
