#include "server/server.h"

#include <openssl/crypto.h>
#include <sys/socket.h>

#include <iostream>

namespace layerlab::server {
namespace {

bool mutating(const std::string& method) {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

// Compares without an early exit, so the time taken does not tell how much of a guess
// was right.
bool same_token(const std::string& given, const std::string& expected) {
  return given.size() == expected.size() &&
         CRYPTO_memcmp(given.data(), expected.data(), given.size()) == 0;
}

}  // namespace

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

Server::Server(ServerOptions options) {
  if (!is_loopback(options.host) && options.token.empty())
    throw invalid_argument("refusing to serve on " + options.host +
                           " without --token: anyone who can reach it could create and cancel "
                           "studies; set a token or bind to 127.0.0.1");
  context_.options = std::move(options);
  const ServerOptions& o = context_.options;
  for (int i = 0; i < std::max(1, o.store_connections); ++i)
    context_.stores.push_back(store::open_store(o.store_url));
  context_.cache = std::make_unique<StudyCache>(*context_.stores.front());
  context_.feed = std::make_unique<ChangeFeed>(store::open_store(o.store_url), *context_.cache,
                                               context_.hub, o.poll);
  install();
}

Server::~Server() {
  stop();
}

void Server::install() {
  Context& c = context_;
  const int threads = c.options.threads;
  http_.new_task_queue = [threads] {
    return new httplib::ThreadPool(static_cast<size_t>(threads));
  };
  // httplib's default is SO_REUSEPORT: a second server on the same port would start too and
  // take half of the connections. SO_REUSEADDR only: a restart can rebind at once, a second
  // server is refused.
  http_.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  http_.set_payload_max_length(c.options.max_body);
  // httplib closes a kept-alive connection after 5 requests by default: a dashboard polls.
  http_.set_keep_alive_max_count(10'000);
  http_.set_pre_routing_handler([&c](const httplib::Request& req, httplib::Response& res) {
    if (c.options.token.empty() || !mutating(req.method))
      return httplib::Server::HandlerResponse::Unhandled;
    const std::string header = req.get_header_value("Authorization");
    if (header.rfind("Bearer ", 0) == 0 && same_token(header.substr(7), c.options.token))
      return httplib::Server::HandlerResponse::Unhandled;
    res.set_header("WWW-Authenticate", "Bearer");
    send_error(res, 401,
               header.empty() ? "this server needs Authorization: Bearer TOKEN for " + req.method
                              : "wrong token");
    return httplib::Server::HandlerResponse::Handled;
  });
  // Errors the HTTP layer finds itself (oversized or malformed requests) get a JSON body too.
  http_.set_error_handler([&c](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty() || res.content_length_ > 0) return;  // the handler wrote one
    std::string message = "request failed";
    if (res.status == 413)
      message = "request body over " + std::to_string(c.options.max_body) + " bytes";
    else if (res.status == 400)
      message = "malformed HTTP request (a POST needs a Content-Length header)";
    else if (res.status == 404)
      message = "no route " + req.method + " " + req.path;
    send_error(res, res.status, message);
  });
  http_.set_logger([&c](const httplib::Request&, const httplib::Response& res) {
    std::lock_guard lock(c.counters_mu);
    ++c.responses[res.status];
  });
  Router router(http_);
  add_study_routes(router, c);
  add_trial_routes(router, c);
  add_operation_routes(router, c);
  add_static_routes(router);
  router.finish();
}

int Server::start() {
  const ServerOptions& o = context_.options;
  port_ = o.port == 0 ? http_.bind_to_any_port(o.host)
                      : (http_.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port_ <= 0)
    throw unavailable("cannot listen on " + o.host + ":" + std::to_string(o.port) +
                      " (in use, or not an address of this machine)");
  context_.feed->start();
  thread_ = std::thread([this] { http_.listen_after_bind(); });
  warm_ = std::thread([this] {
    try {
      for (const store::StudyRecord& s : context_.store().list_studies()) {
        context_.cache->with_study(s.id, [](StudyView&) {});
      }
    } catch (const Error& e) {  // requests will load (and report) it themselves
      std::cerr << "server: warming the study cache: " << e.what() << "\n";
    }
  });
  return port_;
}

void Server::stop() {
  if (warm_.joinable()) warm_.join();
  context_.hub.close();
  if (thread_.joinable()) {
    http_.stop();
    thread_.join();
  }
  context_.feed->stop();
}

std::string Server::url() const {
  const std::string& h = context_.options.host;
  const std::string host = h.find(':') != std::string::npos ? "[" + h + "]" : h;
  return "http://" + host + ":" + std::to_string(port_) + "/";
}

}  // namespace layerlab::server
