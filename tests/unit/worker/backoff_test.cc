// with_backoff: what the worker loop retries while the store or broker is away, and what it
// stops retrying once the worker is told to stop.
#include "worker/backoff.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace layerlab::worker {
namespace {

// A call that fails with the given codes, one per call, then returns the number of calls.
struct Failing {
  std::vector<ErrorCode> failures;
  int calls = 0;
  int operator()() {
    const size_t i = static_cast<size_t>(calls++);
    if (i < failures.size()) throw Error(failures[i], "call " + std::to_string(i + 1));
    return calls;
  }
};

ErrorCode code_thrown(Failing& f, const std::atomic<bool>& stop) {
  try {
    with_backoff([&] { return f(); }, stop);
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no error";
  return ErrorCode::kInternal;
}

TEST(Backoff, AServiceThatIsAwayOrARaceLostIsCalledAgainUntilItAnswers) {
  const std::atomic<bool> stop{false};
  Failing f{{ErrorCode::kUnavailable, ErrorCode::kAborted}};
  EXPECT_EQ(with_backoff([&] { return f(); }, stop), 3);
}

TEST(Backoff, OtherErrorsAreNotRetried) {
  const std::atomic<bool> stop{false};
  Failing f{{ErrorCode::kInvalidArgument}};
  EXPECT_EQ(code_thrown(f, stop), ErrorCode::kInvalidArgument);
  EXPECT_EQ(f.calls, 1);
}

TEST(Backoff, OnceStoppingAServiceThatIsAwayIsNotWaitedFor) {
  const std::atomic<bool> stop{true};
  Failing away{{ErrorCode::kUnavailable}};
  EXPECT_EQ(code_thrown(away, stop), ErrorCode::kUnavailable);
  EXPECT_EQ(away.calls, 1);
  // A lost race is still tried again: the service is there.
  Failing raced{{ErrorCode::kAborted}};
  EXPECT_EQ(with_backoff([&] { return raced(); }, stop), 2);
}

}  // namespace
}  // namespace layerlab::worker
