// Leaderboards rank within each dataset: the builder on its own (any order, both goals,
// ties, trials without a value) and study::leaderboards reading a real store, which must
// agree with the builder fed every trial.
#include "study/leaderboard.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>

namespace layerlab::study {
namespace {

using store::TrialStatus;

std::vector<int64_t> numbers(const Leaderboard& b) {
  std::vector<int64_t> out;
  for (const auto& e : b.top) out.push_back(e.number);
  return out;
}

TEST(LeaderboardBuilder, RanksWithinEachDatasetNotAcross) {
  LeaderboardBuilder b({"digits", "wine"}, /*maximize=*/true, 3);
  // wine's small validation set gives 1.0 to several trials; digits never reaches it.
  b.add("wine", TrialStatus::kCompleted, 101, 1, 1.0);
  b.add("digits", TrialStatus::kCompleted, 102, 2, 0.95);
  b.add("wine", TrialStatus::kCompleted, 103, 3, 1.0);
  b.add("digits", TrialStatus::kCompleted, 104, 4, 0.97);
  b.add("wine", TrialStatus::kCompleted, 105, 5, 0.9);
  b.add("digits", TrialStatus::kEarlyStopped, 106, 6, 0.96);
  b.add("digits", TrialStatus::kCompleted, 107, 7, 0.90);
  b.add("wine", TrialStatus::kCompleted, 108, 8, 1.0);
  b.add("wine", TrialStatus::kCompleted, 109, 9, 1.0);

  const auto& boards = b.boards();
  ASSERT_EQ(boards.size(), 2u);
  EXPECT_EQ(boards[0].dataset, "digits");  // the study's order, not the order of arrival
  EXPECT_EQ(numbers(boards[0]), (std::vector<int64_t>{4, 6, 2}));
  EXPECT_EQ(boards[0].best_count, 1);
  EXPECT_EQ(boards[0].best_value(), 0.97);
  EXPECT_EQ(boards[1].dataset, "wine");
  EXPECT_EQ(numbers(boards[1]), (std::vector<int64_t>{1, 3, 8}));  // equal values by number
  EXPECT_EQ(boards[1].best_count, 4) << "every tie counts, also past the board's limit";
  EXPECT_EQ(boards[1].top[0].trial_id, 101);
}

TEST(LeaderboardBuilder, MinimizeRanksLowValuesFirst) {
  LeaderboardBuilder b({"iris"}, /*maximize=*/false, 2);
  b.add("iris", TrialStatus::kCompleted, 1, 1, 0.5);
  b.add("iris", TrialStatus::kCompleted, 2, 2, 0.2);
  b.add("iris", TrialStatus::kCompleted, 3, 3, 0.9);
  b.add("iris", TrialStatus::kCompleted, 4, 4, 0.3);
  EXPECT_EQ(numbers(b.boards()[0]), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(b.boards()[0].best_count, 1);

  LeaderboardBuilder max({"iris"}, /*maximize=*/true, 2);
  for (int i = 1; i <= 4; ++i)
    max.add("iris", TrialStatus::kCompleted, i, i, std::vector<double>{0.5, 0.2, 0.9, 0.3}[i - 1]);
  EXPECT_EQ(numbers(max.boards()[0]), (std::vector<int64_t>{3, 1}));
}

TEST(LeaderboardBuilder, TrialsWithoutAValueOrCutShortDoNotRank) {
  LeaderboardBuilder b({"iris", "wine"}, true, 10);
  b.add("iris", TrialStatus::kFailed, 1, 1, 0.99);
  b.add("iris", TrialStatus::kDiverged, 2, 2, 0.99);
  b.add("iris", TrialStatus::kRunning, 3, 3, 0.99);
  b.add("iris", TrialStatus::kQueued, 4, 4, 0.99);
  b.add("iris", TrialStatus::kCancelled, 5, 5, 0.99);
  b.add("iris", TrialStatus::kPruned, 6, 6, 0.99);  // measured when it was cut short
  b.add("iris", TrialStatus::kCompleted, 7, 7, std::nan(""));
  b.add("iris", TrialStatus::kCompleted, 8, 8, 0.5);
  EXPECT_EQ(numbers(b.boards()[0]), (std::vector<int64_t>{8}));
  EXPECT_EQ(b.boards()[0].best_count, 1);
  // A dataset where nothing ranks still has its (empty) board.
  EXPECT_TRUE(b.boards()[1].top.empty());
  EXPECT_EQ(b.boards()[1].best_count, 0);
  EXPECT_FALSE(b.boards()[1].best_value().has_value());
}

TEST(LeaderboardBuilder, ABetterValueResetsTheTieCount) {
  LeaderboardBuilder b({"x"}, true, 5);
  b.add("x", TrialStatus::kCompleted, 1, 1, 0.8);
  b.add("x", TrialStatus::kCompleted, 2, 2, 0.8);
  EXPECT_EQ(b.boards()[0].best_count, 2);
  b.add("x", TrialStatus::kCompleted, 3, 3, 0.9);
  EXPECT_EQ(b.boards()[0].best_count, 1);
  EXPECT_EQ(numbers(b.boards()[0]), (std::vector<int64_t>{3, 1, 2}));
}

TEST(LeaderboardBuilder, SettledOnceFullAndPastTheBest) {
  LeaderboardBuilder b({"x"}, true, 2);
  EXPECT_FALSE(b.settled("x"));
  b.add("x", TrialStatus::kCompleted, 1, 1, 1.0);
  b.add("x", TrialStatus::kCompleted, 2, 2, 1.0);
  EXPECT_FALSE(b.settled("x")) << "a third trial may still tie";
  b.add("x", TrialStatus::kCompleted, 3, 3, 1.0);
  EXPECT_FALSE(b.settled("x"));
  b.add("x", TrialStatus::kCompleted, 4, 4, 0.5);
  EXPECT_TRUE(b.settled("x"));
  EXPECT_EQ(b.boards()[0].best_count, 3);
}

// A store with a study over two datasets, trials finished with given values.
class StoredLeaderboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("layerlab-leaderboard-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    store_ = store::open_store("sqlite:" + (dir_ / "s.db").string());
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  StudySpec spec(bool maximize) {
    StudySpec s;
    s.name = "boards";
    s.datasets = {"digits", "wine"};
    s.maximize = maximize;
    s.metric = maximize ? "val_accuracy" : "val_loss";
    return s;
  }

  struct Row {
    std::string dataset;
    TrialStatus status;
    std::optional<double> value;
  };
  int64_t make_study(const std::vector<Row>& rows) {
    const int64_t id = store_->create_study("boards", nlohmann::json::object());
    std::vector<store::NewTrial> trials;
    for (size_t i = 0; i < rows.size(); ++i)
      trials.push_back({static_cast<int64_t>(i), rows[i].dataset, nlohmann::json::object(), 0});
    store_->add_trials(id, trials);
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto c = store_->claim_next("w", {.study_id = id});
      if (!c) {
        ADD_FAILURE() << "no trial to claim";
        break;
      }
      const Row& r = rows[static_cast<size_t>(c->number)];
      if (r.status == TrialStatus::kRunning) continue;
      store_->finish_trial(c->trial_id, c->attempt, r.status, nlohmann::json::object(), r.value,
                           r.status == TrialStatus::kFailed ? "boom" : "");
    }
    return id;
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::Store> store_;
};

TEST_F(StoredLeaderboardTest, ReadsEachDatasetsBoardAndCountsEveryTie) {
  std::vector<Row> rows;
  // wine: 7 trials tie at 1.0 (more than a board holds), digits' best is 0.96 once.
  for (int i = 0; i < 7; ++i) rows.push_back({"wine", TrialStatus::kCompleted, 1.0});
  rows.push_back({"wine", TrialStatus::kCompleted, 0.8});
  rows.push_back({"digits", TrialStatus::kCompleted, 0.93});
  rows.push_back({"digits", TrialStatus::kEarlyStopped, 0.96});
  rows.push_back({"digits", TrialStatus::kPruned, 0.99});
  rows.push_back({"digits", TrialStatus::kFailed, std::nullopt});
  rows.push_back({"digits", TrialStatus::kRunning, std::nullopt});
  rows.push_back({"digits", TrialStatus::kCompleted, 0.90});
  const int64_t id = make_study(rows);

  const auto boards = leaderboards(*store_, id, spec(true), 3);
  ASSERT_EQ(boards.size(), 2u);
  EXPECT_EQ(boards[0].board.dataset, "digits");
  EXPECT_EQ(numbers(boards[0].board), (std::vector<int64_t>{9, 8, 13}));
  EXPECT_EQ(boards[0].board.best_count, 1);
  ASSERT_EQ(boards[0].trials.size(), 3u);
  EXPECT_EQ(boards[0].trials[0].number, 9);
  EXPECT_EQ(boards[0].trials[0].dataset, "digits");
  EXPECT_EQ(boards[1].board.dataset, "wine");
  EXPECT_EQ(numbers(boards[1].board), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(boards[1].board.best_count, 7);
  for (const auto& t : boards[1].trials) EXPECT_EQ(t.value, 1.0);

  // Minimize: the low values lead.
  const auto low = leaderboards(*store_, id, spec(false), 2);
  EXPECT_EQ(numbers(low[0].board), (std::vector<int64_t>{13, 8}));
  EXPECT_EQ(numbers(low[1].board), (std::vector<int64_t>{7, 0}));
  EXPECT_EQ(low[1].board.best_count, 1);
}

TEST_F(StoredLeaderboardTest, ADatasetWithoutValuesHasAnEmptyBoard) {
  const int64_t id = make_study({{"digits", TrialStatus::kCompleted, 0.5},
                                 {"wine", TrialStatus::kFailed, std::nullopt},
                                 {"wine", TrialStatus::kRunning, std::nullopt}});
  const auto boards = leaderboards(*store_, id, spec(true), 5);
  ASSERT_EQ(boards.size(), 2u);
  EXPECT_EQ(numbers(boards[0].board), (std::vector<int64_t>{0}));
  EXPECT_TRUE(boards[1].board.top.empty());
  EXPECT_TRUE(boards[1].trials.empty());
  EXPECT_EQ(boards[1].board.best_count, 0);
}

// The store path reads only part of the trials; it must agree with the builder fed all
// of them, in any order, whatever the ties.
TEST_F(StoredLeaderboardTest, AgreesWithTheBuilderFedEveryTrial) {
  std::mt19937 rng(7);
  std::vector<Row> rows;
  const TrialStatus statuses[] = {TrialStatus::kCompleted, TrialStatus::kEarlyStopped,
                                  TrialStatus::kPruned, TrialStatus::kFailed};
  for (int i = 0; i < 300; ++i) {
    const TrialStatus st = statuses[rng() % 4];
    // few distinct values, so that ties are common
    const std::optional<double> v =
        st == TrialStatus::kFailed ? std::nullopt : std::optional<double>((rng() % 6) / 5.0);
    rows.push_back({rng() % 2 ? "digits" : "wine", st, v});
  }
  const int64_t id = make_study(rows);
  for (bool maximize : {true, false}) {
    for (size_t limit : {1u, 4u, 50u}) {
      LeaderboardBuilder all({"digits", "wine"}, maximize, limit);
      for (const auto& t : store_->list_trials(id, {}))
        all.add(t.dataset, t.status, t.id, t.number, t.value.value_or(std::nan("")));
      const auto stored = leaderboards(*store_, id, spec(maximize), limit);
      ASSERT_EQ(stored.size(), all.boards().size());
      for (size_t d = 0; d < stored.size(); ++d) {
        SCOPED_TRACE(stored[d].board.dataset + (maximize ? " max " : " min ") +
                     std::to_string(limit));
        EXPECT_EQ(numbers(stored[d].board), numbers(all.boards()[d]));
        EXPECT_EQ(stored[d].board.best_count, all.boards()[d].best_count);
        EXPECT_GT(stored[d].board.best_count, 1) << "the test means to cover ties";
      }
    }
  }
}

}  // namespace
}  // namespace layerlab::study
