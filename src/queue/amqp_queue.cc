// The RabbitMQ TrialQueue (see make_amqp_queue in trial_queue.h).
//
// Two connections: the consumer's, owned by one I/O thread (rabbitmq-c connections are
// not thread-safe), and the publisher's (publish, hand-backs, dead letters), used under a
// mutex. Worker threads post acks to the I/O thread and wake it through an eventfd, so an
// ack leaves at once instead of after a polling interval.
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>
#include <type_traits>

#include "common/error.h"
#include "common/mutex.h"
#include "queue/amqp_connection.h"
#include "queue/lease_keeper.h"
#include "queue/trial_queue.h"

namespace layerlab::queue {
namespace {

using std::chrono::milliseconds;

constexpr size_t kPublishChunk = 1000;  // messages per wait for confirms
constexpr milliseconds kMaxBackoff{5000};
constexpr size_t kMaxStartBatch = 64;  // deliveries started per store transaction, at most
// Adaptive prefetch (AmqpQueueOptions::max_prefetch): raised after kShortInARow trials in a
// row each acked within kShortHold of receive(), dropped once one is held for kLongHold, or
// once deliveries have waited kLongStall with the worker taking none of them: its trial in
// hand takes long, and another worker could run them (a sweep's short trials raise it, its
// long ones then sat behind one another in one worker while the other idled: Sweep A's
// last 12 trials, 450 ms).
constexpr milliseconds kShortHold{50};
constexpr int kShortInARow = 8;
constexpr milliseconds kLongHold{1000};
constexpr milliseconds kLongStall{100};

// {"trial": ID, "study": S}: a worker needs the trial's id; the study is for operators
// reading a queue. A hand-back's copy is the same message.
std::string message_body(int64_t trial_id, int64_t study_id) {
  return nlohmann::json{{"trial", trial_id}, {"study", study_id}}.dump();
}

std::optional<int64_t> trial_of(const std::string& body) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("trial") || !j["trial"].is_number_integer())
    return std::nullopt;
  return j["trial"].get<int64_t>();
}

class AmqpQueue final : public TrialQueue {
 public:
  AmqpQueue(store::Store& store, std::string worker_id, amqp::BrokerUrl url,
            const AmqpQueueOptions& o)
      : store_(store),
        worker_id_(std::move(worker_id)),
        url_(std::move(url)),
        layout_(amqp::layout(url_, broker_delivery_limit(o.max_attempts))),
        options_(o),
        wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
        keeper_(
            [this](const std::vector<store::AttemptRef>& attempts) {
              return store_.renew_leases(attempts, worker_id_, options_.lease);
            },
            o.lease / 3) {
    if (wake_fd_ < 0) throw internal_error("amqp queue: eventfd failed");
  }

  ~AmqpQueue() override {
    stop_consumer();
    close_fd();
  }

  void publish(int64_t study_id, const std::vector<int64_t>& trial_ids) override {
    if (trial_ids.empty()) return;
    std::vector<std::string> bodies;
    bodies.reserve(trial_ids.size());
    for (int64_t id : trial_ids) bodies.push_back(message_body(id, study_id));
    MutexLock lock(pub_mu_);
    with_publisher([&](amqp::Connection& c) {
      for (size_t at = 0; at < bodies.size(); at += kPublishChunk) {
        const auto end =
            bodies.begin() + static_cast<ptrdiff_t>(std::min(bodies.size(), at + kPublishChunk));
        c.publish(layout_.trials, {bodies.begin() + static_cast<ptrdiff_t>(at), end});
      }
    });
  }

  // Deliveries that came ahead are started together: one store transaction for all that the
  // broker has sent (at most `prefetch`), handed out one per call.
  std::optional<Delivery> receive(milliseconds wait) override {
    start_consumer();
    const auto deadline = std::chrono::steady_clock::now() + wait;
    for (;;) {
      std::vector<Raw> batch;
      Ahead ahead;
      {
        MutexLock lock(mu_);
        auto ready = [&]() REQUIRES(mu_) { return !started_.empty() || !inbox_.empty() || fatal_; };
        for (auto now = std::chrono::steady_clock::now(); !ready() && now < deadline;
             now = std::chrono::steady_clock::now()) {
          if (options_.stop && *options_.stop) return std::nullopt;
          cv_.wait_until(lock.native(), std::min(deadline, now + kStopCheck), ready);
        }
        if (!started_.empty()) {
          Delivery d = std::move(started_.front());
          started_.pop_front();
          last_taken_ = std::chrono::steady_clock::now();
          held_[{d.trial_id, d.attempt}] = last_taken_;
          return d;
        }
        if (fatal_) throw *fatal_;
        if (inbox_.empty()) return std::nullopt;
        if (inbox_.front().redelivered) {
          batch.push_back(std::move(inbox_.front()));
          inbox_.pop_front();
          ahead = take_ahead();
        } else {
          batch = take_fresh();
        }
      }
      send_back(ahead);
      start(batch);
    }
  }

  // The results, and what waits in the inbox started with them: when the worker commits a
  // batch of short trials, the broker has usually sent the next batch already.
  std::vector<bool> finish(const std::vector<store::TrialFinish>& finishes) override {
    std::vector<Raw> batch;
    {
      MutexLock lock(mu_);
      if (!inbox_.empty() && !inbox_.front().redelivered) batch = take_fresh();
    }
    std::vector<Raw*> raws;
    const std::vector<int64_t> ids = layerlab_trials(batch, raws);
    if (ids.empty()) return store_.finish_trials(finishes);
    store::Store::FinishedAndStarted done;
    try {
      done = store_.finish_and_start_trials(finishes, ids, worker_id_, options_.lease,
                                            options_.max_attempts);
    } catch (const Error&) {
      put_back(raws);
      throw;
    }
    settle(raws, done.starts);
    return done.applied;
  }

  void ack(const Delivery& d) override {
    keeper_.remove(d.trial_id, d.attempt);
    {
      MutexLock lock(mu_);
      const std::optional<milliseconds> hold = release_hold(d);
      fast_streak_ = hold && *hold < kShortHold ? fast_streak_ + 1 : 0;
      if (fast_streak_ >= kShortInARow && boost_tag_.empty() &&
          options_.max_prefetch > options_.prefetch)
        boost_wanted_ = true;
    }
    post({Command::kAck, d.tag, d.connection});
  }

  // Released in the store first, then a copy goes to the back of the queue and the
  // original is acked: a hand-back does not use up one of the trial's deliveries (a
  // requeueing nack would, on a quorum queue). With the broker away the copy cannot go:
  // the original stays unacked and the broker puts it back when this connection closes
  // (the worker is stopping), at the cost of one delivery. Never the original acked
  // without its copy: that would leave a queued trial with no message.
  void requeue(const Delivery& d) override {
    {
      MutexLock lock(mu_);
      release_hold(d);
    }
    const bool released = store_.release_trial(d.trial_id, d.attempt);
    keeper_.remove(d.trial_id, d.attempt);
    if (released) {
      try {
        publish_copy(message_body(d.trial_id, d.study_id));
      } catch (const Error& e) {
        if (e.code() != ErrorCode::kUnavailable) throw;
        return;
      }
    }
    post({Command::kAck, d.tag, d.connection});
  }

  // Stops consuming and hands back what came ahead of receive() (see hand_back_waiting).
  void close() override {
    stop_consumer();
    MutexLock lock(mu_);
    if (!consumer_) {
      // Nothing to ack them on: the broker requeued the messages already.
      give_back(started_);
      started_.clear();
      inbox_.clear();
      return;
    }
    run_commands();
    // No new deliveries from here on (else the copies below would come straight back to
    // this consumer); the ones already sent are read below and handed back.
    consumer_->cancel();
    boost_tag_.clear();
    while (std::optional<amqp::Message> m = consumer_->poll_delivery())
      inbox_.push_back({m->tag, std::move(m->body), generation_, m->redelivered});
    hand_back_waiting();
    consumer_.reset();
  }

  bool lost(const Delivery& d) const override { return keeper_.lost(d.trial_id, d.attempt); }

  int64_t settle_dead_letters() override {
    MutexLock lock(pub_mu_);
    return with_publisher([&](amqp::Connection& c) {
      int64_t settled = 0;
      while (std::optional<amqp::Message> m = c.get(layout_.dead_to_store)) {
        if (std::optional<int64_t> id = trial_of(m->body)) {
          try {
            store_.fail_trial(*id, dead_letter_reason());
          } catch (const Error& e) {
            if (e.code() != ErrorCode::kNotFound) throw;  // kNotFound: another store's trial
          }
        }
        c.ack(m->tag);
        ++settled;
      }
      return settled;
    });
  }

 private:
  std::string dead_letter_reason() const {
    const int n = layout_.delivery_limit;
    return "delivered " + (n == 1 ? std::string("once") : std::to_string(n) + " times") +
           " without a result (its workers died); the broker dead-lettered it to queue '" +
           layout_.dead + "'";
  }

  struct Raw {
    uint64_t tag = 0;
    std::string body;
    uint64_t connection = 0;
    bool redelivered = false;
  };
  // A redelivered trial may be what killed its last worker: it is started alone, and what
  // came ahead of it goes back to the queue the way requeue() hands back (a copy, then an
  // ack), so that another crash uses up none of their deliveries. A copy starts the broker's
  // count afresh; the store keeps the count that matters (lost attempts, see start_trials).
  // (What the broker sends meanwhile waits, unstarted.) take_ahead() takes them out under
  // the lock; send_back() sends them back without it.
  struct Ahead {
    std::deque<Raw> raw;
    std::deque<Delivery> started;
  };
  Ahead take_ahead() REQUIRES(mu_) {
    Ahead a;
    a.raw.swap(inbox_);
    a.started.swap(started_);
    return a;
  }
  void send_back(const Ahead& a) EXCLUDES(mu_) {
    const std::vector<bool> given = give_back(a.started);
    for (size_t i = 0; i < a.started.size(); ++i) {
      const Delivery& d = a.started[i];
      if (given[i]) publish_copy(message_body(d.trial_id, d.study_id));
      post({Command::kAck, d.tag, d.connection});
    }
    for (const Raw& raw : a.raw) {
      publish_copy(raw.body);
      post({Command::kAck, raw.tag, raw.connection});
    }
  }

  // Trials started in the store ahead of receive() and never handed out go back as if they
  // had never started (Store::give_back_trials: the next start is the same attempt, so a
  // hand-back leaves no trace in a trial's history). Element i: whether started[i] was still
  // this worker's. Their leases stop being renewed first: if the store is away, they expire.
  std::vector<bool> give_back(const std::deque<Delivery>& started) {
    if (started.empty()) return {};
    std::vector<store::AttemptRef> attempts;
    for (const Delivery& d : started) {
      keeper_.remove(d.trial_id, d.attempt);
      attempts.push_back({d.trial_id, d.attempt});
    }
    return store_.give_back_trials(attempts);
  }

  // Hands back what came ahead of receive(), the way requeue does: the trials started
  // together in the store are given back, and every message goes back as a copy before the
  // original is acked (so no delivery is used up).
  void hand_back_waiting() REQUIRES(mu_) {
    std::deque<Delivery> started;
    started.swap(started_);
    const std::vector<bool> given = give_back(started);
    auto hand_back = [&](const std::string& body, uint64_t tag) REQUIRES(mu_) {
      publish_copy(body);
      consumer_->ack(tag);
    };
    for (size_t i = 0; i < started.size(); ++i) {
      const Delivery& d = started[i];
      if (d.connection != generation_) continue;  // the broker requeued it when that went
      if (given[i]) {
        hand_back(message_body(d.trial_id, d.study_id), d.tag);
      } else {
        consumer_->ack(d.tag);  // taken over meanwhile: not ours to hand back
      }
    }
    for (const Raw& raw : inbox_) hand_back(raw.body, raw.tag);
    inbox_.clear();
  }

  // How long d was held since receive() returned it (nothing if it was not handed out).
  std::optional<milliseconds> release_hold(const Delivery& d) REQUIRES(mu_) {
    const auto it = held_.find({d.trial_id, d.attempt});
    if (it == held_.end()) return std::nullopt;
    const auto hold =
        std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - it->second);
    held_.erase(it);
    return hold;
  }

  // The adaptive prefetch, on the I/O thread. Raising it is a second consumer on the
  // channel (a quorum queue's prefetch is per consumer and fixed when it starts). Dropping
  // it cancels that consumer, which the broker answers by returning the messages it had
  // assigned to it (marked redelivered: the backstop limit absorbs that), and hands back
  // what waits here, so no trial waits behind one that takes long.
  void adapt_prefetch() REQUIRES(mu_) {
    if (boost_wanted_ && boost_tag_.empty()) {
      consumer_->qos(options_.max_prefetch - options_.prefetch);
      boost_tag_ = consumer_->consume(layout_.trials);
    } else if (!boost_tag_.empty() && (held_longer_than(kLongHold) || stalled())) {
      consumer_->cancel(boost_tag_);
      boost_tag_.clear();
      fast_streak_ = 0;
      hand_back_waiting();
    }
    boost_wanted_ = false;
  }

  // Deliveries wait here (started or not) and the worker has taken none for kLongStall.
  bool waiting() const REQUIRES(mu_) { return !started_.empty() || !inbox_.empty(); }
  bool stalled() const REQUIRES(mu_) {
    return waiting() && std::chrono::steady_clock::now() - last_taken_ >= kLongStall;
  }

  bool held_longer_than(milliseconds limit) const REQUIRES(mu_) {
    const auto now = std::chrono::steady_clock::now();
    return std::any_of(held_.begin(), held_.end(),
                       [&](const auto& h) { return now - h.second >= limit; });
  }

  // A copy of a message goes to the back of the queue (a hand-back, before the original's
  // ack), as a fresh message for the broker's delivery count.
  void publish_copy(const std::string& body) EXCLUDES(pub_mu_) {
    MutexLock lock(pub_mu_);
    with_publisher([&](amqp::Connection& c) { c.publish(layout_.trials, {body}); });
  }

  // The deliveries at the front of the inbox that are not redeliveries (those start alone),
  // up to kMaxStartBatch.
  std::vector<Raw> take_fresh() REQUIRES(mu_) {
    std::vector<Raw> batch;
    while (!inbox_.empty() && !inbox_.front().redelivered && batch.size() < kMaxStartBatch) {
      batch.push_back(std::move(inbox_.front()));
      inbox_.pop_front();
    }
    return batch;
  }

  // The trial ids of batch's layerlab messages, with those messages in `raws`; any other
  // message is rejected (dead-lettered, for someone to look at).
  std::vector<int64_t> layerlab_trials(std::vector<Raw>& batch, std::vector<Raw*>& raws) {
    std::vector<int64_t> ids;
    for (Raw& raw : batch) {
      if (const std::optional<int64_t> id = trial_of(raw.body)) {
        ids.push_back(*id);
        raws.push_back(&raw);
      } else {
        post({Command::kReject, raw.tag, raw.connection});
      }
    }
    return ids;
  }

  // The store is away: the messages go back to the front of the inbox, in order, for the
  // next call.
  void put_back(std::vector<Raw*>& raws) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    for (auto it = raws.rbegin(); it != raws.rend(); ++it) inbox_.push_front(std::move(**it));
  }

  // Starts the trials of `batch` in the store (see settle).
  void start(std::vector<Raw>& batch) {
    std::vector<Raw*> raws;
    const std::vector<int64_t> ids = layerlab_trials(batch, raws);
    if (ids.empty()) return;
    std::vector<store::Store::Start> starts;
    try {
      starts = store_.start_trials(ids, worker_id_, options_.lease, options_.max_attempts);
    } catch (const Error&) {
      put_back(raws);
      throw;
    }
    settle(raws, starts);
  }

  // Queues the deliveries of the trials the store started (starts[i] for raws[i]) in
  // started_, and settles at once the messages that need no run (another store's trial, a
  // result committed already).
  void settle(const std::vector<Raw*>& raws, std::vector<store::Store::Start>& starts) {
    std::deque<Delivery> ready;
    for (size_t i = 0; i < starts.size(); ++i) {
      const Raw& raw = *raws[i];
      std::optional<store::Claim>& claim = starts[i].claim;
      if (!starts[i].known || starts[i].exhausted) {
        // Another store's trial on this broker, or one the store failed for its lost
        // attempts: dead-lettered, for operators to look at.
        post({Command::kReject, raw.tag, raw.connection});
      } else if (!claim) {  // finished or cancelled already: a redelivery of a committed result
        post({Command::kAck, raw.tag, raw.connection});
      } else {
        keeper_.add(claim->trial_id, claim->attempt);
        ready.push_back(Delivery{claim->trial_id, claim->attempt, claim->study_id, claim->number,
                                 std::move(claim->dataset), std::move(claim->params), raw.tag,
                                 raw.connection});
      }
    }
    if (ready.empty()) return;
    {
      MutexLock lock(mu_);
      if (!waiting()) last_taken_ = std::chrono::steady_clock::now();  // the wait starts
      for (Delivery& d : ready) started_.push_back(std::move(d));
    }
    cv_.notify_all();
  }

  struct Command {
    enum Kind { kAck, kReject } kind;
    uint64_t tag;
    uint64_t connection;
  };

  // Runs fn on the publisher connection, connecting first if needed; a failed connection is
  // dropped so that the next call starts a new one.
  template <typename F>
  std::invoke_result_t<F&, amqp::Connection&> with_publisher(F&& fn) REQUIRES(pub_mu_) {
    try {
      if (!publisher_) {
        auto c = std::make_unique<amqp::Connection>(url_, std::chrono::seconds(0));
        c->declare(layout_);
        c->confirm_select();
        publisher_ = std::move(c);
      }
      return fn(*publisher_);
    } catch (const Error&) {
      publisher_.reset();
      throw;
    }
  }

  void post(Command c) EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      commands_.push_back(c);
    }
    wake();
  }

  void wake() {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
  }

  void start_consumer() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (io_.joinable()) return;
    stopping_ = false;
    io_ = std::thread([this] { io_loop(); });
  }

  void stop_consumer() EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      if (!io_.joinable()) return;
      stopping_ = true;
    }
    wake();
    cv_.notify_all();
    io_.join();
  }

  void close_fd() {
    if (wake_fd_ >= 0) ::close(wake_fd_);
    wake_fd_ = -1;
  }

  // Sends the posted acks and rejects of the current connection; those of an older one are
  // dropped (the broker requeued their messages when it went).
  void run_commands() REQUIRES(mu_) {
    for (const Command& c : commands_) {
      if (!consumer_ || c.connection != generation_) continue;
      if (c.kind == Command::kAck)
        consumer_->ack(c.tag);
      else
        consumer_->reject(c.tag);
    }
    commands_.clear();
  }

  // Waits until the socket has data or a command is posted (at most a second, so that
  // heartbeats are sent while idle).
  void wait_for_work(int socket_fd, milliseconds timeout) {
    pollfd fds[2] = {{socket_fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, static_cast<int>(timeout.count())) > 0 && (fds[1].revents & POLLIN)) {
      uint64_t count;
      [[maybe_unused]] ssize_t n = read(wake_fd_, &count, sizeof(count));
    }
  }

  void io_loop() EXCLUDES(mu_) {
    milliseconds backoff{100};
    std::minstd_rand jitter{std::random_device{}()};
    MutexLock lock(mu_);
    while (!stopping_) {
      try {
        if (!consumer_) {
          lock.unlock();
          auto c = std::make_unique<amqp::Connection>(url_, options_.heartbeat);
          c->declare(layout_);
          c->qos(options_.prefetch);
          c->consume(layout_.trials);
          lock.lock();
          consumer_ = std::move(c);
          ++generation_;
          fatal_.reset();
          backoff = milliseconds(100);
        }
        run_commands();
        adapt_prefetch();
        const bool ready = consumer_->buffered();
        const int fd = consumer_->fd();
        // While raised with deliveries waiting, look again soon: a stall ends the raise.
        const milliseconds wait = !boost_tag_.empty() && waiting() ? milliseconds(20) : kLongHold;
        lock.unlock();
        if (!ready) wait_for_work(fd, wait);
        lock.lock();
        bool got = false;
        if (!waiting()) last_taken_ = std::chrono::steady_clock::now();  // a wait may start
        while (std::optional<amqp::Message> m = consumer_->poll_delivery()) {
          inbox_.push_back({m->tag, std::move(m->body), generation_, m->redelivered});
          got = true;
        }
        if (got) cv_.notify_all();
      } catch (const std::exception& e) {  // any failure, bad_alloc too: reconnect with backoff
        if (!lock.owns_lock()) lock.lock();
        consumer_.reset();
        boost_tag_.clear();  // a new connection starts at the base prefetch
        boost_wanted_ = false;
        fast_streak_ = 0;
        // Messages of the lost connection come again from the broker.
        std::erase_if(inbox_,
                      [&](const Raw& r) REQUIRES(mu_) { return r.connection == generation_; });
        std::erase_if(started_, [&](const Delivery& d) REQUIRES(mu_) {
          if (d.connection != generation_) return false;
          keeper_.remove(d.trial_id, d.attempt);  // its redelivery starts the next attempt
          return true;
        });
        const auto* error = dynamic_cast<const Error*>(&e);
        if (error && error->code() == ErrorCode::kFailedPrecondition) fatal_ = *error;
        cv_.notify_all();
        const milliseconds pause =
            backoff + milliseconds(jitter() % static_cast<uint64_t>(backoff.count() / 2 + 1));
        cv_.wait_for(lock.native(), pause, [&]() REQUIRES(mu_) { return stopping_; });
        backoff = std::min(backoff * 2, kMaxBackoff);
      }
    }
  }

  store::Store& store_;
  const std::string worker_id_;
  const amqp::BrokerUrl url_;
  const amqp::Layout layout_;
  const AmqpQueueOptions options_;
  int wake_fd_;

  Mutex pub_mu_;  // taken after mu_ where both are held (close)
  std::unique_ptr<amqp::Connection> publisher_ GUARDED_BY(pub_mu_);

  Mutex mu_;
  std::condition_variable cv_;
  std::unique_ptr<amqp::Connection> consumer_ GUARDED_BY(mu_);  // used by io_ while it runs
  uint64_t generation_ GUARDED_BY(mu_) = 0;                     // consumer connections made
  std::deque<Raw> inbox_ GUARDED_BY(mu_);
  std::deque<Delivery> started_ GUARDED_BY(mu_);  // started, not yet received
  std::vector<Command> commands_ GUARDED_BY(mu_);
  std::optional<Error> fatal_ GUARDED_BY(mu_);  // configuration errors
  // Deliveries returned by receive() and not yet acked or requeued, since when.
  std::map<std::pair<int64_t, int>, std::chrono::steady_clock::time_point> held_ GUARDED_BY(mu_);
  int fast_streak_ GUARDED_BY(mu_) = 0;        // trials acked within kShortHold in a row
  bool boost_wanted_ GUARDED_BY(mu_) = false;  // raise the prefetch (I/O thread)
  std::string boost_tag_ GUARDED_BY(mu_);      // the raising consumer's tag; empty: none
  // When receive() last handed out a delivery, or deliveries started waiting (see stalled).
  std::chrono::steady_clock::time_point last_taken_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread io_;
  LeaseKeeper keeper_;  // last: its thread uses the store and stops first
};

}  // namespace

int broker_delivery_limit(int max_attempts) {
  return 10 * max_attempts;
}

std::unique_ptr<TrialQueue> make_amqp_queue(store::Store& store, std::string worker_id,
                                            std::string_view broker_url,
                                            const AmqpQueueOptions& options) {
  if (worker_id.empty()) throw invalid_argument("amqp queue: empty worker id");
  if (options.prefetch < 1 || options.prefetch > 65535)
    throw invalid_argument("amqp queue: prefetch must be 1..65535");
  if (options.max_attempts < 1) throw invalid_argument("amqp queue: max_attempts must be >= 1");
  if (options.max_prefetch != 0 &&
      (options.max_prefetch < options.prefetch || options.max_prefetch > 65535))
    throw invalid_argument("amqp queue: max_prefetch must be 0 or prefetch..65535");
  if (options.lease < milliseconds(3))
    throw invalid_argument("amqp queue: the lease must be at least 3 ms");
  return std::make_unique<AmqpQueue>(store, std::move(worker_id),
                                     amqp::parse_broker_url(broker_url), options);
}

}  // namespace layerlab::queue
