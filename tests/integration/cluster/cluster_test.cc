// Distributed mode end to end: real `layerlab` processes over a RabbitMQ broker and a
// PostgreSQL server that every test of this binary shares (a fresh database and queue per
// test; cluster_restart_test.cc restarts its own), under the faults a cluster sees: workers
// killed at chosen points, a trial that kills every worker, SIGTERM, a host cut off. The invariant
// throughout: every trial ends done exactly once (one committed result; other attempts lost or
// released), nothing is left behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "integration/cluster/cluster_support.h"
#include "integration/server/server_process.h"
#include "support/pgbouncer_service.h"
#include "support/tcp_relay.h"

namespace layerlab {
namespace {

using nlohmann::json;
using testing::cluster_study;
using testing::ClusterStudy;
using testing::expect_each_done_exactly_once;
using testing::export_json;
using testing::kQuickStudy;
using testing::kSlowStudy;
using testing::outcomes;
using testing::processes_with_environment;
using testing::queue_depth;
using testing::run_args;
using testing::run_layerlab;
using testing::spawn_layerlab;
using testing::Study;
using testing::test_name;
using testing::trials_by_number;
using testing::wait_exit;
using testing::wait_finished;
using testing::write_study;

// Runs the study of `c` with 3 workers and again on the embedded default (SQLite, 2
// workers); expects every distributed trial done exactly once with the embedded run's value
// and metrics. Returns the distributed trials by number.
std::map<int64_t, json> expect_same_as_embedded(const ClusterStudy& c, const std::string& name,
                                                size_t total) {
  const auto r = run_layerlab(run_args(c, 3));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Study embedded = c.study;
  embedded.store = "sqlite:" + (c.study.dir / "embedded.db").string();
  const auto e =
      run_layerlab("run " + c.study.file.string() + " --store " + embedded.store + " --workers 2");
  EXPECT_EQ(e.exit_code, 0) << e.err;
  const auto distributed = trials_by_number(export_json(c.study, name));
  const auto local = trials_by_number(export_json(embedded, name));
  expect_each_done_exactly_once(distributed, total);
  EXPECT_EQ(local.size(), total);
  for (const auto& [n, t] : distributed) {
    if (!local.count(n)) continue;
    EXPECT_EQ(t["value"], local.at(n)["value"]) << "trial " << n;
    EXPECT_EQ(t["result"]["metrics"], local.at(n)["result"]["metrics"]) << "trial " << n;
  }
  return distributed;
}

TEST(Cluster, ThreeHundredTrialsOverRabbitMqAndPostgresMatchTheEmbeddedDefault) {
  const char* study = R"(name: three_hundred
datasets: [iris, wine]
seeds: [0, 1, 2, 3, 4]
parameters:
  hidden_layers: {values: [1, 2, 3]}
  units: {values: [8, 16, 32, 64, 128]}
  activation: {values: [relu, tanh]}
  epochs: {value: 3}
)";  // 2 x 3 x 5 x 2 x 5 = 300 trials
  const ClusterStudy c = cluster_study(study);
  const auto distributed = expect_same_as_embedded(c, "three_hundred", 300);
  std::set<std::string> workers;
  for (const auto& [n, t] : distributed) {
    EXPECT_EQ(t["attempts"], 1) << "trial " << n << ": no fault, no retry";
    workers.insert(t["attempt_log"][0]["worker"].get<std::string>());
  }
  EXPECT_EQ(workers.size(), 3u) << "three worker processes shared the queue";
  EXPECT_EQ(queue_depth("c." + test_name(), 0), 0) << "every delivery acknowledged";
}

// Behind a transaction pooler (PgBouncer, one server connection per database: the run and
// its three workers take turns on it), with ?pool_mode=transaction: the same results as the
// embedded default. (Without it, see Postgres.BehindATransactionPoolerWithoutPoolMode...)
TEST(Cluster, BehindATransactionPoolerTheStudyMatchesTheEmbeddedDefault) {
  const char* study = R"(name: pooled
datasets: [iris, wine]
seeds: [0, 1, 2]
parameters:
  hidden_layers: {values: [1, 2]}
  units: {values: [8, 32]}
  epochs: {value: 3}
)";  // 2 x 3 x 2 x 2 = 24 trials
  ClusterStudy c = cluster_study(study);
  const std::string db = testing::PostgresService::database_of(c.study.store);
  const std::string pooled = testing::PgBouncerService::instance().url_of(db);
  ASSERT_NE(pooled.find("?pool_mode=transaction"), std::string::npos);
  c.study.store = pooled;
  expect_same_as_embedded(c, "pooled", 24);
  EXPECT_EQ(queue_depth("c." + test_name(), 0), 0) << "every delivery acknowledged";
}

struct CrashCase {
  std::string point;
  int expected_attempts;  // of the trial killed at that point
};

void PrintTo(const CrashCase& c, std::ostream* os) {
  *os << c.point;
}

class ClusterWorkerKilledAt : public ::testing::TestWithParam<CrashCase> {};

// kill -9 at a chosen point of trial 3: the broker redelivers; a trial committed before the
// kill is acknowledged on redelivery without running again.
TEST_P(ClusterWorkerKilledAt, EveryTrialEndsDoneExactlyOnce) {
  const ClusterStudy c = cluster_study(kQuickStudy);
  const std::string env = "LAYERLAB_TEST_CRASH=" + GetParam().point +
                          ":3 LAYERLAB_TEST_CRASH_ONCE=" + (c.study.dir / "crashed").string();
  const auto r = run_layerlab(run_args(c, 2), env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::exists(c.study.dir / "crashed")) << "the hook never fired";
  const auto trials = trials_by_number(export_json(c.study, "quick"));
  expect_each_done_exactly_once(trials, 16);
  EXPECT_EQ(outcomes(trials.at(3)).size(), static_cast<size_t>(GetParam().expected_attempts));
}

INSTANTIATE_TEST_SUITE_P(Points, ClusterWorkerKilledAt,
                         ::testing::Values(CrashCase{"before_training", 2},
                                           CrashCase{"after_epoch", 2},
                                           CrashCase{"after_training", 2},
                                           CrashCase{"after_commit", 1}),
                         [](const auto& p) { return p.param.point; });

// A trial that kills every worker that takes it: failed after the delivery limit, its
// message kept in the dead-letter queue, the rest of the study completes.
TEST(Cluster, APoisonTrialEndsFailedInTheDeadLetterQueue) {
  const ClusterStudy c = cluster_study(kQuickStudy);
  const auto r =
      run_layerlab(run_args(c, 2, "--max-attempts 2"), "LAYERLAB_TEST_CRASH=before_training:5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto trials = trials_by_number(export_json(c.study, "quick"));
  ASSERT_EQ(trials.size(), 16u);
  for (const auto& [n, t] : trials) {
    if (n == 5) {
      EXPECT_EQ(t["status"], "failed");
      EXPECT_NE(t["error"].get<std::string>().find("delivered 2 times"), std::string::npos) << t;
      EXPECT_EQ(outcomes(t), (std::vector<std::string>{"lost", "lost"}));
    } else {
      EXPECT_EQ(t["status"], "completed") << "trial " << n;
    }
  }
  EXPECT_EQ(queue_depth("c." + test_name() + ".dead", 1), 1);
}

// A broker that refuses the login stops `run` with the reason (exit 3, the password
// hidden), though its workers start before the first trials are published: they stop with
// it, and none is left running (none holds the run's store URL in its environment).
TEST(Cluster, ARefusedBrokerLoginStopsRunAndItsWorkers) {
  ClusterStudy c = cluster_study(kQuickStudy);
  c.broker.replace(c.broker.find(":guest@"), 7, ":not-the-password@");
  const auto r = run_layerlab(run_args(c, 2));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("ACCESS_REFUSED"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("guest:***@"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("not-the-password"), std::string::npos) << r.err;
  EXPECT_EQ(processes_with_environment("LAYERLAB_STORE=" + c.study.store), 0);
}

// serve + submit + a worker with slots on the cluster; SIGTERM makes the worker hand back
// what it holds and exit within seconds; another worker finishes the study.
TEST(Cluster, SigtermHandsBackUnfinishedTrialsAndAnotherWorkerFinishes) {
  const ClusterStudy c = cluster_study(kSlowStudy);
  testing::ServerProcess server(c.study.store, c.study.dir / "serve",
                                "--broker '" + c.broker + "'");
  const auto submitted =
      run_layerlab("submit " + c.study.file.string() + " --server " + server.base());
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  EXPECT_NE(submitted.out.find("30 trials"), std::string::npos) << submitted.out;

  const auto first_dir = c.study.dir / "worker1";
  std::filesystem::create_directories(first_dir);
  const pid_t first = spawn_layerlab(
      "worker --store '" + c.study.store + "' --broker '" + c.broker + "' --slots 2", first_dir);
  const ::layerlab::testing::KillOnExit first_guard(first);
  ASSERT_TRUE(wait_finished(c.study, "slow", 3)) << testing::read_file(first_dir / "bg.err");
  // A stopped worker hands back what it holds instead of finishing it (30 slow trials
  // would outlast the wait).
  kill(first, SIGTERM);
  EXPECT_EQ(wait_exit(first, std::chrono::seconds(30)), 0)
      << testing::read_file(first_dir / "bg.err");
  const std::string said = testing::read_file(first_dir / "bg.err");
  EXPECT_NE(said.find("handed back"), std::string::npos) << said;

  const auto held = trials_by_number(export_json(c.study, "slow"));
  for (const auto& [n, t] : held)
    EXPECT_NE(t["status"], "running") << "trial " << n << " was not handed back";

  const auto second_dir = c.study.dir / "worker2";
  std::filesystem::create_directories(second_dir);
  const pid_t second = spawn_layerlab("worker --store '" + c.study.store + "' --broker '" +
                                          c.broker + "' --study slow --exit-when-done",
                                      second_dir);
  const ::layerlab::testing::KillOnExit second_guard(second);
  EXPECT_EQ(wait_exit(second, std::chrono::seconds(240)), 0)
      << testing::read_file(second_dir / "bg.err");
  const auto trials = trials_by_number(export_json(c.study, "slow"));
  expect_each_done_exactly_once(trials, 30);
  int released = 0;
  for (const auto& [n, t] : trials)
    for (const std::string& o : outcomes(t)) {
      EXPECT_NE(o, "lost") << "trial " << n;
      released += o == "released";
    }
  EXPECT_GE(released, 1) << "the stopped worker held trials and handed them back";
}

// serve with a broker: the broker delivers in publish order, so a small study submitted
// after a large one used to wait behind every trial the large one had stored (its window,
// 10,000, all published at once). Each study now publishes about 2 s of its trials ahead of
// the workers, so the small one is trained while the large one still runs.
TEST(Cluster, ServeWithABrokerTrainsASmallStudyWhileALargeOneRuns) {
  const ClusterStudy c = cluster_study(kSlowStudy);  // its database and queue; not its study
  testing::ServerProcess server(c.study.store, c.study.dir / "serve",
                                "--broker '" + c.broker + "' --workers 2");
  auto client = server.client();
  const auto submit = [&](const std::string& name, int trials) {
    const std::string yaml =
        "name: " + name +
        "\ndatasets: [iris]\nmethod: random\nbudget: {trials: " + std::to_string(trials) +
        "}\nparameters:\n  epochs: {value: 2}\n  learning_rate: "
        "{distribution: log_uniform, min: 1.0e-3, max: 1.0e-1}\n";
    auto created = client->Post("/api/v1/studies", yaml, "application/yaml");
    ASSERT_TRUE(created);
    ASSERT_EQ(created->status, 201) << created->body;
  };
  // The study's trials stored, as `status` reads them from the store (0 while it cannot).
  const auto stored = [&](const std::string& name) {
    const auto r = run_layerlab("status " + name + " --store '" + c.study.store + "' --json");
    if (r.exit_code != 0) return int64_t{0};
    const json counts = json::parse(r.out)["counts"];
    int64_t n = 0;
    for (const auto& [status, count] : counts.items()) n += count.get<int64_t>();
    return n;
  };
  submit("large", 10'000);
  // Every trial of the large study stored (and, before, published) ahead of the small one.
  for (int i = 0; i < 400 && stored("large") < 10'000; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(stored("large"), 10'000) << server.log();
  submit("small", 30);
  // The large study's trials still to finish once the small one's last has.
  int64_t large_left = -1;
  for (int i = 0; i < 1200 && large_left < 0; ++i) {
    const int64_t large_done = finished(c.study, "large");
    if (finished(c.study, "small") == 30) large_left = 10'000 - large_done;
  }
  ASSERT_GE(large_left, 0) << server.log();
  EXPECT_GE(large_left, 2000) << "the small study waited for most of the large one";
  ASSERT_TRUE(wait_finished(c.study, "large", 10'000)) << server.log();
  EXPECT_EQ(queue_depth("c." + test_name(), 0), 0) << "every delivery acknowledged";
}

// A second "host": a network namespace joined to this one by a veth pair, so that cutting
// the link drops packets silently, as a failed switch or a partition would (no reset, no
// close: only heartbeats and timeouts notice). Needs root and iproute2.
class OtherHost {
 public:
  OtherHost() {
    const std::string id = std::to_string(::getpid());
    ns_ = "llns" + id;
    link_ = "llh" + id;
    const std::string peer = "lln" + id, net = "10.213." + std::to_string(::getpid() % 250);
    ip_ = net + ".1";
    error_ = sh("ip netns add " + ns_ + " && ip link add " + link_ + " type veth peer name " +
                peer + " && ip link set " + peer + " netns " + ns_ + " && ip addr add " + ip_ +
                "/30 dev " + link_ + " && ip link set " + link_ + " up && ip netns exec " + ns_ +
                " ip addr add " + net + ".2/30 dev " + peer + " && ip netns exec " + ns_ +
                " ip link set " + peer + " up && ip netns exec " + ns_ + " ip link set lo up");
  }
  ~OtherHost() { sh("ip netns del " + ns_ + "; ip link del " + link_); }

  const std::string& error() const { return error_; }  // empty when the host is up
  std::string ip() const { return ip_; }               // this host, as the other one sees it
  std::string run_prefix() const { return "ip netns exec " + ns_; }
  void cut() { EXPECT_EQ(sh("ip link set " + link_ + " down"), ""); }

 private:
  // Runs a shell command; "" on success, else what it printed.
  static std::string sh(const std::string& cmd) {
    const std::string out = testing::fresh_dir("netns-sh").string() + "/out";
    const int rc = std::system((cmd + " >" + out + " 2>&1").c_str());
    return rc == 0 ? "" : "'" + cmd + "' failed: " + testing::read_file(out);
  }

  std::string ns_, link_, ip_, error_;
};

// `url` with 127.0.0.1:PORT replaced by HOST:NEW_PORT.
std::string moved(std::string url, int port, const std::string& host, int new_port) {
  const std::string from = "127.0.0.1:" + std::to_string(port);
  url.replace(url.find(from), from.size(), host + ":" + std::to_string(new_port));
  return url;
}

// A worker on another host is cut off mid-study: the broker notices its missing heartbeats
// and redelivers what it held; a worker here takes the trials over and the study finishes
// with every trial done exactly once.
TEST(Cluster, AWorkerHostCutOffMidStudyLosesNothing) {
  if (::geteuid() != 0) GTEST_SKIP() << "network namespaces need root";
  OtherHost far;
  if (!far.error().empty()) GTEST_SKIP() << "no network namespace here: " << far.error();
  const ClusterStudy c = cluster_study(kSlowStudy);
  auto& pg = testing::PostgresService::instance();
  auto& mq = testing::RabbitMqService::instance();
  // The servers listen on loopback only; the other host reaches them through relays.
  testing::TcpRelay pg_relay(far.ip(), pg.port()), mq_relay(far.ip(), mq.port());
  const std::string far_store = moved(c.study.store, pg.port(), far.ip(), pg_relay.port());
  const std::string far_broker = moved(c.broker, mq.port(), far.ip(), mq_relay.port());

  testing::ServerProcess server(c.study.store, c.study.dir / "serve",
                                "--broker '" + c.broker + "'");
  ASSERT_EQ(
      run_layerlab("submit " + c.study.file.string() + " --server " + server.base()).exit_code, 0);
  const auto far_dir = c.study.dir / "far";
  std::filesystem::create_directories(far_dir);
  // The far worker pauses after the first epoch of trial 3, so the cut comes mid-trial.
  const auto paused = far_dir / "paused";
  const pid_t far_worker = spawn_layerlab(
      "worker --store '" + far_store + "' --broker '" + far_broker + "'", far_dir,
      "LAYERLAB_TEST_PAUSE=after_epoch:3 LAYERLAB_TEST_PAUSE_FILE=" + paused.string() + " " +
          far.run_prefix());
  const ::layerlab::testing::KillOnExit far_worker_guard(far_worker);
  for (int i = 0; i < 600 && !std::filesystem::exists(paused); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(std::filesystem::exists(paused)) << testing::read_file(far_dir / "bg.err");
  ASSERT_GE(testing::finished(c.study, "slow"), 3) << "trials 0-2 went through the relays";
  const auto near_dir = c.study.dir / "near";
  std::filesystem::create_directories(near_dir);
  const pid_t near_worker = spawn_layerlab("worker --store '" + c.study.store + "' --broker '" +
                                               c.broker + "' --study slow --exit-when-done",
                                           near_dir);
  const ::layerlab::testing::KillOnExit near_worker_guard(near_worker);
  far.cut();
  EXPECT_EQ(wait_exit(near_worker, std::chrono::seconds(300)), 0)
      << testing::read_file(near_dir / "bg.err");
  kill(far_worker, SIGKILL);
  waitpid(far_worker, nullptr, 0);

  const auto trials = trials_by_number(export_json(c.study, "slow"));
  expect_each_done_exactly_once(trials, 30);
  const std::string far_id = ":" + std::to_string(far_worker) + ":";
  int far_lost = 0;
  for (const auto& [n, t] : trials)
    for (const auto& a : t["attempt_log"])
      far_lost += a["outcome"] == "lost" &&
                  a["worker"].get<std::string>().find(far_id) != std::string::npos;
  EXPECT_EQ(far_lost, 1) << "the far worker was cut off in the middle of trial 3";
  EXPECT_EQ(trials.at(3)["attempts"], 2);
}

}  // namespace
}  // namespace layerlab
