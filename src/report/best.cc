#include "report/best.h"

#include <algorithm>
#include <map>

namespace layerlab::report {

using nlohmann::json;

std::vector<Configuration> best_configurations(const Sample& s, size_t top) {
  std::vector<Configuration> out;
  const std::vector<int> params = s.varied_params();
  const bool maximize = s.maximize();
  auto better = [maximize](double a, double b) { return maximize ? a > b : a < b; };
  struct Group {
    const CachedTrial* first = nullptr;  // its parameters are the configuration's
    Configuration c;
  };
  for (const auto& [dataset, trials] : s.by_dataset()) {
    std::map<std::vector<Scalar>, Group, ScalarsOrder> configs(ScalarsOrder{{s.view}});
    std::vector<Scalar> key(params.size());
    for (const CachedTrial* t : trials) {  // by number: the first trial of a config comes first
      for (size_t i = 0; i < params.size(); ++i) key[i] = t->params[static_cast<size_t>(params[i])];
      Group& g = configs[key];
      Configuration& c = g.c;
      if (!g.first) {
        g.first = t;
        c.first_number = t->number;
      }
      if (c.metric.n == 0 || better(t->value, c.best_value)) {
        c.best_value = t->value;
        c.best_number = t->number;
      }
      c.metric.add(t->value);
    }
    std::vector<Group*> ranked;
    ranked.reserve(configs.size());
    for (auto& [k, g] : configs) ranked.push_back(&g);
    const size_t n = std::min(top, ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(n), ranked.end(),
                      [&](const Group* a, const Group* b) {
                        if (a->c.metric.mean != b->c.metric.mean)
                          return better(a->c.metric.mean, b->c.metric.mean);
                        if (a->c.metric.n != b->c.metric.n) return a->c.metric.n > b->c.metric.n;
                        return a->c.first_number < b->c.first_number;
                      });
    // Only the configurations shown get their parameters as JSON.
    for (size_t r = 0; r < n; ++r) {
      Configuration c = ranked[r]->c;
      c.dataset = dataset;
      for (int p : params)
        c.params[s.param_name(p)] =
            s.level_json(p, ranked[r]->first->params[static_cast<size_t>(p)]);
      out.push_back(std::move(c));
    }
  }
  return out;
}

json to_json(const std::vector<Configuration>& configurations) {
  json out = json::array();
  std::string dataset;
  int rank = 0;
  for (const Configuration& c : configurations) {
    rank = c.dataset == dataset ? rank + 1 : 1;
    dataset = c.dataset;
    out.push_back({{"dataset", c.dataset},
                   {"rank", rank},
                   {"params", c.params},
                   {"n", c.metric.n},
                   {"mean", number_json(c.metric.mean)},
                   {"se", number_json(c.metric.se())},
                   {"best_value", number_json(c.best_value)},
                   {"best_trial", c.best_number}});
  }
  return out;
}

}  // namespace layerlab::report
