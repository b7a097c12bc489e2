#include "server/server.h"

#include <arpa/inet.h>
#include <openssl/crypto.h>
#include <strings.h>

#include <algorithm>

namespace layerlab::server {
namespace {

// How the server's store connections name the store in their messages: errors that anyone
// who reaches the port may read never carry its location (user, host, database, file).
constexpr const char* kStoreLabel = "store";

bool mutating(const std::string& method) {
  return method != "GET" && method != "HEAD" && method != "OPTIONS";
}

// Compares without an early exit, so the time taken does not tell how much of a guess
// was right.
bool same_token(const std::string& given, const std::string& expected) {
  return given.size() == expected.size() &&
         CRYPTO_memcmp(given.data(), expected.data(), given.size()) == 0;
}

bool same_text(const std::string& a, const std::string& b) {
  return a.size() == b.size() && strcasecmp(a.c_str(), b.c_str()) == 0;
}

// The host name of a Host header value (HOST, HOST:PORT, [V6]:PORT), without the port.
std::string host_name(const std::string& host) {
  if (!host.empty() && host.front() == '[') return host.substr(1, host.find(']') - 1);
  const size_t colon = host.find(':');
  return colon != std::string::npos && host.find(':', colon + 1) == std::string::npos
             ? host.substr(0, colon)
             : host;
}

bool listed(const std::vector<std::string>& names, const std::string& name) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return same_text(n, name); });
}

// DNS rebinding: a page from evil.example whose name is made to resolve to 127.0.0.1 can
// talk to a loopback server, but its requests carry Host: evil.example. A loopback server
// answers loopback names only (and names the operator allows); a server bound elsewhere
// needs a token for writes and answers any name unless the operator lists them.
bool host_allowed(const Request& req, const ServerOptions& o) {
  if (!req.has_header("Host")) return true;  // HTTP/1.0 clients; browsers always send one
  const std::string name = host_name(req.header("Host"));
  if (is_loopback(name) || listed(o.allowed_hosts, name) || same_text(name, o.host)) return true;
  return o.allowed_hosts.empty() && !is_loopback(o.host);
}

// Cross-site requests: a browser sends Origin with every cross-origin POST; a page from
// another origin may not create or cancel studies (a text/plain form POST needs no CORS
// pre-flight). Clients that are not browsers (curl, the CLI) send no Origin.
bool origin_allowed(const Request& req, const ServerOptions& o) {
  if (!req.has_header("Origin")) return req.header("Sec-Fetch-Site") != "cross-site";
  const std::string origin = req.header("Origin");
  if (listed(o.allowed_origins, origin)) return true;
  const std::string host = req.header("Host");
  return !host.empty() &&
         (same_text(origin, "http://" + host) || same_text(origin, "https://" + host));
}

}  // namespace

bool is_loopback(const std::string& host) {
  if (same_text(host, "localhost")) return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

Api::Api(ServerOptions options) {
  if (!is_loopback(options.host) && options.token.empty())
    throw invalid_argument("refusing to serve on " + options.host +
                           " without --token: anyone who can reach it could create and cancel "
                           "studies; set a token or bind to 127.0.0.1");
  if (options.queue_sample.count() <= 0)
    throw invalid_argument("the queue's sampling interval must be positive");
  context_.options = std::move(options);
  const ServerOptions& o = context_.options;
  store::StoreOptions store_options;
  store_options.clock = o.clock;
  store_options.stop = &context_.stopping;
  // During an outage only the change feed waits for the database: requests answer 503 at
  // once, even one that is the first to find it away.
  store_options.outage = std::make_shared<store::Outage>();
  store_options.wait_when_away = false;
  store_options.label = kStoreLabel;
  for (int i = 0; i < std::max(1, o.store_connections); ++i)
    context_.stores.push_back(store::open_store(o.store_url, store_options));
  // Cache misses (the expensive routes) hold at most half the threads, and their own
  // store connections; /healthz, cached responses and the cheap routes have the rest.
  const Turns::Limits making{std::max(1u, o.threads / 4), o.threads / 4};
  for (size_t i = 0; i < making.running; ++i)
    context_.making_stores.push_back(store::open_store(o.store_url, store_options));
  context_.cache = std::make_unique<analysis::StudyCache>(*context_.making_stores.front(), making);
  context_.model_downloads =
      std::make_unique<ModelDownloads>(o.max_model_downloads, o.max_model_downloads_per_client);
  store::StoreOptions feed_options;
  feed_options.stop = &context_.stopping;
  feed_options.label = kStoreLabel;
  feed_options.outage = store_options.outage;
  context_.feed = std::make_unique<ChangeFeed>(store::open_store(o.store_url, feed_options),
                                               *context_.cache, context_.hub, o.poll);
  add_study_routes(router_, context_);
  add_trial_routes(router_, context_);
  add_operation_routes(router_, context_);
  add_static_routes(router_);
}

bool Api::refused(const Request& req, Response& res) const {
  const ServerOptions& o = context_.options;
  if (!host_allowed(req, o)) {
    send_error(res, 403,
               "this server does not answer to the host name in the Host header; start it with "
               "--allow-host NAME to allow a name");
    return true;
  }
  if (!mutating(req.method)) return false;
  if (!origin_allowed(req, o)) {
    send_error(res, 403,
               "cross-origin request refused: the Origin header names another site; start the "
               "server with --allow-origin ORIGIN to allow one");
    return true;
  }
  if (o.token.empty()) return false;
  const std::string header = req.header("Authorization");
  if (header.rfind("Bearer ", 0) == 0 && same_token(header.substr(7), o.token)) return false;
  res.set_header("WWW-Authenticate", "Bearer");
  send_error(res, 401,
             header.empty() ? "this server needs Authorization: Bearer TOKEN for " + req.method
                            : "wrong token");
  return true;
}

void Api::handle(Request& req, Response& res) {
  try {
    if (!refused(req, res)) router_.dispatch(req, res);
  } catch (const std::exception& e) {  // building an error response itself failed
    res = Response{};
    res.status = 500;
    res.static_body = R"({"error":{"code":"internal","message":"internal error"}})";
    log_line(req.method + " " + req.path + ": " + e.what());
  }
  MutexLock lock(context_.counters_mu);
  ++context_.responses[res.status];
}

namespace {

ListenerOptions listener_options(const ServerOptions& o) {
  ListenerOptions l;
  l.host = o.host;
  l.port = o.port;
  l.threads = o.threads;
  l.max_connections = o.max_connections;
  l.max_connections_per_client = o.max_connections_per_client;
  l.idle_timeout_seconds = o.idle_timeout_seconds;
  l.max_body = o.max_body;
  return l;
}

}  // namespace

Server::Server(ServerOptions options)
    : api_(std::move(options)),
      listener_(listener_options(api_.context().options),
                [this](Request& req, Response& res) { api_.handle(req, res); }) {}

Server::~Server() {
  stop();
}

int Server::start() {
  Context& c = api_.context();
  port_ = listener_.start();
  started_ = true;
  c.feed->start();
  warm_ = std::thread([&c] {
    try {
      for (const store::StudyRecord& s : c.store().list_studies({.specs = false})) {
        c.cache->with_study(s.id, [](analysis::StudyView&) {});
      }
    } catch (const Error& e) {  // requests will load (and report) it themselves
      log_line(std::string("warming the study cache: ") + e.what());
    }
  });
  sampler_ = std::thread([this, &c] {
    for (;;) {
      try {
        c.sample_queue();
      } catch (const std::exception& e) {  // a gap in the history; the next sample may work
        log_line(std::string("sampling the queue: ") + e.what());
      }
      MutexLock lock(stop_mu_);
      if (stop_cv_.wait_for(lock.native(), c.options.queue_sample,
                            [&c] { return c.stopping.load(); }))
        return;
    }
  });
  pings_ = std::thread([this, &c] {
    MutexLock lock(stop_mu_);
    while (!stop_cv_.wait_for(lock.native(), std::chrono::seconds(5),
                              [&c] { return c.stopping.load(); }))
      c.hub.ping();
  });
  return port_;
}

void Server::stop() {
  if (!started_) return;
  started_ = false;
  Context& c = api_.context();
  {
    MutexLock lock(stop_mu_);  // set under the lock: a waiter cannot miss it
    c.stopping = true;
  }
  stop_cv_.notify_all();
  if (pings_.joinable()) pings_.join();
  if (sampler_.joinable()) sampler_.join();
  if (warm_.joinable()) warm_.join();
  c.hub.close();  // ends every event stream, resuming their connections
  listener_.stop();
  c.feed->stop();
}

std::string Server::url() const {
  const std::string& h = api_.options().host;
  const std::string host = h.find(':') != std::string::npos ? "[" + h + "]" : h;
  return "http://" + host + ":" + std::to_string(port_) + "/";
}

}  // namespace layerlab::server
