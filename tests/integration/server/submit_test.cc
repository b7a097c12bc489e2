// The write side over real HTTP: creating studies from YAML and JSON (and refusing bad
// ones without storing anything), the serve coordinator queuing their trials, a worker
// training them while the event stream reports it, cancelling, and bearer tokens.
#include <atomic>
#include <fstream>

#include "server_process.h"
#include "store/store.h"
#include "store/trial_pages.h"

namespace layerlab::testing {
namespace {

using nlohmann::json;

constexpr const char* kYaml = R"(name: submitted
datasets: [iris]
method: grid
parameters:
  hidden_layers: {values: [1, 2, 3, 4]}
  epochs: {value: 2}
)";

// Trials long enough (a second or more) that the worker stores epochs while they run, so
// the stream carries epoch events.
constexpr const char* kStreamed = R"(name: streamed
datasets: [digits, iris]
method: grid
parameters:
  hidden_layers: {values: [1, 3]}
  units: {value: 64}
  epochs: {value: 250}
)";

int study_count(httplib::Client& c) {
  auto r = c.Get("/api/v1/studies");
  return r ? static_cast<int>(json::parse(r->body)["studies"].size()) : -1;
}

void expect_error(const httplib::Result& r, int status, const std::string& part) {
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, status) << r->body;
  const json body = json::parse(r->body, nullptr, false);
  ASSERT_TRUE(body.contains("error")) << r->body;
  EXPECT_NE(body["error"]["message"].get<std::string>().find(part), std::string::npos) << r->body;
}

TEST(ServerSubmit, BadStudyFilesAreRefusedWithTheReasonAndStoreNothing) {
  const auto dir = fresh_dir("server-bad");
  ServerProcess server("sqlite:" + (dir / "s.db").string(), dir);
  auto c = server.client();
  expect_error(c->Post("/api/v1/studies", "name: x\ndatasets: [iris\n", "application/yaml"), 400,
               "<request body>:");
  expect_error(c->Post("/api/v1/studies", "{\"name\": \"x\",", "application/json"), 400,
               "invalid JSON");
  expect_error(c->Post("/api/v1/studies",
                       "name: x\ndatasets: [iris]\nparameters:\n  hiden_layers: {value: 2}\n",
                       "application/yaml"),
               400, "hidden_layers");
  expect_error(
      c->Post("/api/v1/studies", "name: x\ndatasets: [no-such-data]\n", "application/yaml"), 400,
      "no-such-data");
  expect_error(c->Post("/api/v1/studies", "", "application/yaml"), 400, "empty body");
  expect_error(c->Post("/api/v1/studies", ",", "application/yaml"), 400, "");
  // Refused from its Content-Length before the body is read; this client writes the whole
  // body before it reads, so it may see the connection closed instead of the 413 (curl,
  // which sends Expect: 100-continue, and hostile_test.cc's raw client see the 413).
  if (auto big = c->Post("/api/v1/studies", std::string(2 << 20, 'a'), "application/yaml"))
    expect_error(std::move(big), 413, "request body over 1048576 bytes");
  EXPECT_EQ(study_count(*c), 0);
  EXPECT_EQ(server.stop(), 0) << server.log();
}

TEST(ServerSubmit, ACreatedStudyIsQueuedTrainedStreamedAndCancellable) {
  const auto dir = fresh_dir("server-submit");
  const std::string url = "sqlite:" + (dir / "s.db").string();
  ServerProcess server(url, dir / "serve");
  auto c = server.client();

  // Listen to the event stream from the start.
  std::string events;
  std::mutex events_mu;
  std::atomic<bool> done{false};
  std::thread listener([&] {
    auto sse = server.client();
    sse->Get("/api/v1/events", [&](const char* data, size_t n) {
      std::lock_guard lock(events_mu);
      events.append(data, n);
      return !done.load();
    });
  });
  auto seen = [&](const std::string& what) {
    for (int i = 0; i < 300; ++i) {
      {
        std::lock_guard lock(events_mu);
        if (events.find(what) != std::string::npos) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  };

  auto created = c->Post("/api/v1/studies", kStreamed, "application/yaml");
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, 201) << created->body;
  const json body = json::parse(created->body);
  EXPECT_EQ(body["name"], "streamed");
  EXPECT_EQ(body["total"], 4);
  const std::string id = std::to_string(body["id"].get<int>());
  expect_error(c->Post("/api/v1/studies", kStreamed, "application/yaml"), 409, "already");

  // serve's coordinator queues the trials; the stream says so.
  EXPECT_TRUE(seen("event: study\ndata: {\"id\":" + id));
  EXPECT_TRUE(seen("\"status\":\"queued\""));
  // Cached responses are refreshed by the server when the study changes.
  auto study_json = [&] { return json::parse(c->Get("/api/v1/studies/" + id)->body); };
  EXPECT_EQ(study_json()["finished"], 0);
  // A worker process sharing the store trains them: trial, epoch and worker events flow.
  const CommandResult worker =
      run_layerlab("worker --store " + url + " --study " + id + " --exit-when-done --quiet");
  ASSERT_EQ(worker.exit_code, 0) << worker.err;
  EXPECT_TRUE(seen("\"status\":\"completed\""));
  EXPECT_TRUE(seen("event: epoch\ndata: {"));
  EXPECT_TRUE(seen("event: worker\ndata: {"));
  EXPECT_TRUE(seen("\"status\":\"finished\""));  // the coordinator finished the study
  bool refreshed = false;
  for (int i = 0; i < 100 && !refreshed; ++i) {
    const json now = study_json();
    refreshed = now["finished"] == 4 && now["status"] == "finished";
    if (!refreshed) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(refreshed) << study_json().dump();
  auto trials = c->Get("/api/v1/studies/" + id + "/trials?status=completed");
  ASSERT_TRUE(trials);
  EXPECT_EQ(json::parse(trials->body)["total"], 4);
  expect_error(c->Post("/api/v1/studies/" + id + "/cancel", "", "application/json"), 409,
               "already finished");
  EXPECT_EQ(study_json()["status"], "finished") << "a refused cancel changes nothing";
  EXPECT_EQ(study_json()["counts"]["cancelled"], 0);

  // A second study, as JSON, cancelled before any worker takes it.
  json spec = {{"name", "to-cancel"},
               {"datasets", {"wine"}},
               {"parameters", {{"hidden_layers", {{"values", {1, 2, 3}}}}}}};
  auto second = c->Post("/api/v1/studies", spec.dump(), "application/json");
  ASSERT_TRUE(second);
  ASSERT_EQ(second->status, 201) << second->body;
  const std::string id2 = std::to_string(json::parse(second->body)["id"].get<int>());
  for (int i = 0; i < 100; ++i) {  // wait for the coordinator to queue them
    auto q = c->Get("/api/v1/studies/" + id2 + "/trials?status=queued");
    if (q && json::parse(q->body)["total"] == 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto cancelled = c->Post("/api/v1/studies/" + id2 + "/cancel", "", "application/json");
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->status, 200);
  EXPECT_EQ(json::parse(cancelled->body)["cancelled"], 3);
  EXPECT_TRUE(seen("\"status\":\"cancelled\""));

  done = true;
  EXPECT_EQ(server.stop(), 0) << server.log();  // also ends the stream
  listener.join();
}

TEST(ServerSubmit, TokenGuardsMutatingRequestsOnly) {
  const auto dir = fresh_dir("server-token");
  ServerProcess server("sqlite:" + (dir / "s.db").string(), dir, "--token s3cret");
  auto c = server.client();
  expect_error(c->Post("/api/v1/studies", kYaml, "application/yaml"), 401, "Authorization");
  httplib::Headers wrong = {{"Authorization", "Bearer guess"}};
  expect_error(c->Post("/api/v1/studies", wrong, kYaml, "application/yaml"), 401, "wrong token");
  httplib::Headers basic = {{"Authorization", "Basic czNjcmV0"}};
  expect_error(c->Post("/api/v1/studies", basic, kYaml, "application/yaml"), 401, "wrong token");
  EXPECT_EQ(study_count(*c), 0);  // reads need no token
  httplib::Headers right = {{"Authorization", "Bearer s3cret"}};
  auto ok = c->Post("/api/v1/studies", right, kYaml, "application/yaml");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 201) << ok->body;
  EXPECT_EQ(study_count(*c), 1);
}

TEST(ServerSubmit, RunServesItsDashboardWhileTheStudyRuns) {
  const auto dir = fresh_dir("server-run-dashboard");
  std::ofstream(dir / "study.yaml") << kStreamed;
  const pid_t run = spawn_layerlab("run " + (dir / "study.yaml").string() +
                                       " --store sqlite:" + (dir / "s.db").string() +
                                       " -w 1 --dashboard=" + std::to_string(free_port()),
                                   dir);
  const ::layerlab::testing::KillOnExit run_guard(run);
  const int port = announced_port(dir, "#/study/1");
  ASSERT_GT(port, 0) << read_file(dir / "bg.err");
  httplib::Client c("127.0.0.1", port);
  auto r = c.Get("/api/v1/studies/1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["name"], "streamed");
  EXPECT_EQ(json::parse(r->body)["status"], "running");
  int status = 0;
  ::waitpid(run, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_file(dir / "bg.err");
}

TEST(ServerSubmit, RefusesToServeBeyondLoopbackWithoutAToken) {
  const auto dir = fresh_dir("server-bind");
  const std::string store = " --store sqlite:" + (dir / "s.db").string();
  CommandResult r = run_layerlab("serve --bind 0.0.0.0:0" + store);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("refusing to serve on 0.0.0.0 without --token"), std::string::npos) << r.err;
  r = run_layerlab("serve --bind localhost" + store);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--bind: expected HOST:PORT"), std::string::npos) << r.err;
  // A port already taken (by another server) is refused, not shared.
  ServerProcess first("sqlite:" + (dir / "first.db").string(), dir / "first");
  r = run_layerlab("serve --bind 127.0.0.1:" + std::to_string(first.port()) + store);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot listen on 127.0.0.1:" + std::to_string(first.port())),
            std::string::npos)
      << r.err;
  r = run_layerlab("serve --bind 127.0.0.1:70000" + store);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the port must be 0 to 65535"), std::string::npos) << r.err;
}

// `serve --workers 1 --pack 4`: the local worker trains packs of 4, and the workers API
// (the workers page) shows its pack size and, once it has trained, its backend memory.
TEST(ServerSubmit, LocalWorkersTrainPacksAndReportTheirMemory) {
  const auto dir = fresh_dir("server-pack");
  const std::string url = "sqlite:" + (dir / "s.db").string();
  ServerProcess server(url, dir, "--workers 1 --pack 4");
  auto c = server.client();
  auto created = c->Post("/api/v1/studies", R"(name: packed
datasets: [iris]
method: grid
seeds: [0, 1, 2, 3]
parameters:
  learning_rate: {values: [0.01, 0.02]}
  epochs: {value: 20}
)",
                         "application/yaml");
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, 201) << created->body;
  json worker;
  for (int i = 0; i < 300; ++i) {
    auto r = c->Get("/api/v1/workers");
    if (r && r->status == 200) {
      const json list = json::parse(r->body)["workers"];
      if (!list.empty() && list[0]["memory_bytes"].get<int64_t>() > 0) {
        worker = list[0];
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(worker.is_object()) << "no worker reported memory in use";
  EXPECT_EQ(worker["pack"], 4);
  EXPECT_EQ(worker["device"], "cpu");
  EXPECT_EQ(server.stop(), 0) << server.log();
  const CommandResult r = run_layerlab("export packed --format json --store " + url);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int packed = 0;
  const json exported = json::parse(r.out);
  for (const json& t : exported["trials"])
    packed += t["status"] == "completed" && t["result"]["pack_size"] == 4;
  EXPECT_GE(packed, 4) << "no full pack of 4 was trained";
}

// An adaptive study holds 2 trials for each worker alive in the store, remote ones included,
// and 8 more: with 6 workers registered by other machines, 20 trials, not the 10 of a
// server that counted only its own (none here). These workers never claim, so the window
// stays full.
TEST(ServerSubmit, AnAdaptiveStudyHoldsTwoTrialsForEachLiveWorker) {
  const auto dir = fresh_dir("server-window");
  const std::string url = "sqlite:" + (dir / "s.db").string();
  auto store = store::open_store(url);
  for (int i = 0; i < 6; ++i)
    store->register_worker({.id = "remote-" + std::to_string(i), .host = "elsewhere", .pid = i});
  store->register_worker({.id = "gone", .host = "elsewhere", .pid = 99});
  store->stop_worker("gone");
  ServerProcess server(url, dir);
  auto c = server.client();
  auto created = c->Post("/api/v1/studies", R"(name: adaptive
datasets: [iris]
method: tpe
budget: {trials: 100}
parameters:
  learning_rate: {distribution: log_uniform, min: 1.0e-3, max: 1.0e-1}
)",
                         "application/yaml");
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, 201) << created->body;
  const int64_t id = json::parse(created->body)["id"];
  auto queued = [&] { return store->counts(id)[store::TrialStatus::kQueued]; };
  for (int i = 0; i < 200 && queued() < 20; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // rounds go on meanwhile
  EXPECT_EQ(queued(), 20);
  EXPECT_EQ(store->counts(id).total(), 20);
}

// Workers without a study of their own take turns among the studies with queued trials: a
// small study submitted just after a large one is trained while the large one still runs,
// not after its every trial (claims once went strictly by study id).
TEST(ServerSubmit, ASmallStudyIsNotLeftWaitingBehindALargeOne) {
  const auto dir = fresh_dir("server-turns");
  const std::string url = "sqlite:" + (dir / "s.db").string();
  ServerProcess server(url, dir, "--workers 2");
  auto c = server.client();
  const auto study = [](const std::string& name, int trials) {
    return "name: " + name +
           "\ndatasets: [iris]\nmethod: random\nbudget: {trials: " + std::to_string(trials) +
           "}\nparameters:\n  epochs: {value: 2}\n  learning_rate: {distribution: "
           "log_uniform, min: 1.0e-3, max: 1.0e-1}\n";
  };
  for (const auto& [name, trials] : {std::pair{"large", 5000}, std::pair{"small", 30}}) {
    auto created = c->Post("/api/v1/studies", study(name, trials), "application/yaml");
    ASSERT_TRUE(created);
    ASSERT_EQ(created->status, 201) << created->body;
  }
  auto store = store::open_store(url);
  const auto finished = [&](const std::string& name) {
    return store->get_study(store->find_study(name)->id).status == store::StudyStatus::kFinished;
  };
  for (int i = 0; i < 2400 && !(finished("large") && finished("small")); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(finished("large") && finished("small")) << server.log();
  store::Time small_done{};
  for (const store::TrialRecord& t : store->list_trials(store->find_study("small")->id, {}))
    small_done = std::max(small_done, t.finished_at.value());
  int64_t large_after = 0;
  store::for_each_trial(*store, store->find_study("large")->id, {},
                        [&](const store::TrialRecord& t) {
                          large_after += *t.finished_at > small_done;
                          return true;
                        });
  EXPECT_GE(large_after, 1000) << "the small study waited for most of the large one";
}

// `serve --workers 2` whose workers cannot start (a device no machine has): they are not
// started again (serve restarted them up to 1,000 times, each printing the same error), serve
// says so once, and its API still answers.
TEST(ServerSubmit, LocalWorkersThatCannotStartAreNotStartedAgain) {
  const auto dir = fresh_dir("server-no-device");
  ServerProcess server("sqlite:" + (dir / "s.db").string(), dir, "--workers 2 --device cuda:99");
  const std::string note = "serve: the local workers stopped on an error (exit code 3, above)";
  for (int i = 0; i < 200 && server.log().find(note) == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // a restart would show by now
  auto health = server.client()->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(server.stop(), 0);
  const std::string log = server.log();
  EXPECT_EQ(occurrences(log, note), 1u) << log;
  EXPECT_EQ(occurrences(log, "layerlab worker: error: device 'cuda:99'"), 2u)
      << "one error from each worker, none started again\n"
      << log;
}

}  // namespace
}  // namespace layerlab::testing
