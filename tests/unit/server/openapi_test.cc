// docs/openapi.json against the server: every route the Router registers is documented
// with its method, every documented operation is a registered route, the document is
// well formed (OpenAPI 3.1, every $ref resolves, every path parameter declared), and the
// server serves exactly the committed file. The responses themselves are validated against
// the document's schemas on a real server by tests/integration/python/test_openapi.py.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "server/server.h"

namespace layerlab::server {
namespace {

using nlohmann::json;

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::filesystem::path kDocPath =
    std::filesystem::path(LAYERLAB_SOURCE_DIR) / "docs/openapi.json";

// A route pattern as a path template with anonymous parameters ("/api/v1/studies/{}"):
// "{}" is one path segment and "{*}" the rest of the path (the dashboard's /js/{file}).
// Anything else that looks like a pattern must be taught here, so a new kind of route
// cannot slip past the document.
std::vector<std::string> templates_of(const std::string& pattern) {
  std::string t = pattern;
  if (t.ends_with("/{*}")) t.replace(t.size() - 3, 3, "{}");
  EXPECT_EQ(t.find_first_of("()[]*+?|\\^$"), std::string::npos)
      << "route pattern " << pattern
      << " is not a plain path with {} segments: teach openapi_test.cc how to document it";
  return {t};
}

// "/api/v1/studies/{study}/trials" -> "/api/v1/studies/{}/trials"
std::string anonymous(const std::string& path) {
  return std::regex_replace(path, std::regex(R"(\{[^}]+\})"), "{}");
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

class OpenApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("layerlab-openapi-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    ServerOptions o;
    o.store_url = "sqlite:" + (dir_ / "store.db").string();
    api_ = std::make_unique<Api>(o);
    doc_ = json::parse(read_text(kDocPath));
  }
  void TearDown() override {
    api_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  std::unique_ptr<Api> api_;
  json doc_;
};

TEST_F(OpenApiTest, EveryRegisteredRouteIsDocumentedAndEveryOperationRegistered) {
  std::set<std::pair<std::string, std::string>> registered, documented;
  for (const Router::RouteInfo& r : api_->router().routes())
    for (const std::string& t : templates_of(r.pattern)) registered.insert({r.method, t});
  for (const auto& [path, item] : doc_.at("paths").items())
    for (const auto& [method, op] : item.items())
      if (method != "parameters") documented.insert({upper(method), anonymous(path)});

  for (const auto& [method, path] : registered)
    EXPECT_TRUE(documented.count({method, path}))
        << method << " " << path << " is served but not in docs/openapi.json";
  for (const auto& [method, path] : documented)
    EXPECT_TRUE(registered.count({method, path}))
        << method << " " << path << " is in docs/openapi.json but the server has no such route";
  EXPECT_GE(registered.size(), 17u);  // the API's 12 operations, openapi.json, the dashboard's 4
}

// Every "$ref" in `node` names something that exists in the document.
void expect_refs_resolve(const json& doc, const json& node, const std::string& where) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (key == "$ref") {
        ASSERT_TRUE(value.is_string()) << where;
        const std::string ref = value.get<std::string>();
        ASSERT_EQ(ref.rfind("#/", 0), 0u) << where << ": only local references: " << ref;
        EXPECT_TRUE(doc.contains(json::json_pointer(ref.substr(1))))
            << where << ": " << ref << " does not resolve";
      } else {
        expect_refs_resolve(doc, value, where + "/" + key);
      }
    }
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i)
      expect_refs_resolve(doc, node[i], where + "/" + std::to_string(i));
  }
}

TEST_F(OpenApiTest, DocumentIsWellFormed) {
  EXPECT_EQ(doc_.at("openapi"), "3.1.0");
  EXPECT_TRUE(doc_.at("info").contains("title"));
  EXPECT_TRUE(doc_.at("info").contains("version"));
  expect_refs_resolve(doc_, doc_, "#");

  std::set<std::string> ids;
  const json& shared_params = doc_.at("components").at("parameters");
  for (const auto& [path, item] : doc_.at("paths").items()) {
    for (const auto& [method, op] : item.items()) {
      const std::string where = method + " " + path;
      ASSERT_TRUE(op.contains("operationId")) << where;
      EXPECT_TRUE(ids.insert(op["operationId"].get<std::string>()).second)
          << where << ": operationId " << op["operationId"] << " is used twice";
      ASSERT_TRUE(op.contains("responses")) << where;
      const json& responses = op["responses"];
      EXPECT_TRUE(responses.contains("200") || responses.contains("201"))
          << where << " documents no success response";
      for (const auto& [status, response] : responses.items()) {
        EXPECT_TRUE(response.contains("description")) << where << " " << status;
        if (status != "default" && status[0] >= '4') {
          EXPECT_EQ(response["content"]["application/json"]["schema"]["$ref"],
                    "#/components/schemas/Error")
              << where << " " << status << ": errors have the Error shape";
        }
      }
      // Each {name} in the path is declared once as a path parameter, and nothing else is.
      std::set<std::string> in_path, declared;
      const std::regex name(R"(\{([^}]+)\})");
      for (auto it = std::sregex_iterator(path.begin(), path.end(), name);
           it != std::sregex_iterator(); ++it)
        in_path.insert((*it)[1]);
      for (json p : op.value("parameters", json::array())) {
        if (p.contains("$ref")) {
          const std::string ref = p["$ref"];
          p = shared_params.at(ref.substr(ref.rfind('/') + 1));
        }
        if (p.at("in") == "path") {
          EXPECT_TRUE(p.value("required", false)) << where << ": path parameters are required";
          declared.insert(p.at("name").get<std::string>());
        }
      }
      EXPECT_EQ(in_path, declared) << where;
    }
  }
}

TEST_F(OpenApiTest, ServerServesTheCommittedDocument) {
  Request req;
  req.method = "GET";
  set_target(req, "/api/v1/openapi.json");
  Response res;
  api_->handle(req, res);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.content_type, "application/json");
  EXPECT_EQ(std::string(res.bytes()), read_text(kDocPath))
      << "the embedded document is not docs/openapi.json: rebuild";
}

}  // namespace
}  // namespace layerlab::server
