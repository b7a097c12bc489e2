// The server's own view of an HTTP exchange, independent of the library that speaks the
// protocol (listener.cc, libmicrohttpd): the routes, the checks before them and the fuzz
// target all work on these types, so request handling can be exercised without a socket.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace layerlab::server {

// Header names compare without regard to case (RFC 9110).
struct Caseless {
  bool operator()(const std::string& a, const std::string& b) const;
};

struct Request {
  std::string method;  // as sent: GET, POST, ...; HEAD is routed as GET
  std::string path;    // decoded, without the query
  std::multimap<std::string, std::string, Caseless> headers;
  std::multimap<std::string, std::string> params;  // decoded query arguments
  std::string body;
  std::string client;                // the peer's address, for per-client limits
  std::vector<std::string> matches;  // the route pattern's captures; [0] is the whole path

  bool has_param(const std::string& name) const { return params.count(name) > 0; }
  // The first value of `name`, or "".
  std::string param(const std::string& name) const;
  bool has_header(const std::string& name) const { return headers.count(name) > 0; }
  std::string header(const std::string& name) const;
};

// A response body produced over time (the event stream). `read` is called from the
// server's network thread; `on_ready` registers a function that the stream calls, from any
// thread, when `read` has something new to give or the stream has ended.
class Stream {
 public:
  virtual ~Stream() = default;
  // Appends what is ready to `out`; false once the stream has ended (after `out`).
  virtual bool read(std::string& out) = 0;
  virtual void on_ready(std::function<void()> wake) = 0;
  // Called once when the client is gone or the response is finished.
  virtual void close() = 0;
};

struct Response {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type = "application/json";
  // One of: a shared body (cached responses go out without a copy), bytes with static
  // lifetime (embedded files), or a stream.
  std::shared_ptr<const std::string> body;
  std::string_view static_body;
  std::shared_ptr<Stream> stream;

  void set_header(std::string name, std::string value);
  std::string_view bytes() const { return body ? std::string_view(*body) : static_body; }
};

// TARGET = PATH[?QUERY]: sets the path and the decoded query arguments by the rules the
// listener applies. Used by the fuzz target and tests; the listener gets the same from
// libmicrohttpd, which calls percent_decode.
void set_target(Request& req, std::string_view target);
// '%XX' and '+' (a space) decoded; a malformed escape stays as sent.
std::string percent_decode(std::string_view text);

}  // namespace layerlab::server
