// layerlab: the command-line edge. Errors thrown inside become "layerlab CMD: error: ..."
// and an exit code: 2 bad input, 3 missing prerequisite, 1 anything else.
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "common/error.h"

namespace {

int exit_code(layerlab::ErrorCode code) {
  switch (code) {
    case layerlab::ErrorCode::kInvalidArgument:
    case layerlab::ErrorCode::kNotFound:
      return 2;
    case layerlab::ErrorCode::kFailedPrecondition:
      return 3;
    default:
      return 1;
  }
}

}  // namespace

int& layerlab::cli::command_exit_code() {
  static int code = 0;
  return code;
}

int main(int argc, char** argv) {
  CLI::App app{"layerlab: systematic experiments on neural-network design"};
  app.require_subcommand(1);
  app.set_version_flag("--version", LAYERLAB_VERSION);
  layerlab::cli::add_train_command(app);
  layerlab::cli::add_run_command(app);
  layerlab::cli::add_worker_command(app);
  layerlab::cli::add_studies_command(app);
  layerlab::cli::add_status_command(app);
  layerlab::cli::add_trials_command(app);
  layerlab::cli::add_export_command(app);
  layerlab::cli::add_report_command(app);
  layerlab::cli::add_cancel_command(app);
  layerlab::cli::add_serve_command(app);
  layerlab::cli::add_submit_command(app);
  layerlab::cli::add_rerun_command(app);
  layerlab::cli::add_best_command(app);
  layerlab::cli::add_predict_command(app);
  layerlab::cli::add_datasets_command(app);
  std::string command = "layerlab";
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const layerlab::Error& e) {
    for (const CLI::App* sub : app.get_subcommands()) command += " " + sub->get_name();
    std::cerr << command << ": error: " << e.what() << "\n";
    return exit_code(e.code());
  }
  return layerlab::cli::command_exit_code();
}
