#include "study/spec.h"

#include <filesystem>

#include "test_util.h"

namespace layerlab::study {
namespace {

using nlohmann::json;
using testing::error_of;
using testing::fixture;
using testing::parse;

TEST(StudySpec, MinimalFileGetsTheDefaults) {
  const StudySpec s = load_study_file(fixture("good_minimal.yaml"));
  EXPECT_EQ(s.name, "minimal");
  EXPECT_EQ(s.datasets, std::vector<std::string>{"iris"});
  EXPECT_DOUBLE_EQ(s.validation_fraction, 0.2);
  EXPECT_TRUE(s.stratify);
  EXPECT_EQ(s.metric, "val_accuracy");
  EXPECT_TRUE(s.maximize);
  EXPECT_EQ(s.method, "grid");
  EXPECT_EQ(s.seeds, std::vector<uint64_t>{0});
  EXPECT_TRUE(s.parameters.empty());
  EXPECT_EQ(s.early_terminate.type, "");
  EXPECT_EQ(s.patience, 0);
  EXPECT_EQ(s.total_trials(), 1);
  EXPECT_EQ(s.source, "name: minimal\ndatasets: [iris]\n");
}

TEST(StudySpec, FullFileReadsEveryKey) {
  const StudySpec s = load_study_file(fixture("good_full.yaml"));
  EXPECT_EQ(s.name, "full.study_1");
  EXPECT_EQ(s.datasets, (std::vector<std::string>{"iris", "spirals?n=200&classes=3",
                                                  "csv:tests/data/does_not_exist.csv"}));
  EXPECT_DOUBLE_EQ(s.validation_fraction, 0.25);
  EXPECT_FALSE(s.stratify);
  EXPECT_EQ(s.metric, "val_loss");
  EXPECT_FALSE(s.maximize);  // a loss defaults to minimize
  EXPECT_EQ(s.method, "random");
  EXPECT_EQ(s.budget_trials, 90);
  EXPECT_DOUBLE_EQ(s.budget_hours, 1.5);
  EXPECT_EQ(s.seeds, (std::vector<uint64_t>{3, 1}));
  EXPECT_EQ(s.early_terminate.type, "median");
  EXPECT_EQ(s.early_terminate.warmup_epochs, 4);
  EXPECT_EQ(s.patience, 3);
  EXPECT_EQ(s.total_trials(), 90);
  EXPECT_EQ(s.configurations(), 15);  // 90 trials / (3 datasets x 2 seeds)

  std::vector<std::string> names;
  for (const auto& [name, domain] : s.parameters) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"units", "hidden_layers", "learning_rate", "dropout",
                                             "batch_size", "weight_decay", "activation", "layers",
                                             "batch_norm", "optimizer", "lr_schedule"}));
  const Domain& lr = s.parameters[2].second;
  EXPECT_EQ(lr.distribution, Distribution::kLogUniform);
  EXPECT_DOUBLE_EQ(lr.min, 1e-4);
  EXPECT_DOUBLE_EQ(lr.max, 1e-1);
  EXPECT_FALSE(lr.integer);
  EXPECT_TRUE(s.parameters[1].second.integer);
  EXPECT_EQ(s.parameters[4].second.distribution, Distribution::kQUniform);
  EXPECT_EQ(s.parameters[6].second.distribution, Distribution::kValues);  // categorical
  EXPECT_EQ(s.parameters[7].second.values[1], json({64, 32}));
  EXPECT_EQ(s.parameters[9].second.values, std::vector<json>{"adamw"});
}

TEST(StudySpec, MetricGoalFollowsTheMetric) {
  EXPECT_TRUE(parse("name: a\ndatasets: [iris]\nmetric: {name: val_accuracy}\n").maximize);
  EXPECT_FALSE(
      parse("name: a\ndatasets: [\"x.csv?task=regression\"]\nmetric: {name: val_rmse}\n").maximize);
  EXPECT_FALSE(parse("name: a\ndatasets: [iris]\nmetric: {name: train_loss}\n").maximize);
  EXPECT_FALSE(
      parse("name: a\ndatasets: [iris]\nmetric: {name: val_loss, goal: minimize}\n").maximize);
}

// Without a metric: key the default follows the datasets' task, read from their specs.
TEST(StudySpec, DefaultMetricFollowsTheTask) {
  for (const char* regression :
       {"\"csv:x.csv?label=y&task=regression\"", "\"libsvm:x.svm?task=regression\"",
        "\"x.csv.gz?task=regression\""}) {
    const StudySpec s = parse(std::string("name: a\ndatasets: [") + regression + "]\n");
    EXPECT_EQ(s.metric, "val_rmse") << regression;
    EXPECT_FALSE(s.maximize) << regression;
    EXPECT_EQ(s.to_json()["metric"], json({{"name", "val_rmse"}, {"goal", "minimize"}}));
  }
  for (const char* classification : {"iris", "\"spirals?n=100\"", "\"csv:x.csv?label=y\"",
                                     "\"x.csv?task=classification\"", "\"idx:a,b\""}) {
    const StudySpec s = parse(std::string("name: a\ndatasets: [") + classification + "]\n");
    EXPECT_EQ(s.metric, "val_accuracy") << classification;
    EXPECT_TRUE(s.maximize) << classification;
  }
  // Tasks mixed: a metric both report is accepted (each dataset is ranked on its own).
  const StudySpec mixed =
      parse("name: a\ndatasets: [iris, \"x.csv?task=regression\"]\nmetric: {name: val_loss}\n");
  EXPECT_EQ(mixed.metric, "val_loss");
  EXPECT_FALSE(mixed.maximize);
}

TEST(StudySpec, JsonIsCanonicalAndRoundTrips) {
  const StudySpec s = load_study_file(fixture("good_full.yaml"));
  const json j = s.to_json();
  EXPECT_EQ(j["parameter_order"][0], "units");
  EXPECT_EQ(j["parameters"]["learning_rate"],
            json({{"distribution", "log_uniform"}, {"min", 1e-4}, {"max", 0.1}}));
  EXPECT_EQ(j["parameters"]["hidden_layers"],
            json({{"distribution", "int_uniform"}, {"min", 1}, {"max", 6}}));
  EXPECT_EQ(j["parameters"]["activation"], json({{"values", {"relu", "gelu"}}}));
  EXPECT_EQ(j["budget"], json({{"trials", 90}, {"hours", 1.5}}));
  EXPECT_FALSE(j.contains("source"));

  // The canonical JSON is itself a study file that gives the same spec, order included.
  const StudySpec again = StudySpec::from_json(j);
  EXPECT_EQ(again.to_json(), j);
  EXPECT_EQ(again.to_json().dump(), j.dump());
  EXPECT_EQ(again.parameters.front().first, "units");
  EXPECT_EQ(again.total_trials(), s.total_trials());

  for (const char* example :
       {"examples/depth_sweep.yaml", "examples/tpe_asha.yaml", "examples/quick.yaml"}) {
    const StudySpec e = load_study_file(testing::source_path(example));
    EXPECT_EQ(StudySpec::from_json(e.to_json()).to_json(), e.to_json()) << example;
  }
}

TEST(StudySpec, ValuesAreCanonical) {
  const StudySpec s = parse(
      "name: a\ndatasets: [iris]\nparameters:\n"
      "  learning_rate: {values: [1, 1.0e-3, 1e-2]}\n"
      "  units: {value: +64}\n");
  // A float parameter's integers become floats; YAML 1.2 reads 1e-2 as a number.
  EXPECT_EQ(s.parameters[0].second.values, (std::vector<json>{1.0, 1e-3, 1e-2}));
  EXPECT_TRUE(s.parameters[0].second.values[0].is_number_float());
  EXPECT_EQ(s.parameters[1].second.values, std::vector<json>{64});
  // A quoted number is a string, and nn says what it expected.
  EXPECT_NE(error_of("name: a\ndatasets: [iris]\nparameters:\n  units: {value: \"64\"}\n")
                .find("parameters.units: expected an integer, got \"64\" (study.yaml:4:18)"),
            std::string::npos);
}

TEST(StudySpec, RangesAreCheckedAtBothEnds) {
  // A continuous range never draws max, so a rate may end at 1.
  EXPECT_NO_THROW(
      parse("name: a\ndatasets: [iris]\nmethod: random\nbudget: {trials: 3}\nparameters:\n"
            "  dropout: {distribution: uniform, min: 0, max: 1}\n"));
  EXPECT_NE(error_of("name: a\ndatasets: [iris]\nmethod: random\nbudget: {trials: 3}\nparameters:\n"
                     "  dropout: {distribution: uniform, min: 0, max: 2}\n")
                .find("parameters.dropout: expected a rate in [0, 1), got 2.0 (study.yaml:6:49)"),
            std::string::npos);
  EXPECT_NE(error_of("name: a\ndatasets: [iris]\nparameters:\n  units: {distribution: int_uniform, "
                     "min: -2, max: 4}\n")
                .find("parameters.units: expected a positive integer, got -2 (study.yaml:4:43)"),
            std::string::npos);
  // Integer parameters round their draws: a log-uniform depth is fine.
  const StudySpec s = parse(
      "name: a\ndatasets: [iris]\nmethod: random\nbudget: {trials: 3}\nparameters:\n"
      "  hidden_layers: {distribution: log_uniform, min: 1, max: 64}\n");
  EXPECT_TRUE(s.parameters[0].second.integer);
}

TEST(StudySpec, DatasetSpecsAreNotOpened) {
  const StudySpec s = parse(
      "name: a\ndatasets: [\"csv:/nonexistent/x.csv?label=y\", data/train.csv, \"moons?n=50\", "
      "\"libsvm:/nonexistent/a.svm\", \"idx:/a,/b\"]\n");
  EXPECT_EQ(s.datasets.size(), 5u);
  EXPECT_NE(error_of("name: a\ndatasets: [\"moon?n=50\"]\n")
                .find("datasets[0]: unknown dataset 'moon' (did you mean 'moons'?)"),
            std::string::npos);
  EXPECT_NE(error_of("name: a\ndatasets: [iris, iris]\n")
                .find("datasets[1]: dataset 'iris' is listed twice (study.yaml:2:18)"),
            std::string::npos);
}

TEST(StudySpec, ParameterOrderReordersAndIsChecked) {
  const StudySpec s = parse(
      "name: a\ndatasets: [iris]\nparameter_order: [units, hidden_layers]\nparameters:\n"
      "  hidden_layers: {values: [1, 2]}\n  units: {values: [8, 16]}\n");
  EXPECT_EQ(s.parameters[0].first, "units");
  EXPECT_NE(error_of("name: a\ndatasets: [iris]\nparameter_order: [units]\nparameters:\n"
                     "  hidden_layers: {values: [1, 2]}\n  units: {values: [8, 16]}\n")
                .find("parameter_order: expected a list of the parameters' names, each once (2 "
                      "names), got a list"),
            std::string::npos);
}

TEST(StudySpec, MoreErrorsNameTheirPlace) {
  EXPECT_NE(error_of("name: a\ndatasets: [iris]\nparameters:\n  dataset: {value: wine}\n")
                .find("parameters.dataset: set at the study level (datasets:, validation:), not as "
                      "a parameter (study.yaml:4:3)"),
            std::string::npos);
  EXPECT_NE(error_of("name: a\ndatasets: [iris]\nseeds: [1, 1]\n")
                .find("seeds[1]: seed 1 is listed twice (study.yaml:3:12)"),
            std::string::npos);
  EXPECT_NE(error_of("name: a\ndatasets: [iris]\nbudget: {trials: 5, hour: 2}\n")
                .find("budget.hour: unknown key (did you mean 'hours'?); expected one of trials, "
                      "hours (study.yaml:3:21)"),
            std::string::npos);
  EXPECT_NE(error_of("name:\ndatasets: [iris]\n")
                .find("name: expected a study name, got null (study.yaml:1:1)"),
            std::string::npos);
  EXPECT_NE(error_of("name: a\ndatasets: [iris]\nearly_terminate: {type: hyperband}\n")
                .find("early_terminate.type: unknown early_terminate type 'hyperband'; expected "
                      "one of asha, median (study.yaml:3:25)"),
            std::string::npos);
  EXPECT_NE(error_of("name: a\ndatasets: [iris]\nearly_terminate: {type: asha, eta: 1}\n")
                .find("early_terminate.eta: expected an integer >= 2, got 1 (study.yaml:3:36)"),
            std::string::npos);
  EXPECT_NE(
      error_of("name: a\ndatasets: [iris]\nmethod: random\nbudget: {trials: 2}\nparameters:\n"
               "  weight_decay: {distribution: q_log_uniform, min: 0.1, max: 0.2, q: 1}\n")
          .find(
              "parameters.weight_decay: no multiple of q = 1 lies in [min, max] (study.yaml:6:17)"),
      std::string::npos);
  EXPECT_NE(
      error_of("name: a\ndatasets: [iris]\nparameters:\n  units: {values: [8, 16], min: 1}\n")
          .find("parameters.units.min: only a distribution takes min, max and q (study.yaml:4:28)"),
      std::string::npos);
  EXPECT_NE(
      error_of("name: a\ndatasets: [iris]\nmethod: random\nbudget: {trials: 2}\nparameters:\n"
               "  units: {distribution: q_uniform, min: 8, max: 64, q: 2.5}\n")
          .find("parameters.units.q: expected an integer step (units takes integers), got 2.5"),
      std::string::npos);
}

TEST(StudySpec, HugeDiscreteRangesAreRefused) {
  EXPECT_NE(error_of("name: a\ndatasets: [iris]\nmethod: random\nbudget: {trials: 2}\nparameters:\n"
                     "  weight_decay: {distribution: q_uniform, min: 0, max: 100, q: 1.0e-300}\n")
                .find("parameters.weight_decay: q_uniform has "),
            std::string::npos);
  EXPECT_NO_THROW(
      parse("name: a\ndatasets: [iris]\nmethod: random\nbudget: {trials: 2}\nparameters:\n"
            "  weight_decay: {distribution: q_uniform, min: 0, max: 1, q: 1.0e-9}\n"));
}

TEST(StudySpec, MessagesAreOneLine) {
  const std::string m = error_of("name: a\ndatasets: [\"ir\\nis\"]\n");
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_NE(m.find("unknown dataset 'ir\\nis'"), std::string::npos) << m;
  const std::string comma = error_of(",\n");
  EXPECT_NE(comma.find("invalid YAML: unexpected ',' (study.yaml:1:1)"), std::string::npos)
      << comma;
}

TEST(StudySpec, TotalTrials) {
  const std::string grid =
      "name: a\ndatasets: [iris, wine]\nseeds: [0, 1, 2]\nparameters:\n"
      "  hidden_layers: {values: [1, 2, 3]}\n  units: {distribution: int_uniform, min: 1, max: 4}\n"
      "  activation: {values: [relu, tanh]}\n";
  EXPECT_EQ(parse(grid).total_trials(), 3 * 4 * 2 * 2 * 3);
  EXPECT_EQ(parse(grid).configurations(), 24);
  EXPECT_EQ(parse(grid + "budget: {trials: 100}\n").total_trials(), 100);   // capped
  EXPECT_EQ(parse(grid + "budget: {trials: 1000}\n").total_trials(), 144);  // the grid is smaller
  EXPECT_EQ(parse(grid + "method: sobol\nbudget: {trials: 50}\n").total_trials(), 50);
  EXPECT_EQ(parse(grid + "method: sobol\nbudget: {trials: 50}\n").configurations(),
            9);  // ceil(50 / 6)
}

TEST(StudySpec, ExamplesParse) {
  size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(testing::source_path("examples"))) {
    if (entry.path().extension() != ".yaml") continue;
    ++count;
    EXPECT_NO_THROW(load_study_file(entry.path().string())) << entry.path();
  }
  EXPECT_GE(count, 3u);
  EXPECT_EQ(load_study_file(testing::source_path("examples/depth_sweep.yaml")).total_trials(),
            2 * 7 * 3 * 3);
  EXPECT_EQ(load_study_file(testing::source_path("examples/quick.yaml")).total_trials(), 16);
  const StudySpec tpe = load_study_file(testing::source_path("examples/tpe_asha.yaml"));
  EXPECT_EQ(tpe.total_trials(), 60);
  EXPECT_EQ(tpe.early_terminate.type, "asha");
  EXPECT_EQ(tpe.early_terminate.min_epochs, 2);
  EXPECT_EQ(tpe.early_terminate.eta, 3);
}

TEST(StudySpec, UnreadableFileIsNotFoundNamingThePath) {
  try {
    load_study_file("/nonexistent/study.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("'/nonexistent/study.yaml'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace layerlab::study
