// layerlab submit: sends a study file to a running `layerlab serve` (POST /api/v1/studies),
// whose coordinator queues its trials for the workers of that deployment.
#include <httplib.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "common/error.h"

namespace layerlab::cli {
namespace {

struct SubmitFlags {
  std::string study_file;
  std::string server = "http://127.0.0.1:8080";
  std::string token;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw not_found("cannot read study file '" + path + "'");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The message of the server's JSON error body, or the raw body.
std::string server_message(const std::string& body) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_string())
    return j["error"].get<std::string>();
  return body;
}

void submit(const SubmitFlags& f) {
  if (f.server.rfind("http://", 0) != 0)
    throw invalid_argument("--server: expected http://HOST:PORT, got '" + f.server + "'");
  const std::string body = read_file(f.study_file);
  httplib::Client client(f.server);
  client.set_connection_timeout(5);
  client.set_read_timeout(60);
  httplib::Headers headers;
  if (!f.token.empty()) headers.emplace("Authorization", "Bearer " + f.token);
  const httplib::Result res = client.Post("/api/v1/studies", headers, body, "application/yaml");
  if (!res)
    throw unavailable("server " + f.server + ": " + httplib::to_string(res.error()) +
                      " (is `layerlab serve` running there?)");
  const std::string where = "server " + f.server + " (HTTP " + std::to_string(res->status) + "): ";
  switch (res->status) {
    case 201: {
      const nlohmann::json j = nlohmann::json::parse(res->body);
      std::cout << "submitted study '" << j.value("name", "") << "' (id " << j.value("id", 0)
                << ", " << j.value("total", 0) << " trials) to " << f.server << "\n";
      return;
    }
    case 400:
    case 413:
      throw invalid_argument(where + f.study_file + ": " + server_message(res->body));
    case 401:
    case 409:
      throw failed_precondition(where + server_message(res->body));
    default:
      throw unavailable(where + server_message(res->body));
  }
}

}  // namespace

void add_submit_command(CLI::App& app) {
  auto f = std::make_shared<SubmitFlags>();
  CLI::App* cmd = app.add_subcommand("submit", "Send a study file to a running `layerlab serve`");
  cmd->add_option("study", f->study_file, "study file (YAML)")->required();
  cmd->add_option("--server", f->server, "the server's URL")->capture_default_str();
  cmd->add_option("--token", f->token, "bearer token the server was started with");
  cmd->callback([f] { submit(*f); });
}

}  // namespace layerlab::cli
