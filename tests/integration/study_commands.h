// Helpers for the end-to-end tests of studies: a study file in a fresh directory, and the
// `status` / `export` commands read back as JSON.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "integration/run_command.h"
#include "support/suite_fixture.h"

namespace layerlab::testing {

// 2 datasets x 4 configurations x 2 seeds = 16 short trials.
inline constexpr const char* kQuickStudy = R"(name: quick
datasets: [iris, wine]
seeds: [0, 1]
parameters:
  hidden_layers: {values: [1, 2]}
  units: {value: 16}
  activation: {values: [relu, tanh]}
  epochs: {value: 5}
)";

// ASHA over 2 widths x 2 learning rates x 3 seeds on digits; 1e-9 cannot learn and must
// be pruned. 12 trials of 9 epochs.
inline constexpr const char* kAshaStudy = R"(name: asha
datasets: [digits]
seeds: [0, 1, 2]
parameters:
  learning_rate: {values: [0.01, 1.0e-9]}
  units: {values: [16, 32]}
  optimizer: {value: adam}
  epochs: {value: 9}
early_terminate: {type: asha, min_epochs: 1, eta: 3}
)";

struct Study {
  std::filesystem::path dir, file;
  std::string store;  // a SQLite file in dir unless the test sets another URL
};

// The study of directory `dir`: its study.yaml and its SQLite store, layerlab.db.
inline Study study_in(const std::filesystem::path& dir) {
  return {dir, dir / "study.yaml", "sqlite:" + (dir / "layerlab.db").string()};
}

inline Study write_study(const std::string& test, const std::string& yaml) {
  Study s = study_in(fresh_dir(test));
  std::ofstream(s.file) << yaml;
  return s;
}

// A private copy of `yaml`'s study run to its end by `layerlab run ... --workers 2`: run once
// per ctest run under `key` (support/suite_fixture.h), copied for this process.
inline Study finished_study(const std::string& key, const std::string& yaml) {
  const std::filesystem::path built = built_once(key, [&](const std::filesystem::path& dir) {
    const Study s = study_in(dir);
    std::ofstream(s.file) << yaml;
    const auto r =
        run_layerlab("run " + s.file.string() + " --store '" + s.store + "' --workers 2");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  });
  return study_in(private_copy(built, key));
}

inline nlohmann::json status(const Study& s, const std::string& name) {
  const auto r = run_layerlab("status " + name + " --store '" + s.store + "' --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

inline nlohmann::json export_json(const Study& s, const std::string& name) {
  const auto r = run_layerlab("export " + name + " --format json --store '" + s.store + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// trial number -> trial JSON (attempts, attempt_log, status, result...)
inline std::map<int64_t, nlohmann::json> trials_by_number(const nlohmann::json& exported) {
  std::map<int64_t, nlohmann::json> out;
  for (const auto& t : exported["trials"]) out[t["number"].get<int64_t>()] = t;
  return out;
}

// Trials of the study that are finished (0 while the study cannot be read yet).
inline int64_t finished(const Study& s, const std::string& name) {
  const auto r = run_layerlab("status " + name + " --store '" + s.store + "' --json");
  if (r.exit_code != 0) return 0;
  const nlohmann::json st = nlohmann::json::parse(r.out);
  int64_t n = 0;
  for (const auto& [k, v] : st["counts"].items())
    if (k != "queued" && k != "running") n += v.get<int64_t>();
  return n;
}

// Waits (bounded: about 30 s plus the commands' own time) until `n` trials are finished.
inline bool wait_finished(const Study& s, const std::string& name, int64_t n) {
  for (int i = 0; i < 600; ++i) {
    if (finished(s, name) >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// How many processes have `entry` (NAME=VALUE) in their environment (`run` hands its
// workers the store's URL as LAYERLAB_STORE).
inline int processes_with_environment(const std::string& entry) {
  int found = 0;
  for (const auto& proc : std::filesystem::directory_iterator("/proc")) {
    const std::string name = proc.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(proc.path() / "environ", std::ios::binary);
    for (std::string var; std::getline(in, var, '\0');)
      if (var == entry) ++found;
  }
  return found;
}

}  // namespace layerlab::testing
