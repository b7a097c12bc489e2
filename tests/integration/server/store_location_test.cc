// What a `layerlab serve` answers to anyone and writes to its log: no answer names where the
// store lives (file, user, host, database), no password reaches answer or log, and a request
// path cannot forge a log line or send a terminal escape.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "integration/server/server_process.h"
#include "support/postgres_service.h"

namespace layerlab {
namespace {

const char* const kMissing[] = {"/api/v1/studies/999", "/api/v1/studies/no-such-study",
                                "/api/v1/studies/999/trials", "/api/v1/trials/999"};

// Every miss is a 404 that says what is missing and names nothing in `hidden`.
void expect_misses_name_no_location(const testing::ServerProcess& server,
                                    const std::vector<std::string>& hidden) {
  auto client = server.client();
  for (const char* path : kMissing) {
    const auto r = client->Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 404) << path << ": " << r->body;
    for (const std::string& h : hidden)
      EXPECT_EQ(r->body.find(h), std::string::npos) << path << " names '" << h << "': " << r->body;
  }
  const auto r = client->Get("/api/v1/studies/999");
  ASSERT_TRUE(r);
  EXPECT_EQ(nlohmann::json::parse(r->body)["error"]["message"],
            "store: get_study: no study with id 999");
}

TEST(StoreLocation, AnswersNameNoSqliteFile) {
  const auto dir = testing::fresh_dir("store-location-sqlite");
  const std::string marker = "marker-of-the-store-path";
  std::filesystem::create_directories(dir / marker);
  testing::ServerProcess server("sqlite:" + (dir / marker / "s.db").string(), dir / "serve");
  expect_misses_name_no_location(server, {marker, dir.string()});
}

// A password holding '#' (libpq reads it raw in the userinfo), with the database then away:
// its 503s name no host either, and the request path that met them is logged escaped.
TEST(StoreLocation, AnswersAndLogNameNoPostgresPasswordOrHost) {
  testing::PostgresService pg;  // private: this test changes the password and stops it
  const std::string db = pg.fresh_database();
  pg.exec(db, "ALTER ROLE layerlab PASSWORD 's3cr#tpw'");
  const std::string port = std::to_string(pg.port());
  const std::string url = "postgresql://layerlab:s3cr#tpw@127.0.0.1:" + port + "/" + db;
  const auto dir = testing::fresh_dir("store-location-pg");
  testing::ServerProcess server("'" + url + "'", dir / "serve");
  expect_misses_name_no_location(server, {"s3cr", "127.0.0.1", port, db, "layerlab:"});
  EXPECT_NE(server.log().find("(store postgresql://layerlab:***@127.0.0.1:" + port + "/" + db),
            std::string::npos)
      << server.log();

  pg.stop();
  const auto away =
      server.client()->Get("/api/v1/studies/%1B%5D0%3Bowned%07%0D%0Aserver:%20forged");
  ASSERT_TRUE(away);
  EXPECT_EQ(away->status, 503) << away->body;
  for (const std::string& h : {std::string("s3cr"), std::string("127.0.0.1"), port, db})
    EXPECT_EQ(away->body.find(h), std::string::npos) << "names '" << h << "': " << away->body;
  const std::string log = server.log();
  EXPECT_NE(log.find("GET /api/v1/studies/\\x1b]0;owned\\x07\\r\\nserver: forged: "),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("\nserver: forged"), std::string::npos) << log;
  for (const char c : {'\x1b', '\x07', '\r'})
    EXPECT_EQ(log.find(c), std::string::npos) << "raw byte " << int(c) << " in the log";
  EXPECT_EQ(log.find("s3cr"), std::string::npos) << log;
}

}  // namespace
}  // namespace layerlab
