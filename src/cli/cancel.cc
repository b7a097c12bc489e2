// layerlab cancel STUDY: queued trials are cancelled; running ones finish.
#include <iostream>

#include "cli/commands.h"
#include "cli/store_flag.h"
#include "cli/study_ref.h"
#include "common/error.h"
#include "common/text_safety.h"

namespace layerlab::cli {

void add_cancel_command(CLI::App& app) {
  auto url = std::make_shared<std::string>();
  auto ref = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("cancel", "Cancel a study's queued trials");
  cmd->add_option("study", *ref, "study name or id")->required();
  add_store_option(cmd, *url);
  cmd->callback([url, ref] {
    auto store = open_existing_store(*url);
    const auto s = resolve_study(*store, *ref);
    // The store refuses too, in the update itself (a study that finishes meanwhile).
    if (s.status != store::StudyStatus::kRunning)
      throw failed_precondition("study '" + printable(s.name) + "' is already " +
                                store::to_string(s.status) + ": only a running study is cancelled");
    const int64_t n = store->cancel_study(s.id);
    std::cout << "cancelled study " << printable(s.name) << ": " << n
              << " queued trials cancelled\n";
  });
}

}  // namespace layerlab::cli
