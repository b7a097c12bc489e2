// The broker and the database restarted mid-study: each test on servers of its own (the
// other cluster tests share theirs, which a restart would disturb). The invariant: every
// trial ends done exactly once.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "integration/cluster/cluster_support.h"

namespace layerlab::testing {
namespace {

// A service restarted while `run` and its workers are mid-study. The study is held there
// on purpose, however fast the machine: every worker parks before training trials 10-29
// (LAYERLAB_TEST_HOLD) while the hold file exists, so trials 0-9 finish, the workers sit on
// deliveries of the rest, and the restart happens with the study exactly a third done.
void restart_mid_study(const std::function<void()>& restart) {
  const ClusterStudy c = cluster_study(kSlowStudy);
  const auto hold = c.study.dir / "hold";
  std::ofstream(hold) << "held while this file exists\n";
  const pid_t pid = spawn_layerlab(
      run_args(c, 2), c.study.dir,
      "LAYERLAB_TEST_HOLD=before_training:10-29 LAYERLAB_TEST_HOLD_FILE=" + hold.string());
  const ::layerlab::testing::KillOnExit pid_guard(pid);
  struct Release {  // an early return must not leave the workers parked
    std::filesystem::path file;
    ~Release() { std::filesystem::remove(file); }
  } release{hold};
  ASSERT_TRUE(wait_finished(c.study, "slow", 10)) << read_file(c.study.dir / "bg.err");
  ASSERT_EQ(finished(c.study, "slow"), 10) << "trials 10-29 are held";
  restart();
  std::filesystem::remove(hold);
  EXPECT_EQ(wait_exit(pid, std::chrono::seconds(240)), 0) << read_file(c.study.dir / "bg.err");
  expect_each_done_exactly_once(trials_by_number(export_json(c.study, "slow")), 30);
}

TEST(Cluster, RabbitMqRestartedMidStudyLosesAndDuplicatesNothing) {
  restart_mid_study([] { RabbitMqService::instance().restart(); });
}

TEST(Cluster, PostgresRestartedMidStudyLosesAndDuplicatesNothing) {
  restart_mid_study([] { PostgresService::instance().restart(); });
}

}  // namespace
}  // namespace layerlab::testing
