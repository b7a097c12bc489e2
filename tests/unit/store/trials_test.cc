// Trials: adding (idempotent), reading, listing, epoch records.
#include <cmath>
#include <limits>
#include <tuple>

#include "store_test_util.h"

namespace layerlab::store {
namespace {

using testing::StoreTest;

std::vector<int64_t> numbers(const std::vector<TrialRecord>& trials) {
  std::vector<int64_t> out;
  for (const TrialRecord& t : trials) out.push_back(t.number);
  return out;
}

TEST_P(StoreTest, AddTrialsStoresThemQueued) {
  int64_t study = store_->create_study("s", nullptr);
  nlohmann::json p = {{"hidden_layers", 4}, {"activation", "relu"}, {"seed", 0}};
  std::vector<int64_t> ids = store_->add_trials(study, {{0, "iris", p}, {1, "wine", p}});
  ASSERT_EQ(ids.size(), 2u);
  TrialRecord t = store_->get_trial(ids[1]);
  EXPECT_EQ(t.id, ids[1]);
  EXPECT_EQ(t.study_id, study);
  EXPECT_EQ(t.number, 1);
  EXPECT_EQ(t.dataset, "wine");
  EXPECT_EQ(t.params, p);
  EXPECT_EQ(t.status, TrialStatus::kQueued);
  EXPECT_EQ(t.attempts, 0);
  EXPECT_TRUE(t.result.is_null());
  EXPECT_FALSE(t.value);
  EXPECT_EQ(t.created_at, clock_.now());
  EXPECT_FALSE(t.started_at || t.finished_at || t.lease_expires);
  EXPECT_STORE_ERROR(store_->get_trial(999), ErrorCode::kNotFound, "no trial with id 999");
}

TEST_P(StoreTest, AddTrialsIsIdempotentOnNumber) {
  int64_t study = store_->create_study("s", nullptr);
  std::vector<int64_t> first =
      store_->add_trials(study, {{0, "iris", {{"u", 1}}}, {1, "iris", {}}});
  // A resumed coordinator re-adds 0 and 1 (even with other params) and adds 2.
  std::vector<int64_t> again =
      store_->add_trials(study, {{1, "iris", {{"u", 99}}}, {0, "iris", {}}, {2, "iris", {}}});
  EXPECT_EQ(again[0], first[1]);
  EXPECT_EQ(again[1], first[0]);
  EXPECT_EQ(store_->counts(study).total(), 3);
  EXPECT_EQ(store_->get_trial(first[0]).params, (nlohmann::json{{"u", 1}}));
  // The same number in another study is another trial.
  int64_t other = store_->create_study("t", nullptr);
  EXPECT_NE(store_->add_trials(other, {{0, "iris", {}}})[0], first[0]);
}

TEST_P(StoreTest, AddTrialsRejectsBadInputAndWritesNothing) {
  int64_t study = store_->create_study("s", nullptr);
  EXPECT_STORE_ERROR(store_->add_trials(study, {{0, "iris", {}}, {-1, "iris", {}}}),
                     ErrorCode::kInvalidArgument, "trial -1: the number is negative");
  EXPECT_STORE_ERROR(store_->add_trials(study, {{0, "iris", {}}, {1, "", {}}}),
                     ErrorCode::kInvalidArgument, "trial 1: the dataset is empty");
  EXPECT_STORE_ERROR(store_->add_trials(study, {{0, "iris", nlohmann::json::array()}}),
                     ErrorCode::kInvalidArgument, "params must be a JSON object");
  EXPECT_EQ(store_->counts(study).total(), 0);
}

TEST_P(StoreTest, ListTrialsFiltersSortsAndPages) {
  int64_t study = store_->create_study("s", nullptr);
  std::vector<NewTrial> add;
  for (int i = 0; i < 6; ++i)
    add.push_back({i, i % 2 ? "wine" : "iris", {{"hidden_layers", 10 - i}, {"opt", {{"lr", i}}}}});
  store_->add_trials(study, add);
  // Finish 0..3 with values 0.3, 0.9, none, 0.5; 4 runs; 5 stays queued.
  std::vector<std::optional<double>> values = {0.3, 0.9, std::nullopt, 0.5};
  for (int i = 0; i < 5; ++i) {
    clock_.advance(std::chrono::milliseconds(10));
    auto c = store_->claim_next("w", {});
    ASSERT_TRUE(c);
    ASSERT_EQ(c->number, i);
    if (i < 4) {
      clock_.advance(std::chrono::milliseconds(100 * (4 - i)));
      TrialStatus s =
          values[static_cast<size_t>(i)] ? TrialStatus::kCompleted : TrialStatus::kFailed;
      ASSERT_TRUE(store_->finish_trial(c->trial_id, c->attempt, s, nullptr,
                                       values[static_cast<size_t>(i)], ""));
    }
  }
  auto list = [&](TrialFilter f) { return numbers(store_->list_trials(study, f)); };
  using V = std::vector<int64_t>;
  EXPECT_EQ(list({}), (V{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(list({.statuses = {TrialStatus::kCompleted}}), (V{0, 1, 3}));
  EXPECT_EQ(list({.statuses = {TrialStatus::kQueued, TrialStatus::kRunning}}), (V{4, 5}));
  EXPECT_EQ(list({.dataset = "wine"}), (V{1, 3, 5}));
  // Trials without a value come last in both directions.
  EXPECT_EQ(list({.sort = TrialSort::kValue, .descending = true}), (V{1, 3, 0, 2, 4, 5}));
  EXPECT_EQ(list({.sort = TrialSort::kValue}), (V{0, 3, 1, 2, 4, 5}));
  EXPECT_EQ(list({.sort = TrialSort::kValue, .descending = true, .limit = 2, .offset = 1}),
            (V{3, 0}));
  EXPECT_EQ(list({.sort = TrialSort::kDuration}), (V{3, 2, 1, 0, 4, 5}));
  EXPECT_EQ(list({.sort = TrialSort::kParam, .param = "hidden_layers"}), (V{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(list({.sort = TrialSort::kParam, .param = "opt.lr", .descending = true}),
            (V{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(list({.sort = TrialSort::kParam, .param = "absent"}), (V{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(list({.limit = 2, .offset = 5}), (V{5}));
  EXPECT_STORE_ERROR(list({.sort = TrialSort::kParam, .param = "x'); DROP TABLE trials; --"}),
                     ErrorCode::kInvalidArgument, "cannot sort by parameter");
  EXPECT_STORE_ERROR(list({.limit = -1}), ErrorCode::kInvalidArgument, "limit and offset");
  // Issue 52: the key is checked in one pass and held to a length (a regex recursed once
  // per character and overflowed the stack at 28,000).
  EXPECT_STORE_ERROR(list({.sort = TrialSort::kParam, .param = std::string(28'000, 'a')}),
                     ErrorCode::kInvalidArgument, "cannot sort by a parameter name of 28000 bytes");
  for (const char* bad : {"", ".a", "a.", "a..b", "a-b", "a b"})
    EXPECT_STORE_ERROR(list({.sort = TrialSort::kParam, .param = bad}), ErrorCode::kInvalidArgument,
                       "cannot sort by parameter");
}

TEST(ParamKey, NamesJoinedBySingleDotsUpToTheLimit) {
  for (const char* ok : {"a", "hidden_layers", "opt.lr", "a.b.c", "A9_"})
    EXPECT_TRUE(is_param_key(ok)) << ok;
  for (const char* bad : {"", ".", ".a", "a.", "a..b", "a;b", "a/b", "\xc3\xa9"})
    EXPECT_FALSE(is_param_key(bad)) << bad;
  EXPECT_TRUE(is_param_key(std::string(kMaxParamKey, 'a')));
  EXPECT_FALSE(is_param_key(std::string(kMaxParamKey + 1, 'a')));
}

TEST_P(StoreTest, EpochsAreAppendedAndReadBack) {
  study_with_trials("s", 1);
  auto c = store_->claim_next("w", {});
  ASSERT_TRUE(c);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<EpochRow> rows = {{0, 1.5, 1.6, 0.4, 0.01, {{"lr", 0.1}}},
                                {1, 1.0, nan, 0.6, 0.02, nullptr}};
  EXPECT_TRUE(store_->append_epochs(c->trial_id, c->attempt, rows));
  EXPECT_TRUE(store_->append_epochs(c->trial_id, c->attempt, {{2, inf, inf, nan, 0.03, nullptr}}));
  // Writing an epoch again keeps the last version.
  EXPECT_TRUE(
      store_->append_epochs(c->trial_id, c->attempt, {{1, 0.9, 0.95, 0.65, 0.02, nullptr}}));
  std::vector<EpochRecord> got = store_->list_epochs(c->trial_id);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].row.epoch, 0);
  EXPECT_EQ(got[0].attempt, 1);
  EXPECT_EQ(got[0].row.train_loss, 1.5);
  EXPECT_EQ(got[0].row.extra, (nlohmann::json{{"lr", 0.1}}));
  EXPECT_EQ(got[1].row.val_loss, 0.95);
  EXPECT_TRUE(got[1].row.extra.is_null());
  EXPECT_EQ(got[2].row.train_loss, inf);
  EXPECT_TRUE(std::isnan(got[2].row.val_metric));
  EXPECT_EQ(store_->list_epochs(c->trial_id, 2).size(), 0u);
  EXPECT_EQ(store_->list_epochs(c->trial_id, 1).size(), 3u);

  // A stale attempt writes nothing.
  EXPECT_FALSE(store_->append_epochs(c->trial_id, c->attempt + 1, rows));
  ASSERT_TRUE(
      store_->finish_trial(c->trial_id, c->attempt, TrialStatus::kCompleted, nullptr, 0.65, ""));
  EXPECT_FALSE(store_->append_epochs(c->trial_id, c->attempt, {{3, 0, 0, 0, 0, nullptr}}));
  EXPECT_EQ(store_->list_epochs(c->trial_id).size(), 3u);
}

// A pack's members in one transaction: each current attempt's rows are written, a stale
// one writes nothing and does not hold the others back; a member with no rows is only
// checked; a count of transactions shows it took one.
TEST_P(StoreTest, EpochsOfSeveralAttemptsAreAppendedInOneTransaction) {
  const int64_t study = study_with_trials("s", 4);
  std::vector<Claim> c;
  for (int i = 0; i < 4; ++i) c.push_back(*store_->claim_next("w", {study}));
  ASSERT_TRUE(
      store_->finish_trial(c[2].trial_id, c[2].attempt, TrialStatus::kCompleted, nullptr, 0.5, ""));
  const uint64_t before = store_->stats().transactions;
  const std::vector<bool> applied = store_->append_epochs_batch(
      {{c[0].trial_id,
        c[0].attempt,
        {{1, 1.0, 1.1, 0.5, 0.1, nullptr}, {2, 0.8, 0.9, 0.6, 0.1, {{"lr", 0.01}}}}},
       {c[1].trial_id, c[1].attempt, {{1, 2.0, 2.1, 0.3, 0.1, nullptr}}},
       {c[2].trial_id, c[2].attempt, {{1, 3.0, 3.1, 0.2, 0.1, nullptr}}},      // finished: stale
       {c[3].trial_id, c[3].attempt + 1, {{1, 4.0, 4.1, 0.1, 0.1, nullptr}}},  // no such attempt
       {c[3].trial_id, c[3].attempt, {}}});
  EXPECT_EQ(store_->stats().transactions, before + 1);
  EXPECT_EQ(applied, (std::vector<bool>{true, true, false, false, true}));
  const std::vector<EpochRecord> first = store_->list_epochs(c[0].trial_id);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[1].row.val_loss, 0.9);
  EXPECT_EQ(first[1].row.extra, (nlohmann::json{{"lr", 0.01}}));
  ASSERT_EQ(store_->list_epochs(c[1].trial_id).size(), 1u);
  EXPECT_EQ(store_->list_epochs(c[1].trial_id)[0].row.train_loss, 2.0);
  EXPECT_TRUE(store_->list_epochs(c[2].trial_id).empty());
  EXPECT_TRUE(store_->list_epochs(c[3].trial_id).empty());
  EXPECT_TRUE(store_->append_epochs_batch({}).empty());
  EXPECT_STORE_ERROR(store_->append_epochs_batch({{c[0].trial_id, 0, {}}}),
                     ErrorCode::kInvalidArgument, "attempt");
}

TEST_P(StoreTest, EpochValuesComparesTrialsAtOneEpochFromTheirLatestAttempt) {
  const int64_t study = study_with_trials("s", 3);
  study_with_trials("other", 1);
  std::vector<Claim> claims;
  for (int i = 0; i < 3; ++i) claims.push_back(*store_->claim_next("w", {study}));
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(store_->append_epochs(claims[i].trial_id, claims[i].attempt,
                                      {{1, 1.0 + i, 2.0 + i, 0.5 + i / 10.0, 0.1, nullptr},
                                       {2, 0.5 + i, 1.5 + i, 0.6 + i / 10.0, 0.1, nullptr}}));
  // A retried trial is represented by its latest attempt only.
  ASSERT_TRUE(store_->release_trial(claims[2].trial_id, claims[2].attempt));
  const Claim retry = *store_->claim_next("w", {study});
  ASSERT_EQ(retry.trial_id, claims[2].trial_id);
  ASSERT_TRUE(
      store_->append_epochs(retry.trial_id, retry.attempt, {{1, 9.0, 9.0, 0.9, 0.1, nullptr}}));

  auto by_trial = [](std::vector<TrialValue> v) {
    std::sort(v.begin(), v.end(),
              [](const TrialValue& a, const TrialValue& b) { return a.trial_id < b.trial_id; });
    return v;
  };
  const int64_t t0 = claims[0].trial_id, t1 = claims[1].trial_id, t2 = claims[2].trial_id;
  EXPECT_EQ(by_trial(store_->epoch_values(study, 1, EpochField::kValMetric)),
            by_trial({{t0, 0.5}, {t1, 0.6}, {t2, 0.9}}));
  EXPECT_EQ(by_trial(store_->epoch_values(study, 2, EpochField::kTrainLoss)),
            by_trial({{t0, 0.5}, {t1, 1.5}}));  // the retry has no epoch 2 yet
  EXPECT_EQ(by_trial(store_->epoch_values(study, 1, EpochField::kValLoss)),
            by_trial({{t0, 2.0}, {t1, 3.0}, {t2, 9.0}}));
  EXPECT_TRUE(store_->epoch_values(study, 7, EpochField::kValLoss).empty());
}

// A page of trials' attempts and curves, each in one query: the same records as asking
// trial by trial (every attempt; the latest attempt's epochs), in number order, only the
// study's trials numbered within the bounds.
TEST_P(StoreTest, APageOfTrialsAttemptsAndCurvesAreReadTogether) {
  const int64_t study = study_with_trials("s", 5);
  const int64_t other = study_with_trials("other", 2);
  std::vector<Claim> claims;
  for (int i = 0; i < 4; ++i) claims.push_back(*store_->claim_next("w", {study}));
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(store_->append_epochs(
        claims[i].trial_id, claims[i].attempt,
        {{1, 1.0 + i, 2.0 + i, 0.5, 0.1, nullptr}, {2, 0.5 + i, 1.5 + i, 0.6, 0.1, nullptr}}));
  ASSERT_TRUE(store_->release_trial(claims[1].trial_id, claims[1].attempt));
  const Claim retry = *store_->claim_next("w", {study});
  ASSERT_EQ(retry.trial_id, claims[1].trial_id);
  ASSERT_TRUE(
      store_->append_epochs(retry.trial_id, retry.attempt, {{1, 9.0, 9.0, 0.9, 0.1, nullptr}}));
  const Claim elsewhere = *store_->claim_next("w", {other});
  ASSERT_TRUE(store_->append_epochs(elsewhere.trial_id, elsewhere.attempt,
                                    {{1, 7.0, 7.0, 0.7, 0.1, nullptr}}));

  auto key = [](const auto& r) { return std::make_tuple(r.trial_id, r.attempt); };
  for (const auto& [first, last] : std::vector<std::pair<int64_t, int64_t>>{{0, 4}, {1, 2}}) {
    std::vector<std::tuple<int64_t, int>> attempts, expected_attempts;
    std::vector<std::tuple<int64_t, int, int, double>> epochs, expected_epochs;
    for (const TrialRecord& t : store_->list_trials(study, {})) {
      if (t.number < first || t.number > last) continue;
      for (const AttemptRecord& a : store_->list_attempts(t.id))
        expected_attempts.push_back(key(a));
      if (t.attempts > 0)
        for (const EpochRecord& e : store_->list_epochs(t.id, t.attempts))
          expected_epochs.push_back(
              std::tuple_cat(key(e), std::make_tuple(e.row.epoch, e.row.train_loss)));
    }
    for (const AttemptRecord& a : store_->list_attempts_of(study, first, last))
      attempts.push_back(key(a));
    for (const EpochRecord& e : store_->list_latest_epochs_of(study, first, last))
      epochs.push_back(std::tuple_cat(key(e), std::make_tuple(e.row.epoch, e.row.train_loss)));
    EXPECT_EQ(attempts, expected_attempts) << first << ".." << last;
    EXPECT_EQ(epochs, expected_epochs) << first << ".." << last;
    EXPECT_FALSE(expected_epochs.empty());
  }
  EXPECT_EQ(store_->list_attempts_of(study, 1, 1).size(), 2u) << "the lost attempt and the retry";
  EXPECT_EQ(store_->list_latest_epochs_of(study, 1, 1).size(), 1u) << "the retry's epoch only";
  EXPECT_TRUE(store_->list_attempts_of(study, 5, 9).empty());
  EXPECT_STORE_ERROR(store_->list_attempts_of(999, 0, 9), ErrorCode::kNotFound, "list_attempts_of");
  EXPECT_STORE_ERROR(store_->list_latest_epochs_of(999, 0, 9), ErrorCode::kNotFound,
                     "list_latest_epochs_of");
}

TEST_P(StoreTest, AddsThousandsOfTrialsInOneCall) {
  const int64_t study = store_->create_study("big", nullptr);
  std::vector<NewTrial> add;
  for (int i = 0; i < 3000; ++i)
    add.push_back({i,
                   i % 2 ? "wine" : "iris",
                   {{"i", i}, {"name", "it's \"quoted\" \\ {x}"}},
                   static_cast<double>(i % 7)});
  const std::vector<int64_t> ids = store_->add_trials(study, add);
  ASSERT_EQ(ids.size(), 3000u);
  for (size_t i = 1; i < ids.size(); ++i) ASSERT_LT(ids[i - 1], ids[i]);
  const TrialRecord t = store_->get_trial(ids[1234]);
  EXPECT_EQ(t.number, 1234);
  EXPECT_EQ(t.params, add[1234].params);
  // Re-adding (in another order, with new numbers and a number given twice) keeps the rows.
  std::vector<NewTrial> again = {
      {2999, "iris", {}}, {3000, "iris", {}}, {5, "x", {}}, {3000, "wine", {}}};
  const std::vector<int64_t> again_ids = store_->add_trials(study, again);
  EXPECT_EQ(again_ids[0], ids[2999]);
  EXPECT_EQ(again_ids[2], ids[5]);
  EXPECT_EQ(again_ids[1], again_ids[3]);
  EXPECT_EQ(store_->get_trial(again_ids[1]).dataset, "iris");
  EXPECT_EQ(store_->count_trials(study, {}), 3001);
  EXPECT_EQ(store_->trials_changed_since(0, 10'000).size(), 3001u);
  EXPECT_TRUE(store_->add_trials(study, {}).empty());
}

TEST_P(StoreTest, SortingByAParameterOfMixedTypesFollowsOneOrder) {
  const int64_t study = store_->create_study("mixed", nullptr);
  const std::vector<nlohmann::json> values = {
      3,  "b",   2.5,    true,      nullptr /* absent */, nlohmann::json(), "a",
      -1, false, {1, 2}, {{"x", 1}}};
  std::vector<NewTrial> add;
  for (size_t i = 0; i < values.size(); ++i) {
    nlohmann::json params = nlohmann::json::object();
    if (i != 4) params["p"] = values[i];  // 4: no p at all; 5: p is null
    add.push_back({static_cast<int64_t>(i), "iris", params});
  }
  store_->add_trials(study, add);
  auto list = [&](bool descending) {
    return numbers(store_->list_trials(
        study, {.sort = TrialSort::kParam, .param = "p", .descending = descending}));
  };
  // SQLite's order of json_extract values: numbers (booleans as 1/0) by value, then text
  // bytewise (arrays and objects as their JSON); missing and null last, by number.
  using V = std::vector<int64_t>;
  EXPECT_EQ(list(false), (V{7, 8, 3, 2, 0, 9, 6, 1, 10, 4, 5}));
  EXPECT_EQ(list(true), (V{10, 1, 6, 9, 0, 2, 3, 8, 7, 4, 5}));
}

}  // namespace
}  // namespace layerlab::store
