// Params: the fully resolved parameters of one network and its training, the names a study
// file uses ("Parameters a trial understands" in DESIGN.md). Every field has a default;
// from_json() rejects unknown keys and bad values with a message naming the key, and
// to_json() writes every field, so any trial can be rerun exactly from its record.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace layerlab::nn {

struct Params {
  // Architecture.
  int hidden_layers = 2;
  int units = 64;
  std::vector<int> layers;  // explicit hidden widths; overrides hidden_layers x units
  std::string activation = "relu";
  double dropout = 0.0;
  bool batch_norm = false;
  bool residual = false;  // skip connection around each hidden layer whose in and out widths match
  std::string init = "glorot_uniform";

  // Training.
  std::string optimizer = "adam";
  double learning_rate = 1e-3;
  double momentum = 0.9;  // momentum, nesterov
  double weight_decay = 0.0;
  int batch_size = 32;
  int epochs = 20;
  std::string lr_schedule = "constant";  // constant | step | cosine
  int lr_step_epochs = 10;               // step: multiply by lr_gamma every this many epochs
  double lr_gamma = 0.1;
  double lr_min = 0.0;    // cosine: the final learning rate
  int warmup_epochs = 0;  // linear warm-up from lr/steps to lr over these epochs
  int patience = 0;       // early stopping on validation loss; 0 = off
  uint64_t seed = 0;
  std::string precision = "fp32";  // fp32 | tf32 | bf16: the matrix products (backend/ops.h)

  bool operator==(const Params&) const = default;

  // Hidden widths after resolving `layers` or `hidden_layers` x `units`.
  std::vector<int> hidden_widths() const;

  // Checks every value and every name against its registry; throws InvalidArgument naming
  // the parameter ("units: expected a positive integer, got -3").
  void validate() const;

  nlohmann::json to_json() const;
  // Starts from the defaults; unknown keys are errors with a "did you mean".
  static Params from_json(const nlohmann::json& j);
  // The names from_json accepts.
  static const std::vector<std::string>& keys();
};

// A value for "got ..." in messages: JSON for a scalar or a flat list or object (cut to a
// short excerpt), "a nested list" / "a nested object" beyond one level (never a recursive
// dump of a hostile document), and NaN and infinities by name (JSON writes them as null).
std::string describe_value(const nlohmann::json& j);

}  // namespace layerlab::nn
