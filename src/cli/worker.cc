// layerlab worker: takes trials from the store or the broker, trains them (--slots at a
// time, each slot packs of up to --pack same-shape trials), reports; on SIGTERM hands back
// the trials in hand and exits.
#include "worker/worker.h"

#include <iostream>

#include "cli/commands.h"
#include "cli/signals.h"
#include "cli/study_ref.h"
#include "common/error.h"

namespace layerlab::cli {

void add_worker_command(CLI::App& app) {
  auto opts = std::make_shared<worker::WorkerOptions>();
  auto study = std::make_shared<std::string>();
  auto lease_seconds = std::make_shared<double>(30.0);
  CLI::App* cmd = app.add_subcommand("worker", "Claim, train and report trials until stopped");
  cmd->add_option("--store", opts->store_url, "store URL (sqlite:PATH or postgresql://...)")
      ->capture_default_str();
  cmd->add_option("--broker", opts->broker_url,
                  "broker URL (amqp://user:pass@host:port/vhost); default: the store is the queue");
  cmd->add_option("--slots", opts->slots, "trials trained at once in this process")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--study", *study, "only trials of this study (name or id); default: any");
  cmd->add_option("--device", opts->device, "cpu or cuda[:N]")->capture_default_str();
  cmd->add_option("--pack", opts->pack,
                  "train up to this many same-shape trials at once as one batched computation")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  cmd->add_option("--prefetch", opts->prefetch,
                  "with --broker: trials in hand at once (default slots x pack); more lets "
                  "short trials share transactions, fewer keeps long ones from waiting here")
      ->check(CLI::Range(1, 65535));
  cmd->add_option("--threads", opts->threads, "BLAS threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--lease-seconds", *lease_seconds,
                  "lease of a claimed trial, renewed every third")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  cmd->add_option("--max-attempts", opts->max_attempts, "lost attempts before a trial fails")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_flag("--exit-when-done", opts->exit_when_done, "exit once the study (--study) is over");
  auto quiet = std::make_shared<bool>(false);
  cmd->add_flag("-q,--quiet", *quiet, "no summary line at exit");
  cmd->callback([opts, study, lease_seconds, quiet] {
    const std::atomic<bool>& stop = stop_requested();
    worker::WorkerOptions o = *opts;
    o.lease = std::chrono::milliseconds(static_cast<int64_t>(*lease_seconds * 1000));
    if (!study->empty()) o.study_id = resolve_study(o.store_url, *study).id;
    if (o.exit_when_done && o.study_id == 0)
      throw invalid_argument("--exit-when-done needs --study");
    const worker::WorkerSummary s = worker::run_worker(o, stop);
    if (!*quiet)
      std::cerr << "worker: " << s.trials << " trials reported, " << s.handed_back
                << " handed back, " << s.lost << " lost, " << s.late
                << " late (taken over by another worker)\n";
  });
}

}  // namespace layerlab::cli
