#include "model/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "backend/buffer.h"
#include "backend/float_env.h"
#include "common/error.h"
#include "common/strings.h"
#include "common/text_safety.h"
#include "data/file_io.h"
#include "data/spec.h"
#include "data/text.h"
#include "nn/registries.h"

namespace layerlab::model {
namespace {

using nlohmann::json;

constexpr int kMaxPredictRows = 256;  // rows per forward pass

// Where one layer's tensors sit in the flat parameter vector (nn::Network's order).
struct LayerSlots {
  std::string prefix;  // "hidden.0" or "output"
  int in = 0, out = 0;
  bool hidden = true;
  int64_t w = 0, b = 0, gamma = -1, beta = -1;
};

std::vector<LayerSlots> layer_slots(const nn::Architecture& a) {
  std::vector<LayerSlots> out;
  int64_t offset = 0;
  int in = a.inputs;
  const size_t n = a.hidden.size() + 1;
  for (size_t i = 0; i < n; ++i) {
    LayerSlots l;
    l.hidden = i + 1 < n;
    l.prefix = l.hidden ? fmt::format("hidden.{}", i) : "output";
    l.in = in;
    l.out = l.hidden ? a.hidden[i] : a.outputs;
    l.w = offset;
    offset += static_cast<int64_t>(l.in) * l.out;
    l.b = offset;
    offset += l.out;
    if (l.hidden && a.batch_norm) {
      l.gamma = offset;
      l.beta = offset + l.out;
      offset += 2 * l.out;
    }
    out.push_back(l);
    in = l.out;
  }
  return out;
}

Tensor slice(const std::vector<float>& flat, int64_t offset, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return {std::move(shape), std::vector<float>(flat.begin() + offset, flat.begin() + offset + n)};
}

json architecture_json(const Model& m) {
  const nn::Architecture& a = m.architecture;
  return {{"inputs", a.inputs},         {"hidden", a.hidden},
          {"outputs", a.outputs},       {"activation", m.activation},
          {"batch_norm", a.batch_norm}, {"batch_norm_eps", kBatchNormEps},
          {"residual", a.residual}};
}

json task_json(const Model& m) {
  if (m.classification())
    return {{"type", "classification"}, {"classes", m.classes}, {"class_names", m.class_names}};
  return {{"type", "regression"}, {"targets", m.targets}};
}

// The JSON metadata entry `key`, or an error naming the file.
json metadata_json(const SafeTensors& st, const std::string& key, const std::string& source) {
  auto it = st.metadata.find(key);
  if (it == st.metadata.end())
    throw invalid_argument(source + ": no '" + key + "' in the metadata (not a layerlab model?)");
  return parse_model_json(it->second, source + ": metadata '" + key + "'");
}

// metadata[key][field] as T, or an error naming the file, entry and field.
template <typename T>
T field(const json& j, const char* key, const char* name, const std::string& source) {
  auto fail = [&](const std::string& why) {
    return invalid_argument(fmt::format("{}: metadata '{}': {}", source, key, why));
  };
  if (!j.is_object()) throw fail("expected a JSON object");
  if (!j.contains(name)) throw fail(fmt::format("no '{}'", name));
  // nlohmann converts any number to any arithmetic type unchecked (a float out of the
  // target's range is undefined behaviour): ints must be whole numbers that fit.
  const json& v = j[name];
  auto fits_int = [](const json& x) {
    if (!x.is_number()) return true;  // the wrong type: get<T> says so below
    if (x.is_number_unsigned()) return x.get<uint64_t>() <= uint64_t{INT_MAX};
    return x.is_number_integer() && x.get<int64_t>() >= INT_MIN && x.get<int64_t>() <= INT_MAX;
  };
  bool fits = true;
  if constexpr (std::is_same_v<T, int>) fits = fits_int(v);
  if constexpr (std::is_same_v<T, std::vector<int>>)
    fits = !v.is_array() || std::all_of(v.begin(), v.end(), fits_int);
  if constexpr (std::is_same_v<T, float>)
    fits = !v.is_number() || std::abs(v.get<double>()) <= double{FLT_MAX};
  if (!fits) throw fail(fmt::format("'{}' is out of range: {}", name, excerpt(v.dump())));
  try {
    return v.get<T>();
  } catch (const json::exception&) {
    throw fail(fmt::format("'{}' has the wrong type: {}", name, excerpt(j[name].dump())));
  }
}

bool is_csv(const data::Spec& spec) {
  return spec.name() == "csv:";
}

Features read_csv_features(const Model& m, const data::Spec& spec) {
  spec.check_keys({"label", "task", "classes"});  // they describe the label, which is ignored
  if (spec.target().empty()) spec.fail("expected csv:PATH");
  const std::string source = "csv:" + spec.target();
  const std::string text = data::read_data_file(spec.target(), source);
  data::LineReader lines(text);
  std::string_view line;
  if (!lines.next_nonblank(line)) throw invalid_argument(source + ": empty file (no header row)");
  std::vector<std::string> header;
  data::split_csv_line(line, {source, lines.line_number()}, header);
  std::vector<size_t> columns;
  std::vector<std::string> missing;
  for (const std::string& name : m.feature_names) {
    const auto n = std::count(header.begin(), header.end(), name);
    if (n > 1)
      throw invalid_argument(
          fmt::format("{}: column '{}' appears {} times in the header", source, excerpt(name), n));
    if (n == 0) {
      missing.push_back(name);
      continue;
    }
    columns.push_back(
        static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin()));
  }
  if (!missing.empty())
    throw invalid_argument(
        fmt::format("{}: no column{} {} (the model reads the columns {}; the file has {})", source,
                    missing.size() == 1 ? "" : "s", "'" + excerpt(join(missing, "', '")) + "'",
                    excerpt(join(m.feature_names, ", ")), excerpt(join(header, ", "))));
  Features f;
  std::vector<std::string> cells;
  while (lines.next_nonblank(line)) {
    const data::Location where{source, lines.line_number()};
    data::split_csv_line(line, where, cells);
    if (cells.size() != header.size())
      data::fail_at(where, fmt::format("expected {} columns, got {}", header.size(), cells.size()));
    for (size_t i = 0; i < columns.size(); ++i)
      f.x.push_back(
          data::parse_float_cell(cells[columns[i]], where, "column '" + m.feature_names[i] + "'"));
    ++f.rows;
  }
  if (f.rows == 0) throw invalid_argument(source + ": no data rows after the header");
  return f;
}

}  // namespace

void Model::check() const {
  const nn::Architecture& a = architecture;
  if (a.inputs < 1 || a.outputs < 1)
    throw invalid_argument(
        fmt::format("model: {} inputs and {} outputs; both must be positive", a.inputs, a.outputs));
  for (int w : a.hidden)
    if (w < 1) throw invalid_argument(fmt::format("model: hidden layer width {}", w));
  nn::activations().get(activation);
  if (classification() ? a.outputs != classes : a.outputs != targets)
    throw invalid_argument(fmt::format("model: {} outputs for {} {}", a.outputs,
                                       classification() ? classes : targets,
                                       classification() ? "classes" : "regression targets"));
  if (!class_names.empty() && class_names.size() != static_cast<size_t>(classes))
    throw invalid_argument(
        fmt::format("model: {} class names for {} classes", class_names.size(), classes));
  if (feature_names.size() != static_cast<size_t>(a.inputs))
    throw invalid_argument(
        fmt::format("model: {} feature names for {} inputs", feature_names.size(), a.inputs));
  if (scaler.mean.size() != static_cast<size_t>(a.inputs) ||
      scaler.scale.size() != static_cast<size_t>(a.inputs))
    throw invalid_argument(fmt::format("model: a scaler of {} means and {} scales for {} inputs",
                                       scaler.mean.size(), scaler.scale.size(), a.inputs));
  if (static_cast<int64_t>(parameters.size()) != a.parameter_count())
    throw invalid_argument(fmt::format("model: {} parameters, the architecture has {}",
                                       parameters.size(), a.parameter_count()));
  const size_t bn = a.batch_norm ? a.hidden.size() : 0;
  if (running_mean.size() != bn || running_var.size() != bn)
    throw invalid_argument(
        fmt::format("model: running statistics for {} and {} layers, expected {}",
                    running_mean.size(), running_var.size(), bn));
  for (size_t i = 0; i < bn; ++i)
    if (running_mean[i].size() != static_cast<size_t>(a.hidden[i]) ||
        running_var[i].size() != static_cast<size_t>(a.hidden[i]))
      throw invalid_argument(
          fmt::format("model: hidden layer {} has width {}, its running "
                      "statistics {} means and {} variances",
                      i, a.hidden[i], running_mean[i].size(), running_var[i].size()));
}

SafeTensors to_safetensors(const Model& m) {
  m.check();
  SafeTensors st;
  const int64_t inputs = m.architecture.inputs;
  st.tensors["input.mean"] = {{inputs}, m.scaler.mean};
  st.tensors["input.std"] = {{inputs}, m.scaler.scale};
  const auto slots = layer_slots(m.architecture);
  for (size_t i = 0; i < slots.size(); ++i) {
    const LayerSlots& l = slots[i];
    st.tensors[l.prefix + ".weight"] = slice(m.parameters, l.w, {l.out, l.in});
    st.tensors[l.prefix + ".bias"] = slice(m.parameters, l.b, {l.out});
    if (l.gamma < 0) continue;
    st.tensors[l.prefix + ".bn.gamma"] = slice(m.parameters, l.gamma, {l.out});
    st.tensors[l.prefix + ".bn.beta"] = slice(m.parameters, l.beta, {l.out});
    st.tensors[l.prefix + ".bn.running_mean"] = {{l.out}, m.running_mean[i]};
    st.tensors[l.prefix + ".bn.running_var"] = {{l.out}, m.running_var[i]};
  }
  st.metadata = m.info;
  st.metadata["format"] = kFormat;
  st.metadata["architecture"] = architecture_json(m).dump();
  st.metadata["task"] = task_json(m).dump();
  st.metadata["features"] = json(m.feature_names).dump();
  return st;
}

Model from_safetensors(const SafeTensors& st, const std::string& source) {
  auto format = st.metadata.find("format");
  if (format == st.metadata.end())
    throw invalid_argument(source + ": no 'format' in the metadata (not a layerlab model?)");
  if (format->second != kFormat)
    throw invalid_argument(source + ": format '" + format->second + "' is not " + kFormat);
  Model m;
  const json arch = metadata_json(st, "architecture", source);
  m.architecture.inputs = field<int>(arch, "architecture", "inputs", source);
  m.architecture.hidden = field<std::vector<int>>(arch, "architecture", "hidden", source);
  m.architecture.outputs = field<int>(arch, "architecture", "outputs", source);
  m.activation = field<std::string>(arch, "architecture", "activation", source);
  m.architecture.batch_norm = field<bool>(arch, "architecture", "batch_norm", source);
  m.architecture.residual = field<bool>(arch, "architecture", "residual", source);
  if (m.architecture.batch_norm &&
      field<float>(arch, "architecture", "batch_norm_eps", source) != kBatchNormEps)
    throw invalid_argument(
        fmt::format("{}: metadata 'architecture': batch_norm_eps {} is not "
                    "the engine's {}",
                    source, excerpt(arch["batch_norm_eps"].dump()), kBatchNormEps));
  if (!nn::activations().contains(m.activation))
    throw invalid_argument(
        source + ": metadata 'architecture': " + nn::activations().unknown_message(m.activation));
  m.architecture.activation = nn::activations().get(m.activation);
  const json task = metadata_json(st, "task", source);
  const std::string type = field<std::string>(task, "task", "type", source);
  if (type == "classification") {
    m.classes = field<int>(task, "task", "classes", source);
    if (task.contains("class_names"))
      m.class_names = field<std::vector<std::string>>(task, "task", "class_names", source);
  } else if (type == "regression") {
    m.targets = field<int>(task, "task", "targets", source);
  } else {
    throw invalid_argument(source + ": metadata 'task': type '" + type +
                           "' is neither classification nor regression");
  }
  try {
    m.feature_names = metadata_json(st, "features", source).get<std::vector<std::string>>();
  } catch (const json::exception&) {
    throw invalid_argument(source + ": metadata 'features' is not a list of column names");
  }
  for (const auto& [k, v] : st.metadata)
    if (k != "format" && k != "architecture" && k != "task" && k != "features") m.info[k] = v;
  const nn::Architecture& a = m.architecture;
  if (a.inputs < 1 || a.outputs < 1 ||
      std::any_of(a.hidden.begin(), a.hidden.end(), [](int w) { return w < 1; }))
    throw invalid_argument(source + ": metadata 'architecture': widths must be positive, got " +
                           excerpt(arch.dump()));

  // The metadata is checked against the engine's limits and the tensors the file holds
  // before anything of the claimed size is allocated: a header claiming a layer of 10^9
  // units must not cost 10^9 floats.
  try {
    nn::check_network_size(a, 1, kMaxPredictRows);
  } catch (const Error& e) {
    throw invalid_argument(source + ": metadata 'architecture': " + e.what());
  }
  int64_t stored = 0;
  for (const auto& [name, t] : st.tensors) stored += static_cast<int64_t>(t.data.size());
  if (a.parameter_count() > stored)
    throw invalid_argument(fmt::format(
        "{}: metadata 'architecture' claims {} parameters but the file's tensors hold {} values",
        source, a.parameter_count(), stored));

  // Every value must be finite: a model with NaN or infinite weights predicts nothing
  // meaningful (a diverged training run), and would print a class regardless.
  auto check_finite = [&](const std::string& name, const std::vector<float>& values) {
    for (size_t i = 0; i < values.size(); ++i)
      if (!std::isfinite(values[i]))
        throw invalid_argument(fmt::format(
            "{}: tensor '{}' holds {} at index {}; the model's weights must be finite (did its "
            "training diverge?)",
            source, name, std::isnan(values[i]) ? "NaN" : "an infinity", i));
  };
  std::vector<std::string> expected = {"input.mean", "input.std"};
  m.scaler.mean = st.get("input.mean", {a.inputs}, source).data;
  m.scaler.scale = st.get("input.std", {a.inputs}, source).data;
  for (size_t j = 0; j < m.scaler.scale.size(); ++j)
    if (!(std::isfinite(m.scaler.scale[j]) && m.scaler.scale[j] != 0.f) ||
        !std::isfinite(m.scaler.mean[j]))
      throw invalid_argument(fmt::format(
          "{}: input.mean / input.std of feature {} ('{}') are {} and {}; the std must be "
          "finite and non-zero",
          source, j, j < m.feature_names.size() ? m.feature_names[j] : "?", m.scaler.mean[j],
          m.scaler.scale[j]));
  m.parameters.assign(static_cast<size_t>(a.parameter_count()), 0.f);
  for (const LayerSlots& l : layer_slots(a)) {
    auto put = [&](const std::string& name, int64_t offset, std::vector<int64_t> shape) {
      const Tensor& t = st.get(name, shape, source);
      check_finite(name, t.data);
      std::copy(t.data.begin(), t.data.end(), m.parameters.begin() + offset);
      expected.push_back(name);
    };
    put(l.prefix + ".weight", l.w, {l.out, l.in});
    put(l.prefix + ".bias", l.b, {l.out});
    if (l.gamma < 0) continue;
    put(l.prefix + ".bn.gamma", l.gamma, {l.out});
    put(l.prefix + ".bn.beta", l.beta, {l.out});
    m.running_mean.push_back(st.get(l.prefix + ".bn.running_mean", {l.out}, source).data);
    m.running_var.push_back(st.get(l.prefix + ".bn.running_var", {l.out}, source).data);
    check_finite(l.prefix + ".bn.running_mean", m.running_mean.back());
    check_finite(l.prefix + ".bn.running_var", m.running_var.back());
    expected.push_back(l.prefix + ".bn.running_mean");
    expected.push_back(l.prefix + ".bn.running_var");
  }
  for (const auto& [name, t] : st.tensors)
    if (std::find(expected.begin(), expected.end(), name) == expected.end())
      throw invalid_argument(source + ": unexpected tensor '" + name + "' for this architecture " +
                             excerpt(arch.dump()));
  try {
    m.check();
  } catch (const Error& e) {
    throw invalid_argument(source + ": " + e.what());
  }
  return m;
}

void save_model(const std::string& path, const Model& m) {
  write_safetensors(path, to_safetensors(m));
}

Model load_model(const std::string& path) {
  return from_safetensors(read_safetensors(path), path);
}

Features read_features(const Model& m, const std::string& text) {
  const data::Spec spec = data::Spec::parse(text);
  if (is_csv(spec)) return read_csv_features(m, spec);
  data::Dataset d = data::load(text);
  if (d.features != m.architecture.inputs)
    throw invalid_argument(fmt::format("{}: {} features, the model takes {} ({})", text, d.features,
                                       m.architecture.inputs, join(m.feature_names, ", ")));
  return {std::move(d.x), d.rows};
}

std::vector<float> predict(const Model& m, backend::Backend& b, std::span<const float> x,
                           int64_t rows) {
  m.check();
  const int inputs = m.architecture.inputs;
  if (static_cast<int64_t>(x.size()) != rows * inputs)
    throw invalid_argument(
        fmt::format("predict: {} values for {} rows of {} features", x.size(), rows, inputs));
  data::Dataset d;
  d.name = "predict";
  d.rows = rows;
  d.features = inputs;
  d.x.assign(x.begin(), x.end());
  d.y.assign(static_cast<size_t>(rows), 0.f);
  data::apply_scaler(m.scaler, d);

  const int chunk = static_cast<int>(std::clamp<int64_t>(rows, 1, kMaxPredictRows));
  const backend::FlushDenormals as_in_training;
  nn::Network net(b, m.architecture, 1, chunk);
  net.set_parameters(0, m.parameters);
  net.set_running_statistics(0, m.running_mean, m.running_var);
  backend::DeviceBuffer<float> batch(b, static_cast<size_t>(chunk) * inputs);
  const int outputs = m.outputs();
  std::vector<float> out(static_cast<size_t>(rows) * outputs);
  const float no_dropout = 0.f;
  const uint64_t seed = 0;
  for (int64_t start = 0; start < rows; start += chunk) {
    const int n = static_cast<int>(std::min<int64_t>(chunk, rows - start));
    batch.upload(d.x.data() + start * inputs, static_cast<size_t>(n) * inputs);
    const float* y =
        net.forward(batch.data(), n, /*training=*/false, {&no_dropout, 1}, {&seed, 1}, 0);
    b.download(out.data() + start * outputs, y, static_cast<size_t>(n) * outputs * sizeof(float));
  }
  return out;
}

std::vector<double> softmax(std::span<const float> logits, int64_t rows, int classes) {
  std::vector<double> p(static_cast<size_t>(rows) * classes);
  for (int64_t r = 0; r < rows; ++r) {
    const float* z = logits.data() + r * classes;
    double* q = p.data() + r * classes;
    const double top = *std::max_element(z, z + classes);
    double sum = 0;
    for (int c = 0; c < classes; ++c) sum += q[c] = std::exp(static_cast<double>(z[c]) - top);
    for (int c = 0; c < classes; ++c) q[c] /= sum;
  }
  return p;
}

std::vector<float> predict(const Model& m, int threads, std::span<const float> x, int64_t rows) {
  auto b = backend::make_backend("cpu", threads);
  return predict(m, *b, x, rows);
}

}  // namespace layerlab::model
