#include "study/trained_model.h"

#include <fmt/format.h>

#include <cstring>
#include <memory>

#include "common/error.h"
#include "nn/registries.h"
#include "study/leaderboard.h"

namespace layerlab::study {
namespace {

// The standardisation the training used: prepare_data's, or for data prepared without one,
// fitted again on the same split and checked to give the training's features exactly.
data::Scaler training_scaler(const TrialSpec& spec, const PreparedData& prepared) {
  if (prepared.scaler.mean.size() == static_cast<size_t>(prepared.split.train.features))
    return prepared.scaler;
  const data::Dataset all = data::load(spec.dataset);
  data::Split raw = data::split(all, spec.validation_fraction, spec.split_seed, spec.stratify);
  data::Scaler scaler = data::fit_scaler(raw.train);
  data::apply_scaler(scaler, raw.train);
  const auto& x = prepared.split.train.x;
  if (raw.train.x.size() != x.size() ||
      std::memcmp(raw.train.x.data(), x.data(), x.size() * sizeof(float)) != 0)
    throw internal_error("the standardisation fitted again on " + spec.dataset +
                         " does not give the features the training used");
  return scaler;
}

std::string string_or_empty(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

}  // namespace

model::Model trained_model(const TrialOutcome& outcome, const PreparedData& data) {
  const TrialSpec& spec = outcome.spec;
  const nn::TrainResult& result = outcome.result;
  if (result.parameters.empty())
    throw failed_precondition("the trial on " + spec.dataset +
                              " was trained without keeping its weights");
  const data::Dataset& train = data.split.train;
  model::Model m;
  m.architecture.inputs = train.features;
  m.architecture.hidden = spec.params.hidden_widths();
  m.architecture.outputs = data.task.outputs();
  m.architecture.activation = nn::activations().get(spec.params.activation);
  m.architecture.batch_norm = spec.params.batch_norm;
  m.architecture.residual = spec.params.residual;
  m.activation = spec.params.activation;
  m.classes = data.task.classes;
  m.targets = data.task.targets;
  m.class_names = train.class_names;
  m.feature_names = train.feature_names;
  m.scaler = training_scaler(spec, data);
  m.parameters = result.parameters;
  m.running_mean = result.running_mean;
  m.running_var = result.running_var;
  m.info = {{"dataset", spec.dataset},
            {"params", spec.to_json().dump()},
            {"epochs", std::to_string(result.epochs.size())},
            {"layerlab_version", string_or_empty(outcome.provenance, "layerlab_version")},
            {"layerlab_revision", string_or_empty(outcome.provenance, "revision")},
            {"provenance", outcome.provenance.dump()}};
  return m;
}

}  // namespace layerlab::study

namespace layerlab::study {

ModelToKeep model_to_keep(const TrialOutcome& outcome, const PreparedData& data,
                          const StudySpec& spec, const TrialReport& report, int64_t trial_number,
                          int64_t max_bytes) {
  ModelToKeep out;
  if (spec.keep_top <= 0 || !ranks(report.status) || !report.value) return out;
  std::string bytes;
  try {
    model::Model m = trained_model(outcome, data);
    m.info.insert({{"study", spec.name},
                   {"trial", std::to_string(trial_number)},
                   {"status", store::to_string(report.status)},
                   {"metric", spec.metric},
                   {"goal", spec.maximize ? "maximize" : "minimize"},
                   {"metric_value", fmt::format("{}", *report.value)},
                   {"kept", "true"}});
    bytes = model::encode_safetensors(model::to_safetensors(m));
  } catch (const std::exception& e) {
    out.skipped = std::string("weights not kept: ") + e.what();
    return out;
  }
  if (static_cast<int64_t>(bytes.size()) > max_bytes) {
    out.skipped = fmt::format(
        "weights not kept: the model is {} bytes, over the limit of {} bytes a store keeps for "
        "one trial",
        bytes.size(), max_bytes);
    return out;
  }
  out.keep = store::KeepWeights{std::make_shared<const std::string>(std::move(bytes)),
                                spec.keep_top, spec.maximize};
  return out;
}

}  // namespace layerlab::study
