// The study the report tests run once per ctest run with the real `layerlab run`:
// 2 datasets x 3 depths x 2 activations x 2 seeds = 24 short trials on an embedded SQLite
// store in a fresh directory, and its trials as `layerlab export` gives them.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "integration/study_commands.h"

namespace layerlab::testing {

inline constexpr const char* kReportStudy = R"(name: depth-report
datasets: [iris, wine]
seeds: [0, 1]
parameters:
  hidden_layers: {values: [1, 2, 4]}
  activation: {values: [relu, tanh]}
  units: {value: 8}
  epochs: {value: 3}
)";

struct ReportStudy {
  Study study;
  nlohmann::json exported;  // `layerlab export --format json`
};

// Runs the study the first time it is asked for (a failure fails every caller).
inline const ReportStudy& report_study() {
  static const ReportStudy s = [] {
    ReportStudy r;
    r.study = finished_study("report", kReportStudy);
    r.exported = export_json(r.study, "depth-report");
    return r;
  }();
  return s;
}

// `layerlab report ARGS --store STORE` on the report study's store.
inline CommandResult report(const std::string& args) {
  return run_layerlab("report " + args + " --store " + report_study().study.store);
}

}  // namespace layerlab::testing
