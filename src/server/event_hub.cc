#include "server/event_hub.h"

#include <algorithm>

namespace layerlab::server {

std::string format_event(const Event& e) {
  return "event: " + e.kind + "\ndata: " + e.data + "\n\n";
}

bool EventHub::Subscription::read(std::string& out) {
  MutexLock lock(mu_);
  if (!greeted_) {
    greeted_ = true;
    out += "retry: 2000\n\n";
  }
  if (overflowed_) {
    overflowed_ = false;
    pending_.clear();
    out += format_event({"resync", 0, "{}"});
  }
  while (!pending_.empty() && out.size() < (64 << 10)) {
    out += pending_.front();
    pending_.pop_front();
  }
  return !closed_ || !pending_.empty();
}

void EventHub::Subscription::on_ready(std::function<void()> wake) {
  MutexLock lock(mu_);
  wake_ = std::move(wake);
  if (!pending_.empty() || closed_ || overflowed_) wake_locked();
}

void EventHub::Subscription::close() {
  {
    MutexLock lock(mu_);
    closed_ = true;
    wake_ = nullptr;
  }
  if (hub_) hub_->unsubscribe(this);
}

void EventHub::Subscription::push(const std::string& chunk) {
  if (overflowed_ || closed_) return;
  if (pending_.size() >= kBacklog)
    overflowed_ = true;
  else
    pending_.push_back(chunk);
}

void EventHub::Subscription::wake_locked() {
  if (wake_) wake_();
}

EventHub::Subscribed EventHub::subscribe(int64_t study_id, const std::string& client,
                                         Limits limits) {
  MutexLock lock(mu_);
  if (closed_) return {nullptr, Refusal::kClosed};
  if (subs_.size() >= limits.total) return {nullptr, Refusal::kTotal};
  size_t& mine = per_client_[client];
  if (mine >= limits.per_client) return {nullptr, Refusal::kPerClient};
  ++mine;
  auto s = std::make_shared<Subscription>();
  s->hub_ = this;
  s->study_id_ = study_id;
  s->client_ = client;
  subs_.push_back(s);
  return {s, Refusal::kNone};
}

void EventHub::unsubscribe(Subscription* s) {
  MutexLock lock(mu_);
  auto it = std::find_if(subs_.begin(), subs_.end(), [&](const auto& p) { return p.get() == s; });
  if (it == subs_.end()) return;
  if (auto c = per_client_.find(s->client_); c != per_client_.end() && --c->second == 0)
    per_client_.erase(c);
  subs_.erase(it);
}

void EventHub::publish(const std::vector<Event>& events) {
  if (events.empty()) return;
  std::vector<std::string> formatted;
  formatted.reserve(events.size());
  for (const Event& e : events) formatted.push_back(format_event(e));
  MutexLock lock(mu_);
  if (closed_) return;  // after close() no stream is woken again (see listener.cc)
  for (const auto& s : subs_) {
    MutexLock sub_lock(s->mu_);
    bool any = false;
    for (size_t i = 0; i < events.size(); ++i) {
      if (s->study_id_ && events[i].study_id && events[i].study_id != s->study_id_) continue;
      s->push(formatted[i]);
      any = true;
    }
    if (any) s->wake_locked();
  }
}

void EventHub::ping() {
  MutexLock lock(mu_);
  if (closed_) return;
  for (const auto& s : subs_) {
    MutexLock sub_lock(s->mu_);
    s->push(": ping\n\n");
    s->wake_locked();
  }
}

void EventHub::close() {
  MutexLock lock(mu_);
  closed_ = true;
  for (const auto& s : subs_) {
    MutexLock sub_lock(s->mu_);
    s->closed_ = true;
    s->wake_locked();
  }
}

size_t EventHub::clients() const {
  MutexLock lock(mu_);
  return subs_.size();
}

}  // namespace layerlab::server
