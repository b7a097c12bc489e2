// layerlab predict --model model.safetensors --data SPEC [--probabilities]: one line per row
// of the data: the predicted class (its label, or its index when the model has no class
// names), with --probabilities followed by the probability of every class in the model's
// class order; for regression, the predicted values. Comma separated, no header.
#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include "cli/commands.h"
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

}  // namespace

void add_predict_command(CLI::App& app) {
  struct Flags {
    std::string model, data;
    bool probabilities = false;
    int threads = 1;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd =
      app.add_subcommand("predict", "Predictions of a saved model (layerlab best --save)");
  cmd->add_option("--model", f->model, "a safetensors file written by `layerlab best --save`")
      ->required();
  cmd->add_option("--data", f->data,
                  "the rows to predict: a CSV file (columns matched by name; the label column "
                  "may be absent) or any dataset spec with the model's feature count")
      ->required();
  cmd->add_flag("--probabilities", f->probabilities,
                "classification: print every class's probability after the predicted class");
  cmd->add_option("--threads", f->threads, "CPU threads")->capture_default_str();
  cmd->callback([f] {
    const model::Model m = model::load_model(f->model);
    if (f->probabilities && !m.classification())
      throw invalid_argument("--probabilities: " + f->model +
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
