// One file per subcommand; each registers itself on the app and sets its callback.
// Callbacks throw layerlab::Error; main() turns errors into a one-line message and an
// exit code.
#pragma once

#include <CLI/CLI.hpp>

namespace layerlab::cli {

// The exit code a command asks for without an error (e.g. 130 after an interrupted run).
int& command_exit_code();

void add_train_command(CLI::App& app);
void add_datasets_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_worker_command(CLI::App& app);
void add_studies_command(CLI::App& app);
void add_status_command(CLI::App& app);
void add_trials_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_cancel_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_submit_command(CLI::App& app);
void add_rerun_command(CLI::App& app);
void add_best_command(CLI::App& app);
void add_predict_command(CLI::App& app);

}  // namespace layerlab::cli
