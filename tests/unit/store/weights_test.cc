// Kept weights (a study's keep_weights): stored with the result that ranks them, replaced
// as better trials finish, per dataset, by the study's goal; nothing for trials that do not
// rank; limits checked before anything is written.
#include <cmath>
#include <limits>

#include "store_test_util.h"

namespace layerlab::store {
namespace {

using testing::StoreTest;

// Every byte value, NULs included, and a marker: what a safetensors file may hold.
std::string binary(const std::string& marker) {
  std::string s;
  for (int i = 0; i < 256; ++i) s += static_cast<char>(i);
  return s + marker;
}

TrialFinish finish(const Claim& c, std::optional<double> value, int top, bool maximize = true,
                   TrialStatus status = TrialStatus::kCompleted) {
  TrialFinish f;
  f.trial_id = c.trial_id;
  f.attempt = c.attempt;
  f.status = status;
  f.result = {{"status", to_string(status)}};
  f.value = value;
  f.keep = KeepWeights{std::make_shared<const std::string>(binary(std::to_string(c.number))), top,
                       maximize};
  return f;
}

class WeightsTest : public StoreTest {
 protected:
  // A study with trials 0..n-1: even numbers on iris, odd ones on wine; every one claimed.
  std::vector<Claim> claimed(int n) {
    study_ = store_->create_study("s", nullptr);
    std::vector<NewTrial> trials;
    for (int i = 0; i < n; ++i) trials.push_back({i, i % 2 == 0 ? "iris" : "wine", {}});
    store_->add_trials(study_, trials);
    ClaimOptions o;
    o.study_id = study_;
    return store_->claim_batch("w", o, n);
  }
  // The numbers of the trials with kept weights, per dataset, by trial id.
  std::vector<int64_t> kept(const std::string& dataset) {
    std::vector<int64_t> out;
    for (const KeptWeights& w : store_->list_weights(study_))
      if (w.dataset == dataset) out.push_back(store_->get_trial(w.trial_id).number);
    return out;
  }
  int64_t study_ = 0;
};

INSTANTIATE_TEST_SUITE_P(Backend, WeightsTest,
                         ::testing::Values(testing::Backend::kSqlite, testing::Backend::kPostgres,
                                           testing::Backend::kPgBouncer),
                         testing::BackendName{});

TEST_P(WeightsTest, KeepsTheTopOfEachDatasetAndReplacesAsBetterTrialsFinish) {
  const std::vector<Claim> c = claimed(8);  // iris: 0 2 4 6; wine: 1 3 5 7
  ASSERT_EQ(c.size(), 8u);
  EXPECT_TRUE(store_->finish_trial(c[0].trial_id, 1, TrialStatus::kCompleted, nullptr, 0.5, "",
                                   {}));  // no keep asked: nothing kept
  EXPECT_TRUE(store_->finish_trials({finish(c[2], 0.7, 2)})[0]);
  EXPECT_TRUE(store_->finish_trials({finish(c[4], 0.6, 2)})[0]);
  EXPECT_EQ(kept("iris"), (std::vector<int64_t>{2, 4}));
  // 0.9 enters; 0.6 (trial 4) falls out of the top 2 in the same transaction.
  EXPECT_TRUE(store_->finish_trials({finish(c[6], 0.9, 2)})[0]);
  EXPECT_EQ(kept("iris"), (std::vector<int64_t>{2, 6}));
  EXPECT_FALSE(store_->find_weights(c[4].trial_id));
  // wine is its own board: a worse value than iris's still enters it.
  EXPECT_TRUE(store_->finish_trials({finish(c[1], 0.1, 2)})[0]);
  EXPECT_EQ(kept("wine"), (std::vector<int64_t>{1}));
  // A value below the whole full board is not kept.
  EXPECT_TRUE(store_->finish_trials({finish(c[3], 0.2, 1)})[0]);
  EXPECT_TRUE(store_->finish_trials({finish(c[5], 0.15, 1)})[0]);
  EXPECT_EQ(kept("wine"), (std::vector<int64_t>{3}));

  const std::optional<KeptWeights> w = store_->find_weights(c[6].trial_id);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->bytes, binary("6"));  // every byte value round-trips
  EXPECT_EQ(w->size, static_cast<int64_t>(binary("6").size()));
  EXPECT_EQ(w->study_id, study_);
  EXPECT_EQ(w->dataset, "iris");
  EXPECT_EQ(w->created_at, clock_.now());
  const std::optional<KeptWeights> header = store_->find_weights(c[6].trial_id, false);
  ASSERT_TRUE(header);
  EXPECT_TRUE(header->bytes.empty());
  EXPECT_EQ(header->size, w->size);
}

TEST_P(WeightsTest, MinimizeKeepsTheLowestAndTiesGoToTheLowerNumber) {
  const std::vector<Claim> c = claimed(8);
  EXPECT_TRUE(store_->finish_trials({finish(c[6], 0.3, 2, false)})[0]);
  EXPECT_TRUE(store_->finish_trials({finish(c[4], 0.3, 2, false)})[0]);
  EXPECT_TRUE(store_->finish_trials({finish(c[2], 0.8, 2, false)})[0]);  // worse: not kept
  EXPECT_EQ(kept("iris"), (std::vector<int64_t>{4, 6}));
  // An equal value with a lower number ranks first, so trial 6 (the higher number) goes.
  EXPECT_TRUE(store_->finish_trials({finish(c[0], 0.3, 2, false)})[0]);
  EXPECT_EQ(kept("iris"), (std::vector<int64_t>{0, 4}));
}

TEST_P(WeightsTest, NothingIsKeptForTrialsThatDoNotRank) {
  const std::vector<Claim> c = claimed(8);
  EXPECT_TRUE(store_->finish_trials({finish(c[0], 0.9, 5, true, TrialStatus::kPruned)})[0]);
  EXPECT_TRUE(store_->finish_trials({finish(c[2], 0.9, 5, true, TrialStatus::kFailed)})[0]);
  EXPECT_TRUE(
      store_->finish_trials({finish(c[4], std::nullopt, 5, true, TrialStatus::kDiverged)})[0]);
  EXPECT_TRUE(
      store_->finish_trials({finish(c[6], std::numeric_limits<double>::quiet_NaN(), 5)})[0]);
  EXPECT_TRUE(store_->finish_trials({finish(c[1], std::nullopt, 5)})[0]);
  EXPECT_TRUE(store_->list_weights(study_).empty());
  // Early stopped trials rank.
  EXPECT_TRUE(store_->finish_trials({finish(c[3], 0.4, 5, true, TrialStatus::kEarlyStopped)})[0]);
  EXPECT_EQ(kept("wine"), (std::vector<int64_t>{3}));
}

TEST_P(WeightsTest, ALateDuplicateKeepsNothing) {
  const std::vector<Claim> c = claimed(2);
  EXPECT_TRUE(store_->finish_trials({finish(c[0], 0.5, 3)})[0]);
  TrialFinish again = finish(c[0], 0.99, 3);
  again.keep->bytes = std::make_shared<const std::string>("late");
  EXPECT_FALSE(store_->finish_trials({again})[0]);
  EXPECT_EQ(store_->find_weights(c[0].trial_id)->bytes, binary("0"));
}

TEST_P(WeightsTest, OneBatchOnOneBoardKeepsExactlyTheTop) {
  const std::vector<Claim> c = claimed(8);
  std::vector<TrialFinish> batch;
  for (int i : {0, 2, 4, 6}) batch.push_back(finish(c[static_cast<size_t>(i)], 0.1 * i, 2));
  EXPECT_EQ(store_->finish_trials(batch), std::vector<bool>(4, true));
  EXPECT_EQ(kept("iris"), (std::vector<int64_t>{4, 6}));
}

TEST_P(WeightsTest, LimitsAreCheckedBeforeAnythingIsWritten) {
  const std::vector<Claim> c = claimed(2);
  TrialFinish big = finish(c[0], 0.5, 1);
  big.keep->bytes =
      std::make_shared<const std::string>(static_cast<size_t>(kMaxWeightBytes) + 1, 'x');
  EXPECT_STORE_ERROR(store_->finish_trials({big}), ErrorCode::kInvalidArgument,
                     "weights of 67108865 bytes are over the limit of 67108864 bytes (64 MiB)");
  for (int top : {0, -1, kMaxKeptPerDataset + 1}) {
    EXPECT_STORE_ERROR(store_->finish_trials({finish(c[0], 0.5, top)}), ErrorCode::kInvalidArgument,
                       "keep top must be in 1..100");
  }
  TrialFinish none = finish(c[0], 0.5, 1);
  none.keep->bytes.reset();
  EXPECT_STORE_ERROR(store_->finish_trials({none}), ErrorCode::kInvalidArgument,
                     "weights to keep are missing");
  EXPECT_EQ(store_->get_trial(c[0].trial_id).status, TrialStatus::kRunning);
  EXPECT_TRUE(store_->list_weights(study_).empty());
  // Exactly at the limit is kept.
  TrialFinish edge = finish(c[0], 0.5, 1);
  edge.keep->bytes = std::make_shared<const std::string>(static_cast<size_t>(kMaxWeightBytes), 'y');
  EXPECT_TRUE(store_->finish_trials({edge})[0]);
  EXPECT_EQ(store_->find_weights(c[0].trial_id, false)->size, kMaxWeightBytes);
}

TEST_P(WeightsTest, UnknownIdsAndTheirWeights) {
  EXPECT_FALSE(store_->find_weights(12345));
  EXPECT_STORE_ERROR(store_->list_weights(999), ErrorCode::kNotFound, "no study with id 999");
}

}  // namespace
}  // namespace layerlab::store
