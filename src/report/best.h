// The best configurations of each dataset: trials with the same parameters but the seed are
// one configuration, ranked by their mean metric.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/sample.h"
#include "report/stats.h"

namespace layerlab::report {

inline constexpr size_t kBestConfigurations = 10;

inline constexpr const char* kBestRule =
    "Best configurations, per dataset: analysed trials that share every varied parameter but "
    "the seed form one configuration; configurations are ranked by their mean metric over "
    "seeds (by the study's goal; ties: more trials first, then the lower trial number), top "
    "10 shown with the varied parameters.";

struct Configuration {
  std::string dataset;
  nlohmann::json params = nlohmann::json::object();  // the varied parameters but the seed
  Moments metric;
  int64_t best_number = 0;  // the configuration's best trial
  double best_value = 0;
  int64_t first_number = 0;
};

// Up to `top` configurations per dataset, best first, datasets in study order.
std::vector<Configuration> best_configurations(const Sample& s, size_t top = kBestConfigurations);
nlohmann::json to_json(const std::vector<Configuration>& configurations);

}  // namespace layerlab::report
