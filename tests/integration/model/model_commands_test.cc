// `layerlab best --save` and `layerlab predict` end to end: real studies on CSV files and a
// built-in dataset, the best trial trained again (bit for bit its record) and saved, and
// its predictions checked against an independent reader (read_safetensors.py: numpy, its
// own safetensors parser and forward pass). Covers batch norm + residual + dropout (elu),
// a plain tanh regression and a plain relu classifier.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "integration/model/copy_trial.h"
#include "integration/study_commands.h"
#include "model/safetensors.h"
#include "store/store.h"
#include "support/temp_and_errors.h"

namespace layerlab {
namespace {

using nlohmann::json;
using testing::contains;
using testing::read_file;
using testing::run_layerlab;
using testing::Study;
using testing::write_study;

double noise(int i, int j) {
  return std::sin(i * 12.9898 + j * 78.233) * 0.8;
}

// 3 classes named red, green, blue around separate centres; the label column in the middle.
void write_blobs(const std::filesystem::path& p) {
  std::ofstream out(p);
  out << "x1,species,x2,x3,x4\n";
  const char* names[] = {"red", "green", "blue"};
  for (int i = 0; i < 240; ++i) {
    const int c = i % 3;
    const double x[4] = {c + noise(i, 0), 2.0 * (c == 1) + noise(i, 1), -c + noise(i, 2),
                         3.0 + noise(i, 3)};
    out << x[0] << "," << names[c] << "," << x[1] << "," << x[2] << "," << x[3] << "\n";
  }
}

// The same rows without the label, columns in another order.
void write_blobs_unlabelled(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::ifstream in(from);
  std::ofstream out(to);
  std::string line;
  std::getline(in, line);
  out << "x4,x3,x2,x1\n";
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    out << cells[4] << "," << cells[3] << "," << cells[2] << "," << cells[0] << "\n";
  }
}

// Two regression targets of two features.
void write_wave(const std::filesystem::path& p) {
  std::ofstream out(p);
  out << "a,b,t1,t2\n";
  for (int i = 0; i < 200; ++i) {
    const double a = 3 * noise(i, 0), b = 2 * noise(i, 1);
    out << a << "," << b << "," << std::sin(a) + 0.5 * b << "," << 0.3 * a * b << "\n";
  }
}

struct PythonResult {
  int exit_code = -1;
  std::string out;
};

// read_safetensors.py MODEL DATA PREDICTIONS [--probabilities]
PythonResult check_with_python(const std::string& model, const std::string& data,
                               const std::string& predictions, bool probabilities) {
  const std::string out = predictions + ".python";
  const std::string cmd = std::string("/usr/bin/python3 ") + LAYERLAB_SOURCE_DIR +
                          "/tests/integration/model/read_safetensors.py " + model + " " + data +
                          " " + predictions + (probabilities ? " --probabilities" : "") + " >" +
                          out + " 2>&1";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(out)};
}

// Runs the study, saves its best trial, predicts `data` and checks it with the reader.
// Returns the model path.
std::string save_predict_and_check(const Study& s, const std::string& name, const std::string& data,
                                   bool probabilities) {
  const auto run = run_layerlab("run " + s.file.string() + " --store " + s.store + " --workers 2");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const std::string model = (s.dir / "model.safetensors").string();
  const auto best = run_layerlab("best " + name + " --store " + s.store + " --save " + model);
  EXPECT_EQ(best.exit_code, 0) << best.out << best.err;
  EXPECT_TRUE(contains(best.out, "best trial of study " + name)) << best.out;
  EXPECT_TRUE(contains(best.out, " reproduced bit for bit (")) << best.out;
  EXPECT_FALSE(contains(best.out, "warning")) << best.out;
  EXPECT_TRUE(contains(best.out, "saved " + model + " (")) << best.out;
  const std::string predictions = (s.dir / "predictions.csv").string();
  const auto predict = run_layerlab("predict --model " + model + " --data " + data +
                                    (probabilities ? " --probabilities" : ""));
  EXPECT_EQ(predict.exit_code, 0) << predict.err;
  std::ofstream(predictions) << predict.out;
  const std::string csv = data.rfind("csv:", 0) == 0 ? data.substr(4) : data;
  const PythonResult py = check_with_python(model, csv, predictions, probabilities);
  EXPECT_EQ(py.exit_code, 0) << py.out;
  EXPECT_TRUE(contains(py.out, "\nOK ")) << py.out;
  return model;
}

// The model's metadata, as the reader printed it (its first line).
json metadata(const std::string& model, const std::string& data, const std::string& dir) {
  const std::string predictions = dir + "/meta.csv";
  std::ofstream(predictions) << run_layerlab("predict --model " + model + " --data " + data).out;
  const PythonResult py = check_with_python(model, data, predictions, false);
  return json::parse(py.out.substr(0, py.out.find('\n')));
}

TEST(BestAndPredict, BatchNormResidualDropoutClassifier) {
  const auto dir = testing::fresh_dir("model-bn-data");
  write_blobs(dir / "blobs.csv");
  Study s =
      write_study("model-bn", "name: bnres\ndatasets: [\"csv:" + (dir / "blobs.csv").string() +
                                  R"(?label=species"]
seeds: [0, 1]
parameters:
  hidden_layers: {value: 3}
  units: {value: 8}
  activation: {value: elu}
  batch_norm: {value: true}
  residual: {value: true}
  dropout: {value: 0.1}
  batch_size: {value: 16}
  epochs: {value: 6}
)");
  const std::string data = (dir / "blobs.csv").string();
  const std::string model = save_predict_and_check(s, "bnres", data, true);

  const json meta = metadata(model, data, dir.string());
  EXPECT_EQ(meta["study"], "bnres");
  EXPECT_EQ(meta["reproduced"], "true");
  EXPECT_EQ(meta["metric"], "val_accuracy");
  EXPECT_EQ(json::parse(meta["features"].get<std::string>()), json({"x1", "x2", "x3", "x4"}));
  const json task = json::parse(meta["task"].get<std::string>());
  EXPECT_EQ(task["class_names"], json({"blue", "green", "red"}));
  const json arch = json::parse(meta["architecture"].get<std::string>());
  EXPECT_EQ(arch["hidden"], json({8, 8, 8}));
  EXPECT_EQ(arch["batch_norm"], true);
  EXPECT_EQ(arch["residual"], true);
  const json params = json::parse(meta["params"].get<std::string>());
  EXPECT_EQ(params["dropout"], 0.1);
  const auto status = testing::status(s, "bnres");
  EXPECT_EQ(meta["trial"], std::to_string(status["best"][0]["number"].get<int64_t>()));
  EXPECT_EQ(meta["metric_value"], fmt::format("{}", status["best"][0]["value"].get<double>()));

  // Without the label column, columns in another order: the same predictions.
  write_blobs_unlabelled(dir / "blobs.csv", dir / "unlabelled.csv");
  const auto with_label = run_layerlab("predict --model " + model + " --data " + data);
  const auto without =
      run_layerlab("predict --model " + model + " --data " + (dir / "unlabelled.csv").string());
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_EQ(without.out, with_label.out);
  EXPECT_EQ(std::count(with_label.out.begin(), with_label.out.end(), '\n'), 240);
  // The model learned something: most rows get their own class.
  std::stringstream lines(with_label.out);
  const char* names[] = {"red", "green", "blue"};
  int right = 0, i = 0;
  for (std::string line; std::getline(lines, line); ++i) right += line == names[i % 3];
  EXPECT_GT(right, 160) << with_label.out;
}

TEST(BestAndPredict, PlainTanhRegression) {
  const auto dir = testing::fresh_dir("model-tanh-data");
  write_wave(dir / "wave.csv");
  Study s =
      write_study("model-tanh", "name: tanh-reg\ndatasets: [\"csv:" + (dir / "wave.csv").string() +
                                    R"(?label=t1,t2&task=regression"]
metric: {name: val_rmse, goal: minimize}
seeds: [0, 1]
parameters:
  layers: {value: [16, 8]}
  activation: {value: tanh}
  learning_rate: {value: 0.01}
  epochs: {value: 6}
)");
  const std::string model =
      save_predict_and_check(s, "tanh-reg", "csv:" + (dir / "wave.csv").string(), false);
  const auto r = run_layerlab("predict --model " + model + " --data " +
                              (dir / "wave.csv").string() + " --probabilities");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "--probabilities: " + model + " is a regression model")) << r.err;
  const json meta = metadata(model, (dir / "wave.csv").string(), dir.string());
  EXPECT_EQ(json::parse(meta["task"].get<std::string>()),
            json({{"type", "regression"}, {"targets", 2}}));
  EXPECT_EQ(meta["metric"], "val_rmse");
  EXPECT_EQ(meta["goal"], "minimize");
}

TEST(BestAndPredict, PlainReluOnABuiltInDataset) {
  Study s = write_study("model-relu", R"(name: relu-wine
datasets: [wine]
seeds: [0, 1]
parameters:
  hidden_layers: {value: 1}
  units: {value: 16}
  activation: {value: relu}
  epochs: {value: 6}
)");
  const std::string wine = std::string(LAYERLAB_SOURCE_DIR) + "/data/builtin/wine.csv";
  const std::string model = save_predict_and_check(s, "relu-wine", wine, true);
  // The built-in by name gives the same predictions as its CSV file.
  const auto by_name = run_layerlab("predict --model " + model + " --data wine");
  const auto by_file = run_layerlab("predict --model " + model + " --data " + wine);
  ASSERT_EQ(by_name.exit_code, 0) << by_name.err;
  EXPECT_EQ(by_name.out, by_file.out);
  // Another dataset's rows do not fit.
  const auto iris = run_layerlab("predict --model " + model + " --data iris");
  EXPECT_EQ(iris.exit_code, 2);
  EXPECT_TRUE(contains(iris.err, "iris: 4 features, the model takes 13")) << iris.err;
}

// A best trial recorded on a GPU in bf16 is retrained on the CPU in fp32 with notes; a
// record the retraining does not match gets a warning, and the model says so.
TEST(BestAndPredict, GpuAndAlteredRecordsAreSavedWithANoteOrAWarning) {
  Study s = write_study("model-notes", testing::kQuickStudy);
  ASSERT_EQ(run_layerlab("run " + s.file.string() + " --store " + s.store).exit_code, 0);
  const int64_t best = testing::status(s, "quick")["best"][0]["number"];  // iris's
  {
    auto st = store::open_store(s.store);
    testing::copy_trial(*st, "quick", best, "gpu", [](store::TrialFinish& f, json& params) {
      f.result["backend"] = "cuda:0 (NVIDIA H200)";
      f.result["provenance"]["backend"] = "cuda:0";
      params["precision"] = "bf16";
    });
    testing::copy_trial(*st, "quick", best, "altered",
                        [](store::TrialFinish& f, json&) { f.epochs[1].train_loss = 0.5; });
  }
  const std::string gpu_model = (s.dir / "gpu.safetensors").string();
  auto r = run_layerlab("best gpu --dataset iris --store " + s.store + " --save " + gpu_model);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string name = "trial " + std::to_string(best) + " of study gpu";
  EXPECT_TRUE(contains(r.out, "note: " + name + " used precision bf16; the CPU trains it in fp32"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "note: " + name +
                                  " was trained on cuda:0; the CPU cannot match a GPU run bit for "
                                  "bit"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "saved " + gpu_model)) << r.out;

  const std::string altered_model = (s.dir / "altered.safetensors").string();
  r = run_layerlab("best altered --dataset iris --store " + s.store + " --save " + altered_model);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out,
                       "warning: the retrained model differs from the record; saving it "
                       "anyway\n"))
      << r.out;
  EXPECT_TRUE(contains(r.out,
                       "was not reproduced: first difference at epoch 2, train_loss: "
                       "stored 0.5 vs rerun "))
      << r.out;
  const auto meta = model::read_safetensors(altered_model).metadata;
  EXPECT_EQ(meta.at("reproduced"), "false");
  EXPECT_EQ(meta.at("study"), "altered");
  EXPECT_EQ(meta.at("trial"), std::to_string(best));
  EXPECT_EQ(model::read_safetensors(gpu_model).metadata.at("reproduced"), "true");
}

TEST(BestAndPredict, ErrorsNameTheProblem) {
  Study s = write_study("model-errors", testing::kQuickStudy);
  {
    auto st = store::open_store(s.store);
    const int64_t id = st->create_study("empty", json{{"name", "empty"}, {"datasets", {"iris"}}});
    st->add_trials(id, {{0, "iris", json::object(), 0}});
  }
  auto r = run_layerlab("best empty --store " + s.store);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err,
                       "layerlab best: error: study empty has no finished trial with a "
                       "val_accuracy yet"))
      << r.err;
  ASSERT_EQ(run_layerlab("run " + s.file.string() + " --store " + s.store).exit_code, 0);
  r = run_layerlab("best quick --dataset iris --store " + s.store + " --save " +
                   (s.dir / "no/dir/m").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "cannot write " + (s.dir / "no/dir/m").string())) << r.err;

  const std::string model = (s.dir / "m.safetensors").string();
  ASSERT_EQ(
      run_layerlab("best quick --dataset iris --store " + s.store + " --save " + model).exit_code,
      0);
  r = run_layerlab("predict --model " + model + " --data " + (s.dir / "none.csv").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "none.csv")) << r.err;
  std::ofstream(s.dir / "cols.csv") << "f0,f1\n1,2\n";
  r = run_layerlab("predict --model " + model + " --data " + (s.dir / "cols.csv").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "cols.csv: no columns 'f2', 'f3'")) << r.err;
  EXPECT_TRUE(contains(r.err, "(the model reads the columns f0, f1, f2, f3")) << r.err;
  EXPECT_TRUE(contains(r.err, "; the file has f0, f1)")) << r.err;
  r = run_layerlab("predict --model " + (s.dir / "nothing.safetensors").string() + " --data iris");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "nothing.safetensors: no such file")) << r.err;
  std::filesystem::resize_file(model, 100);
  r = run_layerlab("predict --model " + model + " --data iris");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, model + ": header length ")) << r.err;
  EXPECT_TRUE(contains(r.err, "runs past the end of the file (100 bytes)")) << r.err;
}

}  // namespace
}  // namespace layerlab
