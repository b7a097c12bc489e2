// Nothing is lost under attack: a study submitted to `serve --workers 2` trains to the end,
// every trial exactly once, while other clients hold idle and slowloris sockets and event
// streams, flood it with a chunked body past the limit and send bad requests.
#include <atomic>
#include <thread>
#include <vector>

#include "integration/study_commands.h"
#include "server_process.h"
#include "support/raw_http.h"

namespace layerlab::testing {
namespace {

using nlohmann::json;

TEST(AttackedServer, AStudyWrittenDuringTheAttacksEndsWithEveryTrialExactlyOnce) {
  const Study s = write_study("server-attacked", kQuickStudy);
  ServerProcess server(s.store, s.dir / "serve", "--workers 2");
  const int port = server.port();
  const std::string host = "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";

  std::vector<RawConnection> held;
  for (int i = 0; i < 60; ++i) {
    held.emplace_back(port, "127.0.0." + std::to_string(2 + i % 10));
    if (i % 2) held.back().send("GET /healthz HTTP/1.1\r\n" + host + "X-Slow: 1\r\n");
  }
  for (int i = 0; i < 100; ++i) {
    held.emplace_back(port, "127.0.1." + std::to_string(2 + i % 10));
    held.back().send("GET /api/v1/events HTTP/1.1\r\n" + host + "\r\n");
  }
  std::atomic<bool> stop{false};
  std::thread flood([&] {  // chunked bodies past the limit, and requests that must fail
    while (!stop) {
      RawConnection c(port, "127.0.2.2");
      c.send("POST /api/v1/studies HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n");
      const std::string chunk = "10000\r\n" + std::string(0x10000, 'x') + "\r\n";
      for (int i = 0; i < 40 && c.send(chunk); ++i) {
      }
      raw_exchange(port, "GET /healthz HTTP/1.1\r\n" + host + "Range: bytes=0-99999\r\n\r\n");
      raw_exchange(port,
                   "POST /api/v1/studies HTTP/1.1\r\nHost: evil.example\r\n"
                   "Content-Length: 3\r\nConnection: close\r\n\r\nabc");
    }
  });

  std::string study = kQuickStudy;
  const std::string created =
      raw_exchange(port, "POST /api/v1/studies HTTP/1.1\r\n" + host +
                             "Content-Length: " + std::to_string(study.size()) +
                             "\r\nConnection: close\r\n\r\n" + study);
  EXPECT_EQ(raw_status(created), 201) << created;
  const bool done = wait_finished(s, "quick", 16);
  stop = true;
  flood.join();
  ASSERT_TRUE(done) << server.log();

  const auto trials = trials_by_number(export_json(s, "quick"));
  ASSERT_EQ(trials.size(), 16u);
  for (const auto& [n, t] : trials) {
    EXPECT_EQ(t["status"], "completed") << "trial " << n;
    EXPECT_EQ(t["attempts"], 1) << "trial " << n;
  }
  EXPECT_EQ(status(s, "quick")["status"], "finished");
  held.clear();
  EXPECT_EQ(server.stop(), 0) << server.log();
}

}  // namespace
}  // namespace layerlab::testing
