#include "study/pruner.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/error.h"
#include "common/registry.h"

namespace layerlab::study {
namespace {

// Orders values best first for the study's goal; NaN (a diverged or missing value) last.
std::vector<double> best_first(std::span<const double> values, double extra, bool maximize) {
  std::vector<double> v(values.begin(), values.end());
  v.push_back(extra);
  std::sort(v.begin(), v.end(), [maximize](double a, double b) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
    return maximize ? a > b : a < b;
  });
  return v;
}

// Optuna's MedianPruner: after the warm-up, stop a trial whose value is worse than the
// median of the other trials' values after the same number of epochs.
class MedianPruner final : public Pruner {
 public:
  explicit MedianPruner(const PrunerConfig& c) : c_(c) {}
  bool decides_at(int epoch) const override { return epoch > c_.warmup_epochs; }
  bool should_prune(int epoch, double value, std::span<const double> others,
                    bool maximize) const override {
    if (!decides_at(epoch)) return false;
    if (std::isnan(value)) return true;
    std::vector<double> finite;
    for (double v : others)
      if (!std::isnan(v)) finite.push_back(v);
    if (static_cast<int>(finite.size()) < c_.min_trials) return false;
    std::sort(finite.begin(), finite.end());
    const size_t n = finite.size();
    const double median = n % 2 ? finite[n / 2] : 0.5 * (finite[n / 2 - 1] + finite[n / 2]);
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
  bool should_prune(int epoch, double value, std::span<const double> others,
                    bool maximize) const override {
    if (!decides_at(epoch)) return false;
    if (std::isnan(value)) return true;
    const std::vector<double> ranked = best_first(others, value, maximize);
    const size_t keep = std::max<size_t>(1, ranked.size() / static_cast<size_t>(c_.eta));
    const double threshold = ranked[keep - 1];
    return maximize ? value < threshold : value > threshold;
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
