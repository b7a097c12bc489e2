// `run`, `status`, `best` and `studies` rank within each dataset: a real study over iris and
// wine, its boards checked against the exported trials (each dataset's best trials in order,
// the number of trials sharing the best value), for both goals, as text and as JSON; and a
// stored study where wine has 18 trials tied at 1.0, which no command may rank above iris.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "integration/study_commands.h"
#include "store/store.h"

namespace layerlab {
namespace {

using nlohmann::json;
using testing::run_layerlab;

struct Expected {
  std::vector<int64_t> numbers;  // every ranked trial, best first (ties by number)
  double best = 0;
  int64_t ties = 0;
};

// Each dataset's ranking, from `export --format json`: completed or early-stopped trials
// with a value.
std::map<std::string, Expected> expected_boards(const json& exported, bool maximize) {
  std::map<std::string, std::vector<std::pair<double, int64_t>>> rows;
  for (const json& t : exported["trials"]) {
    if ((t["status"] != "completed" && t["status"] != "early_stopped") || !t["value"].is_number())
      continue;
    const double v = t["value"].get<double>();
    rows[t["dataset"]].emplace_back(maximize ? -v : v, t["number"].get<int64_t>());
  }
  std::map<std::string, Expected> out;
  for (auto& [dataset, r] : rows) {
    std::sort(r.begin(), r.end());
    Expected& e = out[dataset];
    for (const auto& [key, number] : r) e.numbers.push_back(number);
    e.best = maximize ? -r[0].first : r[0].first;
    const double top = r[0].first;  // clang 14 lambdas cannot capture structured bindings
    e.ties = std::count_if(r.begin(), r.end(), [&](const auto& x) { return x.first == top; });
  }
  return out;
}

std::string best_line(const std::string& dataset, const Expected& e) {
  char value[32];
  std::snprintf(value, sizeof value, "%.4f", e.best);
  if (e.ties > 1)
    return dataset + ": " + std::to_string(e.ties) + " trials share the best value " + value;
  return dataset + ": best " + value + " (trial #" + std::to_string(e.numbers[0]) + ")";
}

// The rows of the table under `line` in a command's text output: (number, dataset).
std::vector<std::pair<int64_t, std::string>> table_after(const std::string& out,
                                                         const std::string& line) {
  std::vector<std::pair<int64_t, std::string>> rows;
  const size_t at = out.find(line + "\n");
  if (at == std::string::npos) return rows;
  std::istringstream in(out.substr(at + line.size() + 1));
  std::string text;
  std::getline(in, text);  // the header
  while (std::getline(in, text)) {
    std::istringstream cells(text);
    int64_t number = 0;
    std::string dataset;
    if (!(cells >> number >> dataset)) break;  // a blank line ends the table
    rows.emplace_back(number, dataset);
  }
  return rows;
}

void expect_text_boards(const std::string& out, const std::map<std::string, Expected>& want,
                        size_t top) {
  size_t previous = 0;
  for (const std::string dataset : {"iris", "wine"}) {  // the study's order
    const Expected& e = want.at(dataset);
    const std::string line = best_line(dataset, e);
    const size_t at = out.find(line + "\n");
    ASSERT_NE(at, std::string::npos) << "no line '" << line << "' in:\n" << out;
    EXPECT_GT(at, previous) << "datasets out of the study's order:\n" << out;
    previous = at;
    const auto rows = table_after(out, line);
    ASSERT_EQ(rows.size(), std::min(top, e.numbers.size())) << out;
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].first, e.numbers[i]) << dataset << " rank " << i << "\n" << out;
      EXPECT_EQ(rows[i].second, dataset) << "a board mixes datasets:\n" << out;
    }
  }
}

void expect_json_boards(const json& boards, const std::map<std::string, Expected>& want,
                        size_t top) {
  ASSERT_TRUE(boards.is_array()) << boards.dump();
  ASSERT_EQ(boards.size(), 2u);
  EXPECT_EQ(boards[0]["dataset"], "iris");
  EXPECT_EQ(boards[1]["dataset"], "wine");
  for (const json& b : boards) {
    const Expected& e = want.at(b["dataset"].get<std::string>());
    EXPECT_DOUBLE_EQ(b["best_value"].get<double>(), e.best);
    EXPECT_EQ(b["best_count"], e.ties) << b["dataset"];
    ASSERT_EQ(b["trials"].size(), std::min(top, e.numbers.size()));
    for (size_t i = 0; i < b["trials"].size(); ++i) {
      EXPECT_EQ(b["trials"][i]["number"], e.numbers[i]) << b["dataset"] << " rank " << i;
      EXPECT_EQ(b["trials"][i]["dataset"], b["dataset"]);
    }
  }
}

TEST(Leaderboards, RunAndStatusRankWithinEachDataset) {
  const auto s = testing::write_study("cli-boards", testing::kQuickStudy);
  const auto r =
      run_layerlab("run " + s.file.string() + " --store " + s.store + " --workers 2 --top 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto want = expected_boards(testing::export_json(s, "quick"), true);
  ASSERT_EQ(want.size(), 2u);
  ASSERT_GE(want.at("iris").numbers.size(), 3u);
  ASSERT_GE(want.at("wine").numbers.size(), 3u);

  EXPECT_NE(r.out.find("leaderboard (val_accuracy, max) per dataset\n"), std::string::npos)
      << r.out;
  expect_text_boards(r.out, want, 3);

  const auto text = run_layerlab("status quick --store " + s.store);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("best (val_accuracy, max) per dataset\n"), std::string::npos) << text.out;
  expect_text_boards(text.out, want, 5);  // status shows 5 by default

  const json st = testing::status(s, "quick");
  expect_json_boards(st["leaderboards"], want, 5);
  // `best`: each dataset's, never one across datasets.
  ASSERT_EQ(st["best"].size(), 2u) << st["best"].dump();
  for (const json& b : st["best"]) {
    const Expected& e = want.at(b["dataset"].get<std::string>());
    EXPECT_DOUBLE_EQ(b["value"].get<double>(), e.best);
    EXPECT_EQ(b["count"], e.ties);
    EXPECT_EQ(b["number"], e.numbers[0]);
  }

  // A board of one still counts every tie.
  const auto one = run_layerlab("status quick --top 1 --json --store " + s.store);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  expect_json_boards(json::parse(one.out)["leaderboards"], want, 1);

  // Running the finished study again prints the boards as JSON straight away.
  const auto again = run_layerlab("run " + s.file.string() + " --store " + s.store +
                                  " --workers 1 --top 2 --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const json out = json::parse(again.out);
  expect_json_boards(out["leaderboards"], want, 2);
  // `leaderboard`, kept for scripts: each dataset's best two, grouped, not ranked across.
  ASSERT_EQ(out["leaderboard"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const Expected& e = want.at(i < 2 ? "iris" : "wine");
    EXPECT_EQ(out["leaderboard"][i]["number"], e.numbers[i % 2]) << out["leaderboard"].dump();
  }
}

TEST(Leaderboards, AMinimizedMetricRanksLowValuesFirst) {
  std::string yaml = testing::kQuickStudy;
  yaml.replace(yaml.find("name: quick"), 11, "name: low\nmetric: {name: val_loss, goal: minimize}");
  const auto s = testing::write_study("cli-boards-min", yaml);
  const auto r =
      run_layerlab("run " + s.file.string() + " --store " + s.store + " --workers 2 --top 4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto want = expected_boards(testing::export_json(s, "low"), false);
  EXPECT_NE(r.out.find("leaderboard (val_loss, min) per dataset\n"), std::string::npos) << r.out;
  expect_text_boards(r.out, want, 4);
  expect_json_boards(testing::status(s, "low")["leaderboards"], want, 5);
}

// Plain SGD ignores momentum: the three momentum values train the same network, so each
// depth's three trials tie, and the best value is shared by three trials, more than a
// board of two shows.
TEST(Leaderboards, TrialsSharingTheBestValueAreCountedPastTheBoard) {
  const auto s = testing::write_study("cli-boards-ties", R"(name: ties
datasets: [iris, wine]
seeds: [0]
parameters:
  hidden_layers: {values: [1, 2]}
  optimizer: {value: sgd}
  momentum: {values: [0.1, 0.5, 0.9]}
  units: {value: 16}
  epochs: {value: 3}
)");
  const auto r =
      run_layerlab("run " + s.file.string() + " --store " + s.store + " --workers 2 --top 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto want = expected_boards(testing::export_json(s, "ties"), true);
  for (const auto& [dataset, e] : want) EXPECT_EQ(e.ties, 3) << dataset << ": the test needs ties";
  expect_text_boards(r.out, want, 2);
  EXPECT_NE(r.out.find("iris: 3 trials share the best value "), std::string::npos) << r.out;
  expect_json_boards(testing::status(s, "ties")["leaderboards"], want, 5);
}

// Issue 53: on the example depth sweep `best` printed trial 29, a wine trial, one of 18
// tied at 1.0, as the study's best, and `best --save` would have saved it. A study of iris
// (best 0.9733, trial 1) and wine (18 trials at 1.0), stored through the store API so that
// the ties are certain.
testing::Study tied_study(const std::string& test) {
  const testing::Study s = testing::write_study(test, "");
  auto st = store::open_store(s.store);
  const int64_t id =
      st->create_study("tied", json::parse(R"({"name": "tied", "datasets": ["iris", "wine"],
                              "metric": {"name": "val_accuracy", "goal": "maximize"},
                              "parameters": {"hidden_layers": {"values": [1, 2]}}})"));
  // iris: trials 0-3; wine: trials 4-21 at 1.0, 22 below.
  const std::vector<double> iris = {0.9, 0.9733, 0.8, 0.9};
  std::vector<store::NewTrial> trials;
  for (int n = 0; n <= 22; ++n)
    trials.push_back({n, n < 4 ? "iris" : "wine", {{"hidden_layers", 1 + n % 2}, {"seed", 0}}});
  st->add_trials(id, trials);
  for (int i = 0; i <= 22; ++i) {
    const store::Claim c = *st->claim_next("w", {.study_id = id});
    const int64_t n = st->get_trial(c.trial_id).number;
    const double value = n < 4 ? iris[static_cast<size_t>(n)] : n < 22 ? 1.0 : 0.95;
    EXPECT_TRUE(st->finish_trial(c.trial_id, c.attempt, store::TrialStatus::kCompleted,
                                 {{"metrics", {{"val_accuracy", value}}}}, value, ""));
  }
  return s;
}

TEST(Best, ShowsEachDatasetsBestAndSavesOnlyOneNamedDataset) {
  const testing::Study s = tied_study("cli-best-tied");
  const std::string store = " --store '" + s.store + "'";

  const auto all = run_layerlab("best tied" + store);
  ASSERT_EQ(all.exit_code, 0) << all.out << all.err;
  EXPECT_NE(all.out.find("best trial of each dataset of study tied by val_accuracy (maximize)"),
            std::string::npos)
      << all.out;
  EXPECT_EQ(all.out.find("best trial of study"), std::string::npos)
      << "one trial named as the study's best:\n"
      << all.out;
  const auto iris = table_after(all.out, "iris: best 0.9733 (trial #1)");
  const auto wine = table_after(all.out, "wine: 18 trials share the best value 1.0000");
  EXPECT_EQ(iris, (std::vector<std::pair<int64_t, std::string>>{{1, "iris"}})) << all.out;
  EXPECT_EQ(wine, (std::vector<std::pair<int64_t, std::string>>{{4, "wine"}})) << all.out;

  const auto one = run_layerlab("best tied --dataset wine" + store);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("best trial of study tied on wine by val_accuracy (maximize): trial 4, "
                         "val_accuracy 1\n"),
            std::string::npos)
      << one.out;
  EXPECT_NE(one.out.find("note: 18 trials of wine share this value; trial 4 is the first of "
                         "them by number\n"),
            std::string::npos)
      << one.out;
  const auto other = run_layerlab("best tied --dataset iris" + store);
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(other.out.find("best trial of study tied on iris by val_accuracy (maximize): trial 1, "
                           "val_accuracy 0.9733\n"),
            std::string::npos)
      << other.out;
  EXPECT_EQ(other.out.find("note:"), std::string::npos) << other.out;

  // --save needs the dataset: nothing is trained or written without it.
  const std::string model = (s.dir / "m.safetensors").string();
  const auto save = run_layerlab("best tied --save " + model + store);
  EXPECT_EQ(save.exit_code, 2) << save.out;
  EXPECT_NE(save.err.find("--save: study tied has 2 datasets (iris, wine) and each has its own "
                          "best trial; name the one to save with --dataset"),
            std::string::npos)
      << save.err;
  EXPECT_TRUE(save.out.empty()) << save.out;
  EXPECT_FALSE(std::filesystem::exists(model));

  const auto typo = run_layerlab("best tied --dataset wien --save " + model + store);
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("--dataset: study tied has no dataset 'wien' (did you mean 'wine'?); "
                          "its datasets: iris, wine"),
            std::string::npos)
      << typo.err;
  const auto nope = run_layerlab("best tied --dataset nope" + store);
  EXPECT_EQ(nope.exit_code, 2);
  EXPECT_NE(nope.err.find("--dataset: study tied has no dataset 'nope'; its datasets: iris, wine"),
            std::string::npos)
      << nope.err;
  EXPECT_FALSE(std::filesystem::exists(model));
}

TEST(Best, StudiesAndStatusShowEachDatasetsBest) {
  const testing::Study s = tied_study("cli-studies-tied");
  const auto text = run_layerlab("studies --store '" + s.store + "'");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  val_accuracy: iris 0.9733 (#1), wine 1.0000 (18 tied)\n"),
            std::string::npos)
      << text.out;

  const json per_dataset = json::parse(R"([
    {"dataset": "iris", "number": 1, "value": 0.9733, "count": 1},
    {"dataset": "wine", "number": 4, "value": 1.0, "count": 18}])");
  const auto drop_ids = [](json best) {
    for (json& b : best) b.erase("trial_id");
    return best;
  };
  const auto listed = run_layerlab("studies --json --store '" + s.store + "'");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(drop_ids(json::parse(listed.out)[0]["best"]), per_dataset) << listed.out;
  EXPECT_EQ(drop_ids(testing::status(s, "tied")["best"]), per_dataset);
}

TEST(Leaderboards, TopIsBounded) {
  const auto r = run_layerlab("status quick --top 0");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--top"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace layerlab
