// The flags that shape a worker, defined once: `layerlab worker` takes them, and `run` and
// `serve` take them too and pass them on to the local workers they start.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "worker/pack.h"
#include "worker/worker.h"

namespace layerlab::cli {

struct WorkerFlags {
  std::string store_url = store::kDefaultStoreUrl;
  std::string broker_url;  // empty: the store is the queue
  int threads = 1;
  worker::PackSetting pack;  // auto: each worker resolves it for its device
  std::string device = "cpu";
  double lease_seconds = 30;
  int max_attempts = 3;
};

// Adds --store, --broker, --threads, --pack, --device, --lease-seconds and --max-attempts
// (with their limits) to cmd, bound to f; the defaults are f's.
void add_worker_flags(CLI::App& cmd, WorkerFlags& f);

// The arguments of `layerlab worker` that carry f (WorkerPool moves the URLs into the
// children's environment).
std::vector<std::string> worker_args(const WorkerFlags& f);

// The pack a worker with f trains with: --pack as given, or auto resolved for --device.
worker::ResolvedPack resolved_pack(const WorkerFlags& f);

// f as the options of run_worker (the rest of them at their defaults), the pack resolved.
worker::WorkerOptions worker_options(const WorkerFlags& f);

}  // namespace layerlab::cli
