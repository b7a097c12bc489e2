// layerlab submit: sends a study file to a running `layerlab serve` (POST /api/v1/studies),
// whose coordinator queues its trials for the workers of that deployment.
#include <httplib.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "cli/commands.h"
#include "common/error.h"
#include "common/text_safety.h"

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

// The most of an answer submit reads: the API's answers are a few hundred bytes; a proxy's
// page or a server that sends without end is cut here.
constexpr size_t kMaxAnswerBytes = size_t{1} << 20;

struct Answer {
  int status = 0;
  std::string body;  // at most kMaxAnswerBytes
  bool cut = false;  // the server sent more, which was not read
};

Answer post_study(const std::string& server, const httplib::Headers& headers,
                  const std::string& study) {
  httplib::Client client(server);
  client.set_connection_timeout(5);
  client.set_read_timeout(60);
  httplib::Request req;
  req.method = "POST";
  req.path = "/api/v1/studies";
  req.headers = headers;
  req.set_header("Content-Type", "application/yaml");
  req.body = study;
  Answer answer;
  req.content_receiver = [&answer](const char* data, size_t n, uint64_t, uint64_t) {
    const size_t room = kMaxAnswerBytes - answer.body.size();
    answer.body.append(data, std::min(n, room));
    answer.cut = n > room;
    return !answer.cut;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  if (!client.send(req, res, error) && !answer.cut)
    throw unavailable("server " + server + ": " + httplib::to_string(error) +
                      " (is `layerlab serve` running there?)");
  answer.status = res.status;
  return answer;
}

// "MESSAGE (HTTP STATUS CODE)" from the API's error body {"error": {"code", "message"}};
// a body of another shape (a proxy's page, an older server) is quoted, shortened. Where the
// message locates a problem in "<request body>", the study file's name is put instead.
std::string server_error(const Answer& res, const std::string& study_file) {
  const nlohmann::json j = nlohmann::json::parse(res.body, nullptr, false);
  std::string message, code;
  if (j.is_object() && j.contains("error")) {
    const nlohmann::json& e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string())
      message = e["message"].get<std::string>();
    else if (e.is_string())
      message = e.get<std::string>();
    if (e.is_object() && e.contains("code") && e["code"].is_string())
      code = e["code"].get<std::string>();
  }
  if (message.empty())
    message = res.body.empty() ? "the server answered with an empty body"
                               : "the server answered: " + excerpt(res.body, 300);
  if (res.cut)
    message += " (the answer was longer than " + std::to_string(kMaxAnswerBytes) +
               " bytes; the rest was not read)";
  constexpr std::string_view kBody = "<request body>";
  for (size_t at = message.find(kBody); at != std::string::npos;
       at = message.find(kBody, at + study_file.size()))
    message.replace(at, kBody.size(), study_file);
  return excerpt(message, 4000) + " (HTTP " + std::to_string(res.status) +
         (code.empty() ? "" : " " + excerpt(code, 40)) + ")";
}

void submit(const SubmitFlags& f) {
  if (f.server.rfind("http://", 0) != 0)
    throw invalid_argument("--server: expected http://HOST:PORT, got '" + f.server + "'");
  httplib::Headers headers;
  if (!f.token.empty()) headers.emplace("Authorization", "Bearer " + f.token);
  const Answer res = post_study(f.server, headers, read_file(f.study_file));
  if (res.status == 201) {
    const nlohmann::json j = nlohmann::json::parse(res.body, nullptr, false);
    if (!j.is_object() || !j.contains("name") || !j["name"].is_string())
      throw unavailable(
          "server " + f.server +
          " created the study but its answer is not the API's: " + excerpt(res.body, 300));
    std::cout << "submitted study '" << printable(j["name"].get<std::string>()) << "' (id "
              << j.value("id", int64_t{0}) << ", " << j.value("total", int64_t{0}) << " trials) to "
              << f.server << "\n";
    return;
  }
  const std::string why = server_error(res, f.study_file);
  switch (res.status) {
    case 400:  // the study file is invalid
    case 404:  // no such route: --server names something else
    case 413:  // the file is over the server's body limit
      throw invalid_argument(why);
    case 401:  // a token is needed (--token) or is wrong
    case 403:
    case 409:  // a study of that name exists
      throw failed_precondition(why);
    default:  // 5xx and anything unexpected: the server's trouble, maybe passing
      throw unavailable(why);
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
