#include "server/listener.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <iostream>
#include <optional>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/mutex.h"
#include "server/handler_pool.h"

namespace layerlab::server {

struct Listener::Impl {
  ListenerOptions options;
  Handler handler;
  std::unique_ptr<HandlerPool> pool;  // runs the handlers; the network threads move bytes
  MHD_Daemon* daemon = nullptr;
  int socket = -1;
};

namespace {

// One request in progress: its body as it arrives, then its answer, made on the handler
// pool while the connection is suspended.
struct Exchange {
  std::string body;
  size_t received = 0;  // body bytes, kept or not
  bool too_large = false;
  bool dispatched = false;  // handed to the pool; the connection resumes when answered
  bool head = false;
  Mutex mu;
  bool answered GUARDED_BY(mu) = false;
  Response response GUARDED_BY(mu);
};

// A streamed response (the event stream). While the stream has nothing to send, its
// connection is suspended (no polling, no thread); the stream's wake-up resumes it.
// A suspended connection is never closed by libmicrohttpd, so `wake` may resume it
// whenever `suspended` is set; once the response is freed, `conn` is cleared.
struct StreamState {
  StreamState(std::shared_ptr<Stream> s, MHD_Connection* c) : stream(std::move(s)), conn(c) {}

  std::shared_ptr<Stream> stream;
  MHD_Connection* conn GUARDED_BY(mu) = nullptr;
  Mutex mu;
  bool suspended GUARDED_BY(mu) = false;
  bool ready GUARDED_BY(mu) = false;  // woken since the last read: read again before suspending
  // The reader's own, used only by read_stream (libmicrohttpd calls it on one thread).
  std::string pending;
  size_t sent = 0;
  bool ended = false;

  void wake() {
    MutexLock lock(mu);
    ready = true;
    if (suspended && conn) {
      suspended = false;
      MHD_resume_connection(conn);
    }
  }
};

ssize_t read_stream(void* cls, uint64_t, char* buf, size_t max) {
  auto* st = static_cast<StreamState*>(cls);
  for (;;) {
    if (st->sent == st->pending.size() && !st->ended) {
      st->pending.clear();
      st->sent = 0;
      {
        MutexLock lock(st->mu);
        st->ready = false;
      }
      st->ended = !st->stream->read(st->pending);
    }
    if (st->sent < st->pending.size()) {
      const size_t n = std::min(max, st->pending.size() - st->sent);
      std::memcpy(buf, st->pending.data() + st->sent, n);
      st->sent += n;
      return static_cast<ssize_t>(n);
    }
    if (st->ended) return MHD_CONTENT_READER_END_OF_STREAM;
    MutexLock lock(st->mu);
    if (st->ready) continue;  // woken between the read and now
    st->suspended = true;
    MHD_suspend_connection(st->conn);
    return 0;
  }
}

void free_stream(void* cls) {
  auto* st = static_cast<StreamState*>(cls);
  {
    MutexLock lock(st->mu);
    st->conn = nullptr;
  }
  st->stream->close();
  delete st;
}

void free_shared_body(void* cls) {
  delete static_cast<std::shared_ptr<const std::string>*>(cls);
}

ssize_t no_body(void*, uint64_t, char*, size_t) {
  return MHD_CONTENT_READER_END_OF_STREAM;
}

// The headers of a stream's response without its body, for HEAD: no length, since the
// stream has none (the connection is closed after them). A chunked response would send
// its final empty chunk even for HEAD.
MHD_Response* make_head_of_stream(Response& res) {
  res.stream->close();
  MHD_Response* r =
      MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1, no_body, nullptr, nullptr);
  if (r) MHD_set_response_options(r, MHD_RF_HTTP_1_0_COMPATIBLE_STRICT, MHD_RO_END);
  return r;
}

MHD_Response* make_mhd_response(MHD_Connection* conn, Response& res, bool head) {
  MHD_Response* r = nullptr;
  if (res.stream && head) {
    r = make_head_of_stream(res);
  } else if (res.stream) {
    auto* st = new StreamState(res.stream, conn);
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 << 10, read_stream, st, free_stream);
    if (!r) {
      delete st;
      return nullptr;
    }
    res.stream->on_ready([st] { st->wake(); });
  } else if (res.body) {
    auto* holder = new std::shared_ptr<const std::string>(res.body);
    r = MHD_create_response_from_buffer_with_free_callback_cls(
        (*holder)->size(), const_cast<char*>((*holder)->data()), free_shared_body, holder);
    if (!r) delete holder;
  } else {
    r = MHD_create_response_from_buffer(
        res.static_body.size(), const_cast<char*>(res.static_body.data()), MHD_RESPMEM_PERSISTENT);
  }
  if (!r) return nullptr;
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, res.content_type.c_str());
  for (const auto& [name, value] : res.headers)
    MHD_add_response_header(r, name.c_str(), value.c_str());
  return r;
}

MHD_Result queue(MHD_Connection* conn, Response& res, bool head = false) {
  MHD_Response* r = make_mhd_response(conn, res, head);
  if (!r) return MHD_NO;  // out of memory: libmicrohttpd closes the connection
  const MHD_Result ok = MHD_queue_response(conn, static_cast<unsigned>(res.status), r);
  MHD_destroy_response(r);
  return ok;
}

std::string peer_address(MHD_Connection* conn) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (!info || !info->client_addr) return "";
  char text[INET6_ADDRSTRLEN] = {};
  const sockaddr* a = info->client_addr;
  if (a->sa_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a)->sin_addr, text, sizeof text);
  else if (a->sa_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr, text, sizeof text);
  return text;
}

MHD_Result collect_header(void* cls, MHD_ValueKind, const char* key, const char* value) {
  static_cast<Request*>(cls)->headers.emplace(key, value ? value : "");
  return MHD_YES;
}

MHD_Result collect_param(void* cls, MHD_ValueKind, const char* key, const char* value) {
  static_cast<Request*>(cls)->params.emplace(key, value ? value : "");
  return MHD_YES;
}

size_t unescape(void*, MHD_Connection*, char* s) {
  const std::string decoded = percent_decode(s);  // never longer than the input
  std::memcpy(s, decoded.data(), decoded.size());
  s[decoded.size()] = '\0';
  return decoded.size();
}

// A request refused before its handler runs; the connection is closed after the reply,
// since what follows the refused request on it cannot be trusted to start a new one.
// `message` is ours, never request text, so it needs no escaping.
Response refusal(int status, const char* code, const std::string& message) {
  Response res;
  res.status = status;
  res.body = std::make_shared<const std::string>(R"({"error":{"code":")" + std::string(code) +
                                                 R"(","message":")" + message + R"("}})");
  res.set_header("Connection", "close");
  return res;
}

Response too_large(size_t max_body) {
  return refusal(413, "payload_too_large",
                 "request body over " + std::to_string(max_body) + " bytes");
}

// The header lines that delimit a request's body (RFC 9112 section 6), every occurrence.
struct BodyFraming {
  std::vector<std::string> content_lengths;
  std::vector<std::string> transfer_encodings;
  bool expects_continue = false;
};

MHD_Result collect_framing(void* cls, MHD_ValueKind, const char* key, const char* value) {
  auto* f = static_cast<BodyFraming*>(cls);
  const std::string text = value ? value : "";
  if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0)
    f->content_lengths.push_back(text);
  else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0)
    f->transfer_encodings.push_back(text);
  else if (strcasecmp(key, MHD_HTTP_HEADER_EXPECT) == 0 &&
           strcasecmp(text.c_str(), "100-continue") == 0)
    f->expects_continue = true;
  return MHD_YES;
}

std::string_view trimmed(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// The codings of all Transfer-Encoding lines in order, empty list elements skipped.
std::vector<std::string> transfer_codings(const std::vector<std::string>& lines) {
  std::vector<std::string> codings;
  for (std::string_view rest : lines) {
    for (;;) {
      const size_t comma = rest.find(',');
      if (const std::string_view coding = trimmed(rest.substr(0, comma)); !coding.empty())
        codings.emplace_back(coding);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return codings;
}

// A body whose length the server and a proxy in front of it could read differently is
// refused (RFC 9112 section 6.3): one decimal Content-Length, or Transfer-Encoding ending
// in chunked, never both. The refusal as a response, or nullopt when the framing is sound;
// `length` is set from a sound Content-Length.
std::optional<Response> refuse_framing(const BodyFraming& f, std::optional<uint64_t>& length) {
  if (!f.transfer_encodings.empty()) {
    if (!f.content_lengths.empty())
      return refusal(400, "invalid_argument",
                     "a request may not carry both Content-Length and Transfer-Encoding");
    const std::vector<std::string> codings = transfer_codings(f.transfer_encodings);
    if (codings.empty() || strcasecmp(codings.back().c_str(), "chunked") != 0)
      return refusal(400, "invalid_argument",
                     "Transfer-Encoding must end with chunked (the body has no other length)");
    if (codings.size() > 1)
      return refusal(501, "not_implemented",
                     "Transfer-Encoding other than chunked alone is not supported");
    return std::nullopt;
  }
  if (f.content_lengths.size() > 1)
    return refusal(400, "invalid_argument", "more than one Content-Length header");
  if (f.content_lengths.empty()) return std::nullopt;
  const std::string& text = f.content_lengths.front();
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return refusal(400, "invalid_argument", "Content-Length is not a decimal number");
  length = n;
  return std::nullopt;
}

// A body over the limit is read and thrown away up to this much, so that a client that
// writes its whole body before it reads (most do) gets the 413; past it the connection is
// closed (a body announced that large is answered at once and closed).
size_t drain_limit(size_t max_body) {
  return std::max<size_t>(4 << 20, 4 * max_body);
}

// Writes `res` on the connection's socket, outside libmicrohttpd, which (0.9.75) can queue
// a response only before or after a request's body. Only for a connection that is closed
// next; nothing else is being written on it while its body is read.
void send_directly(MHD_Connection* conn, const Response& res) {
  const MHD_ConnectionInfo* info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (!info) return;
  std::string text = "HTTP/1.1 " + std::to_string(res.status) + " " +
                     MHD_get_reason_phrase_for(static_cast<unsigned>(res.status)) +
                     "\r\nContent-Type: " + res.content_type + "\r\n";
  for (const auto& [name, value] : res.headers) text += name + ": " + value + "\r\n";
  text += "Content-Length: " + std::to_string(res.bytes().size()) + "\r\n\r\n";
  text += res.bytes();
  // Non-blocking: a client that reads nothing may get a truncated reply, then the close.
  ::send(info->connect_fd, text.data(), text.size(), MSG_NOSIGNAL);
}

MHD_Result on_request(void* cls, MHD_Connection* conn, const char* url, const char* method,
                      const char*, const char* upload_data, size_t* upload_size, void** req_cls) {
  auto* impl = static_cast<Listener::Impl*>(cls);
  auto* ex = static_cast<Exchange*>(*req_cls);
  const size_t max_body = impl->options.max_body;
  if (!ex) {  // headers complete, body (if any) not read yet
    ex = new Exchange;
    *req_cls = ex;
    BodyFraming framing;
    MHD_get_connection_values(conn, MHD_HEADER_KIND, collect_framing, &framing);
    std::optional<uint64_t> length;
    if (std::optional<Response> refused = refuse_framing(framing, length))
      return queue(conn, *refused);
    if (length && *length > max_body) {
      ex->too_large = true;
      // Refused before a byte of the body is read when the client waits for 100 Continue
      // (it has sent nothing) or announces more than would be drained.
      if (framing.expects_continue || *length > drain_limit(max_body)) {
        Response res = too_large(max_body);
        return queue(conn, res);
      }
    }
    return MHD_YES;
  }
  if (*upload_size > 0) {
    ex->received += *upload_size;
    if (ex->received > max_body) {
      ex->too_large = true;
      ex->body.clear();
      ex->body.shrink_to_fit();
      // A chunked body far past the limit gets its 413 now and the connection is closed;
      // nothing of the request is acted on.
      if (ex->received > drain_limit(max_body)) {
        send_directly(conn, too_large(max_body));
        return MHD_NO;
      }
    } else {
      ex->body.append(upload_data, *upload_size);
    }
    *upload_size = 0;
    return MHD_YES;
  }
  if (ex->too_large) {
    Response res = too_large(max_body);
    return queue(conn, res);
  }
  if (ex->dispatched) {  // resumed: the handler has answered
    Response res;
    {
      MutexLock lock(ex->mu);
      if (!ex->answered) return MHD_YES;
      res = std::move(ex->response);
    }
    return queue(conn, res, ex->head);
  }
  auto req = std::make_shared<Request>();
  req->method = method;
  req->path = url;
  req->body = std::move(ex->body);
  req->client = peer_address(conn);
  MHD_get_connection_values(conn, MHD_HEADER_KIND, collect_header, req.get());
  MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_param, req.get());
  ex->dispatched = true;
  ex->head = req->method == MHD_HTTP_METHOD_HEAD;
  // The connection waits, suspended, for the pool's answer; its network thread serves the
  // other connections meanwhile. The handler does not throw (Handler's contract), and the
  // connection is resumed whatever happens, or it would never be answered nor closed.
  MHD_suspend_connection(conn);
  impl->pool->post([impl, conn, ex, req] {
    Response res;
    try {
      impl->handler(*req, res);
    } catch (const std::exception& e) {
      std::cerr << "server: a handler threw, answered 500: " << e.what() << std::endl;
      res = refusal(500, "internal", "internal error");
    }
    {
      MutexLock lock(ex->mu);
      ex->response = std::move(res);
      ex->answered = true;
    }
    MHD_resume_connection(conn);
  });
  return MHD_YES;
}

void on_completed(void*, MHD_Connection*, void** req_cls, MHD_RequestTerminationCode) {
  delete static_cast<Exchange*>(*req_cls);
  *req_cls = nullptr;
}

// libmicrohttpd needs a descriptor per connection; the usual soft limit of 1,024 would cap
// the server below its own connection limit.
void raise_file_limit(unsigned wanted) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= wanted + 256) return;
  lim.rlim_cur = std::min<rlim_t>(lim.rlim_max, wanted + 256);
  setrlimit(RLIMIT_NOFILE, &lim);
}

// A listening socket on host:port. SO_REUSEADDR only (no SO_REUSEPORT): a restart can
// rebind at once, a second server on the same port is refused.
int bind_socket(const std::string& host, int port, int& bound_port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
    throw invalid_argument("cannot listen on " + host + ": " + gai_strerror(rc));
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 1024) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0)
    throw unavailable("cannot listen on " + host + ":" + service +
                      " (in use, or not an address of this machine)");
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  bound_port = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                                : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return fd;
}

}  // namespace

Listener::Listener(ListenerOptions options, Handler handler) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->handler = std::move(handler);
}

Listener::~Listener() {
  stop();
}

int Listener::start() {
  const ListenerOptions& o = impl_->options;
  int port = 0;
  impl_->socket = bind_socket(o.host, o.port, port);
  raise_file_limit(o.max_connections);
  impl_->pool = std::make_unique<HandlerPool>(std::max(1u, o.threads));
  impl_->daemon = MHD_start_daemon(
      MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME, 0, nullptr, nullptr, on_request,
      impl_.get(), MHD_OPTION_LISTEN_SOCKET, impl_->socket, MHD_OPTION_THREAD_POOL_SIZE,
      std::max(1u, o.threads), MHD_OPTION_CONNECTION_LIMIT, std::max(o.threads, o.max_connections),
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, o.max_connections_per_client,
      MHD_OPTION_CONNECTION_TIMEOUT, o.idle_timeout_seconds, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
      o.max_header_bytes, MHD_OPTION_NOTIFY_COMPLETED, on_completed, nullptr,
      MHD_OPTION_UNESCAPE_CALLBACK, unescape, nullptr, MHD_OPTION_END);
  if (!impl_->daemon) {
    impl_->pool.reset();
    ::close(impl_->socket);
    impl_->socket = -1;
    throw unavailable("cannot start the HTTP server on " + o.host + ":" + std::to_string(port));
  }
  return port;
}

void Listener::stop() {
  // The pool first: every request it holds is answered and its connection resumed, which
  // libmicrohttpd needs before it stops (no connection may stay suspended).
  if (impl_->pool) impl_->pool->stop();
  if (impl_->daemon) {
    MHD_stop_daemon(impl_->daemon);
    impl_->daemon = nullptr;
  }
  if (impl_->socket >= 0) {
    ::close(impl_->socket);
    impl_->socket = -1;
  }
}

}  // namespace layerlab::server
