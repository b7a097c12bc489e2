#include "study/pruner.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/error.h"
#include "common/registry.h"

namespace layerlab::study {
namespace {

// Optuna's MedianPruner: after the warm-up, stop a trial whose value is worse than the
// median of the other trials' values after the same number of epochs.
class MedianPruner final : public Pruner {
 public:
  explicit MedianPruner(const PrunerConfig& c) : c_(c) {}
  bool decides_at(int epoch) const override { return epoch > c_.warmup_epochs; }
  bool should_prune(int epoch, double value, const EpochRanking& others,
                    bool maximize) const override {
    if (!decides_at(epoch)) return false;
    if (std::isnan(value)) return true;
    const size_t n = others.finite();  // NaN values (diverged trials) have no median
    if (static_cast<int64_t>(n) < c_.min_trials) return false;
    const double median = n % 2 ? others.nth_lowest(n / 2)
                                : 0.5 * (others.nth_lowest(n / 2 - 1) + others.nth_lowest(n / 2));
    return maximize ? value < median : value > median;
  }

 private:
  PrunerConfig c_;
};

// Asynchronous successive halving (Li et al. 2018, as Optuna's SuccessiveHalvingPruner):
// rungs at min_epochs * eta^k epochs; at a rung a trial goes on only if it is within the
// best 1/eta of the trials that reached that rung (the best one when fewer than eta have).
class AshaPruner final : public Pruner {
 public:
  explicit AshaPruner(const PrunerConfig& c) : c_(c) {}
  bool decides_at(int epoch) const override {
    for (int64_t rung = c_.min_epochs; rung <= epoch; rung *= c_.eta)
      if (rung == epoch) return true;
    return false;
  }
  // With this trial's value among the others, NaN ranking last, the trial goes on when it
  // is within the best `keep`: that is, when fewer than `keep` others are strictly better.
  bool should_prune(int epoch, double value, const EpochRanking& others,
                    bool maximize) const override {
    if (!decides_at(epoch)) return false;
    if (std::isnan(value)) return true;
    const size_t ranked = others.finite() + others.nans() + 1;
    const size_t keep = std::max<size_t>(1, ranked / static_cast<size_t>(c_.eta));
    return others.count_better(value, maximize) >= keep;
  }

 private:
  PrunerConfig c_;
};

}  // namespace

namespace {

struct PrunerType {
  std::unique_ptr<Pruner> (*make)(const PrunerConfig&);
  std::vector<std::string> settings;  // keys of the early_terminate block besides "type"
};

const Registry<PrunerType>& pruners() {
  static const Registry<PrunerType> registry = [] {
    Registry<PrunerType> r("early_terminate type");
    r.add("median", {[](const PrunerConfig& c) -> std::unique_ptr<Pruner> {
                       return std::make_unique<MedianPruner>(c);
                     },
                     {"warmup_epochs"}});
    r.add("asha", {[](const PrunerConfig& c) -> std::unique_ptr<Pruner> {
                     return std::make_unique<AshaPruner>(c);
                   },
                   {"min_epochs", "eta"}});
    return r;
  }();
  return registry;
}

}  // namespace

std::unique_ptr<Pruner> make_pruner(const PrunerConfig& config) {
  if (config.type.empty()) return nullptr;
  if (config.min_epochs < 1 || config.eta < 2)
    throw invalid_argument("early_terminate: min_epochs must be >= 1 and eta >= 2");
  return pruners().get(config.type).make(config);
}

std::vector<std::string> pruner_types() {
  return pruners().names();
}

const std::vector<std::string>& pruner_settings(const std::string& type) {
  return pruners().get(type).settings;
}

}  // namespace layerlab::study
