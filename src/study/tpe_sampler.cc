// tpe: the Tree-structured Parzen Estimator (Bergstra et al., "Algorithms for
// Hyper-Parameter Optimization", NIPS 2011), univariate as in Optuna's default TPESampler.
//
// Per dataset, finished observations (and pending suggestions, see below) are sorted by
// loss (the metric, negated when maximised; failed trials are the worst) and split into
// the gamma(n) = min(ceil(0.1 n), 25) best ("below") and the rest ("above"). Each varying
// parameter gets two Parzen estimators, l(x) from below and g(x) from above:
//   numeric parameters, in the unit-cube coordinate of search_space.h (so log_uniform is
//   modelled in log space and integers over their cells): truncated Gaussians on [0, 1]
//   at the observations, bandwidth the larger gap to a neighbour clipped to
//   [1 / min(100, n + 1), 1], plus a prior Gaussian N(0.5, 1) of weight 1;
//   categorical parameters: p(c) proportional to (count of c) + 1.
// 24 candidates are drawn from l and the one maximising log l(x) - log g(x) is taken,
// parameter by parameter. Until 10 observations of a dataset have finished, configurations
// are random (as the random sampler's).
//
// Constant liar: pending suggestions count as observations whose value is the worst
// finished one (ordered after the finished at a tie), so workers asking in parallel are
// pushed away from each other's points instead of getting the same suggestion.
//
// Seeds: the repeats of a configuration (seed index > 0) copy the configuration of the
// trial with the first seed (number - seed index), found among finished or pending.
//
// Random draws are counter-based: hash(study seed, number, parameter, draw), so a
// suggestion is a pure function of (study, number, finished, pending).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <tuple>
#include <unordered_map>

#include "study/sampler.h"

namespace layerlab::study {
namespace {

using nlohmann::json;

constexpr size_t kStartupTrials = 10;
constexpr int kCandidates = 24;
constexpr double kPriorWeight = 1.0;

// A stream of uniforms from the counter-based hash.
class Draws {
 public:
  Draws(uint64_t seed, uint64_t number, uint64_t dim) : seed_(counter_hash(seed, number, dim)) {}
  double uniform() { return counter_uniform(seed_, counter_++); }
  double normal() {
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  uint64_t seed_;
  uint64_t counter_ = 0;
};

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::numbers::sqrt2);
}

// A mixture of Gaussians truncated to [0, 1].
class NumericParzen {
 public:
  explicit NumericParzen(std::vector<double> mus) {
    const size_t n = mus.size();
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return mus[a] < mus[b]; });
    const double min_sigma = 1.0 / std::min(100.0, static_cast<double>(n) + 1.0);
    sigmas_.assign(n, 1.0);
    for (size_t r = 0; r < n; ++r) {
      const double x = mus[order[r]];
      const double left = r == 0 ? 0.0 : mus[order[r - 1]];
      const double right = r + 1 == n ? 1.0 : mus[order[r + 1]];
      sigmas_[order[r]] = std::clamp(std::max(x - left, right - x), min_sigma, 1.0);
    }
    mus_ = std::move(mus);
    mus_.push_back(0.5);
    sigmas_.push_back(1.0);
    weights_.assign(n, 1.0);
    weights_.push_back(kPriorWeight);
    for (double w : weights_) total_ += w;
    for (size_t i = 0; i < mus_.size(); ++i) {
      // Each component's weight over its mass inside [0, 1].
      const double mass =
          normal_cdf((1.0 - mus_[i]) / sigmas_[i]) - normal_cdf(-mus_[i] / sigmas_[i]);
      scale_.push_back(weights_[i] / total_ / std::max(mass, 1e-300));
    }
  }

  double sample(Draws& draws) const {
    double pick = draws.uniform() * total_;
    size_t i = 0;
    while (i + 1 < weights_.size() && pick >= weights_[i]) pick -= weights_[i++];
    for (int attempt = 0; attempt < 100; ++attempt) {
      const double x = mus_[i] + sigmas_[i] * draws.normal();
      if (x >= 0.0 && x < 1.0) return x;
    }
    return std::clamp(mus_[i], 0.0, 1.0);
  }

  double log_pdf(double x) const {
    double p = 0;
    for (size_t i = 0; i < mus_.size(); ++i) {
      const double z = (x - mus_[i]) / sigmas_[i];
      p += scale_[i] * std::exp(-0.5 * z * z) / (sigmas_[i] * std::sqrt(2.0 * std::numbers::pi));
    }
    return std::log(std::max(p, 1e-300));
  }

 private:
  std::vector<double> mus_, sigmas_, weights_, scale_;
  double total_ = 0;
};

class CategoricalParzen {
 public:
  CategoricalParzen(const std::vector<size_t>& observed, size_t choices)
      : p_(choices, kPriorWeight) {
    for (size_t c : observed) p_[c] += 1.0;
    double total = 0;
    for (double w : p_) total += w;
    for (double& w : p_) w /= total;
  }
  size_t sample(Draws& draws) const {
    double pick = draws.uniform();
    for (size_t c = 0; c + 1 < p_.size(); ++c) {
      if (pick < p_[c]) return c;
      pick -= p_[c];
    }
    return p_.size() - 1;
  }
  double log_pdf(size_t c) const { return std::log(p_[c]); }

 private:
  std::vector<double> p_;
};

// The candidate, of kCandidates drawn from l, that maximises l(x) / g(x).
template <typename Parzen>
auto best_of(const Parzen& l, const Parzen& g, Draws& draws) {
  auto best = l.sample(draws);
  double best_score = l.log_pdf(best) - g.log_pdf(best);
  for (int i = 1; i < kCandidates; ++i) {
    const auto x = l.sample(draws);
    const double score = l.log_pdf(x) - g.log_pdf(x);
    if (score > best_score) {
      best = x;
      best_score = score;
    }
  }
  return best;
}

// A trial's value of each varying parameter as the estimators take it: the unit-cube
// coordinate of a numeric one, the index of a categorical one's choice; NaN where the trial
// has none.
using Coords = std::vector<double>;

struct Point {
  double loss;
  bool pending;
  int64_t number;
  const Coords* coords;
};

class TpeSampler : public Sampler {
 public:
  explicit TpeSampler(const StudySpec& spec)
      : spec_(spec),
        space_(spec.parameters),
        seed_(study_seed(spec)),
        total_(spec.total_trials()) {}

  bool adaptive() const override { return true; }

  std::optional<Suggestion> suggest(int64_t number, std::span<const Observation> finished,
                                    std::span<const Suggestion> pending) override {
    if (number < 0 || number >= total_) return std::nullopt;
    const TrialSlot slot = trial_slot(spec_, number);
    if (slot.seed > 0)
      if (auto first = find_config(number - static_cast<int64_t>(slot.seed), finished, pending))
        return Suggestion{number, make_trial(spec_, slot.dataset, slot.seed, *first)};
    const int64_t key = number - static_cast<int64_t>(slot.seed);
    const std::string& dataset = spec_.datasets[slot.dataset];
    std::vector<Coords> pending_coords;
    std::vector<Point> points = history(dataset, finished, pending, pending_coords);
    size_t finished_here = 0;
    for (const Point& p : points) finished_here += !p.pending;
    if (finished_here < kStartupTrials) {
      const std::vector<double> u = random_point(seed_, key, space_.dimensions());
      return Suggestion{number, make_trial(spec_, slot.dataset, slot.seed, space_.from_unit(u))};
    }
    std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
      return std::tie(a.loss, a.pending, a.number) < std::tie(b.loss, b.pending, b.number);
    });
    const size_t n_below = std::min<size_t>(25, (points.size() + 9) / 10);
    json config = json::object();
    for (const auto& [name, domain] : space_.parameters())
      if (domain.fixed()) config[name] = domain.values[0];
    for (size_t k = 0; k < space_.dimensions(); ++k) {
      Draws draws(seed_, static_cast<uint64_t>(key), k);
      config[space_.dimension_name(k)] = choose(space_.dimension(k), k, points, n_below, draws);
    }
    return Suggestion{number, make_trial(spec_, slot.dataset, slot.seed, config)};
  }

 private:
  // The finished and pending trials of `dataset`, with losses (lower is better). A finished
  // trial's coordinates are worked out once (a study asks for thousands of suggestions, each
  // over every finished trial); the pending ones' go to pending_coords.
  std::vector<Point> history(const std::string& dataset, std::span<const Observation> finished,
                             std::span<const Suggestion> pending,
                             std::vector<Coords>& pending_coords) {
    std::vector<Point> points;
    double worst = -std::numeric_limits<double>::infinity();
    for (const Observation& o : finished) {
      if (o.trial.dataset != dataset) continue;
      double loss = spec_.maximize ? -o.value : o.value;
      if (!o.finished_ok || !std::isfinite(loss))
        loss = std::numeric_limits<double>::infinity();
      else
        worst = std::max(worst, loss);
      points.push_back({loss, false, o.number, &finished_coords(o)});
    }
    if (!std::isfinite(worst)) worst = std::numeric_limits<double>::infinity();
    pending_coords.reserve(pending.size());  // the points keep pointers into it
    for (const Suggestion& s : pending) {
      if (s.trial.dataset != dataset) continue;
      pending_coords.push_back(coords_of(s.trial.params));
      points.push_back({worst, true, s.number, &pending_coords.back()});
    }
    return points;
  }

  // Finished trials keep their parameters: cached by number, checked against the trial's
  // parameters (a caller may reuse a number for another trial).
  const Coords& finished_coords(const Observation& o) {
    auto [it, added] = finished_coords_.try_emplace(o.number);
    if (added || !(it->second.first == o.trial.params))
      it->second = {o.trial.params, coords_of(o.trial.params)};
    return it->second.second;
  }

  Coords coords_of(const nn::Params& params) const {
    const json all = params.to_json();
    Coords out(space_.dimensions(), std::nan(""));
    for (size_t k = 0; k < space_.dimensions(); ++k) {
      const Domain& d = space_.dimension(k);
      const json& v = all.at(space_.dimension_name(k));
      if (d.distribution == Distribution::kValues) {
        auto it = std::find(d.values.begin(), d.values.end(), v);
        if (it != d.values.end()) out[k] = static_cast<double>(it - d.values.begin());
      } else if (auto u = d.to_unit(v)) {
        out[k] = *u;
      }
    }
    return out;
  }

  std::optional<json> find_config(int64_t number, std::span<const Observation> finished,
                                  std::span<const Suggestion> pending) const {
    const TrialSpec* t = nullptr;
    for (const Observation& o : finished)
      if (o.number == number) t = &o.trial;
    for (const Suggestion& s : pending)
      if (s.number == number) t = &s.trial;
    if (!t) return std::nullopt;
    const json all = t->params.to_json();
    json config = json::object();
    for (const auto& [name, domain] : space_.parameters()) config[name] = all.at(name);
    return config;
  }

  static json choose(const Domain& d, size_t k, const std::vector<Point>& points, size_t n_below,
                     Draws& draws) {
    if (d.distribution == Distribution::kValues) {
      std::vector<size_t> below, above;
      for (size_t i = 0; i < points.size(); ++i) {
        const double c = (*points[i].coords)[k];
        if (!std::isnan(c)) (i < n_below ? below : above).push_back(static_cast<size_t>(c));
      }
      const CategoricalParzen l(below, d.values.size()), g(above, d.values.size());
      return d.values[best_of(l, g, draws)];
    }
    std::vector<double> below, above;
    for (size_t i = 0; i < points.size(); ++i) {
      const double u = (*points[i].coords)[k];
      if (!std::isnan(u)) (i < n_below ? below : above).push_back(u);
    }
    return d.from_unit(
        best_of(NumericParzen(std::move(below)), NumericParzen(std::move(above)), draws));
  }

  StudySpec spec_;
  SearchSpace space_;
  uint64_t seed_;
  int64_t total_;
  std::unordered_map<int64_t, std::pair<nn::Params, Coords>> finished_coords_;
};

}  // namespace

std::unique_ptr<Sampler> make_tpe_sampler(const StudySpec& spec) {
  return std::make_unique<TpeSampler>(spec);
}

}  // namespace layerlab::study
