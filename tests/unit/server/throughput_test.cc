// Throughput monitoring through the API, on a store and a server driven by one manual
// clock: the workers' done/failed/lost counts and utilisation at /api/v1/workers, finished
// trials per worker and minute and the sampled queue depth at /api/v1/throughput (with its
// parameter checks), and the same as counters, gauges and a histogram at /metrics, parsed as
// Prometheus exposition text (hostile names included).
#include "server/throughput.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "server/server.h"
#include "store/store.h"
#include "support/temp_and_errors.h"

namespace layerlab::server {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// A whole minute since the epoch, so the API's minute buckets start at t0.
const store::Time kT0{milliseconds{1'700'000'040'000}};
constexpr milliseconds kLease{30'000};

class ThroughputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string url = "sqlite:" + dir_.path("store.db");
    store::StoreOptions so;
    so.clock = &clock_;
    store_ = store::open_store(url, so);
    ServerOptions o;
    o.store_url = url;
    o.clock = &clock_;
    api_ = std::make_unique<Api>(o);
  }

  void at(int s) { clock_.advance(kT0 + seconds(s) - clock_.now()); }
  store::ClaimOptions lease() const { return {0, kLease, 3}; }

  Response call(const std::string& target) {
    Request req;
    req.method = "GET";
    set_target(req, target);
    Response res;
    api_->handle(req, res);
    return res;
  }
  json get(const std::string& target) {
    const Response r = call(target);
    EXPECT_EQ(r.status, 200) << target << ": " << r.bytes();
    return json::parse(r.bytes());
  }
  void expect_400(const std::string& target, const std::string& part) {
    const Response r = call(target);
    EXPECT_EQ(r.status, 400) << target;
    const std::string message = json::parse(r.bytes())["error"]["message"];
    EXPECT_NE(message.find(part), std::string::npos) << target << ": " << message;
  }

  // Two workers over 200 s (times in seconds from t0, a whole minute):
  //   a: trial 0 from 5 to 65 (completed), trial 2 from 65 to 130 (completed); heartbeat 200
  //   b: trial 1 from 5 to 70 (failed), trial 3 from 130, its last heartbeat; the lease
  //      runs out and the trial is requeued at 200 (lost)
  // The queue is sampled at 0, 65, 130 and 200.
  void two_workers() {
    at(0);
    store_->register_worker({"a", "h", 1, "cpu", 1});
    store_->register_worker({"b", "h", 2, "cpu", 1});
    const int64_t study = store_->create_study("s", {{"metric", "val_accuracy"}});
    store_->add_trials(
        study,
        {{0, "iris", {}}, {1, "iris", {}}, {2, "iris", {}}, {3, "iris", {}}, {4, "iris", {}}});
    api_->context().sample_queue();  // 5 queued
    at(5);
    auto t0 = store_->claim_next("a", {0, seconds(600), 3});
    auto t1 = store_->claim_next("b", {0, seconds(600), 3});
    at(65);
    ASSERT_TRUE(store_->finish_trial(t0->trial_id, 1, store::TrialStatus::kCompleted, {}, 1.0, ""));
    auto t2 = store_->claim_next("a", {0, seconds(600), 3});
    api_->context().sample_queue();  // 2 queued, 2 running
    at(70);
    ASSERT_TRUE(store_->finish_trial(t1->trial_id, 1, store::TrialStatus::kFailed, {}, {}, "x"));
    at(130);
    ASSERT_TRUE(store_->finish_trial(t2->trial_id, 1, store::TrialStatus::kCompleted, {}, 1.0, ""));
    auto t3 = store_->claim_next("b", lease());
    store_->heartbeat_worker("b", t3->trial_id, 0);
    api_->context().sample_queue();  // 1 queued, 1 running
    at(200);
    ASSERT_EQ(store_->expire_leases(lease()), 1);
    store_->heartbeat_worker("a", std::nullopt, 0);
    api_->context().sample_queue();  // 2 queued
  }

  testing::TempDir dir_;
  store::ManualClock clock_{kT0};
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Api> api_;
};

TEST_F(ThroughputTest, WorkersShowDoneFailedLostAndUtilisation) {
  two_workers();
  const json list = get("/api/v1/workers")["workers"];
  ASSERT_EQ(list.size(), 2u);
  const json& a = list[0];
  EXPECT_EQ(a["id"], "a");
  EXPECT_EQ(a["done"], 2);
  EXPECT_EQ(a["failed"], 0);
  EXPECT_EQ(a["lost"], 0);
  EXPECT_DOUBLE_EQ(a["alive_seconds"].get<double>(), 200);
  EXPECT_DOUBLE_EQ(a["busy_seconds"].get<double>(), 125);  // 5..130
  EXPECT_DOUBLE_EQ(a["utilisation"].get<double>(), 0.625);
  const json& b = list[1];
  EXPECT_EQ(b["done"], 0);
  EXPECT_EQ(b["failed"], 1);
  EXPECT_EQ(b["lost"], 1);
  EXPECT_DOUBLE_EQ(b["alive_seconds"].get<double>(), 130);  // silent after its heartbeat at 130
  EXPECT_DOUBLE_EQ(b["busy_seconds"].get<double>(), 65);    // 5..70; trial 3 only from 130
  EXPECT_DOUBLE_EQ(b["utilisation"].get<double>(), 0.5);

  // The last minute: a was alive and idle, b silent (no life in it: no utilisation).
  const json last = get("/api/v1/workers?minutes=1");
  EXPECT_EQ(last["window_seconds"], 60);
  EXPECT_DOUBLE_EQ(last["workers"][0]["utilisation"].get<double>(), 0);
  EXPECT_TRUE(last["workers"][1]["utilisation"].is_null());
  EXPECT_EQ(last["workers"][1]["lost"], 1);  // counts are history, not the window

  expect_400("/api/v1/workers?minutes=0", "minutes: expected an integer from 1 to 1440");
  expect_400("/api/v1/workers?minutes=1441", "minutes");
  expect_400("/api/v1/workers?minutes=1e3", "minutes");
}

// Every worker that ever registered stays in the store, so /workers answers a page: the
// alive ones first, then by last heartbeat (newest first), with the totals of all.
TEST_F(ThroughputTest, WorkersComeInPagesAliveFirstThenMostRecentlySeen) {
  at(0);
  for (const char* id : {"old", "older", "alive-b", "alive-a", "stopped"})
    store_->register_worker({id, "h", 1, "cpu", 1});
  at(10);
  store_->heartbeat_worker("old", std::nullopt, 0);
  at(20);
  store_->heartbeat_worker("stopped", std::nullopt, 0);
  store_->stop_worker("stopped");
  at(100);
  store_->heartbeat_worker("alive-a", std::nullopt, 0);
  store_->heartbeat_worker("alive-b", std::nullopt, 0);
  auto ids = [](const json& page) {
    std::vector<std::string> out;
    for (const json& w : page["workers"]) out.push_back(w["id"]);
    return out;
  };
  const json all = get("/api/v1/workers");
  EXPECT_EQ(all["total"], 5);
  EXPECT_EQ(all["alive"], 2);
  EXPECT_EQ(all["offset"], 0);
  // Alive a and b (same heartbeat: by id), then stopped (20 s), old (10 s), older (0 s).
  EXPECT_EQ(ids(all), (std::vector<std::string>{"alive-a", "alive-b", "stopped", "old", "older"}));
  const json page = get("/api/v1/workers?limit=2&offset=1");
  EXPECT_EQ(ids(page), (std::vector<std::string>{"alive-b", "stopped"}));
  EXPECT_EQ(page["total"], 5);
  EXPECT_EQ(page["alive"], 2);
  const json past = get("/api/v1/workers?offset=9");
  EXPECT_TRUE(past["workers"].empty());
  EXPECT_EQ(past["offset"], 5);
  expect_400("/api/v1/workers?limit=0", "limit");
  expect_400("/api/v1/workers?limit=1001", "limit");
  expect_400("/api/v1/workers?offset=-1", "offset");
  expect_400("/api/v1/workers?offset=99999999999", "offset");
}

TEST_F(ThroughputTest, FinishedTrialsPerWorkerAndMinuteWithTheQueueDepth) {
  two_workers();
  // Now is 200 s: five minute buckets ending with the one that holds now, [180, 240).
  const json t = get("/api/v1/throughput?minutes=5");
  EXPECT_EQ(t["bucket_seconds"], 60);
  ASSERT_EQ(t["buckets"].size(), 5u);
  EXPECT_EQ(t["from"], t["buckets"][0]);
  EXPECT_EQ(t["buckets"][1], "2023-11-14T22:14:00.000Z");  // t0
  EXPECT_EQ(t["to"], "2023-11-14T22:18:00.000Z");
  ASSERT_EQ(t["workers"].size(), 2u);
  const json& a = t["workers"][0];  // the busiest first
  EXPECT_EQ(a["worker"], "a");
  EXPECT_EQ(a["done"], json({0, 0, 1, 1, 0}));
  EXPECT_EQ(a["failed"], json({0, 0, 0, 0, 0}));
  EXPECT_EQ(a["finished"], 2);
  const json& b = t["workers"][1];
  EXPECT_EQ(b["worker"], "b");
  EXPECT_EQ(b["failed"], json({0, 0, 1, 0, 0}));
  EXPECT_EQ(b["lost"], json({0, 0, 0, 0, 1}));
  EXPECT_EQ(b["finished"], 1);
  EXPECT_TRUE(t["other_workers"].is_null());
  EXPECT_EQ(t["total"], json({0, 0, 2, 1, 0}));
  EXPECT_EQ(t["queue"]["sample_seconds"], 10);
  EXPECT_EQ(t["queue"]["depth"], json({nullptr, 5, 2, 1, 2}));
  EXPECT_EQ(t["queue"]["in_flight"], json({nullptr, 0, 2, 1, 0}));

  // One series at most: b is summed into other_workers.
  const json one = get("/api/v1/throughput?minutes=5&workers=1");
  ASSERT_EQ(one["workers"].size(), 1u);
  EXPECT_EQ(one["workers"][0]["worker"], "a");
  EXPECT_EQ(one["other_workers"]["count"], 1);
  EXPECT_EQ(one["other_workers"]["failed"], json({0, 0, 1, 0, 0}));
  EXPECT_EQ(one["other_workers"]["lost"], json({0, 0, 0, 0, 1}));
  EXPECT_EQ(one["total"], t["total"]);

  // Two-minute buckets over 5 minutes: 3 buckets, aligned to even minutes.
  const json wide = get("/api/v1/throughput?minutes=5&bucket=120");
  EXPECT_EQ(wide["buckets"].size(), 3u);
  EXPECT_EQ(wide["total"], json({0, 2, 1}));

  // The default: the last hour by minute.
  EXPECT_EQ(get("/api/v1/throughput")["buckets"].size(), 60u);

  expect_400("/api/v1/throughput?minutes=0", "minutes: expected an integer from 1 to 1440");
  expect_400("/api/v1/throughput?minutes=abc", "minutes");
  expect_400("/api/v1/throughput?bucket=9", "bucket: expected an integer from 10 to 3600");
  expect_400("/api/v1/throughput?bucket=3601", "bucket");
  expect_400("/api/v1/throughput?workers=0", "workers: expected an integer from 1 to 50");
  expect_400("/api/v1/throughput?workers=51", "workers");
  expect_400("/api/v1/throughput?minutes=1440&bucket=10",
             "bucket: 1440 minutes in buckets of 10 s make 8640 buckets, over the limit of 360");
  EXPECT_EQ(call("/api/v1/throughput?minutes=1440&bucket=240").status, 200);
}

TEST_F(ThroughputTest, MonitoringBodiesAreReusedForTwoSeconds) {
  two_workers();
  EXPECT_EQ(get("/api/v1/workers")["workers"][0]["done"], 2);
  EXPECT_EQ(get("/api/v1/throughput?minutes=5")["total"], json({0, 0, 2, 1, 0}));
  auto c = store_->claim_next("a", lease());
  ASSERT_TRUE(
      store_->finish_trial(c->trial_id, c->attempt, store::TrialStatus::kCompleted, {}, 1.0, ""));
  clock_.advance(milliseconds(1999));
  EXPECT_EQ(get("/api/v1/workers")["workers"][0]["done"], 2);             // the same body
  EXPECT_EQ(get("/api/v1/workers?minutes=59")["workers"][0]["done"], 3);  // another request
  clock_.advance(milliseconds(1));
  EXPECT_EQ(get("/api/v1/workers")["workers"][0]["done"], 3);
  EXPECT_EQ(get("/api/v1/throughput?minutes=5")["total"], json({0, 0, 2, 1, 1}));
}

TEST(TtlCache, KeepsBodiesForTheirTtlAndAtMostCapacityKeys) {
  TtlCache cache(seconds(2), 2);
  int made = 0;
  auto make = [&] { return std::to_string(++made); };
  EXPECT_EQ(*cache.get("a", kT0, make), "1");
  EXPECT_EQ(*cache.get("a", kT0 + seconds(1), make), "1");
  EXPECT_EQ(*cache.get("b", kT0 + seconds(1), make), "2");
  EXPECT_EQ(*cache.get("c", kT0 + seconds(1), make), "3");  // full: "a", the oldest, goes
  EXPECT_EQ(*cache.get("b", kT0 + seconds(1), make), "2");
  EXPECT_EQ(*cache.get("a", kT0 + seconds(1), make), "4");
  EXPECT_EQ(*cache.get("c", kT0 + seconds(3), make), "5");  // expired
}

TEST(QueueHistory, KeepsTheNewestSamplesInOrder) {
  QueueHistory h(3);
  for (int i = 0; i < 5; ++i) h.add({kT0 + seconds(i), i, 0});
  EXPECT_EQ(h.size(), 3u);
  const auto all = h.since(kT0);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].depth, 2);
  EXPECT_EQ(all[2].depth, 4);
  EXPECT_EQ(h.since(kT0 + seconds(4)).size(), 1u);
  EXPECT_TRUE(h.since(kT0 + seconds(5)).empty());
}

// One sample of Prometheus text: name, labels (unescaped), value.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Parses the exposition format (version 0.0.4) strictly enough to catch a broken escape: a
// label value may hold any character but an unescaped quote, backslash or line feed.
std::vector<Sample> parse_exposition(const std::string& text,
                                     std::map<std::string, std::string>& types) {
  std::vector<Sample> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      const size_t space = line.find(' ', 7);
      types[line.substr(7, space - 7)] = line.substr(space + 1);
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    Sample s;
    size_t i = 0;
    while (i < line.size() &&
           (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_' || line[i] == ':'))
      ++i;
    s.name = line.substr(0, i);
    EXPECT_FALSE(s.name.empty()) << line;
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (line[i] != '}') {
        const size_t eq = line.find('=', i);
        const std::string key = line.substr(i, eq - i);
        EXPECT_TRUE(std::regex_match(key, std::regex("[a-zA-Z_][a-zA-Z0-9_]*"))) << line;
        i = eq + 1;
        EXPECT_EQ(line[i], '"') << line;
        ++i;
        std::string value;
        for (; line[i] != '"'; ++i) {
          if (line[i] == '\\') {
            ++i;
            EXPECT_TRUE(line[i] == '\\' || line[i] == '"' || line[i] == 'n') << line;
            value += line[i] == 'n' ? '\n' : line[i];
          } else {
            value += line[i];
          }
          if (i + 1 >= line.size()) {
            ADD_FAILURE() << "unterminated label value: " << line;
            return out;
          }
        }
        s.labels[key] = value;
        ++i;
        if (line[i] == ',') ++i;
      }
      ++i;
    }
    EXPECT_EQ(line[i], ' ') << line;
    s.value = std::stod(line.substr(i + 1));
    out.push_back(std::move(s));
  }
  return out;
}

double value_of(const std::vector<Sample>& samples, const std::string& name,
                const std::map<std::string, std::string>& labels) {
  for (const Sample& s : samples)
    if (s.name == name && s.labels == labels) return s.value;
  ADD_FAILURE() << "no sample " << name << " with those labels";
  return -1;
}

TEST_F(ThroughputTest, MetricsHaveCountersPerWorkerAndDurationsPerStudy) {
  two_workers();
  // A study whose name no study file would allow, with a trial of 2.5 s.
  const std::string hostile = "q\"uote\\back\nline\xff";
  const int64_t bad = store_->create_study(hostile, nullptr);
  store_->add_trials(bad, {{0, "iris", {}}});
  auto c = store_->claim_next("a", {bad, kLease, 3});
  ASSERT_TRUE(c);
  clock_.advance(milliseconds(2500));
  ASSERT_TRUE(store_->finish_trial(c->trial_id, 1, store::TrialStatus::kCompleted, {}, 1.0, ""));

  const Response r = call("/metrics");
  ASSERT_EQ(r.status, 200);
  const std::string text(r.bytes());
  std::map<std::string, std::string> types;
  const std::vector<Sample> samples = parse_exposition(text, types);
  EXPECT_EQ(types["layerlab_worker_trials_total"], "counter");
  EXPECT_EQ(types["layerlab_trial_duration_seconds"], "histogram");
  EXPECT_EQ(types["layerlab_worker_utilisation"], "gauge");
  EXPECT_EQ(types["layerlab_queue_depth"], "gauge");

  const std::string m = "layerlab_worker_trials_total";
  EXPECT_EQ(value_of(samples, m, {{"worker", "a"}, {"outcome", "done"}}), 3);
  EXPECT_EQ(value_of(samples, m, {{"worker", "a"}, {"outcome", "failed"}}), 0);
  EXPECT_EQ(value_of(samples, m, {{"worker", "b"}, {"outcome", "failed"}}), 1);
  EXPECT_EQ(value_of(samples, m, {{"worker", "b"}, {"outcome", "lost"}}), 1);
  EXPECT_EQ(value_of(samples, "layerlab_queue_depth", {}), 2);

  // Trial durations of study s: 60 s and 65 s; the hostile study's 2.5 s, its name intact
  // but for the byte that is not UTF-8.
  const std::string h = "layerlab_trial_duration_seconds";
  EXPECT_EQ(value_of(samples, h + "_bucket", {{"study", "s"}, {"le", "30"}}), 0);
  EXPECT_EQ(value_of(samples, h + "_bucket", {{"study", "s"}, {"le", "60"}}), 1);
  EXPECT_EQ(value_of(samples, h + "_bucket", {{"study", "s"}, {"le", "120"}}), 2);
  EXPECT_EQ(value_of(samples, h + "_bucket", {{"study", "s"}, {"le", "+Inf"}}), 2);
  EXPECT_EQ(value_of(samples, h + "_count", {{"study", "s"}}), 2);
  EXPECT_EQ(value_of(samples, h + "_sum", {{"study", "s"}}), 125);
  const std::string shown = "q\"uote\\back\nline\xEF\xBF\xBD";
  EXPECT_EQ(value_of(samples, h + "_bucket", {{"study", shown}, {"le", "2.5"}}), 1);
  EXPECT_EQ(value_of(samples, h + "_bucket", {{"study", shown}, {"le", "1"}}), 0);
  EXPECT_EQ(value_of(samples, h + "_sum", {{"study", shown}}), 2.5);
  // Buckets are cumulative and end with +Inf equal to _count, for every study.
  std::map<std::string, double> last;
  for (const Sample& s : samples) {
    if (s.name != h + "_bucket") continue;
    const std::string study = s.labels.at("study");
    EXPECT_GE(s.value, last[study]) << study;
    last[study] = s.value;
    if (s.labels.at("le") == "+Inf") {
      EXPECT_EQ(s.value, value_of(samples, h + "_count", {{"study", study}}));
    }
  }
  EXPECT_EQ(last.size(), 2u);

  // The series that read the attempts are kept 2 s, as /workers' bodies are (a scrape in a
  // loop costs one read per 2 s); the other series are read at each scrape.
  auto more = store_->claim_next("a", lease());
  ASSERT_TRUE(more);
  ASSERT_TRUE(store_->finish_trial(more->trial_id, more->attempt, store::TrialStatus::kCompleted,
                                   {}, 1.0, ""));
  const auto done_of_a = [&] {
    std::map<std::string, std::string> t;
    const auto now = parse_exposition(std::string(call("/metrics").bytes()), t);
    EXPECT_EQ(value_of(now, "layerlab_queue_depth", {}), 1);
    return value_of(now, m, {{"worker", "a"}, {"outcome", "done"}});
  };
  EXPECT_EQ(done_of_a(), 3);
  clock_.advance(milliseconds(2000));
  EXPECT_EQ(done_of_a(), 4);
}

TEST_F(ThroughputTest, MetricsKeepTheWorkerSeriesBounded) {
  at(0);
  for (int i = 0; i < 103; ++i) {
    std::string id = "w";  // (not "w" + ...: gcc 12's -Wrestrict misfires on it)
    id += std::to_string(1000 + i);
    store_->register_worker({id, "h", i, "cpu", 1});
    clock_.advance(milliseconds(10));  // later ids are seen more recently
  }
  const int64_t study = store_->create_study("s", nullptr);
  store_->add_trials(study, {{0, "iris", {}}, {1, "iris", {}}});
  for (const char* w : {"w1000", "w1001"}) {  // the two seen longest ago
    auto c = store_->claim_next(w, lease());
    ASSERT_TRUE(store_->finish_trial(c->trial_id, 1, store::TrialStatus::kCompleted, {}, 1.0, ""));
  }
  std::map<std::string, std::string> types;
  const auto samples = parse_exposition(std::string(call("/metrics").bytes()), types);
  std::set<std::string> workers;
  for (const Sample& s : samples)
    if (s.name == "layerlab_worker_trials_total") workers.insert(s.labels.at("worker"));
  EXPECT_EQ(workers.size(), 101u);  // 100 and the others
  EXPECT_EQ(workers.count("w1000"), 0u);
  EXPECT_EQ(workers.count("w1102"), 1u);
  EXPECT_EQ(value_of(samples, "layerlab_worker_trials_total",
                     {{"worker", "(others)"}, {"outcome", "done"}}),
            2);
}

// Trials per study and status: the 50 newest studies by name, the older ones summed.
TEST_F(ThroughputTest, MetricsKeepTheStudySeriesBounded) {
  at(0);
  for (int i = 0; i < 53; ++i) {
    std::string name = "study";
    name += std::to_string(100 + i);
    const int64_t id = store_->create_study(name, nullptr);
    store_->add_trials(id, {{0, "iris", {}}, {1, "iris", {}}});
  }
  std::map<std::string, std::string> types;
  const auto samples = parse_exposition(std::string(call("/metrics").bytes()), types);
  std::set<std::string> studies;
  for (const Sample& s : samples)
    if (s.name == "layerlab_trials") studies.insert(s.labels.at("study"));
  EXPECT_EQ(studies.size(), 51u);  // 50 and the others
  EXPECT_EQ(studies.count("study102"), 0u);
  EXPECT_EQ(studies.count("study103"), 1u);
  EXPECT_EQ(studies.count("study152"), 1u);
  EXPECT_EQ(value_of(samples, "layerlab_trials", {{"study", "(others)"}, {"status", "queued"}}), 6);
  EXPECT_EQ(value_of(samples, "layerlab_trials", {{"study", "study152"}, {"status", "queued"}}), 2);
}

}  // namespace
}  // namespace layerlab::server
