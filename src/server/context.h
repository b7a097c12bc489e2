// What the route handlers share: options, store connections, the study cache, the event
// hub, and request counters for /metrics.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include "server/change_feed.h"
#include "server/event_hub.h"
#include "server/http_util.h"
#include "server/study_cache.h"
#include "store/store.h"

namespace layerlab::server {

struct ServerOptions {
  std::string store_url = store::kDefaultStoreUrl;
  std::string host = "127.0.0.1";
  int port = 8080;    // 0: any free port
  std::string token;  // "": no auth
  std::chrono::milliseconds poll{250};
  size_t max_body = 1 << 20;
  int threads = 32;  // request threads; each event stream holds one
  size_t max_event_clients = 24;
  int store_connections = 4;  // read connections shared round-robin by requests
};

struct Context {
  ServerOptions options;
  std::vector<std::unique_ptr<store::Store>> stores;
  std::atomic<size_t> next_store{0};
  std::unique_ptr<StudyCache> cache;
  EventHub hub;
  std::unique_ptr<ChangeFeed> feed;

  std::mutex counters_mu;
  std::map<int, uint64_t> responses;  // by status

  store::Store& store() { return *stores[next_store++ % stores.size()]; }
  // A study by id or by name; kNotFound.
  store::StudyRecord study(const std::string& id_or_name);
};

// Registers routes and remembers their patterns, so an unknown path is a 404 and a known
// path with the wrong method a 405, both as JSON.
class Router {
 public:
  explicit Router(httplib::Server& server) : server_(server) {}
  void get(const std::string& pattern, Handler h);
  void post(const std::string& pattern, Handler h);
  // Installs the 404/405 fallbacks; call after every route. The Router may go away after.
  void finish();
  httplib::Server& server() { return server_; }

 private:
  httplib::Server& server_;
  std::vector<std::pair<std::string, std::regex>> routes_;  // method, pattern
};

void add_study_routes(Router& r, Context& c);
void add_trial_routes(Router& r, Context& c);
void add_operation_routes(Router& r, Context& c);  // workers, queue, events, metrics, healthz
void add_static_routes(Router& r);

}  // namespace layerlab::server
