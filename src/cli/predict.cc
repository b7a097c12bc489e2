// layerlab predict --model model.safetensors --data SPEC [--probabilities]: one line per row
// of the data (--store URL --trial ID instead of --model: the model kept in the store for
// that trial by its study's keep_weights): the predicted class (its label, or its index when the
// model has no class names), with --probabilities followed by the probability of every class in the
// model's class order; for regression, the predicted values. Comma separated, no header.
#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include "cli/commands.h"
#include "cli/kept_model.h"
#include "cli/store_flag.h"
#include "common/error.h"
#include "model/model.h"

namespace layerlab::cli {
namespace {

// A CSV field: quoted when it holds a comma, a quote or spaces at its ends.
std::string csv_field(const std::string& s) {
  const bool quote = s.find_first_of(",\"\n") != std::string::npos ||
                     (!s.empty() && (s.front() == ' ' || s.back() == ' '));
  if (!quote) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

model::Model kept_model(const std::string& url, int64_t trial_id) {
  auto store = open_existing_store(url);
  const std::string where =
      fmt::format("trial {} in {}", trial_id, store::parse_store_url(url).text);
  std::optional<model::Model> m = find_kept_model(*store, trial_id, where);
  if (m) return std::move(*m);
  store->get_trial(trial_id);  // kNotFound for a trial the store does not have
  throw not_found(fmt::format(
      "no model kept for {}: its study keeps none (keep_weights in the study file), or the "
      "trial is not among the best of its dataset",
      where));
}

}  // namespace

void add_predict_command(CLI::App& app) {
  struct Flags {
    std::string model, data, url;
    int64_t trial = 0;
    bool probabilities = false;
    int threads = 1;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "predict", "Predictions of a saved model (layerlab best --save) or of one kept in the store");
  CLI::Option* model_opt =
      cmd->add_option("--model", f->model, "a safetensors file written by `layerlab best --save`");
  CLI::Option* trial_opt = cmd->add_option(
      "--trial", f->trial,
      "instead of --model: the model kept in the store (--store) for this trial id, by its "
      "study's keep_weights");
  model_opt->excludes(trial_opt);
  add_store_option(cmd, f->url);
  cmd->add_option("--data", f->data,
                  "the rows to predict: a CSV file (columns matched by name; the label column "
                  "may be absent) or any dataset spec with the model's feature count")
      ->required();
  cmd->add_flag("--probabilities", f->probabilities,
                "classification: print every class's probability after the predicted class");
  cmd->add_option("--threads", f->threads, "CPU threads")->capture_default_str();
  cmd->callback([f, trial_opt] {
    const bool from_store = trial_opt->count() > 0;
    if (!from_store && f->model.empty())
      throw invalid_argument("give --model FILE, or --trial ID (with --store) for a kept model");
    const model::Model m = from_store ? kept_model(f->url, f->trial) : model::load_model(f->model);
    const std::string source = from_store ? "trial " + std::to_string(f->trial) : f->model;
    if (f->probabilities && !m.classification())
      throw invalid_argument("--probabilities: " + source +
                             " is a regression model; it predicts values");
    const model::Features x = model::read_features(m, f->data);
    const std::vector<float> out = model::predict(m, f->threads, x.x, x.rows);
    const int k = m.outputs();
    // Finite weights can still overflow on extreme inputs: say so rather than print a
    // class picked from NaNs.
    for (size_t i = 0; i < out.size(); ++i)
      if (!std::isfinite(out[i]))
        throw invalid_argument(fmt::format(
            "{}: row {}: the model's output is not finite ({}); check that row's values against "
            "the data the model was trained on",
            f->data, i / static_cast<size_t>(k) + 1, std::isnan(out[i]) ? "NaN" : "infinite"));
    std::string text;
    if (m.classification()) {
      const std::vector<double> p = model::softmax(out, x.rows, k);
      for (int64_t r = 0; r < x.rows; ++r) {
        const float* z = out.data() + r * k;
        const int best = static_cast<int>(std::max_element(z, z + k) - z);
        text += m.class_names.empty() ? std::to_string(best) : csv_field(m.class_names[best]);
        if (f->probabilities)
          for (int c = 0; c < k; ++c) text += fmt::format(",{:.9g}", p[r * k + c]);
        text += '\n';
      }
    } else {
      for (int64_t r = 0; r < x.rows; ++r) {
        for (int c = 0; c < k; ++c) text += fmt::format("{}{:.9g}", c ? "," : "", out[r * k + c]);
        text += '\n';
      }
    }
    std::cout << text;
  });
}

}  // namespace layerlab::cli
