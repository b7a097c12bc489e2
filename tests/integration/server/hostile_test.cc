// `layerlab serve` under requests an attacker would send (issue 13): range requests,
// oversized and chunked bodies, slow, idle and streaming clients, cache-key injection,
// cross-site and rebinding requests, odd methods, pipelining. Each test ends by checking
// that the server still answers and that nothing it stored changed.
#include <fstream>
#include <vector>

#include "integration/study_commands.h"
#include "server_process.h"
#include "support/raw_http.h"

namespace layerlab::testing {
namespace {

using nlohmann::json;

constexpr const char* kHostileStudy = R"(name: hostile
datasets: [iris, wine]
method: grid
parameters:
  hidden_layers: {values: [1, 2]}
  units: {value: 8}
  epochs: {value: 1}
)";

class HostileTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const Study s = finished_study("server-hostile", kHostileStudy);
    dir_ = new std::filesystem::path(s.dir);
    url_ = new std::string(s.store);
    std::filesystem::create_directories(*dir_ / "data");
    // Ten rows: each split of a stratified 0.2 validation holds at least one.
    std::ofstream(*dir_ / "data" / "good.csv")
        << "a,b,label\n1,2,x\n3,4,y\n5,6,x\n7,8,y\n9,1,x\n2,3,y\n4,5,x\n6,7,y\n8,9,x\n1,3,y\n";
    std::filesystem::create_symlink("/etc", *dir_ / "data" / "etc");
    server_ = new ServerProcess(*url_, *dir_ / "serve",
                                "--max-streams-per-client 3 --max-body 300000 --data-dir " +
                                    (*dir_ / "data").string() + " --max-trials-per-study 500");
  }
  static void TearDownTestSuite() {
    delete server_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
    delete url_;
  }

  static int port() { return server_->port(); }
  static std::string host() { return "Host: 127.0.0.1:" + std::to_string(port()) + "\r\n"; }
  static std::string get_request(const std::string& path, const std::string& headers = "") {
    return "GET " + path + " HTTP/1.1\r\n" + host() + headers + "Connection: close\r\n\r\n";
  }
  static std::string post_request(const std::string& path, const std::string& body,
                                  const std::string& headers = "") {
    return "POST " + path + " HTTP/1.1\r\n" + host() + headers +
           "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
           body;
  }
  static std::string body_of(const std::string& response) {
    const size_t end = response.find("\r\n\r\n");
    return end == std::string::npos ? "" : response.substr(end + 4);
  }
  static size_t study_count() {
    auto r = server_->client()->Get("/api/v1/studies");
    return r ? json::parse(r->body)["studies"].size() : 0;
  }
  static void expect_healthy() {
    const std::string r = raw_exchange(port(), get_request("/healthz"));
    EXPECT_EQ(raw_status(r), 200) << r;
  }

  static std::filesystem::path* dir_;
  static std::string* url_;
  static ServerProcess* server_;
};

std::filesystem::path* HostileTest::dir_ = nullptr;
std::string* HostileTest::url_ = nullptr;
ServerProcess* HostileTest::server_ = nullptr;

// Ranges past the body read other memory in a server that trusts them; here a Range header
// is ignored and the whole body, exactly, comes back.
TEST_F(HostileTest, RangeRequestsNeverReadPastTheBody) {
  const std::string plain = body_of(raw_exchange(port(), get_request("/healthz")));
  ASSERT_FALSE(plain.empty());
  for (const char* range :
       {"bytes=0-60000", "bytes=999999999-", "bytes=-5", "bytes=5-1", "bytes=0-1,3-4,0-99999"}) {
    const std::string r =
        raw_exchange(port(), get_request("/healthz", "Range: " + std::string(range) + "\r\n"));
    EXPECT_EQ(raw_status(r), 200) << range;
    EXPECT_EQ(body_of(r), plain) << range;
    EXPECT_NE(r.find("Content-Length: " + std::to_string(plain.size())), std::string::npos)
        << range << "\n"
        << r.substr(0, r.find("\r\n\r\n"));
  }
  const std::string js = raw_exchange(port(), get_request("/js/app.js"));
  const std::string js_ranged =
      raw_exchange(port(), get_request("/js/app.js", "Range: bytes=999999999-\r\n"));
  EXPECT_EQ(raw_status(js_ranged), 200);
  EXPECT_EQ(body_of(js_ranged), body_of(js));
}

TEST_F(HostileTest, HealthzShowsNoStoreUrl) {
  const json h = json::parse(body_of(raw_exchange(port(), get_request("/healthz"))));
  EXPECT_EQ(h["store"], "sqlite");
  EXPECT_EQ(h.dump().find("store.db"), std::string::npos) << h.dump();
}

// A body a little over the limit is read and thrown away, so that a client that writes
// before it reads still gets the 413.
TEST_F(HostileTest, ABodyOverTheLimitIsAnsweredWith413) {
  const size_t before = study_count();
  for (const bool chunked : {false, true}) {
    RawConnection c(port());
    const std::string body(1 << 20, '#');
    std::string request = "POST /api/v1/studies HTTP/1.1\r\n" + host();
    if (chunked) {
      char size[32];
      std::snprintf(size, sizeof size, "%zx\r\n", body.size());
      request += "Transfer-Encoding: chunked\r\n\r\n" + std::string(size) + body + "\r\n0\r\n\r\n";
    } else {
      request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    }
    ASSERT_TRUE(c.send(request)) << "chunked: " << chunked;
    const std::string r = c.receive("}}");
    EXPECT_EQ(raw_status(r), 413) << "chunked: " << chunked << "\n" << r;
    EXPECT_NE(r.find("request body over 300000 bytes"), std::string::npos) << r;
  }
  EXPECT_EQ(study_count(), before);
}

TEST_F(HostileTest, AnOversizedBodyIsRefusedBeforeItIsRead) {
  const size_t before = study_count();
  RawConnection c(port());
  ASSERT_TRUE(
      c.send("POST /api/v1/studies HTTP/1.1\r\n" + host() + "Content-Length: 300000000\r\n\r\n"));
  const std::string r = c.receive("}}");
  EXPECT_EQ(raw_status(r), 413) << r;
  EXPECT_NE(r.find("payload_too_large"), std::string::npos) << r;
  EXPECT_EQ(study_count(), before);
  expect_healthy();
}

// Chunked encoding carries no length up front: the limit is applied as the chunks arrive;
// what passes it is thrown away, and the connection is closed once the body is far past it
// (4 MiB here; nothing is acted on).
TEST_F(HostileTest, AChunkedBodyPastTheLimitIsCutOff) {
  const size_t before = study_count();
  RawConnection c(port());
  ASSERT_TRUE(c.send("POST /api/v1/studies HTTP/1.1\r\n" + host() +
                     "Transfer-Encoding: chunked\r\nContent-Type: application/yaml\r\n\r\n"));
  const std::string chunk(60000, '#');
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", chunk.size());
  bool cut = false;
  for (int i = 0; i < 200 && !cut; ++i)  // 12 MB offered against a 300 KB limit
    cut = !c.send(size + chunk + "\r\n");
  const std::string r = c.receive();
  EXPECT_TRUE(cut || c.closed_by_peer()) << "the server kept reading: " << r;
  EXPECT_NE(raw_status(r), 201) << r;
  EXPECT_EQ(study_count(), before);
  expect_healthy();
}

// Idle sockets and slowloris sockets (a header line now and then, never the end) cost the
// server a descriptor each, not a thread: health checks and reads still answer.
TEST_F(HostileTest, IdleAndSlowClientsDoNotStarveOthers) {
  std::vector<RawConnection> held;
  for (int i = 0; i < 60; ++i) {
    // From other loopback addresses, as an attacker's many hosts would be.
    held.emplace_back(port(), "127.0.0." + std::to_string(2 + i % 10));
    ASSERT_TRUE(held.back().ok());
    if (i % 2) held.back().send("GET /healthz HTTP/1.1\r\n" + host() + "X-Slow-1: a\r\n");
  }
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 1; i < held.size(); i += 2)
      held[i].send("X-Slow-" + std::to_string(round + 2) + ": b\r\n");
    expect_healthy();
    const std::string trials =
        raw_exchange(port(), get_request("/api/v1/studies/hostile/trials?limit=2"));
    EXPECT_EQ(raw_status(trials), 200) << trials;
  }
}

TEST_F(HostileTest, EventStreamsAreLimitedPerClientAndDoNotStarveOthers) {
  std::vector<RawConnection> streams;
  for (int i = 0; i < 3; ++i) {
    streams.emplace_back(port());
    ASSERT_TRUE(streams.back().send(get_request("/api/v1/events")));
    EXPECT_NE(streams.back().receive("retry: 2000").find("retry: 2000"), std::string::npos);
  }
  const std::string fourth = raw_exchange(port(), get_request("/api/v1/events"));
  EXPECT_EQ(raw_status(fourth), 429) << fourth;
  EXPECT_NE(fourth.find("too many event streams from 127.0.0.1"), std::string::npos) << fourth;
  // Other addresses still get theirs.
  RawConnection other(port(), "127.0.0.9");
  ASSERT_TRUE(other.send(get_request("/api/v1/events")));
  EXPECT_NE(other.receive("retry: 2000").find("retry: 2000"), std::string::npos);
  expect_healthy();
  streams.clear();  // a closed stream frees its place (noticed at its next write)
}

// Cache keys come from the parsed query: a value that smuggles separators cannot make the
// cache answer another query's key with its own (empty) result.
TEST_F(HostileTest, QueryTextCannotPoisonTheCache) {
  auto total = [](const std::string& query) {
    const std::string r =
        raw_exchange(port(), get_request("/api/v1/studies/hostile/trials?" + query));
    const json body = json::parse(body_of(r), nullptr, false);
    return body.is_object() ? body.value("total", int64_t{-1}) : int64_t{-1};
  };
  EXPECT_EQ(total("dataset=iris%0Alimit%3D5%0Aorder%3Ddesc"), 0);
  EXPECT_EQ(total("dataset=iris\nlimit=5\norder=desc"), -1);  // not even HTTP
  EXPECT_EQ(total("dataset=iris&limit=5&order=desc"), 2);
  EXPECT_EQ(total("limit=5&order=desc&dataset=iris"), 2);
}

TEST_F(HostileTest, CrossSiteWritesAndForeignHostNamesAreRefused) {
  const size_t before = study_count();
  std::string study = kHostileStudy;
  study.replace(study.find("hostile"), 7, "csrf");
  const std::string evil = raw_exchange(
      port(), post_request("/api/v1/studies", study,
                           "Origin: http://evil.example\r\nContent-Type: text/plain\r\n"));
  EXPECT_EQ(raw_status(evil), 403) << evil;
  EXPECT_NE(evil.find("cross-origin"), std::string::npos) << evil;
  const std::string fetch_site = raw_exchange(
      port(), post_request("/api/v1/studies", study, "Sec-Fetch-Site: cross-site\r\n"));
  EXPECT_EQ(raw_status(fetch_site), 403) << fetch_site;
  const std::string null_origin =
      raw_exchange(port(), post_request("/api/v1/studies", study, "Origin: null\r\n"));
  EXPECT_EQ(raw_status(null_origin), 403) << null_origin;
  EXPECT_EQ(study_count(), before);

  // DNS rebinding: a loopback server answers only loopback names.
  const std::string rebound = raw_exchange(
      port(), "GET /api/v1/studies HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(raw_status(rebound), 403) << rebound;
  const std::string local =
      raw_exchange(port(), "GET /healthz HTTP/1.1\r\nHost: localhost:" + std::to_string(port()) +
                               "\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(raw_status(local), 200) << local;

  // The dashboard's own page posting to itself is same-origin.
  const std::string same = raw_exchange(
      port(), post_request("/api/v1/studies/hostile/cancel", "",
                           "Origin: http://127.0.0.1:" + std::to_string(port()) + "\r\n"));
  EXPECT_EQ(raw_status(same), 409) << same;  // allowed through; the study is finished
}

// curl --data-binary without -H sends a form Content-Type; the body is a study file all the
// same, whatever its size (a form parser once took it apart past 8 KB).
TEST_F(HostileTest, AStudyFileSentAsAFormOver8KbIsStillAStudyFile) {
  std::string study = kHostileStudy;
  study.replace(study.find("hostile"), 7, "form-typed");
  study += "# " + std::string(20000, 'x') + "\n";
  const std::string r =
      raw_exchange(port(), post_request("/api/v1/studies", study,
                                        "Content-Type: application/x-www-form-urlencoded\r\n"));
  EXPECT_EQ(raw_status(r), 201) << r;
  EXPECT_NE(body_of(r).find("\"form-typed\""), std::string::npos) << r;
}

TEST_F(HostileTest, OddMethodsGetAnAnswerAtOnce) {
  const std::string options = raw_exchange(
      port(), "OPTIONS /api/v1/studies HTTP/1.1\r\n" + host() + "Connection: close\r\n\r\n");
  EXPECT_EQ(raw_status(options), 405) << options;
  EXPECT_NE(options.find("Allow: GET, POST"), std::string::npos) << options;
  const std::string brew =
      raw_exchange(port(), "BREW /healthz HTTP/1.1\r\n" + host() + "Connection: close\r\n\r\n");
  EXPECT_EQ(raw_status(brew), 405) << brew;
  const std::string unknown =
      raw_exchange(port(), "DELETE /nowhere HTTP/1.1\r\n" + host() + "Connection: close\r\n\r\n");
  EXPECT_EQ(raw_status(unknown), 404) << unknown;
  const std::string head =
      raw_exchange(port(), "HEAD /healthz HTTP/1.1\r\n" + host() + "Connection: close\r\n\r\n");
  EXPECT_EQ(raw_status(head), 200) << head;
  EXPECT_EQ(body_of(head), "");
}

TEST_F(HostileTest, PipelinedRequestsAllGetAnswers) {
  RawConnection c(port());
  const std::string one = "GET /healthz HTTP/1.1\r\n" + host() + "\r\n";
  ASSERT_TRUE(c.send(one + one + get_request("/api/v1/studies")));
  const std::string r = c.receive();
  EXPECT_EQ(occurrences(r, "HTTP/1.1 200"), 3u) << r;
}

TEST_F(HostileTest, OverlongPathsAndHeadersAreRefused) {
  const std::string long_path = raw_exchange(port(), get_request("/js/" + std::string(5000, 'a')));
  EXPECT_EQ(raw_status(long_path), 414) << long_path.substr(0, 200);
  // Past the per-connection header memory: refused by the HTTP layer, server unharmed.
  const std::string huge = raw_exchange(port(), get_request("/" + std::string(200000, 'a')));
  EXPECT_GE(raw_status(huge), 400) << huge.substr(0, 200);
  const std::string headers =
      raw_exchange(port(), get_request("/healthz", "X-Big: " + std::string(100000, 'b') + "\r\n"));
  EXPECT_GE(raw_status(headers), 400) << headers.substr(0, 200);
  expect_healthy();
}

// A POSTed study's datasets: files only inside --data-dir (links followed), never an
// echo of a file's contents.
TEST_F(HostileTest, FileDatasetsResolveOnlyInsideTheDataDirectory) {
  auto post = [](const std::string& name, const std::string& dataset) {
    const std::string study =
        "name: " + name + "\ndatasets: [\"" + dataset + "\"]\nparameters: {epochs: {value: 1}}\n";
    return raw_exchange(port(), post_request("/api/v1/studies", study));
  };
  const size_t before = study_count();
  for (const std::string bad :
       {"csv:/etc/shadow?label=zzz", "csv:../store.db", "csv:etc/passwd", "csv:/etc/passwd"}) {
    const std::string r = post("outside", bad);
    EXPECT_EQ(raw_status(r), 400) << bad << ": " << r;
    EXPECT_NE(r.find("data directory"), std::string::npos) << bad << ": " << r;
    EXPECT_EQ(r.find("root:"), std::string::npos) << r;  // no file content echoed
  }
  EXPECT_EQ(study_count(), before);
  const std::string good = post("inside", "csv:good.csv?label=label");
  EXPECT_EQ(raw_status(good), 201) << good;
  auto r = server_->client()->Get("/api/v1/studies/inside");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find((*dir_ / "data" / "good.csv").string()), std::string::npos)
      << "the stored study names the resolved path: " << r->body;
}

// Bodies built to crash or exhaust a parser get a 400 that names the problem; the server
// stays up and stores nothing.
TEST_F(HostileTest, HostileStudyBodiesAreRefusedAndTheServerStaysUp) {
  const size_t before = study_count();
  const std::string deep_json = std::string(100000, '[') + std::string(100000, ']');
  const std::string deep_yaml = "name: d\ndatasets: [iris]\nx: " + std::string(100000, '[');
  const std::pair<std::string, std::string> cases[] = {
      {"{\"name\": \"x\", \"d\": " + deep_json + "}", "deep"},
      {"name: x\ndatasets: [iris]\nparameters:\n  hidden_layers: &h {values: [1, *h]}\n", "alias"},
      {"{\"name\": \"x\", \"datasets\": [\"iris\"], \"parameters\": {\"epochs\": "
       "{\"value\": 1e400}}}",
       "1e400"},
      {"name: \"x\xff\xfe\"\ndatasets: [iris]\n", "UTF-8"},
      {deep_yaml, "deep"},
      {"name: big\ndatasets: [iris]\nmethod: random\nbudget: {trials: 100000000}\n"
       "parameters: {learning_rate: {distribution: log_uniform, min: 0.001, max: 0.1}}\n",
       "500"},
      {"name: wide\ndatasets: [iris]\nparameters: {units: {value: 1000000000}}\n", "units"},
      {"name: nan\ndatasets: [iris]\nparameters: {learning_rate: {value: .nan}}\n", "NaN"},
  };
  for (const auto& [body, part] : cases) {
    const std::string r = raw_exchange(port(), post_request("/api/v1/studies", body));
    EXPECT_EQ(raw_status(r), 400) << part << ": " << r.substr(0, 300);
    EXPECT_NE(r.find(part), std::string::npos) << part << ": " << r.substr(0, 300);
    expect_healthy();
  }
  EXPECT_EQ(study_count(), before);
}

TEST(ServeBind, ALookalikeLoopbackNameIsNotLoopback) {
  const CommandResult r = run_layerlab("serve --bind 127.attacker.example:0");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("without --token"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace layerlab::testing
