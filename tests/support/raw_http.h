// Raw TCP clients for tests that must send what a well-behaved HTTP client never would:
// partial headers, pipelined requests, odd methods, oversized or chunked bodies, and many
// sockets held open at once.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

namespace layerlab::testing {

// A TCP connection to 127.0.0.1:port, optionally from another loopback source address
// (127.0.0.2...), so a test can play several clients. Closed on destruction.
class RawConnection {
 public:
  explicit RawConnection(int port, const std::string& source = "") {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return;
    if (!source.empty()) {
      sockaddr_in from{};
      from.sin_family = AF_INET;
      inet_pton(AF_INET, source.c_str(), &from.sin_addr);
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) close();
    }
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) close();
  }
  ~RawConnection() { close(); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  RawConnection(RawConnection&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }

  bool ok() const { return fd_ >= 0; }
  bool send(const std::string& bytes) {
    size_t sent = 0;
    while (fd_ >= 0 && sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return fd_ >= 0;
  }
  // What arrives until the peer closes, `until` appears, or `limit` passes without it
  // (a bound so that a broken server fails the test instead of hanging it).
  std::string receive(const std::string& until = "",
                      std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    std::string out;
    const auto end = std::chrono::steady_clock::now() + limit;
    while (fd_ >= 0) {
      if (!until.empty() && out.find(until) != std::string::npos) break;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[16384];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        closed_by_peer_ = true;
        break;
      }
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }
  bool closed_by_peer() const { return closed_by_peer_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  bool closed_by_peer_ = false;
};

// One request on a fresh connection; the whole response (the server closes, as asked).
inline std::string raw_exchange(int port, const std::string& request) {
  RawConnection c(port);
  if (!c.send(request)) return "";
  return c.receive();
}

// The status code of the first response in `text`, or 0.
inline int raw_status(const std::string& text) {
  if (text.rfind("HTTP/1.", 0) != 0 || text.size() < 12) return 0;
  return std::stoi(text.substr(9, 3));
}

}  // namespace layerlab::testing
