// The dashboard in a real browser: headless Chromium (Debian's) driven by Playwright
// (tests/browser/study_page.mjs) against `layerlab serve` on a real store, with a study
// that is still running. The test controls the pace with real worker processes: one
// trains a few trials and is stopped (SIGTERM hands its trial back), the page is opened
// and checked, then a second worker finishes trials while the page is watched for the
// live update. Screenshots land in the test's output folder (kept on failure).
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "integration/server/server_process.h"
#include "store/store.h"
#include "support/known_pareto_study.h"

namespace layerlab::testing {
namespace {

using nlohmann::json;

// 2 datasets x 4 depths x 2 activations x 2 seeds = 32 trials; digits makes each take a
// noticeable time (a fraction of a second optimised, seconds under the sanitizers), so the
// study is still running when the page opens.
constexpr const char* kStudy = R"(name: browser-study
datasets: [digits, wine]
metric: {name: val_accuracy, goal: maximize}
method: grid
seeds: [0, 1]
parameters:
  hidden_layers: {values: [1, 2, 3, 4]}
  activation: {values: [relu, tanh]}
  units: {value: 64}
  epochs: {value: 30}
)";

int finished_trials(httplib::Client& c, const std::string& study) {
  auto r = c.Get("/api/v1/studies/" + study);
  return r && r->status == 200 ? json::parse(r->body)["finished"].get<int>() : -1;
}

// Runs tests/browser/SCRIPT ARGS (a check of a finished study: leaderboard_page.mjs,
// pareto_page.mjs), which prints one JSON line; that line, or null after a failure (reported
// with the script's stderr).
json run_page_check(const std::string& script, const std::string& args,
                    const std::filesystem::path& dir) {
  const std::string node = std::string("node ") + LAYERLAB_SOURCE_DIR + "/tests/browser/" + script +
                           " " + args + " >" + (dir / "node.out").string() + " 2>" +
                           (dir / "node.err").string();
  const int status = std::system(node.c_str());
  const std::string text = read_file(dir / "node.out");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ADD_FAILURE() << script << " failed:\n" << read_file(dir / "node.err") << text;
    return nullptr;
  }
  const size_t at = text.rfind("{\"ok\"");
  json result = at == std::string::npos ? json() : json::parse(text.substr(at), nullptr, false);
  if (!result.is_object() || !result["ok"].is_boolean()) {
    ADD_FAILURE() << script << " printed no result:\n" << text;
    return nullptr;
  }
  return result;
}

bool wait_for(const std::function<bool()>& done, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST(Browser, StudyPageRendersAndFollowsARunningStudy) {
  if (std::system("test -x /usr/bin/chromium") != 0)
    GTEST_SKIP() << "Debian's chromium is not installed (scripts/install-deps.sh test)";
  const auto dir = fresh_dir("browser");
  const std::string url = "sqlite:" + (dir / "s.db").string();
  ServerProcess server(url, dir / "serve");
  auto c = server.client();
  auto created = c->Post("/api/v1/studies", kStudy, "application/yaml");
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, 201) << created->body;
  const std::string study = std::to_string(json::parse(created->body)["id"].get<int>());

  // Phase 1: one worker trains a few trials (two seeds at a time, as a pack), then hands
  // back what it holds.
  const auto w1 = dir / "w1";
  std::filesystem::create_directories(w1);
  const pid_t first = spawn_layerlab("worker --store " + url + " --pack 2 --quiet", w1);
  const ::layerlab::testing::KillOnExit first_guard(first);
  ASSERT_TRUE(wait_for([&] { return finished_trials(*c, study) >= 6; }, 120));
  ::kill(first, SIGTERM);
  int status = 0;
  ::waitpid(first, &status, 0);
  // Counted in the store itself: the server's answer comes from its study cache, which
  // follows the change feed one poll behind (a pack that finished as the worker stopped
  // would be missing).
  const auto before = store::open_store(url)->counts(std::stoll(study)).finished();
  ASSERT_LT(before, 32) << "the study finished before the page was opened";

  // Phase 2: the page is checked; once it says so (ready file), a second worker runs.
  const auto out = std::filesystem::path(LAYERLAB_BINARY_DIR) / "browser-output";
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(out);
  const auto ready = dir / "ready";
  const std::string node = std::string("node ") + LAYERLAB_SOURCE_DIR +
                           "/tests/browser/study_page.mjs --base " + server.base() + " --study " +
                           study + " --out " + out.string() + " --ready-file " + ready.string() +
                           " >" + (dir / "node.out").string() + " 2>" + (dir / "node.err").string();
  std::thread browser([&] { status = std::system(node.c_str()); });
  const bool page_ready = wait_for([&] { return std::filesystem::exists(ready); }, 120);
  const auto w2 = dir / "w2";
  std::filesystem::create_directories(w2);
  const pid_t second = spawn_layerlab("worker --store " + url + " --quiet", w2);
  const ::layerlab::testing::KillOnExit second_guard(second);
  browser.join();
  ::kill(second, SIGTERM);
  ::waitpid(second, nullptr, 0);

  const std::string stdout_text = read_file(dir / "node.out");
  EXPECT_TRUE(page_ready) << read_file(dir / "node.err");
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "study_page.mjs failed:\n"
      << read_file(dir / "node.err") << stdout_text;
  const json result = json::parse(stdout_text.substr(stdout_text.rfind("{\"ok\"")), nullptr, false);
  ASSERT_TRUE(result.is_object()) << stdout_text;
  EXPECT_TRUE(result["ok"].get<bool>());
  EXPECT_GE(result["screenshots"].size(), 4u);
  // The workers page shows each worker's pack size: the first worker trained pairs.
  const json& packs = result["checks"]["workers"]["pack"];
  EXPECT_NE(std::find(packs.begin(), packs.end(), json("2")), packs.end()) << packs;
  EXPECT_EQ(packs.size(), result["checks"]["workers"]["memory"].size());
  // The first worker is gone; the page showed what it did as the API counts it (checked
  // there): every trial finished before it stopped, nothing lost (it handed back what it
  // held), and its bars in the throughput chart.
  const json& gone = result["checks"]["workers"]["gone"];
  ASSERT_EQ(gone.size(), 1u) << gone;
  EXPECT_EQ(gone[0]["done"].get<int>() + gone[0]["failed"].get<int>(), before) << gone;
  EXPECT_EQ(gone[0]["lost"], 0) << gone;
  EXPECT_TRUE(gone[0]["utilisation"].is_number()) << gone;
  EXPECT_GT(result["checks"]["workers"]["throughput_traces"].get<int>(), 0);
  EXPECT_GE(result["checks"]["workers"]["charted_finished"].get<int>(), before);
  for (const json& shot : result["screenshots"])
    EXPECT_GT(std::filesystem::file_size(shot.get<std::string>()), 10'000u) << shot;
  EXPECT_EQ(server.stop(), 0) << server.log();
}

// The trial view's model download (keep_weights): a study keeps its 2 best trials; the
// button of a kept trial gives a file that the independent numpy reader
// (tests/integration/model/read_safetensors.py) parses and whose forward pass matches
// `layerlab predict --store --trial` on it, and `predict --model` on the file says the same;
// a trial without a kept model has no button, and its /model is a 404 that says why
// (model_page.mjs).
TEST(Browser, TrialViewDownloadsTheKeptModel) {
  if (std::system("test -x /usr/bin/chromium") != 0)
    GTEST_SKIP() << "Debian's chromium is not installed (scripts/install-deps.sh test)";
  const auto dir = fresh_dir("browser-model");
  const std::string url = "sqlite:" + (dir / "s.db").string();
  std::ofstream(dir / "study.yaml") << R"(name: kept
datasets: [wine]
seeds: [0, 1]
keep_weights: {top: 2}
parameters:
  hidden_layers: {values: [1, 2]}
  units: {value: 16}
  epochs: {value: 6}
)";
  const auto ran =
      run_layerlab("run " + (dir / "study.yaml").string() + " --store " + url + " --workers 2");
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  int64_t study = 0, kept = 0, other = 0;
  {
    auto st = store::open_store(url);
    study = st->find_study("kept")->id;
    const auto weights = st->list_weights(study);
    ASSERT_EQ(weights.size(), 2u);
    kept = weights[0].trial_id;
    for (const auto& t : st->list_trials(study, {}))
      if (!st->find_weights(t.id, false)) other = t.id;
    ASSERT_NE(other, 0);
  }
  ServerProcess server(url, dir / "serve");
  const auto out = std::filesystem::path(LAYERLAB_BINARY_DIR) / "browser-output" / "model";
  std::filesystem::create_directories(out);
  const json result = run_page_check(
      "model_page.mjs",
      "--base " + server.base() + " --study " + std::to_string(study) + " --trial " +
          std::to_string(kept) + " --other " + std::to_string(other) + " --out " + out.string(),
      dir);
  ASSERT_FALSE(result.is_null());
  ASSERT_TRUE(result["ok"].get<bool>()) << result;
  EXPECT_EQ(result["checks"]["button"]["text"], "Download model");
  const std::string file = result["file"];
  const std::string wine = std::string(LAYERLAB_SOURCE_DIR) + "/data/builtin/wine.csv";
  const auto from_store =
      run_layerlab("predict --store " + url + " --trial " + std::to_string(kept) + " --data " +
                   wine + " --probabilities");
  ASSERT_EQ(from_store.exit_code, 0) << from_store.err;
  const auto from_file =
      run_layerlab("predict --model " + file + " --data " + wine + " --probabilities");
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_EQ(from_file.out, from_store.out);
  const auto predictions = dir / "predictions.csv";
  std::ofstream(predictions) << from_store.out;
  const std::string reader = std::string("/usr/bin/python3 ") + LAYERLAB_SOURCE_DIR +
                             "/tests/integration/model/read_safetensors.py " + file + " " + wine +
                             " " + predictions.string() + " --probabilities >" +
                             (dir / "reader.out").string() + " 2>&1";
  const int status = std::system(reader.c_str());
  const std::string said = read_file(dir / "reader.out");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << said;
  EXPECT_NE(said.find("\nOK "), std::string::npos) << said;
  EXPECT_NE(said.find("\"kept\": \"true\""), std::string::npos) << said;
  EXPECT_EQ(server.stop(), 0) << server.log();
}

// The study page ranks within each dataset: a finished study over iris and wine (small
// validation sets: ties at the best value are common), served without workers; the page's
// leaderboard must show a board per dataset equal to the API's (leaderboard_page.mjs).
TEST(Browser, StudyPageShowsALeaderboardPerDataset) {
  if (std::system("test -x /usr/bin/chromium") != 0)
    GTEST_SKIP() << "Debian's chromium is not installed (scripts/install-deps.sh test)";
  const auto dir = fresh_dir("browser-boards");
  std::ofstream(dir / "study.yaml") << R"(name: boards
datasets: [iris, wine]
seeds: [0, 1, 2]
parameters:
  hidden_layers: {values: [1, 2]}
  activation: {values: [relu, tanh]}
  units: {value: 16}
  epochs: {value: 4}
)";
  const std::string url = "sqlite:" + (dir / "s.db").string();
  const CommandResult run =
      run_layerlab("run " + (dir / "study.yaml").string() + " --store " + url + " -w 2");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ServerProcess server(url, dir / "serve");
  const auto out = std::filesystem::path(LAYERLAB_BINARY_DIR) / "browser-output";
  std::filesystem::create_directories(out);
  const json result = run_page_check(
      "leaderboard_page.mjs", "--base " + server.base() + " --study 1 --out " + out.string(), dir);
  ASSERT_FALSE(result.is_null());
  EXPECT_TRUE(result["ok"].get<bool>());
  ASSERT_EQ(result["boards"].size(), 2u) << result.dump();
  EXPECT_EQ(result["boards"][0]["dataset"], "iris");
  EXPECT_EQ(result["boards"][1]["dataset"], "wine");
  for (const json& b : result["boards"]) EXPECT_EQ(b["rows"], 10) << b;  // 12 trials each
  EXPECT_EQ(server.stop(), 0) << server.log();
}

// The Pareto view (accuracy against cost) on a study with known fronts
// (tests/support/known_pareto_study.h: ties, duplicates, a pruned trial that would dominate,
// a trial without value): for both costs, the highlighted front of each dataset is exactly
// the expected trials, and hovering a front point shows its configuration (pareto_page.mjs).
TEST(Browser, StudyPageHighlightsTheKnownParetoFronts) {
  if (std::system("test -x /usr/bin/chromium") != 0)
    GTEST_SKIP() << "Debian's chromium is not installed (scripts/install-deps.sh test)";
  const auto dir = fresh_dir("browser-pareto");
  const std::string url = "sqlite:" + (dir / "s.db").string();
  int64_t id = 0;
  {
    auto st = store::open_store(url);
    id = write_known_pareto_study(*st);
  }
  ServerProcess server(url, dir / "serve");
  const auto out = std::filesystem::path(LAYERLAB_BINARY_DIR) / "browser-output";
  std::filesystem::create_directories(out);
  const std::string expect = json(kKnownFronts).dump();
  const json result = run_page_check("pareto_page.mjs",
                                     "--base " + server.base() + " --study " + std::to_string(id) +
                                         " --out " + out.string() + " --expect '" + expect + "'",
                                     dir);
  ASSERT_FALSE(result.is_null());
  EXPECT_TRUE(result["ok"].get<bool>());
  // What the page highlighted, as the script read it, against the known answers.
  for (const auto& [dataset, fronts] : kKnownFronts)
    for (const auto& [cost, numbers] : fronts)
      EXPECT_EQ(result["checks"][cost][dataset], json(numbers)) << dataset << " " << cost;
  EXPECT_EQ(result["screenshots"].size(), 2u);
  EXPECT_EQ(server.stop(), 0) << server.log();
}

}  // namespace
}  // namespace layerlab::testing
