// The options of the HTTP server (limits, allowed hosts and origins, the data directory),
// shared by `serve` and any command that starts a server for others to reach.
#pragma once

#include <CLI/CLI.hpp>

#include "server/context.h"

namespace layerlab::cli {

void add_server_flags(CLI::App& cmd, server::ServerOptions& o);

}  // namespace layerlab::cli
