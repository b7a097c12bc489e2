// Server: the HTTP face of a store: the REST API of docs/api.md, the event stream, the
// embedded dashboard, /metrics and /healthz. `layerlab serve` runs one with a coordinator;
// `layerlab run --dashboard` runs one beside its own.
//
// Api answers one request without a socket (what the fuzz target and unit tests drive);
// Server puts it behind a Listener.
#pragma once

#include <condition_variable>
#include <memory>
#include <string>
#include <thread>

#include "common/mutex.h"
#include "server/context.h"
#include "server/listener.h"

namespace layerlab::server {

// True for IP addresses in 127.0.0.0/8, ::1 and the name localhost.
bool is_loopback(const std::string& host);

class Api {
 public:
  // Opens the store connections (errors propagate: bad URL, not a database...).
  // kInvalidArgument when binding beyond loopback without a token.
  explicit Api(ServerOptions options);

  // Checks the request (Host, Origin, token), routes it and counts the response. Never
  // throws: every failure becomes an error response.
  void handle(Request& req, Response& res);
  Context& context() { return context_; }
  const Router& router() const { return router_; }
  const ServerOptions& options() const { return context_.options; }

 private:
  // Fills `res` with an error and returns true when the request may not proceed.
  bool refused(const Request& req, Response& res) const;

  Context context_;
  Router router_;
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();  // stop()

  // Binds and starts serving; returns the port (the chosen one for port 0).
  // kUnavailable when the address cannot be bound.
  int start();
  void stop();
  std::string url() const;  // http://HOST:PORT/

 private:
  Api api_;
  Listener listener_;
  std::thread warm_;     // loads every study into the cache once, so first views are fast
  std::thread pings_;    // every 5 s: keeps idle event streams alive, finds clients that left
  std::thread sampler_;  // every options.queue_sample: the queue's depth into its history
  Mutex stop_mu_;        // with stop_cv_: wakes the threads as Context::stopping is set
  std::condition_variable stop_cv_;
  bool started_ = false;
  int port_ = 0;
};

}  // namespace layerlab::server
