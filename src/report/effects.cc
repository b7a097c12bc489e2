#include "report/effects.h"

#include <map>

namespace layerlab::report {
namespace {

using nlohmann::json;

// Groups the trials of one dataset by the level of parameter p.
std::map<Scalar, Moments, ScalarOrder> by_level(const Sample& s, int p,
                                                const std::vector<const CachedTrial*>& trials) {
  std::map<Scalar, Moments, ScalarOrder> out(ScalarOrder{s.view});
  for (const CachedTrial* t : trials) out[t->params[static_cast<size_t>(p)]].add(t->value);
  return out;
}

CategoricalEffect categorical(const Sample& s, int p, const std::string& dataset,
                              const std::vector<const CachedTrial*>& trials) {
  CategoricalEffect e;
  e.dataset = dataset;
  e.parameter = s.param_name(p);
  e.n = trials.size();
  const auto levels = by_level(s, p, trials);
  std::vector<double> y;
  std::vector<int> group;
  std::map<Scalar, int, ScalarOrder> index(ScalarOrder{s.view});
  for (const auto& [level, m] : levels) index.emplace(level, static_cast<int>(index.size()));
  for (const CachedTrial* t : trials) {
    y.push_back(t->value);
    group.push_back(index.at(t->params[static_cast<size_t>(p)]));
  }
  e.eta2 = explained_share(y, group, static_cast<int>(index.size()));
  const Moments* best = nullptr;
  for (const auto& [level, m] : levels) {
    if (!best || (s.maximize() ? m.mean > best->mean : m.mean < best->mean)) {
      best = &m;
      e.best_level = s.level_json(p, level);
    }
  }
  for (const auto& [level, m] : levels)
    e.levels.push_back({s.level_json(p, level), m, m.mean - best->mean});
  return e;
}

}  // namespace

Effects analyse_effects(const Sample& s) {
  Effects out;
  const auto datasets = s.by_dataset();
  for (int p : s.varied_params()) {
    const auto kind = s.param_kind(p);
    if (kind != study::ParamKind::kName && kind != study::ParamKind::kBool) continue;
    for (const auto& [dataset, trials] : datasets) {
      const auto levels = by_level(s, p, trials);
      if (levels.size() < 2) continue;
      if (kind == study::ParamKind::kName) {
        out.categorical.push_back(categorical(s, p, dataset, trials));
        continue;
      }
      BinaryEffect b;
      b.dataset = dataset;
      b.parameter = s.param_name(p);
      for (const auto& [level, m] : levels)
        if (!level.missing()) (level.number != 0 ? b.on : b.off) = m;
      if (b.on.n == 0 || b.off.n == 0) continue;  // true and missing, say: nothing to compare
      b.difference = mean_difference(b.on, b.off);
      out.binary.push_back(std::move(b));
    }
  }
  return out;
}

json to_json(const Effects& e) {
  json categorical = json::array();
  for (const CategoricalEffect& c : e.categorical) {
    json levels = json::array();
    for (const LevelEffect& l : c.levels)
      levels.push_back({{"level", l.level},
                        {"n", l.metric.n},
                        {"mean", number_json(l.metric.mean)},
                        {"se", number_json(l.metric.se())},
                        {"diff_to_best", number_json(l.diff_to_best)}});
    categorical.push_back({{"dataset", c.dataset},
                           {"parameter", c.parameter},
                           {"n", c.n},
                           {"best_level", c.best_level},
                           {"eta2", number_json(c.eta2)},
                           {"levels", std::move(levels)}});
  }
  json binary = json::array();
  for (const BinaryEffect& b : e.binary)
    binary.push_back(
        {{"dataset", b.dataset},
         {"parameter", b.parameter},
         {"n_true", b.on.n},
         {"n_false", b.off.n},
         {"mean_true", number_json(b.on.mean)},
         {"mean_false", number_json(b.off.mean)},
         {"diff", number_json(b.difference.diff)},
         {"ci95", b.difference.ci_low ? json::array({number_json(b.difference.ci_low),
                                                     number_json(b.difference.ci_high)})
                                      : json(nullptr)},
         {"df", number_json(b.difference.df)},
         {"cohens_d", number_json(b.difference.cohens_d)}});
  return {{"rule", kEffectRule},
          {"categorical", std::move(categorical)},
          {"binary", std::move(binary)}};
}

}  // namespace layerlab::report
