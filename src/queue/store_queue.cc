// The store-backed TrialQueue: the queued rows of the store are the queue.
#include <algorithm>
#include <atomic>
#include <deque>
#include <limits>
#include <random>

#include "common/error.h"
#include "common/mutex.h"
#include "queue/lease_keeper.h"
#include "queue/trial_queue.h"

namespace layerlab::queue {
namespace {

class StoreQueue final : public TrialQueue {
 public:
  StoreQueue(store::Store& store, std::string worker_id, const StoreQueueOptions& options)
      : store_(store),
        worker_id_(std::move(worker_id)),
        claim_{options.study_id, options.lease, options.max_attempts},
        stop_(options.stop),
        poll_min_(options.poll_min),
        poll_max_(options.poll_max),
        min_prefetch_(options.min_prefetch),
        max_prefetch_(options.max_prefetch),
        keeper_(
            [this](const std::vector<store::AttemptRef>& attempts) {
              return store_.renew_leases(attempts, worker_id_, claim_.lease);
            },
            claim_.lease / 3) {}

  void publish(int64_t, const std::vector<int64_t>&) override {}

  std::optional<Delivery> receive(std::chrono::milliseconds wait) override {
    const auto start = std::chrono::steady_clock::now();
    MutexLock lock(mu_);
    // Trials that take under kShortTrial share claim transactions. A trial's time is the
    // caller's since the last receive() returned, less what it spent committing results
    // here: on a busy database a commit alone can take longer than a short trial, and
    // counting it would claim one trial at a time just when transactions are dearest.
    const auto in_finish = std::chrono::nanoseconds(finishing_ns_.exchange(0));
    short_trials_ = start - last_return_ - in_finish < kShortTrial;
    batch_ = short_trials_ ? std::min(batch_ * 2, max_prefetch_) : min_prefetch_;
    if (prefetched_.empty()) claim(start + wait);
    last_return_ = std::chrono::steady_clock::now();
    if (prefetched_.empty()) return std::nullopt;
    Delivery d = std::move(prefetched_.front());
    prefetched_.pop_front();
    return d;
  }

  // The claims in hand go back as if never made (Store::give_back_trials), in one
  // transaction.
  void close() override {
    MutexLock lock(mu_);
    if (prefetched_.empty()) return;
    std::vector<store::AttemptRef> attempts;
    for (const Delivery& d : prefetched_) attempts.push_back({d.trial_id, d.attempt});
    store_.give_back_trials(attempts);
    for (const Delivery& d : prefetched_) keeper_.remove(d.trial_id, d.attempt);
    prefetched_.clear();
  }

  // While trials are short, the results' transaction also tops the trials in hand up to a
  // batch: one commit per batch instead of two. (Topping up, not waiting until none is in
  // hand, brings results and claims into step when their batches start out of step.)
  std::vector<bool> finish(const std::vector<store::TrialFinish>& finishes) override {
    const auto start = std::chrono::steady_clock::now();
    std::vector<bool> applied;
    bool claimed = false;
    {
      MutexLock lock(mu_);
      const int wanted = ask() - static_cast<int>(prefetched_.size());
      if (short_trials_ && wanted > 0 && !(stop_ && *stop_)) {
        store::Store::FinishedAndClaimed done =
            store_.finish_and_claim_trials(finishes, worker_id_, next_claim(), wanted);
        note_claim(wanted, done.claims.size());
        take(std::move(done.claims));
        applied = std::move(done.applied);
        claimed = true;
      }
    }
    if (!claimed) applied = store_.finish_trials(finishes);
    finishing_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    return applied;
  }

  void ack(const Delivery& d) override { keeper_.remove(d.trial_id, d.attempt); }

  // Released first: if the store is away this throws and the lease keeps being renewed,
  // so the caller can try again (or exit and let the lease run out).
  void requeue(const Delivery& d) override {
    store_.release_trial(d.trial_id, d.attempt);
    keeper_.remove(d.trial_id, d.attempt);
  }

  bool lost(const Delivery& d) const override { return keeper_.lost(d.trial_id, d.attempt); }

  int64_t settle_dead_letters() override { return 0; }

 private:
  static constexpr std::chrono::milliseconds kShortTrial{20};

  // The claim options, with the study this worker claimed from last: without a study of its
  // own, its claims take turns among the studies that have queued trials.
  store::ClaimOptions next_claim() const REQUIRES(mu_) {
    store::ClaimOptions o = claim_;
    o.after_study = last_study_;
    return o;
  }

  // How many trials the next claim asks for: the batch, but after a claim that emptied the
  // queue, at most half of what that claim found (never less than min_prefetch, a pack), so
  // that other workers get their share of a short queue (a tpe study's window of 4 trials was
  // claimed whole by one worker and trained one after another while the other worker
  // idled); a claim that gets all it asked for doubles that cap again.
  int ask() const REQUIRES(mu_) { return std::min(batch_, claim_cap_); }
  void note_claim(int asked, size_t got) REQUIRES(mu_) {
    if (static_cast<int>(got) < asked)
      claim_cap_ = std::max(min_prefetch_, (static_cast<int>(got) + 1) / 2);
    else
      claim_cap_ = claim_cap_ > max_prefetch_ ? claim_cap_ : claim_cap_ * 2;
  }

  // Claimed trials become deliveries in hand, their leases renewed until acked.
  void take(std::vector<store::Claim> claims) REQUIRES(mu_) {
    if (!claims.empty()) last_study_ = claims.front().study_id;
    for (store::Claim& c : claims) {
      keeper_.add(c.trial_id, c.attempt);
      prefetched_.push_back(
          Delivery{c.trial_id, c.attempt, c.study_id, c.number, c.dataset, std::move(c.params), 0});
    }
  }

  // Claims up to batch_ trials into prefetched_, polling until `deadline`.
  void claim(std::chrono::steady_clock::time_point deadline) REQUIRES(mu_) {
    auto delay = poll_min_;
    thread_local std::minstd_rand rng{std::random_device{}()};
    for (;;) {
      const int asked = ask();
      std::vector<store::Claim> claims = store_.claim_batch(worker_id_, next_claim(), asked);
      note_claim(asked, claims.size());
      take(std::move(claims));
      if (!prefetched_.empty()) return;
      auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return;
      // Poll with a growing, jittered interval so idle workers cost the database little.
      std::uniform_int_distribution<int64_t> jitter(delay.count() / 2, delay.count());
      const auto wake = std::min(now + std::chrono::milliseconds(jitter(rng)), deadline);
      if (sleep_until_unless(stop_, wake)) return;
      delay = std::min(delay * 2, poll_max_);
    }
  }

  store::Store& store_;
  const std::string worker_id_;
  const store::ClaimOptions claim_;
  const std::atomic<bool>* const stop_;
  const std::chrono::milliseconds poll_min_;
  const std::chrono::milliseconds poll_max_;
  const int min_prefetch_;
  const int max_prefetch_;
  Mutex mu_;
  std::deque<Delivery> prefetched_ GUARDED_BY(mu_);
  int batch_ GUARDED_BY(mu_) = 1;
  int claim_cap_ GUARDED_BY(mu_) = std::numeric_limits<int>::max() / 2;  // see ask()
  int64_t last_study_ GUARDED_BY(mu_) = 0;     // of the last claim's first trial
  bool short_trials_ GUARDED_BY(mu_) = false;  // the last receive() came under kShortTrial
  std::chrono::steady_clock::time_point last_return_ GUARDED_BY(mu_);  // of receive()
  std::atomic<int64_t> finishing_ns_{0};  // spent in finish() since receive() last ran
  LeaseKeeper keeper_;                    // last: its thread uses the members above and stops first
};

}  // namespace

std::unique_ptr<TrialQueue> make_store_queue(store::Store& store, std::string worker_id,
                                             const StoreQueueOptions& options) {
  if (worker_id.empty()) throw invalid_argument("store queue: empty worker id");
  if (options.lease < std::chrono::milliseconds(3))
    throw invalid_argument("store queue: the lease must be at least 3 ms");
  if (options.poll_min < std::chrono::milliseconds(1) || options.poll_max < options.poll_min)
    throw invalid_argument("store queue: need 1 ms <= poll_min <= poll_max");
  if (options.max_attempts < 1) throw invalid_argument("store queue: max_attempts must be >= 1");
  if (options.min_prefetch < 1 || options.max_prefetch < options.min_prefetch)
    throw invalid_argument("store queue: need 1 <= min_prefetch <= max_prefetch");
  if (options.study_id < 0) throw invalid_argument("store queue: negative study id");
  return std::make_unique<StoreQueue>(store, std::move(worker_id), options);
}

std::unique_ptr<TrialQueue> make_queue(store::Store& store, std::string worker_id,
                                       std::string_view broker_url,
                                       const StoreQueueOptions& store_options,
                                       const AmqpQueueOptions& amqp_options) {
  if (broker_url.empty()) return make_store_queue(store, std::move(worker_id), store_options);
  return make_amqp_queue(store, std::move(worker_id), broker_url, amqp_options);
}

}  // namespace layerlab::queue
