#include "server/event_hub.h"

#include <algorithm>

namespace layerlab::server {

std::string format_event(const Event& e) {
  return "event: " + e.kind + "\ndata: " + e.data + "\n\n";
}

std::optional<std::string> EventHub::Subscription::next(std::chrono::milliseconds wait) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, wait, [&] { return closed_ || overflowed_ || !pending_.empty(); });
  if (overflowed_) {
    overflowed_ = false;
    pending_.clear();
    return format_event({"resync", 0, "{}"});
  }
  if (pending_.empty()) return std::nullopt;
  std::string out;
  while (!pending_.empty() && out.size() < (64 << 10)) {
    out += pending_.front();
    pending_.pop_front();
  }
  return out;
}

bool EventHub::Subscription::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

std::shared_ptr<EventHub::Subscription> EventHub::subscribe(int64_t study_id, size_t max_clients) {
  std::lock_guard lock(mu_);
  if (closed_ || subs_.size() >= max_clients) return nullptr;
  auto s = std::make_shared<Subscription>();
  s->study_id_ = study_id;
  subs_.push_back(s);
  return s;
}

void EventHub::unsubscribe(const std::shared_ptr<Subscription>& s) {
  std::lock_guard lock(mu_);
  std::erase(subs_, s);
}

void EventHub::publish(const std::vector<Event>& events) {
  if (events.empty()) return;
  std::vector<std::string> formatted;
  formatted.reserve(events.size());
  for (const Event& e : events) formatted.push_back(format_event(e));
  std::lock_guard lock(mu_);
  for (const auto& s : subs_) {
    {
      std::lock_guard sub_lock(s->mu_);
      for (size_t i = 0; i < events.size() && !s->overflowed_; ++i) {
        if (s->study_id_ && events[i].study_id && events[i].study_id != s->study_id_) continue;
        if (s->pending_.size() >= kBacklog)
          s->overflowed_ = true;
        else
          s->pending_.push_back(formatted[i]);
      }
    }
    s->cv_.notify_one();
  }
}

void EventHub::close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  for (const auto& s : subs_) {
    {
      std::lock_guard sub_lock(s->mu_);
      s->closed_ = true;
    }
    s->cv_.notify_one();
  }
}

size_t EventHub::clients() const {
  std::lock_guard lock(mu_);
  return subs_.size();
}

}  // namespace layerlab::server
