// The server's request model without a socket: targets and their decoding, the checks
// before routing (Host, Origin, token), routing with 404/405/414, and the rule that no
// handler's exception escapes.
#include "server/http.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "server/server.h"

namespace layerlab::server {
namespace {

TEST(Http, SetTargetDecodesPathAndQuery) {
  Request r;
  set_target(r, "/api/v1/studies/a%20b/trials?dataset=iris%0Alimit&x=1+2&empty&=v&k=%zz");
  EXPECT_EQ(r.path, "/api/v1/studies/a b/trials");
  EXPECT_EQ(r.param("dataset"), "iris\nlimit");
  EXPECT_EQ(r.param("x"), "1 2");
  EXPECT_TRUE(r.has_param("empty"));
  EXPECT_EQ(r.param("k"), "%zz");  // a malformed escape stays as sent
  EXPECT_EQ(r.param(""), "v");
}

TEST(Http, HeaderNamesIgnoreCase) {
  Request r;
  r.headers.emplace("content-TYPE", "text/plain");
  EXPECT_EQ(r.header("Content-Type"), "text/plain");
  EXPECT_FALSE(r.has_header("Origin"));
}

TEST(Http, LoopbackMeansLoopbackAddresses) {
  EXPECT_TRUE(is_loopback("127.0.0.1"));
  EXPECT_TRUE(is_loopback("127.255.0.9"));
  EXPECT_TRUE(is_loopback("::1"));
  EXPECT_TRUE(is_loopback("LOCALHOST"));
  EXPECT_FALSE(is_loopback("127.attacker.example"));
  EXPECT_FALSE(is_loopback("127.0.0.1.nip.io"));
  EXPECT_FALSE(is_loopback("0.0.0.0"));
  EXPECT_FALSE(is_loopback("::"));
  EXPECT_FALSE(is_loopback("128.0.0.1"));
}

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("layerlab-http-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    ServerOptions o;
    o.store_url = "sqlite:" + (dir_ / "store.db").string();
    o.token = "secret";
    api_ = std::make_unique<Api>(o);
  }
  void TearDown() override {
    api_.reset();
    std::filesystem::remove_all(dir_);
  }
  Response call(const std::string& method, const std::string& target,
                std::vector<std::pair<std::string, std::string>> headers = {},
                std::string body = "") {
    Request req;
    req.method = method;
    set_target(req, target);
    for (auto& [k, v] : headers) req.headers.emplace(k, v);
    req.body = std::move(body);
    Response res;
    api_->handle(req, res);
    return res;
  }
  static std::string message(const Response& r) {
    return nlohmann::json::parse(r.bytes())["error"]["message"];
  }

  std::filesystem::path dir_;
  std::unique_ptr<Api> api_;
};

TEST_F(ApiTest, RoutesAndRefusesAsJson) {
  EXPECT_EQ(call("GET", "/healthz").status, 200);
  EXPECT_EQ(call("HEAD", "/healthz").status, 200);
  const Response missing = call("GET", "/api/v1/nothing");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(message(missing), "no route GET /api/v1/nothing");
  const Response options = call("OPTIONS", "/api/v1/studies");
  EXPECT_EQ(options.status, 405);
  EXPECT_EQ(options.headers.at(0), (std::pair<std::string, std::string>{"Allow", "GET, POST"}));
  EXPECT_EQ(call("GET", "/js/" + std::string(3000, 'a')).status, 414);
  EXPECT_EQ(call("GET", "/api/v1/studies/1/trials?limit=0").status, 400);
  EXPECT_EQ(call("GET", "/api/v1/trials/abc").status, 404);
}

// Issue 52: every query value is held to a size before it is parsed (a sort key of 28,000
// characters overflowed the stack of a regex), and the error names the parameter.
TEST_F(ApiTest, OversizedQueryValuesAreRefusedNamingTheParameter) {
  const Response sort =
      call("GET", "/api/v1/studies/1/trials?sort=params." + std::string(28'000, 'a'));
  EXPECT_EQ(sort.status, 414) << "the query as a whole is over its limit";
  const Response key =
      call("GET", "/api/v1/studies/1/trials?sort=params." + std::string(1'100, 'a'));
  EXPECT_EQ(key.status, 400);
  EXPECT_EQ(message(key).rfind("sort: ", 0), 0u) << message(key);
  EXPECT_NE(message(key).find("over the limit of 1024"), std::string::npos) << message(key);
  const Response limit =
      call("GET", "/api/v1/studies/1/leaderboard?limit=" + std::string(2000, '1'));
  EXPECT_EQ(limit.status, 400);
  EXPECT_EQ(message(limit).rfind("limit: ", 0), 0u) << message(limit);
  const Response fields =
      call("GET", "/api/v1/studies/1/columns?fields=" + std::string(4'100, 'a'));
  EXPECT_EQ(fields.status, 400);
  EXPECT_NE(message(fields).find("fields: 4100 bytes, over the limit of 4096"), std::string::npos)
      << message(fields);
  const Response key_format =
      call("GET", "/api/v1/studies/1/trials?sort=params." + std::string(300, 'a'));
  EXPECT_EQ(key_format.status, 400);
  EXPECT_NE(message(key_format).find("at most 200 bytes"), std::string::npos)
      << message(key_format);
  EXPECT_EQ(call("GET", "/healthz").status, 200);
}

TEST_F(ApiTest, WritesNeedTheTokenAndTheServersOwnOrigin) {
  const std::string study = "name: s\ndatasets: [iris]\nparameters: {epochs: {value: 1}}\n";
  const Response anonymous = call("POST", "/api/v1/studies", {}, study);
  EXPECT_EQ(anonymous.status, 401);
  const Response wrong =
      call("POST", "/api/v1/studies", {{"Authorization", "Bearer secreT"}}, study);
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(message(wrong), "wrong token");
  const Response cross = call("POST", "/api/v1/studies",
                              {{"Authorization", "Bearer secret"},
                               {"Host", "127.0.0.1:8080"},
                               {"Origin", "http://evil.example"}},
                              study);
  EXPECT_EQ(cross.status, 403);
  const Response same = call("POST", "/api/v1/studies",
                             {{"Authorization", "Bearer secret"},
                              {"Host", "127.0.0.1:8080"},
                              {"Origin", "http://127.0.0.1:8080"}},
                             study);
  EXPECT_EQ(same.status, 201) << same.bytes();
  const Response rebound = call("GET", "/api/v1/studies", {{"Host", "evil.example:8080"}});
  EXPECT_EQ(rebound.status, 403);
  EXPECT_EQ(call("GET", "/api/v1/studies", {{"Host", "[::1]:8080"}}).status, 200);
}

}  // namespace
}  // namespace layerlab::server
