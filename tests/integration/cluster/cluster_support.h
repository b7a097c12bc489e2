// What the cluster tests share: a study on a fresh PostgreSQL database and a fresh queue of
// the broker, `run` arguments for it, the exactly-once check and bounded waits.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "integration/study_commands.h"
#include "support/postgres_service.h"
#include "support/rabbitmq_service.h"

namespace layerlab::testing {

using nlohmann::json;

inline const char* kSlowStudy = R"(name: slow
datasets: [digits]
seeds: [0, 1, 2, 3, 4, 5]
parameters:
  hidden_layers: {values: [1, 2, 3, 4, 5]}
  units: {value: 64}
  epochs: {value: 12}
)";  // 30 trials of a fraction of a second each

// A study on a fresh PostgreSQL database and a fresh queue on the broker.
struct ClusterStudy {
  Study study;
  std::string broker;
};

inline std::string test_name() {
  return ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

inline ClusterStudy cluster_study(const std::string& yaml) {
  std::string name = test_name();
  std::replace(name.begin(), name.end(), '/', '.');
  ClusterStudy c{write_study("cluster-" + name, yaml), ""};
  c.study.store = PostgresService::instance().fresh_database_url();
  c.broker = RabbitMqService::instance().url() + "?queue=c." + name;
  return c;
}

inline std::string run_args(const ClusterStudy& c, int workers, const std::string& extra = "") {
  return "run " + c.study.file.string() + " --store '" + c.study.store + "' --broker '" + c.broker +
         "' --workers " + std::to_string(workers) + " " + extra;
}

inline std::vector<std::string> outcomes(const json& trial) {
  std::vector<std::string> out;
  for (const auto& a : trial["attempt_log"]) out.push_back(a["outcome"]);
  return out;
}

// Every trial completed, with exactly one committed attempt; the others lost (a worker or
// connection died) or released (handed back).
inline void expect_each_done_exactly_once(const std::map<int64_t, json>& trials, size_t total) {
  ASSERT_EQ(trials.size(), total);
  for (const auto& [n, t] : trials) {
    EXPECT_EQ(t["status"], "completed") << "trial " << n << ": " << t["error"];
    const std::vector<std::string> o = outcomes(t);
    EXPECT_EQ(std::count(o.begin(), o.end(), "completed"), 1) << "trial " << n;
    for (const std::string& x : o)
      EXPECT_TRUE(x == "completed" || x == "lost" || x == "released") << "trial " << n << ": " << x;
  }
}

// Messages in a queue of the broker, polled until it shows `want` (quorum queue depths lag).
inline long queue_depth(const std::string& queue, long want) {
  long n = -1;
  for (int i = 0; i < 100; ++i) {
    n = RabbitMqService::instance().queue_messages()[queue];
    if (n == want) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return n;
}

}  // namespace layerlab::testing
