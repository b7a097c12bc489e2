// layerlab trials STUDY [--sort KEY] [--limit N] [--status S]: the trials of a study.
#include <iostream>

#include "cli/commands.h"
#include "cli/store_flag.h"
#include "cli/study_ref.h"
#include "cli/trial_table.h"
#include "common/error.h"
#include "study/spec.h"

namespace layerlab::cli {
namespace {

struct TrialsFlags {
  std::string url, ref, sort = "number", status;
  int64_t limit = 50;
  bool descending = false, json = false;
};

// KEY: number | value | started | finished | duration | a parameter name.
store::TrialFilter filter_of(const TrialsFlags& f, const study::StudySpec& spec) {
  store::TrialFilter filter;
  filter.limit = f.limit;
  filter.descending = f.descending;
  if (!f.status.empty()) filter.statuses = {store::parse_trial_status(f.status)};
  if (f.sort == "number") {
    filter.sort = store::TrialSort::kNumber;
  } else if (f.sort == "value") {
    filter.sort = store::TrialSort::kValue;
  } else if (f.sort == "started") {
    filter.sort = store::TrialSort::kStarted;
  } else if (f.sort == "finished") {
    filter.sort = store::TrialSort::kFinished;
  } else if (f.sort == "duration") {
    filter.sort = store::TrialSort::kDuration;
  } else {
    bool known = false;
    for (const auto& [name, domain] : spec.parameters) known |= name == f.sort;
    if (!known && f.sort != "seed")
      throw invalid_argument("--sort: unknown key '" + f.sort +
                             "'; use number, value, started, finished, duration or a parameter");
    filter.sort = store::TrialSort::kParam;
    filter.param = f.sort;
  }
  return filter;
}

}  // namespace

void add_trials_command(CLI::App& app) {
  auto f = std::make_shared<TrialsFlags>();
  CLI::App* cmd = app.add_subcommand("trials", "List the trials of a study");
  cmd->add_option("study", f->ref, "study name or id")->required();
  add_store_option(cmd, f->url);
  cmd->add_option("--sort", f->sort, "number, value, started, finished, duration or a parameter")
      ->capture_default_str();
  cmd->add_flag("--desc", f->descending, "descending order");
  cmd->add_option("--limit", f->limit, "at most this many (0: all)")->capture_default_str();
  cmd->add_option("--status", f->status, "only this status (queued, running, completed, ...)");
  cmd->add_flag("--json", f->json, "JSON output");
  cmd->callback([f] {
    auto store = open_existing_store(f->url);
    const auto s = resolve_study(*store, f->ref);
    const auto spec = study::StudySpec::from_json(s.spec);
    const auto trials = store->list_trials(s.id, filter_of(*f, spec));
    if (f->json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& t : trials) out.push_back(trial_json(t));
      std::cout << out.dump(2) << "\n";
      return;
    }
    print_trial_table(std::cout, trials, spec);
  });
}

}  // namespace layerlab::cli
