// SIGINT/SIGTERM -> a flag the long-running commands poll (run, worker, serve).
#pragma once

#include <atomic>

namespace layerlab::cli {

// Installs handlers for SIGINT and SIGTERM that set the returned flag (once per process).
const std::atomic<bool>& stop_requested();

}  // namespace layerlab::cli
