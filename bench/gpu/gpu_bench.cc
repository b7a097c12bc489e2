// GPU benchmark (issue 6): layerlab's side of bench/gpu/run.sh, all through nn::train_pack on
// one device.
//  (a) single: one small trial at a time (the peers' GPU anchor's: digits-sized data, depth 4,
//      width 128, batch 32, 5 epochs, SGD momentum 0.9, lr 0.01): trials per hour.
//  (b) packs: K of those trials in one pack (members differ in learning rate and seed).
//  (c) large: one large MLP (width 4096, depth 8, batch 4096, 1000 classes, SGD): training
//      FLOP/s per precision, counted as the anchor does (6 x parameters x batch per step).
// Sizes and repetitions are flags; each part stops repeating once --time-cap seconds are
// spent. Prints one JSON object (bench/gpu/torch_bench.py prints PyTorch's).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "common/error.h"
#include "nn/network.h"
#include "nn/trainer.h"

namespace {

using namespace layerlab;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Flags {
  std::string device = "cuda";
  int threads = 1;
  std::vector<std::string> parts = {"single", "packs", "large"};
  int samples = 1440, inputs = 64, classes = 10, width = 128, depth = 4, batch = 32, epochs = 5;
  int single_reps = 5, pack_reps = 2;
  std::vector<int> packs = {64, 512, 4096};
  int large_width = 4096, large_depth = 8, large_batch = 4096, large_classes = 1000;
  int large_steps = 10, large_epochs = 3;
  std::vector<std::string> precisions = {"fp32", "tf32", "bf16"};
  double time_cap = 60;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Random features in [-1, 1) and random class labels, deterministic.
struct Data {
  std::vector<float> x, y;
  int64_t rows = 0;
  int features = 0;
  nn::Examples examples() const { return {x, y, rows, features, 1}; }
};

Data make_data(int64_t rows, int features, int classes) {
  Data d;
  d.rows = rows;
  d.features = features;
  d.x.resize(static_cast<size_t>(rows) * features);
  for (size_t i = 0; i < d.x.size(); ++i) d.x[i] = 2.f * backend::uniform01(1, 0, i) - 1.f;
  for (int64_t r = 0; r < rows; ++r)
    d.y.push_back(static_cast<float>(backend::mix64(static_cast<uint64_t>(r)) % classes));
  return d;
}

nn::Params small_trial(const Flags& f) {
  nn::Params p;
  p.hidden_layers = f.depth;
  p.units = f.width;
  p.activation = "relu";
  p.optimizer = "momentum";
  p.momentum = 0.9;
  p.learning_rate = 0.01;
  p.batch_size = f.batch;
  p.epochs = f.epochs;
  return p;
}

// Trains `members` up to `reps` times (fewer once `cap` seconds are spent); the wall time of
// each whole train_pack call, setup and upload included.
json run_trials(backend::Backend& b, const std::vector<nn::Params>& members, int classes,
                const Data& data, int reps, double cap) {
  const nn::Examples none{{}, {}, 0, data.features, 1};
  std::vector<double> runs;
  double final_loss = 0;
  const auto part_start = Clock::now();
  for (int r = 0; r < reps && (r == 0 || seconds_since(part_start) < cap); ++r) {
    const auto start = Clock::now();
    const auto results = nn::train_pack(b, members, nn::Task{classes}, data.examples(), none);
    runs.push_back(seconds_since(start));
    final_loss = results[0].epochs.back().train_loss;
  }
  const double s = median(runs);
  const auto k = static_cast<double>(members.size());
  return {{"pack", members.size()},
          {"runs_seconds", runs},
          {"seconds", s},
          {"trials_per_hour", k * 3600.0 / s},
          {"member0_final_train_loss", final_loss}};
}

json single_part(backend::Backend& b, const Flags& f, const Data& data) {
  const std::vector<nn::Params> one = {small_trial(f)};
  json warm = run_trials(b, one, f.classes, data, 1, 0);  // cuBLAS start-up, the pool
  json r = run_trials(b, one, f.classes, data, f.single_reps, f.time_cap);
  r["warmup_seconds"] = warm["seconds"];
  return r;
}

json packs_part(backend::Backend& b, const Flags& f, const Data& data) {
  json out = json::array();
  const auto part_start = Clock::now();
  for (int k : f.packs) {
    if (seconds_since(part_start) > f.time_cap) {
      out.push_back({{"pack", k}, {"skipped", "time cap"}});
      continue;
    }
    std::vector<nn::Params> members(static_cast<size_t>(k), small_trial(f));
    for (int p = 0; p < k; ++p) {
      members[p].seed = static_cast<uint64_t>(p);
      members[p].learning_rate = 0.01 * std::pow(2.0, (p % 8 - 3.5) / 4.0);  // 0.005 to 0.018
    }
    out.push_back(run_trials(b, members, f.classes, data, f.pack_reps,
                             f.time_cap - seconds_since(part_start)));
  }
  return out;
}

json large_run(backend::Backend& b, const Flags& f, const Data& data,
               const std::string& precision) {
  nn::Params p;
  p.hidden_layers = f.large_depth;
  p.units = f.large_width;
  p.activation = "relu";
  p.optimizer = "sgd";
  p.learning_rate = 1e-3;
  p.batch_size = f.large_batch;
  p.epochs = f.large_epochs;
  p.precision = precision;
  nn::Architecture arch;
  arch.inputs = f.large_width;
  arch.hidden.assign(f.large_depth, f.large_width);
  arch.outputs = f.large_classes;
  const double params = static_cast<double>(arch.parameter_count());
  const nn::Examples none{{}, {}, 0, data.features, 1};
  json r = {{"precision", precision}, {"width", f.large_width},     {"depth", f.large_depth},
            {"batch", f.large_batch}, {"classes", f.large_classes}, {"parameters", params}};
  try {
    const nn::TrainResult t = nn::train(b, p, nn::Task{f.large_classes}, data.examples(), none);
    std::vector<double> epochs;  // the first warms up (cuBLAS heuristics, the pool)
    for (size_t e = 1; e < t.epochs.size(); ++e) epochs.push_back(t.epochs[e].seconds);
    if (epochs.empty()) epochs.push_back(t.epochs[0].seconds);
    double mean = 0;
    for (double s : epochs) mean += s;
    const double step = mean / static_cast<double>(epochs.size()) / f.large_steps;
    r["epoch_seconds"] = epochs;
    r["step_ms"] = step * 1e3;
    r["tflops"] = 6.0 * params * f.large_batch / step / 1e12;
    r["final_train_loss"] = t.epochs.back().train_loss;
  } catch (const Error& e) {
    r["error"] = e.what();
  }
  return r;
}

json large_part(backend::Backend& b, const Flags& f) {
  const Data data = make_data(static_cast<int64_t>(f.large_batch) * f.large_steps, f.large_width,
                              f.large_classes);
  json out = json::array();
  const auto part_start = Clock::now();
  for (const std::string& precision : f.precisions) {
    if (seconds_since(part_start) > f.time_cap)
      out.push_back({{"precision", precision}, {"skipped", "time cap"}});
    else
      out.push_back(large_run(b, f, data, precision));
  }
  return out;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

bool wanted(const Flags& f, const std::string& part) {
  return std::find(f.parts.begin(), f.parts.end(), part) != f.parts.end();
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app{"layerlab GPU benchmark: small trials alone and in packs, one large MLP"};
  app.add_option("--device", f.device, "cpu, cuda or cuda:N");
  app.add_option("--threads", f.threads, "host threads (the cpu device)");
  app.add_option("--parts", f.parts, "single, packs, large")->delimiter(',');
  app.add_option("--samples", f.samples, "training rows of the small trials");
  app.add_option("--inputs", f.inputs);
  app.add_option("--classes", f.classes);
  app.add_option("--width", f.width);
  app.add_option("--depth", f.depth);
  app.add_option("--batch", f.batch);
  app.add_option("--epochs", f.epochs);
  app.add_option("--single-reps", f.single_reps);
  app.add_option("--pack-reps", f.pack_reps);
  app.add_option("--packs", f.packs, "pack sizes")->delimiter(',');
  app.add_option("--large-width", f.large_width);
  app.add_option("--large-depth", f.large_depth);
  app.add_option("--large-batch", f.large_batch);
  app.add_option("--large-classes", f.large_classes);
  app.add_option("--large-steps", f.large_steps, "steps per epoch of the large MLP");
  app.add_option("--large-epochs", f.large_epochs, "epochs; the first is not counted");
  app.add_option("--precisions", f.precisions, "fp32, tf32, bf16")->delimiter(',');
  app.add_option("--time-cap", f.time_cap, "seconds per part after which it stops repeating");
  CLI11_PARSE(app, argc, argv);

  try {
    auto b = backend::make_backend(f.device, f.threads);
    json out = {{"tool", "gpu_bench"}, {"date", utc_now()}, {"device", b->describe()}};
    out["workload"] = {{"samples", f.samples}, {"inputs", f.inputs},
                       {"classes", f.classes}, {"width", f.width},
                       {"depth", f.depth},     {"batch", f.batch},
                       {"epochs", f.epochs},   {"optimizer", "sgd momentum 0.9, lr 0.01"}};
    if (wanted(f, "single") || wanted(f, "packs")) {
      const Data data = make_data(f.samples, f.inputs, f.classes);
      if (wanted(f, "single")) out["single"] = single_part(*b, f, data);
      if (wanted(f, "packs")) out["packs"] = packs_part(*b, f, data);
    }
    if (wanted(f, "large")) out["large"] = large_part(*b, f);
    out["memory_in_use_at_end"] = b->memory_in_use();  // cuda: what the pool kept, about the peak
    std::cout << out.dump(2) << std::endl;
  } catch (const Error& e) {
    std::cerr << "gpu_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
