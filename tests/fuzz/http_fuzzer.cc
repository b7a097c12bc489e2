// HTTP request handling: the bytes as one HTTP/1.1 request (request line, header lines, a
// blank line, the body) given to server::Api::handle, the server's whole request path
// without a socket: Host / Origin / token checks, routing (404, 405, 414), query parsing,
// the study, trial, operation and static routes, and the response cache. The store is a
// SQLite file in the harness's scratch directory, seeded with a study whose trials are
// queued, running, completed and failed, so the read routes have data to show.
//
// Besides the usual crashes, a response is a finding when it is a 500 (hostile input must
// get a 4xx), when its status is not an HTTP status, when a JSON response is not JSON, or
// when it carries the server's token and the request did not.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "server/http.h"
#include "server/server.h"
#include "store/store.h"
#include "study/sampler.h"
#include "study/spec.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace layerlab;
using nlohmann::json;

constexpr const char* kToken = "fuzz-token-4b9c";

constexpr const char* kSeededStudy = R"(name: seeded
datasets: [iris, "csv:table.csv?label=y"]
method: grid
seeds: [0]
parameters:
  hidden_layers: {values: [1, 2]}
  learning_rate: {values: [0.01, 0.1]}
)";

// A study with trials in every state: 8 trials, 3 completed (with curves), 1 failed, 1
// running, 3 queued.
void seed_store(const std::string& store_url) {
  auto store = store::open_store(store_url);
  const study::StudySpec spec = study::parse_study(kSeededStudy, "seeded.yaml");
  const int64_t id = store->create_study(spec.name, spec.to_json());
  auto sampler = study::make_sampler(spec);
  std::vector<store::NewTrial> trials;
  for (int64_t n = 0; n < spec.total_trials(); ++n) {
    auto s = sampler->suggest(n, {}, {});
    json params = s->trial.to_json();
    params.erase("dataset");
    trials.push_back({n, s->trial.dataset, params, 1.0});
  }
  store->add_trials(id, trials);
  store->register_worker({"fuzz-worker", "fuzzhost", 1, "cpu", 1});
  store::ClaimOptions claim;
  const auto claims = store->claim_batch("fuzz-worker", claim, 5);
  for (size_t i = 0; i < claims.size() && i < 4; ++i) {
    const auto& c = claims[i];
    if (i == 3) {
      store->finish_trial(c.trial_id, c.attempt, store::TrialStatus::kFailed, json(), std::nullopt,
                          "diverged: loss is NaN at epoch 2");
      continue;
    }
    std::vector<store::EpochRow> epochs;
    for (int e = 1; e <= 3; ++e)
      epochs.push_back({e, 1.0 / e, 1.2 / e, 0.5 + 0.1 * e + 0.01 * double(i), 0.01, json()});
    const double value = 0.8 + 0.01 * double(i);
    json result = {{"status", "completed"},
                   {"metrics", {{"val_accuracy", value}, {"val_loss", 0.4}}},
                   {"epochs_run", 3},
                   {"seconds", 0.03}};
    store->finish_trial(c.trial_id, c.attempt, store::TrialStatus::kCompleted, result, value, "",
                        epochs);
  }
}

server::Api& api() {
  static std::unique_ptr<server::Api> instance = [] {
    const std::string dir = fuzz::ScratchDir::get().path();
    std::filesystem::create_directories(dir + "/data");
    fuzz::ScratchDir::get().write("data/table.csv", "a,b,y\n1,2,0\n3,4,1\n5,6,0\n");
    server::ServerOptions o;
    o.store_url = "sqlite:" + dir + "/store.db";
    o.token = kToken;
    o.data_dir = dir + "/data";
    o.store_connections = 1;
    o.poll = std::chrono::hours(1);  // the change feed stays quiet: runs are repeatable
    seed_store(o.store_url);
    return std::make_unique<server::Api>(o);
  }();
  return *instance;
}

// Splits raw request bytes into a Request the way the listener fills one.
server::Request parse_request(std::string_view in) {
  server::Request req;
  req.client = "127.0.0.1";
  auto next_line = [&in](std::string_view& line) {
    if (in.empty()) return false;
    size_t nl = in.find('\n');
    line = in.substr(0, nl);
    in = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return true;
  };
  std::string_view line;
  if (!next_line(line)) return req;
  const size_t sp1 = line.find(' ');
  req.method = std::string(line.substr(0, sp1));
  std::string_view target = sp1 == std::string_view::npos ? "/" : line.substr(sp1 + 1);
  target = target.substr(0, target.find(' '));  // drop " HTTP/1.1"
  server::set_target(req, target);
  while (next_line(line) && !line.empty()) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    req.headers.emplace(std::string(line.substr(0, colon)), std::string(value));
  }
  req.body = std::string(in);
  return req;
}

[[noreturn]] void finding(const char* what, const server::Request& req, std::string_view body) {
  std::fprintf(stderr, "http_fuzzer: %s for %s %s: %.*s\n", what, req.method.c_str(),
               req.path.c_str(), static_cast<int>(std::min<size_t>(body.size(), 500)), body.data());
  __builtin_trap();
}

// Does text carry the token as a reader of the response sees it? A JSON body is read
// decoded: its escapes are not text (the escape of 0x1f, \u001f, followed by an echoed
// "uzz-token-4b9c" spells the token without the server ever writing it).
bool shows_token(std::string_view text, bool is_json) {
  if (!is_json) return text.find(kToken) != std::string_view::npos;
  bool found = false;
  json::parser_callback_t look = [&](int, json::parse_event_t event, json& value) {
    if ((event == json::parse_event_t::key || event == json::parse_event_t::value) &&
        value.is_string() && value.get_ref<const std::string&>().find(kToken) != std::string::npos)
      found = true;
    return true;
  };
  [[maybe_unused]] const json parsed = json::parse(text, look, false);  // the callback looks
  return found;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > fuzz::kMaxInputBytes) return 0;
  server::Api& server = api();
  server::Request req = parse_request(fuzz::as_text(data, size));
  server::Response res;
  server.handle(req, res);
  std::string streamed;
  if (res.stream) {
    res.stream->read(streamed);
    res.stream->close();
  }
  // Static assets (Plotly: megabytes) are checked where they lie, not copied.
  const std::string_view body = res.stream ? std::string_view(streamed) : res.bytes();
  if (res.status < 100 || res.status > 599) finding("not an HTTP status", req, body);
  if (res.status == 500) finding("500 internal error", req, body);
  // The token in a response to a request that did not carry it is a leak (a message may
  // echo what the client itself sent).
  const bool json_type =
      res.content_type.rfind("application/json", 0) == 0 && !res.stream && !body.empty();
  const bool is_json = json_type && json::accept(body);
  if (fuzz::as_text(data, size).find(kToken) == std::string_view::npos) {
    if (shows_token(body, is_json)) finding("the token in the body", req, body);
    for (const auto& [name, value] : res.headers)
      if (value.find(kToken) != std::string::npos) finding("the token in a header", req, name);
  }
  if (json_type && !is_json) finding("a JSON response that is not JSON", req, body);
  return 0;
}
