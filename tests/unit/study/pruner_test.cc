#include "study/pruner.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"

namespace layerlab::study {
namespace {

std::unique_ptr<Pruner> asha(int min_epochs, int eta) {
  PrunerConfig c;
  c.type = "asha";
  c.min_epochs = min_epochs;
  c.eta = eta;
  return make_pruner(c);
}

TEST(AshaPruner, DecidesOnlyAtRungs) {
  auto p = asha(2, 3);
  for (int e : {2, 6, 18, 54}) EXPECT_TRUE(p->decides_at(e)) << e;
  for (int e : {1, 3, 5, 7, 17, 19}) EXPECT_FALSE(p->decides_at(e)) << e;
  EXPECT_FALSE(p->should_prune(5, 0.0, EpochRanking(std::vector<double>{0.9, 0.9, 0.9}), true));
}

TEST(AshaPruner, KeepsTheBestThirdAtARung) {
  auto p = asha(1, 3);
  const EpochRanking others(std::vector<double>{0.9, 0.8, 0.7, 0.6, 0.5});  // with this: 6
  EXPECT_FALSE(p->should_prune(1, 0.95, others, true));                     // the best
  EXPECT_FALSE(p->should_prune(1, 0.85, others, true));  // second of six: within 6/3 = 2
  EXPECT_TRUE(p->should_prune(1, 0.75, others, true));
  // Minimising: the lowest values survive.
  EXPECT_FALSE(p->should_prune(1, 0.4, others, false));
  EXPECT_TRUE(p->should_prune(1, 0.65, others, false));
}

TEST(AshaPruner, FirstTrialAtARungGoesOnAndNaNIsPruned) {
  auto p = asha(1, 3);
  EXPECT_FALSE(p->should_prune(1, 0.1, EpochRanking{}, true));
  EXPECT_TRUE(p->should_prune(1, std::nan(""), EpochRanking(std::vector<double>{0.5}), true));
  // Others' NaN values (diverged trials) rank last.
  EXPECT_FALSE(
      p->should_prune(1, 0.2, EpochRanking(std::vector<double>{std::nan(""), std::nan("")}), true));
}

TEST(MedianPruner, PrunesBelowTheMedianAfterWarmup) {
  PrunerConfig c;
  c.type = "median";
  c.warmup_epochs = 2;
  c.min_trials = 3;
  auto p = make_pruner(c);
  const EpochRanking others(std::vector<double>{0.5, 0.6, 0.7, 0.8});  // median 0.65
  EXPECT_FALSE(p->should_prune(2, 0.1, others, true));                 // warm-up
  EXPECT_TRUE(p->should_prune(3, 0.6, others, true));
  EXPECT_FALSE(p->should_prune(3, 0.7, others, true));
  EXPECT_TRUE(p->should_prune(3, 0.7, others, false));
  EXPECT_FALSE(p->should_prune(3, 0.1, EpochRanking(std::vector<double>{0.5, 0.9}),
                               true));  // too few trials
}

TEST(Pruners, NoneAndUnknownTypes) {
  EXPECT_EQ(make_pruner({}), nullptr);
  PrunerConfig c;
  c.type = "hyperbnd";
  try {
    make_pruner(c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown early_terminate type 'hyperbnd'"),
              std::string::npos);
  }
  c.type = "asha";
  c.eta = 1;
  EXPECT_THROW(make_pruner(c), Error);
}

TEST(PrunerRegistry, NamesEachTypeAndTheSettingsItTakes) {
  EXPECT_EQ(pruner_types(), (std::vector<std::string>{"asha", "median"}));
  EXPECT_EQ(pruner_settings("asha"), (std::vector<std::string>{"min_epochs", "eta"}));
  EXPECT_EQ(pruner_settings("median"), (std::vector<std::string>{"warmup_epochs"}));
  try {
    pruner_settings("hyperband");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown early_terminate type 'hyperband'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace layerlab::study
