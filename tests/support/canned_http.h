// A one-shot HTTP server for client tests: it reads one request, then answers with a status
// line, headers and a body that may be far larger than anything a client should read, and
// counts what it managed to send before the client went away.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <thread>

namespace layerlab::testing {

class CannedHttpServer {
 public:
  // Answers `head` (status line and headers, each ending in \r\n, without the blank line),
  // then `body`, then filler bytes up to `body_bytes` in all; Content-Length says body_bytes.
  CannedHttpServer(std::string head, std::string body, size_t body_bytes)
      : head_(std::move(head)), body_(std::move(body)), body_bytes_(body_bytes) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    socklen_t len = sizeof a;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_fd_, 1) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      return;
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve_one(); });
  }
  ~CannedHttpServer() {
    ::shutdown(listen_fd_, SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
    ::close(listen_fd_);
  }
  CannedHttpServer(const CannedHttpServer&) = delete;
  CannedHttpServer& operator=(const CannedHttpServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Body bytes sent before the client closed (or all of them); valid once the client is done.
  size_t body_sent() {
    if (thread_.joinable()) thread_.join();
    return sent_;
  }

 private:
  void serve_one() {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    read_request(fd);
    const std::string head = head_ + "Content-Length: " + std::to_string(body_bytes_) + "\r\n\r\n";
    if (send_all(fd, head)) {
      std::string chunk = body_;
      while (sent_ < body_bytes_) {
        if (chunk.empty()) chunk.assign(std::min<size_t>(1 << 16, body_bytes_ - sent_), 'x');
        chunk.resize(std::min(chunk.size(), body_bytes_ - sent_));
        if (!send_all(fd, chunk)) break;
        sent_ += chunk.size();
        chunk.clear();
      }
    }
    ::close(fd);
  }
  // The headers, then as many body bytes as Content-Length says.
  static void read_request(int fd) {
    std::string in;
    char buf[4096];
    size_t end = std::string::npos;
    while ((end = in.find("\r\n\r\n")) == std::string::npos) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return;
      in.append(buf, static_cast<size_t>(n));
    }
    size_t length = 0;
    if (const size_t at = in.find("Content-Length: "); at != std::string::npos)
      length = std::stoul(in.substr(at + 16));
    while (in.size() < end + 4 + length) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return;
      in.append(buf, static_cast<size_t>(n));
    }
  }
  static bool send_all(int fd, const std::string& bytes) {
    for (size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  std::string head_, body_;
  size_t body_bytes_;
  int listen_fd_ = -1;
  int port_ = 0;
  size_t sent_ = 0;
  std::thread thread_;
};

}  // namespace layerlab::testing
