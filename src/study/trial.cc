#include "study/trial.h"

#include <cmath>

#include "common/error.h"
#include "study/provenance.h"

namespace layerlab::study {

using nlohmann::json;

json TrialSpec::to_json() const {
  json j = params.to_json();
  j["dataset"] = dataset;
  j["validation_fraction"] = validation_fraction;
  j["stratify"] = stratify;
  j["split_seed"] = split_seed;
  return j;
}

TrialSpec TrialSpec::from_stored(const json& params, const std::string& dataset) {
  json j = params;
  j["dataset"] = dataset;
  return from_json(j);
}

TrialSpec TrialSpec::from_json(const json& j) {
  if (!j.is_object())
    throw invalid_argument("trial: expected an object, got " + nn::describe_value(j));
  TrialSpec t;
  json rest = j;
  if (j.contains("dataset")) {
    if (!j["dataset"].is_string())
      throw invalid_argument("dataset: expected a name, got " + nn::describe_value(j["dataset"]));
    t.dataset = j["dataset"].get<std::string>();
    rest.erase("dataset");
  }
  if (j.contains("validation_fraction")) {
    const json& v = j["validation_fraction"];
    if (!v.is_number() || v.get<double>() < 0.0 || v.get<double>() >= 1.0)
      throw invalid_argument("validation_fraction: expected a fraction in [0, 1), got " +
                             nn::describe_value(v));
    t.validation_fraction = v.get<double>();
    rest.erase("validation_fraction");
  }
  if (j.contains("stratify")) {
    if (!j["stratify"].is_boolean())
      throw invalid_argument("stratify: expected true or false, got " +
                             nn::describe_value(j["stratify"]));
    t.stratify = j["stratify"].get<bool>();
    rest.erase("stratify");
  }
  if (j.contains("split_seed")) {
    const json& v = j["split_seed"];
    if (!v.is_number_integer() || v.get<int64_t>() < 0)
      throw invalid_argument("split_seed: expected a non-negative integer, got " +
                             nn::describe_value(v));
    t.split_seed = v.get<uint64_t>();
    rest.erase("split_seed");
  }
  t.params = nn::Params::from_json(rest);
  return t;
}

namespace {

json finite_or_null(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json epoch_json(const nn::EpochRecord& r, const nn::Task& task) {
  const std::string metric = task.classification() ? "accuracy" : "rmse";
  return {{"epoch", r.epoch},
          {"train_loss", finite_or_null(r.train_loss)},
          {"train_" + metric, finite_or_null(r.train_metric)},
          {"val_loss", finite_or_null(r.val_loss)},
          {"val_" + metric, finite_or_null(r.val_metric)},
          {"learning_rate", r.learning_rate},
          {"seconds", r.seconds}};
}

nn::Examples examples(const data::Dataset& d) {
  return {d.x, d.y, d.rows, d.features, d.targets};
}

}  // namespace

json TrialOutcome::to_json() const {
  json curve = json::array();
  for (const auto& r : result.epochs) curve.push_back(epoch_json(r, task));
  json metrics = json::object();
  if (!result.epochs.empty()) {
    metrics = epoch_json(result.epochs.back(), task);
    metrics.erase("epoch");
    metrics.erase("seconds");
    metrics.erase("learning_rate");
  }
  if (result.best_epoch > 0) {
    const auto& best = result.epochs[static_cast<size_t>(result.best_epoch - 1)];
    metrics["best_epoch"] = result.best_epoch;
    metrics["best_val_loss"] = finite_or_null(best.val_loss);
    metrics[std::string("best_") + task.metric_name()] = finite_or_null(best.val_metric);
  }
  json out = {{"status", nn::status_name(result.status)},
              {"metric", task.metric_name()},
              {"metrics", metrics},
              {"epochs_run", result.epochs.size()},
              {"seconds", result.seconds},
              {"parameter_count", parameter_count},
              {"train_rows", train_rows},
              {"validation_rows", validation_rows},
              {"backend", backend},
              {"pack_size", pack_size},
              {"provenance", provenance},
              {"params", spec.to_json()},
              {"curve", curve}};
  if (!result.message.empty()) out["message"] = result.message;
  return out;
}

nn::Examples PreparedData::train() const {
  return examples(split.train);
}
nn::Examples PreparedData::validation() const {
  return examples(split.validation);
}

PreparedData prepare_data(const TrialSpec& spec) {
  data::Dataset all = data::load(spec.dataset);
  PreparedData out;
  out.task.classes = all.task == data::Task::kClassification ? all.classes : 0;
  out.task.targets = all.targets;
  out.split = data::split(all, spec.validation_fraction, spec.split_seed, spec.stratify);
  // The scaler is kept: a kept model needs it, and fitting it again would mean loading the
  // dataset again for every trial.
  out.scaler = data::standardize(out.split);
  return out;
}

std::string pack_key(const TrialSpec& spec) {
  TrialSpec shape = spec;
  nn::Params& p = shape.params;
  p.layers = p.hidden_widths();  // 2 x 64 and [64, 64] are one shape
  p.hidden_layers = 0;
  p.units = 1;
  p.learning_rate = 1, p.momentum = 0, p.weight_decay = 0, p.dropout = 0;
  p.seed = 0, p.init.clear(), p.patience = 0;
  return shape.to_json().dump();
}

std::vector<TrialOutcome> run_trials(std::span<const TrialSpec> specs, const PreparedData& data,
                                     backend::Backend& b, const nn::EpochCallback& on_epoch,
                                     bool keep_parameters, const nn::RoundCallback& after_epochs) {
  std::vector<nn::Params> members;
  for (const TrialSpec& s : specs) {
    s.params.validate();
    if (pack_key(s) != pack_key(specs[0]))
      throw invalid_argument("pack: trials differ in more than their per-member parameters");
    members.push_back(s.params);
  }
  nn::TrainOptions options;
  options.on_epoch = on_epoch;
  options.keep_parameters = keep_parameters;
  options.after_epochs = after_epochs;
  std::vector<nn::TrainResult> results =
      nn::train_pack(b, members, data.task, data.train(), data.validation(), options);
  const nlohmann::json where = provenance(b);
  std::vector<TrialOutcome> out(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    out[i].spec = specs[i];
    out[i].task = data.task;
    out[i].result = std::move(results[i]);
    out[i].backend = b.describe();
    out[i].pack_size = static_cast<int>(specs.size());
    out[i].provenance = where;
    out[i].train_rows = data.split.train.rows;
    out[i].validation_rows = data.split.validation.rows;
    out[i].parameter_count =
        nn::parameter_count(specs[i].params, data.task, data.split.train.features);
  }
  return out;
}

TrialOutcome run_trial(const TrialSpec& spec, const PreparedData& data, const std::string& device,
                       int threads, const nn::EpochCallback& on_epoch) {
  auto backend = backend::make_backend(device, threads);
  return run_trial(spec, data, *backend, on_epoch);
}

}  // namespace layerlab::study
