// layerlab serve: the REST API, event stream and dashboard over a store, plus the
// coordinator for studies created through the API. Workers that share the store (started
// here with --workers, or `layerlab worker` anywhere) train the trials.
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "cli/server_flags.h"
#include "cli/signals.h"
#include "cli/worker_pool.h"
#include "common/error.h"
#include "common/strings.h"
#include "queue/trial_queue.h"
#include "server/server.h"
#include "study/coordinator_pool.h"

namespace layerlab::cli {
namespace {

struct ServeFlags {
  std::string store_url = store::kDefaultStoreUrl;
  std::string broker_url;
  int max_attempts = 3;
  std::string bind = "127.0.0.1:8080";
  server::ServerOptions server;
  int workers = 0;
  int threads = 1;
  int pack = 1;
  std::string device = "cpu";
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
  o.store_url = f.store_url;
  std::tie(o.host, o.port) = parse_bind(f.bind);
  server::Server http(o);
  auto store = store::open_store(f.store_url);
  queue::AmqpQueueOptions amqp;
  amqp.max_attempts = f.max_attempts;
  auto queue = queue::make_queue(*store, "coordinator", f.broker_url, {}, amqp);
  study::CoordinatorPool coordinators(
      *store, *queue, [](const std::string& line) { std::cerr << "serve: " << line << "\n"; });
  http.start();
  std::cerr << "dashboard at " << http.url() << " (store " << hide_url_password(f.store_url) << ")"
            << std::endl;
  std::unique_ptr<WorkerPool> pool;
  if (f.workers > 0) {
    std::vector<std::string> args{"--store",        f.store_url,
                                  "--threads",      std::to_string(f.threads),
                                  "--pack",         std::to_string(f.pack),
                                  "--device",       f.device,
                                  "--max-attempts", std::to_string(f.max_attempts),
                                  "--quiet"};
    if (!f.broker_url.empty()) args.insert(args.end(), {"--broker", f.broker_url});
    pool = std::make_unique<WorkerPool>(f.workers, args, f.threads);
  }
  while (!stop) {
    try {
      coordinators.step(2 * std::max(1, f.workers) + 8);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kUnavailable && e.code() != ErrorCode::kAborted) throw;
      std::cerr << "serve: retrying: " << e.what() << "\n";  // store or broker away: next round
    }
    if (pool) pool->supervise(1000);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
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
  cmd->add_option("--store", f->store_url, "store URL (sqlite:PATH or postgresql://...)")
      ->capture_default_str();
  cmd->add_option("--broker", f->broker_url,
                  "broker URL (amqp://user:pass@host:port/vhost); default: the store is the queue");
  cmd->add_option("--max-attempts", f->max_attempts,
                  "deliveries (or lost leases) before a trial fails; the same on every process")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--bind", f->bind, "HOST:PORT to listen on (port 0: any free port)")
      ->capture_default_str();
  cmd->add_option("-w,--workers", f->workers, "local worker processes to start (default: none)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--threads", f->threads, "BLAS threads per local worker")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--pack", f->pack, "same-shape trials each local worker trains at once")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  cmd->add_option("--device", f->device, "cpu or cuda[:N], for the local workers")
      ->capture_default_str();
  add_server_flags(*cmd, f->server);
  cmd->callback([f] { serve(*f); });
}

}  // namespace layerlab::cli
