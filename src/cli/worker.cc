// layerlab worker: takes trials from the store or the broker, trains them (--slots at a
// time, each slot packs of up to --pack same-shape trials), reports; on SIGTERM hands back
// the trials in hand and exits.
#include "worker/worker.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/signals.h"
#include "cli/store_flag.h"
#include "cli/study_ref.h"
#include "cli/worker_flags.h"
#include "common/error.h"

namespace layerlab::cli {
namespace {

// `--study -`: the study's name or id, the first line of standard input (`run` starts its
// workers before the study is stored and sends its id once it is). Nothing when a signal
// (Ctrl-C to the terminal's process group, SIGTERM) interrupts the wait: the worker then
// ends quietly, as it would with a trial in hand.
std::optional<std::string> study_from_stdin(const std::atomic<bool>& stop) {
  char line[256];
  if (!std::fgets(line, sizeof(line), stdin)) {
    if (stop) return std::nullopt;
    throw invalid_argument("--study -: standard input ended before naming a study");
  }
  size_t n = std::strlen(line);
  if (n == sizeof(line) - 1 && line[n - 1] != '\n')
    throw invalid_argument("--study -: the first line of standard input is longer than " +
                           std::to_string(sizeof(line) - 2) + " characters");
  while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) --n;
  if (n == 0) throw invalid_argument("--study -: the first line of standard input is empty");
  return std::string(line, n);
}

}  // namespace

void add_worker_command(CLI::App& app) {
  auto flags = std::make_shared<WorkerFlags>();
  auto opts = std::make_shared<worker::WorkerOptions>();  // the flags only `worker` has
  auto study = std::make_shared<std::string>();
  auto quiet = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("worker", "Claim, train and report trials until stopped");
  add_worker_flags(*cmd, *flags);
  cmd->add_option("--slots", opts->slots, "trials trained at once in this process")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--study", *study,
                  "only trials of this study (name or id; -: the first line of standard "
                  "input, read once the store is open); default: any");
  cmd->add_option("--prefetch", opts->prefetch,
                  "with --broker: trials in hand at once, fixed (default: slots x pack, "
                  "raised up to 32x while trials take milliseconds, so they share "
                  "transactions; back at once when others wait behind a long one)")
      ->check(CLI::Range(1, 65535));
  cmd->add_flag("--exit-when-done", opts->exit_when_done, "exit once the study (--study) is over");
  cmd->add_flag("-q,--quiet", *quiet, "no line at start (device, slots, pack) or summary at exit");
  cmd->callback([flags, opts, study, quiet] {
    const std::atomic<bool>& stop = stop_requested();
    worker::WorkerOptions o = worker_options(*flags);
    o.slots = opts->slots;
    o.prefetch = opts->prefetch;
    o.exit_when_done = opts->exit_when_done;
    if (o.exit_when_done && study->empty())
      throw invalid_argument("--exit-when-done needs --study");
    // The queue's connection, which resolves --study first.
    auto queue_store = open_stoppable_store(o.store_url, stop);
    if (*study == "-") {
      const std::optional<std::string> named = study_from_stdin(stop);
      if (!named) return;
      *study = *named;
    }
    if (!study->empty()) o.study_id = resolve_study(*queue_store, *study).id;
    if (!*quiet)
      std::cerr << "worker: device " << o.device << ", " << o.slots
                << (o.slots == 1 ? " slot, " : " slots, ")
                << worker::describe(resolved_pack(*flags)) << std::endl;
    worker::WorkerSummary s;
    try {
      s = worker::run_worker(o, stop, *queue_store);
    } catch (const Error& e) {
      if (!stop || e.code() != ErrorCode::kUnavailable) throw;
      throw Error(e.code(), std::string(e.what()) +
                                "; told to stop, the worker did not wait for it to come back: the "
                                "trials it held run again elsewhere once their leases run out");
    }
    if (!*quiet)
      std::cerr << "worker: " << s.trials << " trials reported, " << s.handed_back
                << " handed back, " << s.lost << " lost, " << s.late
                << " late (taken over by another worker)\n";
  });
}

}  // namespace layerlab::cli
