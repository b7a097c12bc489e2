// The progress display of `run`: what it prints off a terminal, and when it is due (run
// reads the store for a state only then).
#include "cli/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

namespace layerlab::cli {
namespace {

// What was written to `f` so far.
std::string contents(FILE* f) {
  std::fflush(f);
  std::string out;
  std::rewind(f);
  for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f)) out += static_cast<char>(c);
  return out;
}

ProgressState state(int64_t completed) {
  ProgressState s;
  s.counts.by_status[static_cast<size_t>(store::TrialStatus::kCompleted)] = completed;
  s.total = 10;
  s.metric = "val_accuracy";
  return s;
}

TEST(Progress, OffATerminalALineIsDueAtFirstThenOnlyEveryTenSecondsUnlessForced) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::tmpfile(), &std::fclose);
  ASSERT_TRUE(f);
  Progress p(f.get());
  EXPECT_TRUE(p.due()) << "nothing shown yet";
  p.update(state(1));
  EXPECT_NE(contents(f.get()).find("1/10 done"), std::string::npos) << contents(f.get());
  EXPECT_FALSE(p.due()) << "a line was just printed";
  p.update(state(2));
  EXPECT_EQ(contents(f.get()).find("2/10 done"), std::string::npos) << "not due: not shown";
  p.update(state(3), /*force=*/true);
  EXPECT_NE(contents(f.get()).find("3/10 done"), std::string::npos) << contents(f.get());
}

}  // namespace
}  // namespace layerlab::cli
