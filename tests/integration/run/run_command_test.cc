// `layerlab run` end to end with real worker processes on a real SQLite file: a study
// completes with every trial done exactly once; workers killed at chosen points, a killed
// `run`, Ctrl-C and resume; ASHA stops the trials that cannot learn; malformed study files
// store nothing.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "integration/study_commands.h"

namespace layerlab {
namespace {

using nlohmann::json;
using testing::export_json;
using testing::fresh_dir;
using testing::kQuickStudy;
using testing::occurrences;
using testing::processes_with_environment;
using testing::run_layerlab;
using testing::status;
using testing::Study;
using testing::trials_by_number;
using testing::wait_finished;
using testing::write_study;

testing::CommandResult run_study(const Study& s, const std::string& extra = "",
                                 const std::string& env = "") {
  return run_layerlab(
      "run " + s.file.string() + " --store " + s.store + " --workers 2 --lease-seconds 1 " + extra,
      env);
}

TEST(RunCommand, StudyCompletesWithLeaderboardAndResumeRedoesNothing) {
  const Study s = write_study("run-quick", kQuickStudy);
  const auto r = run_study(s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("leaderboard (val_accuracy, max)"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("16/16 done"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("dashboard at"), std::string::npos) << "no dashboard unless asked";
  const json st = status(s, "quick");
  EXPECT_EQ(st["status"], "finished");
  EXPECT_EQ(st["counts"]["completed"], 16);
  const auto before = trials_by_number(export_json(s, "quick"));
  ASSERT_EQ(before.size(), 16u);
  for (const auto& [n, t] : before) {
    EXPECT_EQ(t["attempts"], 1) << "trial " << n;
    EXPECT_EQ(t["curve"].size(), 5u) << "trial " << n;
    EXPECT_TRUE(t["value"].is_number()) << "trial " << n;
  }
  // Running it again resumes the finished study: nothing is trained twice.
  const auto again = run_study(s);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("resuming"), std::string::npos) << again.err;
  const auto after = trials_by_number(export_json(s, "quick"));
  for (const auto& [n, t] : after) {
    EXPECT_EQ(t["attempts"], 1) << "trial " << n;
    EXPECT_EQ(t["result"]["seconds"], before.at(n)["result"]["seconds"]) << "trial " << n;
  }
  // The trials and export commands read the same store.
  const auto csv = run_layerlab("export quick --format csv --store " + s.store);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 17);
  const auto top =
      run_layerlab("trials quick --sort value --desc --limit 3 --json --store " + s.store);
  ASSERT_EQ(top.exit_code, 0) << top.err;
  const json best = json::parse(top.out);
  ASSERT_EQ(best.size(), 3u);
  EXPECT_GE(best[0]["value"].get<double>(), best[1]["value"].get<double>());
}

TEST(RunCommand, ChangedStudyFileUnderTheSameNameIsRefused) {
  const Study s = write_study("run-changed", kQuickStudy);
  ASSERT_EQ(run_study(s).exit_code, 0);
  std::string changed = kQuickStudy;
  changed.replace(changed.find("value: 16"), 9, "value: 32");
  std::ofstream(s.file) << changed;
  const auto r = run_study(s);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(
      r.err.find("study 'quick' already exists in " + s.store + " with a different study file"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(status(s, "quick")["counts"]["completed"], 16);
  // Its workers started before the study was looked up, waiting to be sent it: they end with
  // run, having touched nothing, and say nothing of their own.
  EXPECT_EQ(processes_with_environment("LAYERLAB_STORE=" + s.store), 0);
  EXPECT_EQ(r.err.find("worker"), std::string::npos) << r.err;
  for (const auto& [n, t] : trials_by_number(export_json(s, "quick")))
    EXPECT_EQ(t["attempts"], 1) << "trial " << n;
}

struct CrashCase {
  std::string point;
  int expected_attempts;  // of the trial killed at that point
};

void PrintTo(const CrashCase& c, std::ostream* os) {
  *os << c.point;
}

class WorkerKilledAt : public ::testing::TestWithParam<CrashCase> {};

// Outcomes of a trial's attempts, in order ("lost", "completed", ...).
std::vector<std::string> outcomes(const json& trial) {
  std::vector<std::string> out;
  for (const auto& a : trial["attempt_log"]) out.push_back(a["outcome"]);
  return out;
}

// kill -9 (SIGKILL from inside, at a chosen point) of the worker training trial 3: every
// trial still ends done exactly once: one completed attempt, any others lost (trials the
// dead worker held). A trial whose result was committed before the kill is not trained
// again.
TEST_P(WorkerKilledAt, EveryTrialEndsDoneExactlyOnce) {
  const Study s = write_study("run-crash-" + GetParam().point, kQuickStudy);
  const std::string env = "LAYERLAB_TEST_CRASH=" + GetParam().point +
                          ":3 LAYERLAB_TEST_CRASH_ONCE=" + (s.dir / "crashed").string();
  const auto r = run_study(s, "", env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::exists(s.dir / "crashed")) << "the hook never fired";
  const auto trials = trials_by_number(export_json(s, "quick"));
  ASSERT_EQ(trials.size(), 16u);
  for (const auto& [n, t] : trials) {
    EXPECT_EQ(t["status"], "completed") << "trial " << n;
    const std::vector<std::string> o = outcomes(t);
    EXPECT_EQ(std::count(o.begin(), o.end(), "completed"), 1) << "trial " << n;
    EXPECT_EQ(std::count(o.begin(), o.end(), "lost") + 1, static_cast<long>(o.size()))
        << "trial " << n;
  }
  EXPECT_EQ(outcomes(trials.at(3)).size(), static_cast<size_t>(GetParam().expected_attempts));
}

INSTANTIATE_TEST_SUITE_P(Points, WorkerKilledAt,
                         ::testing::Values(CrashCase{"before_training", 2},
                                           CrashCase{"after_epoch", 2},
                                           CrashCase{"after_training", 2},
                                           CrashCase{"after_commit", 1}),
                         [](const auto& p) { return p.param.point; });

TEST(RunCommand, PoisonTrialFailsAfterTheRetryLimitAndTheRestCompletes) {
  const Study s = write_study("run-poison", kQuickStudy);
  const auto r = run_study(s, "--max-attempts 2", "LAYERLAB_TEST_CRASH=before_training:5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto trials = trials_by_number(export_json(s, "quick"));
  for (const auto& [n, t] : trials) {
    if (n == 5) {
      EXPECT_EQ(t["status"], "failed");
      EXPECT_NE(t["error"].get<std::string>().find("worker lost 2 times"), std::string::npos) << t;
    } else {
      EXPECT_EQ(t["status"], "completed") << "trial " << n;
    }
  }
}

// A worker that dies on every trial, far more often than it is started again: run says so
// and exits (it waited for ever once its workers were all gone), and the study stays
// unfinished for a later run to resume.
TEST(RunCommand, WhenEveryWorkerKeepsFailingRunExitsSayingSo) {
  const Study s = write_study("run-all-fail", R"(name: doomed
datasets: [iris]
parameters:
  hidden_layers: {value: 1}
  epochs: {value: 1}
)");
  const auto r = run_layerlab("run " + s.file.string() + " --store " + s.store +
                                  " --workers 2 --lease-seconds 0.2 --max-attempts 100",
                              "LAYERLAB_TEST_CRASH=before_training:*");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("layerlab run: error: every worker exited with an error (12 started "
                       "again, the most allowed); the study is not finished"),
            std::string::npos)
      << r.err;
  const json st = status(s, "doomed");
  EXPECT_NE(st["status"], "finished");
  EXPECT_EQ(st["counts"]["completed"], 0);
  EXPECT_EQ(st["counts"]["failed"], 0) << "the trial is not failed: it runs when resumed";
}

// A worker that cannot start (here: a device no machine has) fails the same way however
// often it is started: run does not start it again (it printed the same error workers +
// 10 x trials times), and exits at once with the workers' exit code, 3: a missing
// prerequisite, the study left to resume.
TEST(RunCommand, AWorkerThatCannotStartIsNotStartedAgain) {
  const Study s = write_study("run-no-device", R"(name: no_device
datasets: [iris]
seeds: [0, 1, 2, 3, 4, 5, 6, 7]
parameters:
  hidden_layers: {value: 1}
  epochs: {value: 1}
)");
  const auto r = run_study(s, "--device cuda:99");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("layerlab run: error: every worker stopped on a missing prerequisite "
                       "(exit code 3), which starting them again would repeat; the study is "
                       "not finished"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(occurrences(r.err, "layerlab worker: error: device 'cuda:99'"), 2u)
      << "one error from each of the 2 workers, none started again\n"
      << r.err;
  const json st = status(s, "no_device");
  EXPECT_NE(st["status"], "finished");
  EXPECT_EQ(st["counts"]["completed"], 0);
  EXPECT_EQ(st["counts"]["failed"], 0) << "no trial is failed: they run when resumed";
}

const char* kSlowStudy = R"(name: slow
datasets: [digits]
seeds: [0, 1, 2, 3]
parameters:
  hidden_layers: {values: [1, 2, 3, 4, 5]}
  units: {value: 64}
  epochs: {value: 12}
)";  // 20 trials of a fraction of a second each

void interrupt_and_resume(int signal) {
  const Study s = write_study("run-signal-" + std::to_string(signal), kSlowStudy);
  const pid_t pid = testing::spawn_layerlab(
      "run " + s.file.string() + " --store " + s.store + " --workers 2 --lease-seconds 1", s.dir);
  const ::layerlab::testing::KillOnExit pid_guard(pid);
  ASSERT_TRUE(wait_finished(s, "slow", 4));
  kill(pid, signal);
  int status = 0;
  waitpid(pid, &status, 0);
  if (signal == SIGINT) {
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status;
  }
  const auto before = trials_by_number(export_json(s, "slow"));
  int64_t done_before = 0;
  for (const auto& [n, t] : before) done_before += t["status"] == "completed";
  ASSERT_LT(done_before, 20) << "the study finished before the interruption";
  const auto r = run_layerlab("run " + s.file.string() + " --store " + s.store +
                              " --workers 2 --lease-seconds 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("resuming"), std::string::npos);
  const auto after = trials_by_number(export_json(s, "slow"));
  ASSERT_EQ(after.size(), 20u);
  for (const auto& [n, t] : after) {
    EXPECT_EQ(t["status"], "completed") << "trial " << n;
    if (before.at(n)["status"] == "completed") {  // finished before: not redone
      EXPECT_EQ(t["result"]["seconds"], before.at(n)["result"]["seconds"]) << "trial " << n;
    }
  }
}

TEST(RunCommand, KilledRunResumesWithoutRedoingFinishedTrials) {
  interrupt_and_resume(SIGKILL);
}

TEST(RunCommand, CtrlCStopsCleanlyAndRunResumes) {
  interrupt_and_resume(SIGINT);
}

TEST(RunCommand, AshaPrunesTheConfigurationsThatCannotLearn) {
  const Study s = write_study("run-asha", testing::kAshaStudy);
  ASSERT_EQ(run_study(s).exit_code, 0);
  int good_completed = 0;
  const json exported = export_json(s, "asha");
  for (const auto& t : exported["trials"]) {
    const bool hopeless = t["params"]["learning_rate"].get<double>() < 1e-6;
    if (hopeless) {
      EXPECT_EQ(t["status"], "pruned") << t["number"];
      EXPECT_GE(t["curve"].size(), 1u) << "a pruned trial keeps its curve";
      EXPECT_LT(t["curve"].size(), 9u);
    } else {
      good_completed += t["status"] == "completed";
    }
  }
  EXPECT_GE(good_completed, 1);
}

}  // namespace
}  // namespace layerlab
