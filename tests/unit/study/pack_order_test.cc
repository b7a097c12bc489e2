// Packs: study::pack_key says which trials can train together, and the coordinator numbers
// each stored batch grouped by it, so that a worker claiming K trials finds one shape.
#include <gtest/gtest.h>

#include <set>

#include "study/coordinator.h"
#include "study/trial.h"
#include "support/temp_and_errors.h"

namespace layerlab::study {
namespace {

TrialSpec spec(const nlohmann::json& params) {
  return TrialSpec::from_json(params);
}

TEST(PackKey, PerMemberParametersDoNotSplitAPack) {
  const TrialSpec a = spec({{"hidden_layers", 2}, {"units", 64}, {"learning_rate", 0.1}});
  EXPECT_EQ(pack_key(a), pack_key(spec({{"layers", {64, 64}},
                                        {"learning_rate", 0.003},
                                        {"momentum", 0.5},
                                        {"weight_decay", 1e-4},
                                        {"dropout", 0.3},
                                        {"seed", 7},
                                        {"init", "he_normal"},
                                        {"patience", 3}})));
  for (const nlohmann::json& other :
       {nlohmann::json{{"hidden_layers", 3}, {"units", 64}},
        nlohmann::json{{"hidden_layers", 2}, {"units", 64}, {"activation", "tanh"}},
        nlohmann::json{{"hidden_layers", 2}, {"units", 64}, {"batch_size", 64}},
        nlohmann::json{{"hidden_layers", 2}, {"units", 64}, {"epochs", 5}},
        nlohmann::json{{"hidden_layers", 2}, {"units", 64}, {"batch_norm", true}},
        nlohmann::json{{"hidden_layers", 2}, {"units", 64}, {"dataset", "wine"}},
        nlohmann::json{{"hidden_layers", 2}, {"units", 64}, {"split_seed", 1}}})
    EXPECT_NE(pack_key(a), pack_key(spec(other))) << other;
}

TEST(Coordinator, NumbersEachBatchGroupedByShape) {
  testing::TempDir dir;
  auto store = store::open_store("sqlite:" + dir.path("s.db"));
  // Random search over 3 depths x 2 activations (6 shapes) with a continuous learning rate:
  // in sampler order the shapes interleave.
  const nlohmann::json j = {
      {"name", "packs"},
      {"datasets", {"iris"}},
      {"method", "random"},
      {"budget", {{"trials", 60}}},
      {"parameters",
       {{"hidden_layers", {{"values", {1, 2, 3}}}},
        {"activation", {{"values", {"relu", "tanh"}}}},
        {"learning_rate", {{"distribution", "log_uniform"}, {"min", 1e-3}, {"max", 1e-1}}}}}};
  const StudySpec s = StudySpec::from_json(j);
  const int64_t id = store->create_study("packs", s.to_json());
  auto queue = queue::make_store_queue(*store, "coordinator");
  Coordinator c(*store, *queue, s, id);
  ASSERT_EQ(c.top_up(100), 60);
  std::vector<std::string> keys;
  for (const store::TrialRecord& r : store->list_trials(id, {})) {
    nlohmann::json p = r.params;
    p["dataset"] = r.dataset;
    keys.push_back(pack_key(TrialSpec::from_json(p)));
  }
  ASSERT_EQ(keys.size(), 60u);
  int runs = 1;
  for (size_t i = 1; i < keys.size(); ++i) runs += keys[i] != keys[i - 1];
  const std::set<std::string> distinct(keys.begin(), keys.end());
  EXPECT_EQ(distinct.size(), 6u);
  EXPECT_EQ(runs, 6) << "each shape's trials are numbered one after another";
}

}  // namespace
}  // namespace layerlab::study
