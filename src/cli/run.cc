// layerlab run STUDY.yaml: the embedded default. Creates or resumes the study in the store,
// starts N local worker processes, keeps the queue fed, shows progress, and ends with a
// leaderboard. Ctrl-C stops cleanly; running it again resumes without redoing finished
// trials.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "cli/coordination.h"
#include "cli/progress.h"
#include "cli/signals.h"
#include "cli/store_flag.h"
#include "cli/trial_table.h"
#include "cli/worker_flags.h"
#include "cli/worker_pool.h"
#include "common/error.h"
#include "common/secret_text.h"
#include "common/text_safety.h"
#include "queue/trial_queue.h"
#include "server/server.h"
#include "study/coordinator.h"
#include "study/leaderboard.h"
#include "study/spec.h"

namespace layerlab::cli {
namespace {

// run's workers are local: a lease of 10 s brings a dead one's trial back soon.
WorkerFlags short_lease() {
  WorkerFlags f;
  f.lease_seconds = 10;
  return f;
}

struct RunFlags {
  std::string study_file;
  int workers = 0;  // 0: the number of cores
  WorkerFlags worker = short_lease();
  int leaders = 10;
  bool json = false;
  int dashboard = -1;  // port; -1: no dashboard
};

// The study in the store: created, or the stored one when this file describes it exactly.
int64_t create_or_resume(store::Store& store, const study::StudySpec& spec, const std::string& url,
                         bool* resumed) {
  const nlohmann::json canonical = spec.to_json();
  if (auto existing = store.find_study(spec.name)) {
    if (existing->spec != canonical)
      throw invalid_argument("study '" + spec.name + "' already exists in " + url +
                             " with a different study file; give this one another name");
    if (existing->status == store::StudyStatus::kCancelled)
      throw failed_precondition("study '" + spec.name + "' was cancelled");
    store.set_study_status(existing->id, store::StudyStatus::kRunning);
    *resumed = true;
    return existing->id;
  }
  *resumed = false;
  return store.create_study(spec.name, canonical);
}

ProgressState progress_state(store::Store& store, const study::Coordinator& c,
                             int64_t finished_at_start) {
  ProgressState s;
  s.counts = store.counts(c.study_id());
  s.total = c.total_trials();
  s.finished_at_start = finished_at_start;
  s.metric = c.spec().metric;
  s.boards = boards_of(study::leaderboards(store, c.study_id(), c.spec(), 1));
  return s;
}

// Every worker failed, as often as they are started again or in a way that starting them
// again would repeat: nothing will train what is left, so say so rather than wait for it
// (their own messages are above), with the workers' exit code where it says more than 1.
Error no_workers_left(const WorkerPool& pool) {
  const std::string resume =
      "the study is not finished: run it again to resume once the cause above is mended";
  switch (pool.stopped_code()) {
    case 2:
      return invalid_argument(
          "every worker stopped on bad input (exit code 2), which "
          "starting them again would repeat; " +
          resume);
    case 3:
      return failed_precondition(
          "every worker stopped on a missing prerequisite (exit code "
          "3), which starting them again would repeat; " +
          resume);
    default:
      return unavailable(
          fmt::format("every worker exited with an error ({} started again, the most allowed); {}",
                      pool.restarts(), resume));
  }
}

// A study cancelled while it ran (`layerlab cancel`, the API): the code of a failed
// precondition, as a resume of a cancelled study gets.
constexpr int kCancelledExit = 3;

int run(const RunFlags& f) {
  const std::atomic<bool>& stop = stop_requested();
  const study::StudySpec spec = study::load_study_file(f.study_file);
  // Every dataset is loaded and checked, as the study file is, before anything is stored.
  study::check_datasets(spec);
  const int workers =
      f.workers > 0 ? f.workers : static_cast<int>(std::thread::hardware_concurrency());
  std::vector<std::string> args = worker_args(f.worker);
  args.insert(args.end(), {"--study", "-", "--exit-when-done", "--quiet"});
  // The workers start first and are sent the study's id once it is stored: their start (a
  // process, its libraries, a store connection) overlaps this one's (the store's connection
  // and, on a new database, its tables; then on RabbitMQ the queue's declaration and the
  // first publish). docs/benchmarks.md has what it gains on 2 cores.
  WorkerPool pool(workers, args, f.worker.threads);
  auto store = open_stoppable_store(f.worker.store_url, stop);
  bool resumed = false;
  const int64_t study_id =
      create_or_resume(*store, spec, mask_secrets(f.worker.store_url), &resumed);
  pool.send_study(study_id);
  queue::AmqpQueueOptions amqp;
  amqp.max_attempts = f.worker.max_attempts;
  auto queue = queue::make_queue(*store, "coordinator", f.worker.broker_url, {}, amqp);
  study::Coordinator coordinator(*store, *queue, spec, study_id);
  coordinator.top_up(2 * workers);
  std::unique_ptr<server::Server> dashboard;
  if (f.dashboard >= 0) {
    server::ServerOptions o;
    o.store_url = f.worker.store_url;
    o.port = f.dashboard;
    dashboard = std::make_unique<server::Server>(o);
    dashboard->start();
    std::cerr << "dashboard at " << dashboard->url() << "#/study/" << study_id << std::endl;
  }
  const int64_t finished_at_start = store->counts(study_id).finished();
  // The workers resolve --pack themselves; on one device they all come to this.
  std::cerr << fmt::format("{} study '{}' in {}: {} trials, {} workers, {}\n",
                           resumed ? "resuming" : "running", printable(spec.name),
                           mask_secrets(f.worker.store_url), coordinator.total_trials(), workers,
                           worker::describe(resolved_pack(f.worker)));

  Progress progress(stderr);
  bool complete = false;
  std::chrono::steady_clock::time_point last_retry_note{};
  // The end of the study is seen within a round (a few indexed queries); rounds were 100 ms,
  // a tenth of a 24-trial sweep's wall time.
  RoundPace pace(std::chrono::milliseconds(25), std::chrono::milliseconds(2));
  while (!stop) {
    try {
      queue->settle_dead_letters();
      const int64_t added = coordinator.top_up(2 * workers);
      pace.next(coordinator.adaptive() ? added : 0);
      if (coordinator.complete()) {
        complete = true;
        break;
      }
      if (progress.due()) progress.update(progress_state(*store, coordinator, finished_at_start));
    } catch (const Error& e) {
      // Cancelled from elsewhere (stopped): nothing more is stored; the running trials end.
      if (!coordinator.stopped() && e.code() != ErrorCode::kUnavailable) throw;
      // The store or broker is away: the workers wait too; say so now and then.
      if (e.code() == ErrorCode::kUnavailable &&
          std::chrono::steady_clock::now() - last_retry_note > std::chrono::seconds(5)) {
        std::cerr << "\nrun: retrying: " << printable(e.what()) << std::endl;
        last_retry_note = std::chrono::steady_clock::now();
      }
    }
    pool.supervise(workers + 10 * static_cast<int>(coordinator.total_trials()));
    if (pool.alive() == 0) throw no_workers_left(pool);
    std::this_thread::sleep_for(pace.current());
  }
  const bool cancelled = complete && !store->finish_study(study_id);
  complete = complete && !cancelled;
  pool.stop();
  progress.update(progress_state(*store, coordinator, finished_at_start), true);
  // Ranked within each dataset: a value on one dataset says nothing about another.
  const auto boards = study::leaderboards(*store, study_id, spec, static_cast<size_t>(f.leaders));
  if (f.json) {
    nlohmann::json out = {{"study", spec.name},
                          {"id", study_id},
                          {"complete", complete},
                          {"cancelled", cancelled},
                          {"leaderboards", leaderboards_json(boards)},
                          {"leaderboard", nlohmann::json::array()}};
    // `leaderboard` (kept for scripts): each dataset's top trials, one dataset after another
    // (leaders() ranks within a dataset, never across).
    for (const auto& t : leaders(*store, study_id, spec, f.leaders))
      out["leaderboard"].push_back(trial_json(t));
    std::cout << out.dump(2) << "\n";
  } else if (std::any_of(boards.begin(), boards.end(),
                         [](const auto& b) { return !b.trials.empty(); })) {
    std::cout << "\nleaderboard (" << spec.metric << ", " << (spec.maximize ? "max" : "min")
              << ") per dataset\n";
    print_leaderboards(std::cout, boards, spec);
  }
  if (cancelled) {
    const store::StudyCounts c = store->counts(study_id);
    std::cerr << fmt::format(
        "run: study '{}' was cancelled: {} of {} trials finished, {} cancelled\n",
        printable(spec.name), c.finished() - c[store::TrialStatus::kCancelled],
        coordinator.total_trials(), c[store::TrialStatus::kCancelled]);
    return kCancelledExit;
  }
  if (!complete) {
    std::cerr << "interrupted; run the same command again to resume\n";
    return 130;
  }
  if (coordinator.out_of_time()) std::cerr << "run: " << coordinator.out_of_time_note() << "\n";
  if (std::all_of(boards.begin(), boards.end(), [](const auto& b) { return b.trials.empty(); })) {
    std::cerr << "run: no trial has a value of " << spec.metric
              << ": nothing was learned (see its trials' statuses and errors with `layerlab "
                 "trials`)\n";
    return 1;
  }
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto f = std::make_shared<RunFlags>();
  CLI::App* cmd = app.add_subcommand("run", "Run (or resume) a study on this machine");
  cmd->add_option("study", f->study_file, "study file (YAML)")->required();
  cmd->add_option("-w,--workers", f->workers, "worker processes (default: number of cores)")
      ->check(CLI::Range(1, 1024));
  add_worker_flags(*cmd, f->worker);
  cmd->add_option("--top", f->leaders, "trials in each dataset's leaderboard")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_flag("--json", f->json, "print the leaderboards as JSON");
  CLI::Option* dashboard =
      cmd->add_flag("--dashboard{8080}", f->dashboard,
                    "serve the dashboard on 127.0.0.1 while the study runs (--dashboard=PORT)")
          ->check(CLI::Range(1, 65535));
  cmd->callback([f, dashboard] {
    // CLI11 stores 0 in an absent integer flag; only a given one means a dashboard.
    if (dashboard->count() == 0) f->dashboard = -1;
    command_exit_code() = run(*f);
  });
}

}  // namespace layerlab::cli
