// The read side of the REST API over real HTTP against `layerlab serve` on a real SQLite
// store that `layerlab run` filled: every GET endpoint, paging, sorting, aggregates,
// errors, static files and path traversal.
#include <zlib.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>

#include "integration/study_commands.h"
#include "server_process.h"

namespace layerlab::testing {
namespace {

using nlohmann::json;

// 2 datasets x 3 depths x 2 activations x 2 seeds = 24 trials, 3 epochs each.
constexpr const char* kApiStudy = R"(name: api-study
datasets: [iris, wine]
metric: {name: val_accuracy, goal: maximize}
method: grid
seeds: [0, 1]
parameters:
  hidden_layers: {values: [1, 2, 3]}
  activation: {values: [relu, tanh]}
  units: {value: 16}
  epochs: {value: 3}
)";

class ApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const Study s = finished_study("server-api", kApiStudy);
    dir_ = new std::filesystem::path(s.dir);
    server_ = new ServerProcess(s.store, s.dir / "serve");
  }
  static void TearDownTestSuite() {
    delete server_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }

  // GET path: the status and the body as JSON (null when it is not JSON).
  static std::pair<int, json> get(const std::string& path) {
    auto r = server_->client()->Get(path);
    if (!r) return {-1, nullptr};
    return {r->status, json::parse(r->body, nullptr, false)};
  }
  static void expect_error(const std::string& path, int status, const std::string& part) {
    auto [code, body] = get(path);
    EXPECT_EQ(code, status) << path;
    ASSERT_TRUE(body.contains("error")) << path << ": " << body.dump();
    EXPECT_NE(body["error"]["message"].get<std::string>().find(part), std::string::npos)
        << path << ": " << body.dump();
    EXPECT_FALSE(body["error"]["code"].get<std::string>().empty());
  }

  static std::filesystem::path* dir_;
  static ServerProcess* server_;
};
std::filesystem::path* ApiTest::dir_ = nullptr;
ServerProcess* ApiTest::server_ = nullptr;

TEST_F(ApiTest, StudiesListAndOneStudyByIdOrName) {
  auto [code, list] = get("/api/v1/studies");
  ASSERT_EQ(code, 200);
  ASSERT_EQ(list["studies"].size(), 1u);
  const json& s = list["studies"][0];
  EXPECT_EQ(s["name"], "api-study");
  EXPECT_EQ(s["status"], "finished");
  EXPECT_EQ(s["total"], 24);
  EXPECT_EQ(s["finished"], 24);
  EXPECT_EQ(s["counts"]["completed"], 24);
  EXPECT_EQ(s["goal"], "maximize");
  // Each dataset's best, in the study's order; never one across datasets.
  ASSERT_TRUE(s["best"].is_array()) << s["best"].dump();
  ASSERT_EQ(s["best"].size(), 2u);
  EXPECT_EQ(s["best"][0]["dataset"], "iris");
  EXPECT_EQ(s["best"][1]["dataset"], "wine");

  auto [code1, by_id] = get("/api/v1/studies/" + std::to_string(s["id"].get<int>()));
  auto [code2, by_name] = get("/api/v1/studies/api-study");
  ASSERT_EQ(code1, 200);
  ASSERT_EQ(code2, 200);
  EXPECT_EQ(by_id, by_name);
  EXPECT_EQ(by_id["datasets"], json({"iris", "wine"}));
  EXPECT_EQ(by_id["parameters"], json({"hidden_layers", "activation", "units", "epochs"}));
  EXPECT_EQ(by_id["spec"]["name"], "api-study");
  // Each dataset's best is the highest value among its trials, `count` the trials sharing
  // it, the trial the lowest-numbered of them (in full in the detail).
  auto [code3, all] = get("/api/v1/studies/api-study/trials?limit=1000");
  ASSERT_EQ(code3, 200);
  ASSERT_EQ(by_id["best"].size(), 2u);
  for (const json& b : by_id["best"]) {
    double best = -1;
    int64_t count = 0, first = -1;
    for (const json& t : all["trials"]) {
      if (t["dataset"] != b["dataset"]) continue;
      const double v = t["value"].get<double>();
      if (v > best) {
        best = v;
        count = 0;
        first = t["number"];
      }
      if (v == best) ++count;
    }
    EXPECT_DOUBLE_EQ(b["value"].get<double>(), best) << b.dump();
    EXPECT_EQ(b["count"], count) << b.dump();
    EXPECT_EQ(b["number"], first) << b.dump();
    EXPECT_EQ(b["trial"]["number"], first) << b.dump();
    EXPECT_EQ(b["trial"]["dataset"], b["dataset"]) << b.dump();
    EXPECT_EQ(b["trial"]["status"], "completed");
  }

  expect_error("/api/v1/studies/999", 404, "no study with id 999");
  expect_error("/api/v1/studies/no-such-study", 404, "no study named 'no-such-study'");
}

// /leaderboard ranks within each dataset: each board is that dataset's best trials in
// order, with every trial that shares its best value counted, never a mix of datasets.
TEST_F(ApiTest, LeaderboardRanksWithinEachDataset) {
  auto [code, all] = get("/api/v1/studies/api-study/trials?limit=1000");
  ASSERT_EQ(code, 200);
  std::map<std::string, std::vector<std::pair<double, int64_t>>> ranked;  // (-value, number)
  for (const json& t : all["trials"])
    if (t["status"] == "completed" && t["value"].is_number())
      ranked[t["dataset"]].emplace_back(-t["value"].get<double>(), t["number"].get<int64_t>());
  for (auto& [dataset, rows] : ranked) std::sort(rows.begin(), rows.end());

  auto [code1, lb] = get("/api/v1/studies/api-study/leaderboard?limit=3");
  ASSERT_EQ(code1, 200) << lb.dump();
  EXPECT_EQ(lb["metric"], "val_accuracy");
  EXPECT_EQ(lb["goal"], "maximize");
  EXPECT_EQ(lb["limit"], 3);
  ASSERT_EQ(lb["datasets"].size(), 2u);
  for (size_t d = 0; d < 2; ++d) {
    const json& board = lb["datasets"][d];
    const std::string dataset = d == 0 ? "iris" : "wine";  // the study's order
    EXPECT_EQ(board["dataset"], dataset);
    const auto& rows = ranked[dataset];
    ASSERT_GE(rows.size(), 3u);
    ASSERT_EQ(board["trials"].size(), 3u) << board.dump();
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(board["trials"][i]["dataset"], dataset);
      EXPECT_EQ(board["trials"][i]["number"], rows[i].second) << dataset << " rank " << i;
      EXPECT_EQ(board["trials"][i]["status"], "completed");  // a full TRIAL_SUMMARY
    }
    EXPECT_DOUBLE_EQ(board["best_value"].get<double>(), -rows[0].first);
    const auto ties = std::count_if(rows.begin(), rows.end(),
                                    [&](const auto& r) { return r.first == rows[0].first; });
    EXPECT_EQ(board["best_count"], ties) << dataset;
  }
  // The default is 10 per dataset; by name or id alike.
  auto [code2, by_id] = get("/api/v1/studies/1/leaderboard");
  ASSERT_EQ(code2, 200);
  EXPECT_EQ(by_id["limit"], 10);
  EXPECT_EQ(by_id["datasets"][0]["trials"].size(), std::min<size_t>(10, ranked["iris"].size()));

  // Bounded, and a bad limit is a 400 naming it.
  expect_error("/api/v1/studies/api-study/leaderboard?limit=0", 400, "limit: expected an integer");
  expect_error("/api/v1/studies/api-study/leaderboard?limit=101", 400,
               "limit: expected an integer");
  expect_error("/api/v1/studies/api-study/leaderboard?limit=ten", 400,
               "limit: expected an integer");
  expect_error("/api/v1/studies/nope/leaderboard", 404, "no study named 'nope'");
}

// /pareto: each dataset's fronts (metric against parameter count, and against training
// time) are exactly the trials no other of the dataset dominates, worked out here by brute
// force from /trials; the parameter count each trial recorded is that of its network.
TEST_F(ApiTest, ParetoFrontsAreTheNonDominatedTrialsOfEachDataset) {
  auto [code, all] = get("/api/v1/studies/api-study/trials?limit=1000");
  ASSERT_EQ(code, 200);
  auto [code1, p] = get("/api/v1/studies/api-study/pareto");
  ASSERT_EQ(code1, 200) << p.dump();
  EXPECT_EQ(p["metric"], "val_accuracy");
  EXPECT_EQ(p["goal"], "maximize");
  EXPECT_EQ(p["limit"], 5000);
  ASSERT_EQ(p["datasets"].size(), 2u);
  // iris: 4 features, 3 classes; wine: 13 features, 3 classes; 16 units per hidden layer.
  const std::map<std::string, int64_t> features = {{"iris", 4}, {"wine", 13}};
  for (const json& d : p["datasets"]) {
    const std::string dataset = d["dataset"];
    struct Row {
      int64_t number;
      double value, params, seconds;
    };
    std::vector<Row> rows;
    for (const json& t : all["trials"])
      if (t["dataset"] == dataset && t["status"] == "completed" && t["value"].is_number())
        rows.push_back({t["number"], t["value"], 0, t["seconds"]});
    // The parameter count of each point, checked against the architecture.
    const json& pts = d["points"];
    ASSERT_EQ(pts["total"], rows.size());
    ASSERT_EQ(pts["returned"], rows.size());
    for (size_t i = 0; i < pts["number"].size(); ++i) {
      const int64_t depth = pts["params"]["hidden_layers"][i];
      const int64_t n = features.at(dataset);
      EXPECT_EQ(pts["parameter_count"][i], n * 16 + 16 + (depth - 1) * (16 * 16 + 16) + 16 * 3 + 3)
          << dataset << " trial " << pts["number"][i];
      for (Row& r : rows)
        if (r.number == pts["number"][i]) r.params = pts["parameter_count"][i];
    }
    for (const char* cost : {"parameter_count", "seconds"}) {
      const auto cost_of = [&](const Row& r) {
        return std::string(cost) == "seconds" ? r.seconds : r.params;
      };
      std::vector<int64_t> want;
      for (const Row& a : rows) {
        bool dominated = false;
        for (const Row& b : rows)
          dominated = dominated || (b.value >= a.value && cost_of(b) <= cost_of(a) &&
                                    (b.value > a.value || cost_of(b) < cost_of(a)));
        if (!dominated) want.push_back(a.number);
      }
      std::vector<int64_t> got;
      double last = -1;
      for (const json& t : d["fronts"][cost]["trials"]) {
        got.push_back(t["number"]);
        EXPECT_GE(t[cost].get<double>(), last) << "cheapest first";
        last = t[cost].get<double>();
        EXPECT_TRUE(t["params"].contains("activation")) << t.dump();
      }
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want) << dataset << " against " << cost;
      EXPECT_FALSE(got.empty());
      EXPECT_EQ(d["fronts"][cost]["without_cost"], 0);
    }
  }
  // Fewer points when asked, every front trial kept.
  auto [code2, thin] = get("/api/v1/studies/1/pareto?limit=1");
  ASSERT_EQ(code2, 200);
  EXPECT_EQ(thin["limit"], 1);
  EXPECT_LT(thin["datasets"][0]["points"]["returned"], thin["datasets"][0]["points"]["total"]);
  EXPECT_EQ(thin["datasets"][0]["fronts"], p["datasets"][0]["fronts"]);

  // Bounded, and a bad limit is a 400 naming it.
  expect_error("/api/v1/studies/api-study/pareto?limit=0", 400, "limit: expected an integer");
  expect_error("/api/v1/studies/api-study/pareto?limit=50001", 400, "limit: expected an integer");
  expect_error("/api/v1/studies/api-study/pareto?limit=1e3", 400, "limit: expected an integer");
  expect_error("/api/v1/studies/nope/pareto", 404, "no study named 'nope'");
}

TEST_F(ApiTest, TrialsArePagedFilteredAndSorted) {
  auto [code, page] = get("/api/v1/studies/api-study/trials?limit=10&offset=20");
  ASSERT_EQ(code, 200);
  EXPECT_EQ(page["total"], 24);
  EXPECT_EQ(page["offset"], 20);
  ASSERT_EQ(page["trials"].size(), 4u);
  EXPECT_EQ(page["trials"][0]["number"], 20);
  EXPECT_EQ(page["trials"][0]["status"], "completed");
  EXPECT_TRUE(page["trials"][0]["metrics"].contains("val_accuracy"));
  EXPECT_GT(page["trials"][0]["seconds"].get<double>(), 0);

  auto [c2, sorted] = get("/api/v1/studies/api-study/trials?sort=value&order=desc&limit=24");
  ASSERT_EQ(c2, 200);
  for (size_t i = 1; i < sorted["trials"].size(); ++i)
    EXPECT_GE(sorted["trials"][i - 1]["value"].get<double>(),
              sorted["trials"][i]["value"].get<double>());

  auto [c3, by_depth] =
      get("/api/v1/studies/api-study/trials?sort=params.hidden_layers&order=desc&limit=5");
  ASSERT_EQ(c3, 200);
  for (const json& t : by_depth["trials"]) EXPECT_EQ(t["params"]["hidden_layers"], 3);

  auto [c4, wine] = get("/api/v1/studies/api-study/trials?dataset=wine&status=completed,pruned");
  ASSERT_EQ(c4, 200);
  EXPECT_EQ(wine["total"], 12);
  for (const json& t : wine["trials"]) EXPECT_EQ(t["dataset"], "wine");
  auto [c5, none] = get("/api/v1/studies/api-study/trials?status=queued");
  EXPECT_EQ(none["total"], 0);
  EXPECT_TRUE(none["trials"].empty());

  expect_error("/api/v1/studies/api-study/trials?limit=0", 400, "limit");
  expect_error("/api/v1/studies/api-study/trials?limit=1001", 400, "limit");
  expect_error("/api/v1/studies/api-study/trials?offset=-1", 400, "offset");
  expect_error("/api/v1/studies/api-study/trials?limit=ten", 400, "limit");
  expect_error("/api/v1/studies/api-study/trials?sort=colour", 400, "sort: unknown key 'colour'");
  expect_error("/api/v1/studies/api-study/trials?sort=params.a;drop", 400, "cannot sort by");
  expect_error("/api/v1/studies/api-study/trials?order=up", 400, "order");
  expect_error("/api/v1/studies/api-study/trials?status=done", 400, "unknown trial status 'done'");
  expect_error("/api/v1/studies/404/trials", 404, "no study");
}

TEST_F(ApiTest, OneTrialWithAttemptsAndCurve) {
  auto [c0, page] = get("/api/v1/studies/api-study/trials?limit=1");
  const int64_t id = page["trials"][0]["id"].get<int64_t>();
  auto [code, t] = get("/api/v1/trials/" + std::to_string(id));
  ASSERT_EQ(code, 200);
  EXPECT_EQ(t["id"], id);
  EXPECT_EQ(t["result"]["status"], "completed");
  ASSERT_EQ(t["attempts"].size(), 1u);
  EXPECT_EQ(t["attempts"][0]["outcome"], "completed");
  ASSERT_EQ(t["curve"].size(), 3u);  // 3 epochs
  EXPECT_EQ(t["curve"][2]["epoch"], 3);
  EXPECT_DOUBLE_EQ(t["curve"][2]["val_metric"].get<double>(), t["value"].get<double>());
  expect_error("/api/v1/trials/999999", 404, "no trial with id 999999");
  expect_error("/api/v1/trials/abc", 404, "no trial with id 'abc'");
  expect_error("/api/v1/trials/-3", 404, "no trial");
}

TEST_F(ApiTest, SummaryAggregatesPerDatasetAndGroup) {
  auto [code, s] =
      get("/api/v1/studies/api-study/summary?x=hidden_layers&y=value&group=activation");
  ASSERT_EQ(code, 200) << s.dump();
  EXPECT_EQ(s["trials"], 24);
  ASSERT_EQ(s["series"].size(), 4u);  // 2 datasets x 2 activations
  // Recompute one point from the trials themselves.
  auto [c2, all] = get("/api/v1/studies/api-study/trials?limit=1000");
  std::vector<double> ys;
  for (const json& t : all["trials"])
    if (t["dataset"] == "iris" && t["params"]["activation"] == "relu" &&
        t["params"]["hidden_layers"] == 2)
      ys.push_back(t["value"].get<double>());
  ASSERT_EQ(ys.size(), 2u);  // 2 seeds
  const double mean = (ys[0] + ys[1]) / 2;
  const double sd = std::abs(ys[0] - ys[1]) / std::sqrt(2.0);
  bool found = false;
  for (const json& series : s["series"]) {
    EXPECT_EQ(series["points"].size(), 3u);
    if (series["dataset"] != "iris" || series["group"] != "relu") continue;
    const json& p = series["points"][1];
    EXPECT_EQ(p["x"], 2);
    EXPECT_EQ(p["n"], 2);
    EXPECT_NEAR(p["mean"].get<double>(), mean, 1e-12);
    EXPECT_NEAR(p["std"].get<double>(), sd, 1e-12);
    found = true;
  }
  EXPECT_TRUE(found);

  auto [c3, time] = get("/api/v1/studies/api-study/summary?x=hidden_layers&y=seconds");
  ASSERT_EQ(c3, 200);
  ASSERT_EQ(time["series"].size(), 2u);  // one group per dataset
  EXPECT_TRUE(time["series"][0]["fit"]["slope"].is_number());
  EXPECT_EQ(time["series"][0]["fit"]["n"], 12);

  auto [c4, metric] = get("/api/v1/studies/api-study/summary?x=activation&y=val_loss");
  ASSERT_EQ(c4, 200);
  EXPECT_TRUE(metric["series"][0]["fit"].is_null());  // string x: no line
  EXPECT_EQ(metric["series"][0]["points"][0]["x"], "relu");

  expect_error("/api/v1/studies/api-study/summary", 400, "x: required");
  expect_error("/api/v1/studies/api-study/summary?x=depth", 400,
               "x: unknown parameter 'depth'; the study's parameters are hidden_layers");
  expect_error("/api/v1/studies/api-study/summary?x=hidden_layers&y=speed", 400, "y: unknown");
  expect_error("/api/v1/studies/api-study/summary?x=hidden_layers&group=colour", 400, "group");
}

TEST_F(ApiTest, ColumnsForHistoryAndParallelCoordinates) {
  auto [code, c] =
      get("/api/v1/studies/api-study/columns?fields=number,value,params.hidden_layers,"
          "params.activation,metrics.val_loss,dataset");
  ASSERT_EQ(code, 200) << c.dump();
  EXPECT_EQ(c["total"], 24);
  EXPECT_EQ(c["returned"], 24);
  EXPECT_EQ(c["columns"]["number"].size(), 24u);
  EXPECT_EQ(c["columns"]["number"][5], 5);
  EXPECT_EQ(c["columns"]["params.activation"][0], "relu");
  EXPECT_EQ(c["columns"]["trial_id"].size(), 24u);
  auto [c2, thin] = get("/api/v1/studies/api-study/columns?fields=number&limit=6");
  EXPECT_EQ(thin["total"], 24);
  EXPECT_EQ(thin["returned"], 6);
  EXPECT_EQ(thin["columns"]["number"], json({0, 4, 8, 12, 16, 20}));
  expect_error("/api/v1/studies/api-study/columns?fields=colour", 400, "unknown field 'colour'");
  expect_error("/api/v1/studies/api-study/columns?fields=params.colour", 400, "colour");
  expect_error("/api/v1/studies/api-study/columns?limit=0", 400, "limit");
}

TEST_F(ApiTest, WorkersQueueMetricsAndHealth) {
  auto [c1, w] = get("/api/v1/workers");
  ASSERT_EQ(c1, 200);
  // The run's workers, stopped: two, or one when the first trained all 24 trials (a few ms
  // each) before the second had started, and `run` stopped that one as the study ended.
  const size_t workers = w["workers"].size();
  ASSERT_GE(workers, 1u) << w.dump();
  ASSERT_LE(workers, 2u) << w.dump();
  for (const json& x : w["workers"]) {
    EXPECT_EQ(x["status"], "stopped");
    EXPECT_FALSE(x["alive"].get<bool>());
    EXPECT_EQ(x["device"], "cpu");
  }
  // The run's workers trained the 24 trials: every one is counted once, for one of them,
  // and in the throughput of the last hour (the run just ended).
  int done = 0;
  for (const json& x : w["workers"]) {
    done += x["done"].get<int>();
    EXPECT_EQ(x["lost"], 0);
    EXPECT_TRUE(x["utilisation"].is_number()) << x;
  }
  EXPECT_EQ(done, 24);
  auto [ct, tp] = get("/api/v1/throughput");
  ASSERT_EQ(ct, 200);
  int finished = 0;
  for (const json& n : tp["total"]) finished += n.get<int>();
  EXPECT_EQ(finished, 24);
  EXPECT_LE(tp["workers"].size(), 2u);
  expect_error("/api/v1/throughput?bucket=1", 400, "bucket: expected an integer from 10 to 3600");
  auto [c2, q] = get("/api/v1/queue");
  ASSERT_EQ(c2, 200);
  EXPECT_EQ(q["depth"], 0);
  EXPECT_EQ(q["in_flight"], 0);
  EXPECT_EQ(q["dead_lettered"], 0);
  auto [c3, h] = get("/healthz");
  EXPECT_EQ(c3, 200);
  EXPECT_EQ(h["status"], "ok");
  auto m = server_->client()->Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->status, 200);
  EXPECT_NE(m->body.find("layerlab_trials{study=\"api-study\",status=\"completed\"} 24"),
            std::string::npos)
      << m->body;
  EXPECT_NE(m->body.find("layerlab_workers{status=\"stopped\"} " + std::to_string(workers)),
            std::string::npos)
      << m->body;
  EXPECT_NE(m->body.find("layerlab_trial_duration_seconds_count{study=\"api-study\"} 24"),
            std::string::npos)
      << m->body;
  EXPECT_NE(m->body.find("layerlab_worker_trials_total{worker=\""), std::string::npos);
  EXPECT_NE(m->body.find("layerlab_http_requests_total{code=\"200\"}"), std::string::npos);
}

TEST_F(ApiTest, UnknownRoutesWrongMethodsAndPathTraversal) {
  expect_error("/api/v1/nothing", 404, "no route GET /api/v1/nothing");
  auto r = server_->client()->Delete("/api/v1/studies");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "GET, POST");
  // Only embedded files are served, under their own names: nothing from the file system.
  for (const char* path :
       {"/js/../../CMakeLists.txt", "/js/%2e%2e/%2e%2e/CMakeLists.txt", "/css/..%2f..%2fREADME.md",
        "/vendor/../CMakeLists.txt", "/js/../index.html", "/web/index.html", "/etc/passwd",
        "/js//app.js", "/js/.hidden"}) {
    auto res = server_->client()->Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path;
    EXPECT_EQ(res->body.find("cmake_minimum_required"), std::string::npos) << path;
  }
}

// The gzip member in `z`, inflated; "" when it is not one.
std::string gunzip(const std::string& z) {
  z_stream s{};
  if (inflateInit2(&s, 15 + 16) != Z_OK) return "";
  std::string out;
  char buf[1 << 16];
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(z.data()));
  s.avail_in = static_cast<uInt>(z.size());
  int rc = Z_OK;
  while (rc == Z_OK) {
    s.next_out = reinterpret_cast<Bytef*>(buf);
    s.avail_out = sizeof buf;
    rc = inflate(&s, Z_NO_FLUSH);
    out.append(buf, sizeof buf - s.avail_out);
  }
  inflateEnd(&s);
  return rc == Z_STREAM_END ? out : "";
}

// GET path with these request headers, the body as sent (not decompressed).
httplib::Result raw_get(ServerProcess& server, const std::string& path,
                        const httplib::Headers& headers = {}) {
  auto c = server.client();
  c->set_decompress(false);
  return c->Get(path, headers);
}

// The content-hashed Plotly URL that index.html names.
std::string plotly_url(ServerProcess& server) {
  auto index = raw_get(server, "/");
  if (!index) return "";
  static const std::regex url(R"(/vendor/plotly-gl2d\.[0-9a-f]{16}\.min\.js)");
  std::smatch m;
  return std::regex_search(index->body, m, url) ? m.str() : "";
}

TEST_F(ApiTest, DashboardFilesComeFromTheBinary) {
  auto index = raw_get(*server_, "/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_NE(index->get_header_value("Content-Type").find("text/html"), std::string::npos);
  auto app = raw_get(*server_, "/js/app.js");
  ASSERT_TRUE(app);
  EXPECT_EQ(app->status, 200);
  EXPECT_NE(app->get_header_value("Content-Type").find("javascript"), std::string::npos);
  const std::string url = plotly_url(*server_);
  ASSERT_FALSE(url.empty()) << index->body;
  auto plotly = raw_get(*server_, url, {{"Accept-Encoding", "identity"}});
  ASSERT_TRUE(plotly);
  EXPECT_EQ(plotly->status, 200);
  EXPECT_GT(plotly->body.size(), 1'000'000u);
  EXPECT_NE(plotly->body.find("plotly.js (gl2d - minified) v"), std::string::npos);
}

// Plotly under a content-hashed name that may be cached for a year; the page and the
// modules revalidated; gzip when (and only when) the client accepts it, the same bytes
// once inflated; unknown names and hashes are 404s.
TEST_F(ApiTest, DashboardAssetsAreCachedByHashAndCompressed) {
  const std::string url = plotly_url(*server_);
  ASSERT_FALSE(url.empty());
  auto plain = raw_get(*server_, url, {{"Accept-Encoding", "identity"}});
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 200);
  EXPECT_EQ(plain->get_header_value("Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_FALSE(plain->has_header("Content-Encoding"));
  EXPECT_EQ(plain->get_header_value("Vary"), "Accept-Encoding");

  for (const char* accept : {"gzip", "br, gzip, deflate", "gzip;q=0.5, identity", "*"}) {
    auto zipped = raw_get(*server_, url, {{"Accept-Encoding", accept}});
    ASSERT_TRUE(zipped) << accept;
    EXPECT_EQ(zipped->status, 200);
    EXPECT_EQ(zipped->get_header_value("Content-Encoding"), "gzip") << accept;
    EXPECT_EQ(zipped->get_header_value("Cache-Control"), "public, max-age=31536000, immutable");
    EXPECT_LT(zipped->body.size(), plain->body.size() / 2) << accept;
    EXPECT_TRUE(gunzip(zipped->body) == plain->body) << accept;
  }
  for (const char* refused : {"gzip;q=0", "gzip; q=0.000, br", "deflate", "gzipx"}) {
    auto r = raw_get(*server_, url, {{"Accept-Encoding", refused}});
    ASSERT_TRUE(r) << refused;
    EXPECT_FALSE(r->has_header("Content-Encoding")) << refused;
    EXPECT_TRUE(r->body == plain->body) << refused;
  }

  // The page and the modules: revalidated on every load, compressed too.
  for (const char* path : {"/", "/js/app.js", "/js/pages/study.js", "/css/style.css"}) {
    auto z = raw_get(*server_, path, {{"Accept-Encoding", "gzip"}});
    auto p = raw_get(*server_, path, {{"Accept-Encoding", "identity"}});
    ASSERT_TRUE(z && p) << path;
    EXPECT_EQ(z->status, 200) << path;
    EXPECT_EQ(z->get_header_value("Cache-Control"), "no-cache") << path;
    EXPECT_EQ(p->get_header_value("Cache-Control"), "no-cache") << path;
    EXPECT_EQ(z->get_header_value("Content-Encoding"), "gzip") << path;
    EXPECT_TRUE(gunzip(z->body) == p->body) << path;
  }
  EXPECT_EQ(raw_get(*server_, "/")->body.find("/vendor/plotly-gl2d.min.js"), std::string::npos)
      << "index.html names Plotly without its hash";

  // The plain name still answers, revalidated; a wrong hash or another file does not.
  auto unhashed = raw_get(*server_, "/vendor/plotly-gl2d.min.js");
  ASSERT_TRUE(unhashed);
  EXPECT_EQ(unhashed->status, 200);
  EXPECT_EQ(unhashed->get_header_value("Cache-Control"), "no-cache");
  EXPECT_TRUE(unhashed->body == plain->body);
  std::string wrong = url;
  wrong[wrong.size() - std::string(".min.js").size() - 1] ^= 1;  // last hex digit, changed
  for (const std::string& path :
       {wrong, std::string("/vendor/plotly-gl2d.0123456789abcdef.min.js"),
        std::string("/vendor/plotly.min.js"), std::string("/vendor/app.js"),
        std::string("/vendor/..%2fjs%2fapp.js"), std::string("/vendor/")}) {
    auto r = raw_get(*server_, path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 404) << path;
    EXPECT_EQ(r->body.find("plotly.js"), std::string::npos) << path;
  }
}

}  // namespace
}  // namespace layerlab::testing
