// EventHub: fans Server-Sent Events out to the connected clients. Each client has a
// bounded backlog; a client that falls behind gets one `resync` event instead of the
// events it missed, and refetches. Clients are counted in total and per peer address.
//
// Thread-safety: all calls may be made from any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "server/http.h"

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

  // One client's stream: "retry: 2000" first (the browser's reconnect delay), then the
  // events of its study (or of every study), pings, and the end once the hub closes.
  class Subscription : public Stream {
   public:
    bool read(std::string& out) override;
    void on_ready(std::function<void()> wake) override;
    void close() override;  // unsubscribes

   private:
    friend class EventHub;
    void push(const std::string& chunk) REQUIRES(mu_);
    void wake_locked() REQUIRES(mu_);

    EventHub* hub_ = nullptr;
    int64_t study_id_ = 0;  // 0: every study
    std::string client_;
    Mutex mu_;  // taken after the hub's
    std::function<void()> wake_ GUARDED_BY(mu_);
    std::deque<std::string> pending_ GUARDED_BY(mu_);
    bool greeted_ GUARDED_BY(mu_) = false;
    bool overflowed_ GUARDED_BY(mu_) = false;
    bool closed_ GUARDED_BY(mu_) = false;
  };

  struct Limits {
    size_t total = 1024;
    size_t per_client = 64;
  };
  enum class Refusal { kNone, kTotal, kPerClient, kClosed };
  struct Subscribed {
    std::shared_ptr<Subscription> stream;  // null when refused
    Refusal refusal = Refusal::kNone;
  };

  Subscribed subscribe(int64_t study_id, const std::string& client, Limits limits);
  void publish(const std::vector<Event>& events);
  // A comment line to every client: keeps idle streams (and proxies) alive, and makes a
  // write that finds a client that has gone.
  void ping();
  // Ends every subscription (the server is stopping).
  void close();
  size_t clients() const;

 private:
  void unsubscribe(Subscription* s) EXCLUDES(mu_);

  mutable Mutex mu_;
  std::vector<std::shared_ptr<Subscription>> subs_ GUARDED_BY(mu_);
  std::map<std::string, size_t> per_client_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
};

}  // namespace layerlab::server
