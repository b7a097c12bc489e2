// Server: the HTTP face of a store: the REST API of docs/api.md, the event stream, the
// embedded dashboard, /metrics and /healthz. `layerlab serve` runs one with a coordinator;
// `layerlab run --dashboard` runs one beside its own.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "server/context.h"

namespace layerlab::server {

// True for 127.0.0.0/8, ::1 and localhost.
bool is_loopback(const std::string& host);

class Server {
 public:
  // Opens the store connections (errors propagate: bad URL, not a database...).
  // kInvalidArgument when binding beyond loopback without a token.
  explicit Server(ServerOptions options);
  ~Server();  // stop()

  // Binds and starts serving on a thread; returns the port (the chosen one for port 0).
  // kUnavailable when the address cannot be bound.
  int start();
  void stop();
  std::string url() const;  // http://HOST:PORT/

 private:
  void install();

  Context context_;
  httplib::Server http_;
  std::thread thread_;
  std::thread warm_;  // loads every study into the cache once, so first views are fast
  int port_ = 0;
};

}  // namespace layerlab::server
