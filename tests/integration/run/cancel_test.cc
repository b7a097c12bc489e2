// `layerlab cancel` from another shell: a `run` whose study is cancelled under it ends saying
// so, with the study cancelled (never turned finished), and a finished study cannot be
// cancelled.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "integration/study_commands.h"

namespace layerlab {
namespace {

using nlohmann::json;
using testing::kQuickStudy;
using testing::run_layerlab;
using testing::status;
using testing::Study;
using testing::wait_finished;
using testing::write_study;

TEST(CancelCommand, AFinishedStudyIsRefusedAndStaysFinished) {
  const Study s = testing::finished_study("quick", kQuickStudy);
  const auto r = run_layerlab("cancel quick --store " + s.store);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("study 'quick' is already finished: only a running study is cancelled"),
            std::string::npos)
      << r.err;
  const json st = status(s, "quick");
  EXPECT_EQ(st["status"], "finished");
  EXPECT_EQ(st["counts"]["cancelled"], 0);
  EXPECT_EQ(st["counts"]["completed"], 16);
}

// 800 trials, every one stored at the start (as the reviewer's 126), far more than train
// while `cancel` starts: the queued ones are cancelled, the running ones end, and then
// nothing is left queued or running.
const char* kLongStudy = R"(name: long
datasets: [digits]
seeds: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]
parameters:
  hidden_layers: {values: [1, 2, 3, 4, 5]}
  learning_rate: {values: [0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007, 0.008]}
  units: {value: 64}
  epochs: {value: 30}
)";

TEST(CancelCommand, ARunCancelledFromAnotherShellEndsCancelledAndSaysSo) {
  const Study s = write_study("run-cancelled", kLongStudy);
  const pid_t pid = testing::spawn_layerlab(
      "run " + s.file.string() + " --store " + s.store + " --workers 2 --lease-seconds 1", s.dir);
  const testing::KillOnExit pid_guard(pid);
  ASSERT_TRUE(wait_finished(s, "long", 2));
  const auto cancel = run_layerlab("cancel long --store " + s.store);
  ASSERT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_NE(cancel.out.find("cancelled study long: "), std::string::npos) << cancel.out;
  const int code = testing::wait_exit(pid, std::chrono::seconds(120));
  const std::string err = testing::read_file(s.dir / "bg.err");
  EXPECT_EQ(code, 3) << err;

  const json st = status(s, "long");
  EXPECT_EQ(st["status"], "cancelled");
  const int64_t cancelled = st["counts"]["cancelled"];
  int64_t trained = 0;  // the finished trials that were not cancelled
  for (const auto& [what, n] : st["counts"].items())
    if (what != "queued" && what != "running" && what != "cancelled") trained += n.get<int64_t>();
  EXPECT_GT(cancelled, 0);
  EXPECT_EQ(st["counts"]["queued"], 0);
  EXPECT_EQ(st["counts"]["running"], 0);
  EXPECT_EQ(trained + cancelled, 800);
  EXPECT_NE(err.find("run: study 'long' was cancelled: " + std::to_string(trained) +
                     " of 800 trials finished, " + std::to_string(cancelled) + " cancelled"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("interrupted"), std::string::npos) << err;

  // Cancelled stays cancelled: neither cancelled again nor resumed.
  const auto again = run_layerlab("cancel long --store " + s.store);
  EXPECT_EQ(again.exit_code, 3) << again.err;
  EXPECT_NE(again.err.find("study 'long' is already cancelled"), std::string::npos) << again.err;
  EXPECT_EQ(status(s, "long")["status"], "cancelled");
}

}  // namespace
}  // namespace layerlab
