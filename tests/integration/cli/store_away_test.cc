// Processes whose PostgreSQL store goes away. `serve` answers at once while it is away (one
// call waits for the database, not every request: they took 31 to 100 s each, /healthz
// more than a minute) and serves again when it is back. Processes told to stop (SIGTERM)
// then stop at once: they do not first wait out the store's retries (about 35 s a call at
// the defaults; a worker holding a trial waited up to 10 minutes to hand it back, `serve`
// about a minute).
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

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

// The answer to GET path, waiting at most 10 s for it: its status, or -1 for none.
int status_within_10s(const testing::ServerProcess& server, const std::string& path) {
  httplib::Client c("127.0.0.1", server.port());
  c.set_read_timeout(std::chrono::seconds(10));
  const auto r = c.Get(path);
  return r ? r->status : -1;
}

TEST(StoreAway, TheServerAnswersAtOnceWhileItsStoreIsAwayAndServesAgainWhenItIsBack) {
  testing::PostgresService pg;  // private: this test stops it
  const auto dir = testing::fresh_dir("store-away-serve");
  testing::ServerProcess server(pg.url_of(pg.fresh_database()), dir / "serve");
  ASSERT_EQ(status_within_10s(server, "/healthz"), 200);

  pg.stop();
  // One call finds the store away and waits for it (the change feed's, polling every
  // 250 ms, or this request); the requests after it are answered at once.
  int health = status_within_10s(server, "/healthz");
  if (health == -1) health = status_within_10s(server, "/healthz");
  EXPECT_EQ(health, 503) << server.log();
  {
    httplib::Client c("127.0.0.1", server.port());
    c.set_read_timeout(std::chrono::seconds(10));
    const auto r = c.Get("/api/v1/studies");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 503);
    EXPECT_EQ(r->get_header_value("Retry-After"), "5") << "when to ask again";
  }
  std::vector<int> statuses(8, 0);
  std::vector<std::thread> clients;
  for (int& s : statuses)
    clients.emplace_back([&] { s = status_within_10s(server, "/api/v1/studies"); });
  for (std::thread& t : clients) t.join();
  for (int s : statuses) EXPECT_EQ(s, 503) << "-1: no answer within 10 s";
  EXPECT_EQ(status_within_10s(server, "/"), 200) << "the dashboard needs no store";

  pg.start();
  int back = 0;
  for (int i = 0; i < 100 && back != 200; ++i) {
    back = status_within_10s(server, "/api/v1/studies");
    if (back != 200) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(back, 200) << server.log();
}

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
