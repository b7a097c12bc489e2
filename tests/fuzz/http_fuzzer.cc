// HTTP request handling: the bytes as one HTTP/1.1 request (request line, header lines, a
// blank line, the body) given to server::Api::handle, the server's whole request path
// without a socket: Host / Origin / token checks, routing (404, 405, 414), query parsing,
// the study, trial, operation and static routes, the response cache, and past them the
// store's queries and the analyses behind every view. The store is a SQLite file in the
// harness's scratch directory, seeded with two studies (a classification study over two
// datasets and a regression study) whose trials are queued, running, completed, pruned and
// failed, with curves and a kept model, so every read route has data to show.
//
// Inputs are kept short (-max_len), but the attacks that matter are long: a repeat marker
// expands before parsing, so a few bytes reach inputs of hundreds of kilobytes (a
// 30,000-character sort key, a field named a thousand times). See expand_repeats.
//
// Besides the usual crashes, a response is a finding when it is a 500 (hostile input must
// get a 4xx), when its status is not an HTTP status, when a JSON response is not JSON, when
// it carries the server's token and the request did not, or when an unauthenticated
// request is told where the store is (its path names the scratch directory).
#include <algorithm>
#include <charconv>
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

constexpr const char* kRegressionStudy = R"(name: regression
datasets: ["csv:table.csv?label=y&task=regression"]
method: random
budget: {trials: 6}
metric: {name: val_rmse, goal: minimize}
keep_weights: {top: 1}
parameters:
  hidden_layers: {values: [1, 3]}
  units: {distribution: int_uniform, min: 4, max: 16}
  activation: {values: [relu, tanh]}
  learning_rate: {distribution: log_uniform, min: 0.001, max: 0.1}
)";

// A study with trials in every state: 3 completed (with curves, the best with a kept
// model where the study keeps weights), 1 failed, 1 running, the rest queued.
void seed_study(store::Store& store, const char* text, const char* file, double base) {
  const study::StudySpec spec = study::parse_study(text, file);
  const int64_t id = store.create_study(spec.name, spec.to_json());
  auto sampler = study::make_sampler(spec);
  std::vector<store::NewTrial> trials;
  for (int64_t n = 0; n < spec.total_trials(); ++n) {
    auto s = sampler->suggest(n, {}, {});
    json params = s->trial.to_json();
    params.erase("dataset");
    trials.push_back({n, s->trial.dataset, params, 1.0});
  }
  store.add_trials(id, trials);
  store::ClaimOptions claim;
  claim.study_id = id;
  const auto claims = store.claim_batch("fuzz-worker", claim, 5);
  std::vector<store::TrialFinish> finishes;
  for (size_t i = 0; i < claims.size() && i < 4; ++i) {
    const auto& c = claims[i];
    if (i == 3) {
      finishes.push_back({c.trial_id,
                          c.attempt,
                          store::TrialStatus::kFailed,
                          json(),
                          std::nullopt,
                          "diverged: loss is NaN at epoch 2",
                          {}});
      continue;
    }
    std::vector<store::EpochRow> epochs;
    for (int e = 1; e <= 3; ++e)
      epochs.push_back({e, 1.0 / e, 1.2 / e, base + 0.1 * e + 0.01 * double(i), 0.01, json()});
    const double value = base + 0.3 + 0.01 * double(i);
    const auto status = i == 2 ? store::TrialStatus::kPruned : store::TrialStatus::kCompleted;
    json result = {{"status", store::to_string(status)},
                   {"metrics", {{spec.metric, value}, {"val_loss", 0.4}}},
                   {"epochs_run", 3},
                   {"parameter_count", 100 + int64_t(i)},
                   {"seconds", 0.03}};
    store::TrialFinish f{c.trial_id, c.attempt, status, result, value, "", epochs};
    if (spec.keep_top > 0 && i == 0)
      f.keep = store::KeepWeights{std::make_shared<const std::string>(4096, 'w'), spec.keep_top,
                                  spec.maximize};
    finishes.push_back(std::move(f));
  }
  store.finish_trials(finishes);
}

void seed_store(const std::string& store_url) {
  auto store = store::open_store(store_url);
  store->register_worker({"fuzz-worker", "fuzzhost", 1, "cpu", 1});
  seed_study(*store, kSeededStudy, "seeded.yaml", 0.5);
  seed_study(*store, kRegressionStudy, "regression.yaml", 2.0);
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

// The repeat marker: 0x01, a count in decimal, ':', the text, 0x02 stands for the text
// that many times. The expansion is capped (kMaxExpanded) so one input stays one request;
// a marker without its end or count is left as it is.
constexpr size_t kMaxExpanded = 512 * 1024;

std::string expand_repeats(std::string_view in) {
  std::string out;
  while (!in.empty() && out.size() < kMaxExpanded) {
    const size_t start = in.find('\x01');
    out.append(in.substr(0, start));
    if (start == std::string_view::npos) break;
    in.remove_prefix(start + 1);
    const size_t colon = in.find(':'), end = in.find('\x02');
    size_t count = 0;
    const auto [p, ec] = std::from_chars(in.data(), in.data() + std::min(colon, in.size()), count);
    if (colon == std::string_view::npos || end == std::string_view::npos || colon > end ||
        ec != std::errc() || p != in.data() + colon) {
      out += '\x01';
      continue;
    }
    const std::string_view text = in.substr(colon + 1, end - colon - 1);
    for (size_t i = 0; i < count && !text.empty() && out.size() < kMaxExpanded; ++i)
      out.append(text);
    in.remove_prefix(end + 1);
  }
  if (out.size() > kMaxExpanded) out.resize(kMaxExpanded);
  return out;
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
  const std::string bytes = expand_repeats(fuzz::as_text(data, size));
  server::Request req = parse_request(bytes);
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
  if (bytes.find(kToken) == std::string::npos) {
    if (shows_token(body, is_json)) finding("the token in the body", req, body);
    for (const auto& [name, value] : res.headers)
      if (value.find(kToken) != std::string::npos) finding("the token in a header", req, name);
    const std::string& where = fuzz::ScratchDir::get().path();
    if (bytes.find(where) == std::string::npos && body.find(where) != std::string_view::npos)
      finding("the store's location in an unauthenticated answer", req, body);
  }
  if (json_type && !is_json) finding("a JSON response that is not JSON", req, body);
  return 0;
}
