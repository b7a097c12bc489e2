// A trained network as a file: the weights and batch-norm running statistics of one trial,
// the input standardisation its training used, and what is needed to read its outputs
// (task, class labels, feature names), saved as safetensors (model/safetensors.h). The
// forward pass is the engine's (nn::Network in inference mode), not a second one.
//
// Tensors (F32; hidden layer i = 0, 1, ...):
//   input.mean, input.std                 [inputs]   x' = (x - mean) / std, as data::Scaler
//   hidden.i.weight [out, in], hidden.i.bias [out]
//   hidden.i.bn.gamma, .bn.beta, .bn.running_mean, .bn.running_var [out]   (batch_norm)
//   output.weight [outputs, in], output.bias [outputs]
// Each hidden layer: z = x W^T + b -> [batch norm with the running statistics:
// (z - mean) / sqrt(var + eps) * gamma + beta] -> f(z) -> [+ x when residual and in == out].
// The output layer is linear (logits for classification).
//
// __metadata__ (strings; JSON where noted):
//   format        "layerlab.mlp/1"
//   architecture  JSON {inputs, hidden: [widths], outputs, activation, batch_norm,
//                 batch_norm_eps, residual}
//   task          JSON {type: classification, classes, class_names: [...]} or
//                 {type: regression, targets}
//   features      JSON [names of the input columns, in order]
//   and what the exporter adds: dataset, params (JSON), study, trial, metric, metric_value,
//   layerlab_version, layerlab_revision.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "data/dataset.h"
#include "model/safetensors.h"
#include "nn/network.h"

namespace layerlab::model {

inline constexpr const char* kFormat = "layerlab.mlp/1";
inline constexpr float kBatchNormEps = 1e-5f;  // Backend::BatchNormState's, which training uses

struct Model {
  nn::Architecture architecture;  // dropout is off: inference
  std::string activation;         // its name (nn::activations())
  int classes = 0;                // > 0: classification; 0: regression with `targets` outputs
  int targets = 1;
  std::vector<std::string> class_names;    // may be empty (then classes print as indices)
  std::vector<std::string> feature_names;  // one per input
  data::Scaler scaler;
  std::vector<float> parameters;                              // nn::Network's flat order
  std::vector<std::vector<float>> running_mean, running_var;  // per hidden layer, batch norm
  // The exporter's entries (dataset, params, study, trial, ...); read back with the rest.
  std::map<std::string, std::string> info;

  bool classification() const { return classes > 0; }
  int outputs() const { return architecture.outputs; }
  // InvalidArgument naming the first inconsistency (sizes, widths, task and outputs).
  void check() const;
};

SafeTensors to_safetensors(const Model& m);
// `source` (the file) starts every error: a missing or malformed metadata entry, a missing,
// misshapen or unexpected tensor, a zero or non-finite input.std.
Model from_safetensors(const SafeTensors& st, const std::string& source);

void save_model(const std::string& path, const Model& m);
Model load_model(const std::string& path);

// The raw features of `spec` for this model, rows x inputs. A CSV file (csv:PATH, or a
// path ending in .csv / .csv.gz) is read by header name: every column the model was trained
// on must be there (any order); other columns, such as the label, are ignored, so a file
// with or without its label column works. Any other dataset spec (built-ins, generators,
// libsvm:, idx:) is loaded by data::load and must have exactly the model's feature count;
// its labels are ignored.
struct Features {
  std::vector<float> x;
  int64_t rows = 0;
};
Features read_features(const Model& m, const std::string& spec);

// Outputs for raw features x (rows x inputs): rows x outputs, logits for classification.
// Standardises with the model's scaler and runs nn::Network's inference forward pass on b.
std::vector<float> predict(const Model& m, backend::Backend& b, std::span<const float> x,
                           int64_t rows);
// The same on the CPU backend with `threads` threads.
std::vector<float> predict(const Model& m, int threads, std::span<const float> x, int64_t rows);

// Softmax of each row of logits (rows x classes), in double precision.
std::vector<double> softmax(std::span<const float> logits, int64_t rows, int classes);

}  // namespace layerlab::model
