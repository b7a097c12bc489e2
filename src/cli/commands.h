// One file per subcommand; each registers itself on the app and sets its callback.
// Callbacks throw layerlab::Error; main() turns errors into a one-line message and an
// exit code.
#pragma once

#include <CLI/CLI.hpp>

namespace layerlab::cli {

void add_train_command(CLI::App& app);
void add_datasets_command(CLI::App& app);

}  // namespace layerlab::cli
