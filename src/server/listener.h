// Listener: speaks HTTP/1.1 on a socket and hands each complete request to a handler.
// Built on libmicrohttpd in its epoll thread-pool mode: an idle, slow or streaming client
// costs a file descriptor and a little memory, never a thread, so slowloris sockets and
// hundreds of event streams cannot take the threads that answer everyone else (a
// thread-per-connection server, cpp-httplib's model, stopped answering /healthz under 40
// idle sockets). libmicrohttpd ignores Range headers (every body goes out whole, as RFC
// 9110 allows), bounds a connection's header memory, and times out idle connections.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "server/http.h"

namespace layerlab::server {

struct ListenerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                            // 0: any free port
  unsigned threads = 8;                       // network threads, and as many handler threads
  unsigned max_connections = 4096;            // all clients together
  unsigned max_connections_per_client = 128;  // per peer address
  unsigned idle_timeout_seconds = 60;         // a connection silent this long is closed
  size_t max_body = 1 << 20;                  // request body, also when sent chunked
  size_t max_header_bytes = 64 << 10;         // request line and headers of one request
};

class Listener {
 public:
  using Handler = std::function<void(Request&, Response&)>;
  // `handler` should not throw (what it throws is answered 500); it runs on a pool of
  // handler threads (server/handler_pool.h), never on the network threads.
  Listener(ListenerOptions options, Handler handler);
  ~Listener();  // stop()

  // Binds and starts; returns the port (the chosen one for port 0). kUnavailable when the
  // address cannot be bound, kInvalidArgument when it does not resolve.
  int start();
  void stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace layerlab::server
