// EventHub: fans Server-Sent Events out to the connected clients. Each client has a
// bounded backlog; a client that falls behind gets one `resync` event instead of the
// events it missed, and refetches.
//
// Thread-safety: all calls may be made from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace layerlab::server {

struct Event {
  std::string kind;      // trial, epoch, worker, study, resync
  int64_t study_id = 0;  // 0: about no study in particular (workers); every client gets it
  std::string data;      // JSON
};

// "event: KIND\ndata: DATA\n\n"
std::string format_event(const Event& e);

class EventHub {
 public:
  static constexpr size_t kBacklog = 10'000;

  class Subscription {
   public:
    // The next chunk to send (one or more formatted events), or nullopt after `wait` with
    // nothing new or once the hub closed (check closed()).
    std::optional<std::string> next(std::chrono::milliseconds wait);
    bool closed() const;

   private:
    friend class EventHub;
    int64_t study_id_ = 0;  // 0: every study
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::string> pending_;
    bool overflowed_ = false;
    bool closed_ = false;
  };

  // nullptr when `max_clients` are already subscribed.
  std::shared_ptr<Subscription> subscribe(int64_t study_id, size_t max_clients);
  void unsubscribe(const std::shared_ptr<Subscription>& s);
  void publish(const std::vector<Event>& events);
  // Ends every subscription (the server is stopping).
  void close();
  size_t clients() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Subscription>> subs_;
  bool closed_ = false;
};

}  // namespace layerlab::server
