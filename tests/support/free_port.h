// A loopback TCP port for a server a test starts.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace layerlab::testing {

// A TCP port on 127.0.0.1 that nothing listens on right now (the kernel's pick for port 0).
// A plain socket, closed at once: a library's probe that stays listening (httplib's, with
// SO_REUSEPORT) would take connections meant for the server.
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("free_port: socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("free_port: cannot bind 127.0.0.1:0");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace layerlab::testing
