// Processes told to stop (SIGTERM) while their PostgreSQL store is away stop at once: they
// do not first wait out the store's retries (about 35 s a call at the defaults; a worker
// holding a trial waited up to 10 minutes to hand it back, `serve` about a minute).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "integration/run_command.h"
#include "integration/server/server_process.h"
#include "store/store.h"
#include "support/postgres_service.h"

namespace layerlab {
namespace {

using testing::read_file;

// Trials of a few seconds each: one is still training when the store goes away.
constexpr const char* kSlowStudy = R"(name: slow
datasets: [digits]
seeds: [0, 1, 2, 3]
parameters:
  units: {value: 256}
  epochs: {value: 200}
)";

TEST(StoreAway, ServeAndABusyWorkerStopOnSigtermAndTheWorkerSaysWhatBecomesOfItsTrial) {
  testing::PostgresService pg;  // private: this test stops it
  const auto dir = testing::fresh_dir("store-away");
  const std::string db = pg.fresh_database();
  const std::string url = pg.url_of(db);
  testing::ServerProcess server(url, dir / "serve");
  { std::ofstream(dir / "slow.yaml") << kSlowStudy; }
  const auto submitted = testing::run_layerlab("submit " + (dir / "slow.yaml").string() +
                                               " --server " + server.base());
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;

  const auto worker_dir = dir / "worker";
  std::filesystem::create_directories(worker_dir);
  const pid_t worker =
      testing::spawn_layerlab("worker", worker_dir, "LAYERLAB_STORE='" + url + "'");
  const testing::KillOnExit guard(worker);
  int64_t running = 0;
  for (int i = 0; i < 600 && running == 0; ++i) {
    running = pg.column(db, "SELECT COUNT(*) FROM trials WHERE status = 'running'").at(0);
    if (running == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(running, 1) << read_file(worker_dir / "bg.err");

  pg.stop();
  ::kill(worker, SIGTERM);
  // It cannot hand its trial back: it says so and exits 1 instead of retrying for minutes.
  EXPECT_EQ(testing::wait_exit(worker, std::chrono::seconds(20)), 1)
      << read_file(worker_dir / "bg.err");
  const std::string said = read_file(worker_dir / "bg.err");
  EXPECT_NE(said.find("layerlab worker: error: " + store::parse_store_url(url).text + ": "),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("(not retried: stopping)"), std::string::npos) << said;
  EXPECT_NE(said.find("run again elsewhere once their leases run out"), std::string::npos) << said;
  EXPECT_EQ(said.find("gave up after"), std::string::npos) << said;

  // 0, not -1: it exited by itself within the 10 s ServerProcess gives it.
  EXPECT_EQ(server.stop(), 0) << server.log();
}

}  // namespace
}  // namespace layerlab
