#include "server/handler_pool.h"

#include <exception>
#include <iostream>

#include "common/text_safety.h"

namespace layerlab::server {

HandlerPool::HandlerPool(unsigned threads) {
  for (unsigned i = 0; i < std::max(1u, threads); ++i) threads_.emplace_back([this] { run(); });
}

HandlerPool::~HandlerPool() {
  stop();
}

void HandlerPool::post(std::function<void()> job) {
  {
    MutexLock lock(mu_);
    if (!stopping_) {
      jobs_.push_back(std::move(job));
      ready_.notify_one();
      return;
    }
  }
  job();
}

void HandlerPool::stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

void HandlerPool::run() {
  for (;;) {
    std::function<void()> job;
    {
      MutexLock lock(mu_);
      ready_.wait(lock.native(), [this]() REQUIRES(mu_) { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, and nothing is left to answer
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    try {
      job();
    } catch (const std::exception& e) {  // a job answers its own errors: this is a bug
      std::cerr << "server: a request handler died: " << printable(e.what()) << std::endl;
    }
  }
}

}  // namespace layerlab::server
