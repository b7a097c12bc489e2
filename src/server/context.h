// What the route handlers share: options, store connections, the study cache, the event
// hub, and request counters for /metrics.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analysis/study_cache.h"
#include "common/mutex.h"
#include "common/turns.h"
#include "server/change_feed.h"
#include "server/event_hub.h"
#include "server/http_util.h"
#include "server/model_downloads.h"
#include "server/route_pattern.h"
#include "server/throughput.h"
#include "store/store.h"

namespace layerlab::server {

// Every limit here is a `serve` option (docs/security.md).
struct ServerOptions {
  std::string store_url = store::kDefaultStoreUrl;
  std::string host = "127.0.0.1";
  int port = 8080;    // 0: any free port
  std::string token;  // "": no auth
  std::chrono::milliseconds poll{250};
  size_t max_body = 1 << 20;        // request body, also chunked
  unsigned threads = 8;             // network threads; requests are handled on them
  unsigned max_connections = 4096;  // all clients together
  unsigned max_connections_per_client = 128;
  unsigned idle_timeout_seconds = 60;
  size_t max_streams = 1024;  // event stream clients
  size_t max_streams_per_client = 64;
  // Kept models being sent (each up to store::kMaxWeightBytes, held until sent).
  size_t max_model_downloads = 4;
  size_t max_model_downloads_per_client = 2;
  // Host names a browser may reach this server by, beyond loopback names (DNS rebinding:
  // a loopback server answers only loopback names unless told otherwise).
  std::vector<std::string> allowed_hosts;
  // Origins (scheme://host[:port]) other than the server's own that may send POSTs.
  std::vector<std::string> allowed_origins;
  // File datasets of studies created over HTTP resolve inside this directory; "": none.
  std::string data_dir;
  int64_t max_trials_per_study = 1'000'000;  // a POSTed study's size (SpecLimits::max_trials)
  int store_connections = 4;                 // read connections shared round-robin by requests
  std::chrono::milliseconds queue_sample{10'000};  // how often the queue's depth is sampled
  store::Clock* clock = nullptr;  // nullptr: the system clock (tests move a manual one)
};

struct Context {
  ServerOptions options;
  // Set as the server stops: its store connections stop waiting for a database that is
  // away (StoreOptions::stop), so neither the threads nor the requests hold the stop up.
  std::atomic<bool> stopping{false};
  std::vector<std::unique_ptr<store::Store>> stores;
  // Connections for making study views (cache misses, at most one per turn), so a slow
  // query of an expensive view never holds a connection that cheap requests share.
  std::vector<std::unique_ptr<store::Store>> making_stores;
  std::atomic<size_t> next_making_store{0};
  std::atomic<size_t> next_store{0};
  std::unique_ptr<analysis::StudyCache> cache;
  EventHub hub;
  std::unique_ptr<ChangeFeed> feed;
  QueueHistory queue_history;  // /api/v1/throughput's queue depth over time
  std::unique_ptr<ModelDownloads> model_downloads;
  // Loading the datasets of POSTed studies: one at a time, one more waiting, others a 503.
  Turns dataset_checks{Turns::Limits{1, 1}};
  TtlCache monitoring{std::chrono::seconds(2), 64};  // /workers and /throughput bodies

  Mutex counters_mu;
  std::map<int, uint64_t> responses GUARDED_BY(counters_mu);  // by status

  store::Store& store() { return *stores[next_store++ % stores.size()]; }
  store::Store& making_store() {
    return *making_stores[next_making_store++ % making_stores.size()];
  }
  store::Time now() const;
  // Takes one sample of the queue (depth and in flight of running studies) into
  // queue_history; the server calls it every options.queue_sample.
  void sample_queue();
  // A study by id or by name; kNotFound.
  store::StudyRecord study(const std::string& id_or_name);
};

// Routes by method and path pattern (RoutePattern: "/api/v1/studies/{}"); an unknown path is a 404
// and a known path with another method a 405 with Allow, both as JSON.
class Router {
 public:
  static constexpr size_t kMaxPath = 2048;  // longer paths are a 414 before any pattern runs

  void get(const std::string& pattern, Handler h);
  void post(const std::string& pattern, Handler h);
  // Runs the matching route (HEAD as GET), turning what it throws into an error response.
  void dispatch(Request& req, Response& res) const;

  // What is registered, in order: the method and the pattern as written. The OpenAPI
  // document (docs/openapi.json) is checked against this list by a unit test.
  struct RouteInfo {
    std::string method;
    std::string pattern;
  };
  std::vector<RouteInfo> routes() const;

 private:
  struct Route {
    std::string method;
    RoutePattern pattern;
    Handler handler;
  };
  std::vector<Route> routes_;
};

void add_study_routes(Router& r, Context& c);
void add_trial_routes(Router& r, Context& c);
void add_operation_routes(Router& r, Context& c);  // workers, queue, events, metrics, healthz
void add_static_routes(Router& r);                 // the dashboard and /api/v1/openapi.json

}  // namespace layerlab::server
