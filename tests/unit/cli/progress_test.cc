// The progress display of `run`: what it prints off a terminal, when it is due (run reads
// the store for a state only then), and each dataset's best in its line.
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

study::Leaderboard board(const std::string& dataset, int64_t number, double value, int64_t count) {
  return {dataset, {{number + 100, number, value}}, count};
}

// Issue 53: the line said "best val_accuracy 1.0000 (#105)", one wine trial of 18 tied at 1.0,
// as if it beat iris's best. Each dataset says its own best, with its ties counted.
TEST(Progress, TheLineShowsEachDatasetsBestNeverOneAcrossDatasets) {
  ProgressState s = state(20);
  s.boards = {board("iris", 12, 0.97333, 1), board("wine", 105, 1.0, 18), {"digits", {}, 0}};
  const std::string line = Progress::describe(s, 60);
  EXPECT_NE(line.find("  best val_accuracy: iris 0.9733 (#12), wine 1.0000 (18 tied)"),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find("#105"), std::string::npos) << "a tied trial is not named: " << line;
  EXPECT_EQ(line.find("digits"), std::string::npos) << "no value, nothing to show: " << line;

  s.boards = {board("iris", 12, 0.97333, 1)};  // one dataset: as before
  EXPECT_NE(Progress::describe(s, 60).find("  best val_accuracy 0.9733 (#12)"), std::string::npos)
      << Progress::describe(s, 60);
  s.boards = {board("iris", 12, 0.97333, 4)};
  EXPECT_NE(Progress::describe(s, 60).find("  best val_accuracy 0.9733 (4 tied)"),
            std::string::npos)
      << Progress::describe(s, 60);

  s.boards = {{"iris", {}, 0}, {"wine", {}, 0}};  // nothing ranks yet
  EXPECT_EQ(Progress::describe(s, 60).find("best"), std::string::npos) << Progress::describe(s, 60);
  EXPECT_EQ(best_summary("val_accuracy", s.boards), "");
}

}  // namespace
}  // namespace layerlab::cli
