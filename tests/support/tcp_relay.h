// A TCP relay for tests that put a process on another "host" (a network namespace): it
// listens on an address the other host reaches and copies bytes both ways to a server
// that listens on loopback only. The server sees a loopback client, as RabbitMQ's guest
// user requires. A relayed connection ends when either side closes.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace layerlab::testing {

class TcpRelay {
 public:
  // Listens on listen_ip (an ephemeral port: port()) and relays to 127.0.0.1:target_port.
  TcpRelay(const std::string& listen_ip, int target_port) : target_port_(target_port) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    ::inet_pton(AF_INET, listen_ip.c_str(), &addr.sin_addr);
    socklen_t len = sizeof addr;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listener_, 64) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ::close(listener_);
      throw std::runtime_error("TcpRelay: cannot listen on " + listen_ip);
    }
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }

  ~TcpRelay() {
    stopping_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    acceptor_.join();
    ::close(listener_);
    {
      std::lock_guard lock(mu_);
      for (int fd : sockets_) ::shutdown(fd, SHUT_RDWR);
    }
    for (std::thread& t : pipes_) t.join();
    for (int fd : sockets_) ::close(fd);
  }

  int port() const { return port_; }

 private:
  void accept_loop() {
    while (!stopping_) {
      const int client = ::accept(listener_, nullptr, nullptr);
      if (client < 0) return;  // shut down
      const int server = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(static_cast<uint16_t>(target_port_));
      if (::connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(server);
        ::close(client);
        continue;
      }
      std::lock_guard lock(mu_);
      sockets_.push_back(client);
      sockets_.push_back(server);
      pipes_.emplace_back([client, server] { pipe(client, server); });
    }
  }

  // Copies both ways until one side ends, then ends the other.
  static void pipe(int a, int b) {
    pollfd fds[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
    char buffer[16384];
    for (;;) {
      if (::poll(fds, 2, -1) < 0) break;
      bool done = false;
      for (int i = 0; i < 2 && !done; ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
        if (n <= 0) {
          done = true;
          break;
        }
        for (ssize_t sent = 0; sent < n;) {
          const ssize_t w = ::write(fds[1 - i].fd, buffer + sent, static_cast<size_t>(n - sent));
          if (w <= 0) {
            done = true;
            break;
          }
          sent += w;
        }
      }
      if (done) break;
    }
    ::shutdown(a, SHUT_RDWR);
    ::shutdown(b, SHUT_RDWR);
  }

  const int target_port_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<int> sockets_;        // GUARDED_BY(mu_)
  std::vector<std::thread> pipes_;  // GUARDED_BY(mu_)
};

}  // namespace layerlab::testing
