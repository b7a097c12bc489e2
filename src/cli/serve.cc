// layerlab serve: the REST API, event stream and dashboard over a store, plus the
// coordinator for studies created through the API. Workers that share the store (started
// here with --workers, or `layerlab worker` anywhere) train the trials.
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "cli/coordination.h"
#include "cli/server_flags.h"
#include "cli/signals.h"
#include "cli/store_flag.h"
#include "cli/worker_flags.h"
#include "cli/worker_pool.h"
#include "common/error.h"
#include "common/secret_text.h"
#include "common/text_safety.h"
#include "queue/trial_queue.h"
#include "server/server.h"
#include "study/coordinator_pool.h"

namespace layerlab::cli {
namespace {

struct ServeFlags {
  WorkerFlags worker;  // the coordinator's store, broker and limits, and the local workers'
  std::string bind = "127.0.0.1:8080";
  server::ServerOptions server;
  int workers = 0;
};

// HOST:PORT, [V6]:PORT; kInvalidArgument otherwise.
std::pair<std::string, int> parse_bind(const std::string& bind) {
  const size_t colon = bind.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == bind.size())
    throw invalid_argument("--bind: expected HOST:PORT (e.g. 127.0.0.1:8080), got '" + bind + "'");
  std::string host = bind.substr(0, colon);
  if (host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  int port = -1;
  try {
    size_t used = 0;
    port = std::stoi(bind.substr(colon + 1), &used);
    if (used != bind.size() - colon - 1) port = -1;
  } catch (const std::logic_error&) {
    port = -1;
  }
  if (port < 0 || port > 65535)
    throw invalid_argument("--bind: the port must be 0 to 65535, got '" + bind.substr(colon + 1) +
                           "'");
  return {host, port};
}

void serve(const ServeFlags& f) {
  const std::atomic<bool>& stop = stop_requested();
  server::ServerOptions o = f.server;
  o.store_url = f.worker.store_url;
  std::tie(o.host, o.port) = parse_bind(f.bind);
  server::Server http(o);
  auto store = open_stoppable_store(f.worker.store_url, stop);
  queue::AmqpQueueOptions amqp;
  amqp.max_attempts = f.worker.max_attempts;
  auto queue = queue::make_queue(*store, "coordinator", f.worker.broker_url, {}, amqp);
  // A broker delivers in publish order, so each study publishes only about 2 s of its
  // trials ahead of the workers: one submitted later is not queued behind a large one's
  // whole window (the store queue takes turns among studies by itself).
  study::CoordinatorPoolOptions feeding;
  if (!f.worker.broker_url.empty()) feeding.publish_horizon = std::chrono::seconds(2);
  study::CoordinatorPool coordinators(
      *store, *queue,
      [](const std::string& line) { std::cerr << "serve: " << printable(line) << "\n"; }, feeding);
  http.start();
  std::cerr << "dashboard at " << http.url() << " (store " << mask_secrets(f.worker.store_url)
            << ")" << std::endl;
  std::unique_ptr<WorkerPool> pool;
  if (f.workers > 0) {
    std::vector<std::string> args = worker_args(f.worker);
    args.push_back("--quiet");
    pool = std::make_unique<WorkerPool>(f.workers, args, f.worker.threads);
  }
  bool told_stopped = false;
  // Rounds as run's (coordination.h), but 200 ms apart while no adaptive study takes trials:
  // serve runs for days. The workers are counted once a second, remote ones included.
  RoundPace pace(std::chrono::milliseconds(200), std::chrono::milliseconds(2));
  int64_t window = adaptive_window({}, {}, f.workers);
  std::chrono::steady_clock::time_point workers_counted{};
  while (!stop) {
    try {
      if (std::chrono::steady_clock::now() - workers_counted >= std::chrono::seconds(1)) {
        workers_counted = std::chrono::steady_clock::now();
        window = adaptive_window(store->list_workers(),
                                 std::chrono::time_point_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now()),
                                 f.workers);
      }
      pace.next(coordinators.step(window));
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kUnavailable && e.code() != ErrorCode::kAborted) throw;
      std::cerr << "serve: retrying: " << printable(e.what())
                << "\n";  // store or broker away: next round
    }
    if (pool) {
      pool->supervise(1000);
      if (!told_stopped && pool->alive() == 0 && pool->stopped_code() != 0) {
        told_stopped = true;
        std::cerr << "serve: the local workers stopped on an error (exit code "
                  << pool->stopped_code()
                  << ", above) that starting them again would repeat; the API still answers, "
                     "and studies wait for workers started elsewhere"
                  << std::endl;
      }
    }
    std::this_thread::sleep_for(pace.current());
  }
  std::cerr << "serve: stopping\n";
  if (pool) pool->stop();
  http.stop();
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto f = std::make_shared<ServeFlags>();
  CLI::App* cmd =
      app.add_subcommand("serve", "Serve the REST API and dashboard, and coordinate studies");
  add_worker_flags(*cmd, f->worker);
  cmd->add_option("--bind", f->bind, "HOST:PORT to listen on (port 0: any free port)")
      ->capture_default_str();
  cmd->add_option("-w,--workers", f->workers, "local worker processes to start (default: none)")
      ->check(CLI::Range(0, 1024));
  add_server_flags(*cmd, f->server);
  cmd->callback([f] { serve(*f); });
}

}  // namespace layerlab::cli
