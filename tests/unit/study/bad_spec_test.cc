// Every malformed study file in tests/data/studies/bad_*.yaml, with the message it must give
// (key path, what was expected, what was got, FILE:LINE:COL).
#include <filesystem>
#include <set>

#include "study/spec.h"
#include "test_util.h"

namespace layerlab::study {
namespace {

using testing::fixture;

struct BadFile {
  const char* file;
  const char* message;  // a substring of the error, ending with the location
};

const BadFile kBadFiles[] = {
    {"bad_empty.yaml",
     "empty study file; expected a mapping with name, datasets and parameters (%:1:1)"},
    {"bad_syntax.yaml", "invalid YAML: end of sequence flow not found (%:3:11)"},
    {"bad_multiple_documents.yaml", "expected one YAML document, got 2 (%:3:1)"},
    {"bad_leading_comma.yaml", "invalid YAML: unexpected ',' (%:1:1)"},
    {"bad_top_list.yaml",
     "expected a mapping at the top level (name:, datasets:, parameters: ...), got a list (%:1:1)"},
    {"bad_missing_name.yaml",
     "missing required key 'name': the study's name, [a-z0-9._-]+ (%:1:1)"},
    {"bad_name_chars.yaml",
     "name: expected a name of at most 100 characters from [a-z0-9._-], got \"Depth Sweep\" "
     "(%:1:7)"},
    {"bad_missing_datasets.yaml",
     "missing required key 'datasets': a list of dataset names or specs"},
    {"bad_datasets_empty.yaml",
     "datasets: expected a non-empty list of dataset names or specs, e.g. [iris, wine], got [] "
     "(%:2:11)"},
    {"bad_unknown_dataset.yaml",
     "datasets[1]: unknown dataset 'wnie' (did you mean 'wine'?); known: "},
    {"bad_unknown_top_key.yaml",
     "datsets: unknown key (did you mean 'datasets'?); expected one of name, datasets,"},
    {"bad_duplicate_key.yaml", "name: key given twice (first on line 1) (%:3:1)"},
    {"bad_unknown_parameter.yaml",
     "parameters.hiden_layers: unknown parameter (did you mean 'hidden_layers'?); known: "},
    {"bad_seed_parameter.yaml",
     "parameters.seed: the seed is not a parameter; list the seeds in the study's seeds: key "
     "(%:4:3)"},
    {"bad_units_negative.yaml", "parameters.units: expected a positive integer, got -3 (%:9:24)"},
    {"bad_units_type.yaml", "parameters.units: expected an integer, got \"many\" (%:4:18)"},
    {"bad_dropout_range.yaml", "parameters.dropout: expected a rate in [0, 1), got 1.5 (%:4:27)"},
    {"bad_activation_unknown.yaml",
     "parameters.activation: unknown activation 'tahn' (did you mean 'tanh'?); known: elu,"},
    {"bad_optimizer_unknown.yaml",
     "parameters.optimizer: unknown optimizer 'adma' (did you mean 'adam'?); known: adagrad,"},
    {"bad_parameter_scalar.yaml",
     "parameters.units: expected {value: X}, {values: [A, B]} or {distribution: D, min: A, max: "
     "B}, got 64 (%:4:10)"},
    {"bad_value_and_values.yaml",
     "parameters.units: expected exactly one of value, values or distribution (%:4:10)"},
    {"bad_unknown_domain_key.yaml",
     "parameters.units.valeus: unknown key (did you mean 'values'?); expected one of value, "
     "values, distribution, min, max, q (%:4:11)"},
    {"bad_values_empty.yaml",
     "parameters.units.values: expected a non-empty list of values, got [] (%:4:19)"},
    {"bad_duplicate_value.yaml", "parameters.units.values[2]: 32 is listed twice (%:4:28)"},
    {"bad_min_ge_max.yaml",
     "parameters.learning_rate.max: expected a number greater than min (0.1), got 0.01 (%:6:61)"},
    {"bad_log_min_zero.yaml",
     "parameters.learning_rate.min: expected a positive number (log_uniform needs min > 0), got 0 "
     "(%:8:10)"},
    {"bad_q_zero.yaml", "parameters.batch_size.q: expected a positive number, got 0 (%:6:63)"},
    {"bad_q_log_tiny_step.yaml",
     "parameters.weight_decay.q: expected a step with at most 1000000000000 multiples of it up "
     "to max (1.0e-2), got 1.0e-55 (%:6:76)"},
    {"bad_q_missing.yaml", "parameters.batch_size: q_uniform needs q (the step) (%:6:15)"},
    {"bad_int_uniform_fraction.yaml",
     "parameters.hidden_layers.max: expected an integer (int_uniform), got 4.5 (%:4:59)"},
    {"bad_distribution_unknown.yaml",
     "parameters.learning_rate.distribution: unknown distribution 'loguniform' (did you mean "
     "'log_uniform'?)"},
    {"bad_distribution_on_name.yaml",
     "parameters.activation.distribution: uniform needs a numeric parameter, but activation takes "
     "a name; list the choices with values: [...] (%:6:30)"},
    {"bad_grid_continuous.yaml",
     "parameters.learning_rate: method grid needs a discrete domain (value, values, int_uniform or "
     "q_uniform), got distribution log_uniform (%:6:18)"},
    {"bad_grid_too_large.yaml",
     "parameters.units: a grid over 100000 values is too large (at most 10000, "
     "SpecLimits::max_values); use values: or method random (%:4:10)"},
    {"bad_method_unknown.yaml",
     "method: unknown method 'gird' (did you mean 'grid'?); known: grid, random, sobol, tpe "
     "(%:3:9)"},
    {"bad_budget_missing.yaml",
     "method: random needs budget: {trials: N} (the number of trials in total) (%:3:9)"},
    {"bad_budget_zero.yaml", "budget.trials: expected a positive integer, got 0 (%:4:18)"},
    {"bad_seeds_negative.yaml", "seeds[1]: expected a non-negative integer, got -1 (%:3:12)"},
    {"bad_seeds_scalar.yaml",
     "seeds: expected a non-empty list of non-negative integers, got 3 (%:3:8)"},
    {"bad_metric_goal.yaml",
     "metric.goal: unknown goal 'maximise' (did you mean 'maximize'?); expected one of maximize, "
     "minimize (%:3:32)"},
    // The metric fits every dataset's task, known from the spec without loading the data.
    {"bad_metric_not_reported.yaml",
     "metric.name: datasets[0] (iris, classification) does not report val_rmse; its trials "
     "report val_accuracy, val_loss, train_loss (%:3:16)"},
    {"bad_metric_regression.yaml",
     "metric.name: datasets[0] (csv:prices.csv?label=y&task=regression, regression) does not "
     "report val_accuracy; its trials report val_rmse, val_loss, train_loss (%:4:9)"},
    {"bad_metric_mixed_tasks.yaml",
     "metric: datasets[0] (iris, classification) and datasets[1] "
     "(csv:prices.csv?label=y&task=regression, regression) have no default metric in common; "
     "name one that both report: metric: {name: val_loss} (or train_loss; each dataset is "
     "ranked on its own) (%:2:11)"},
    {"bad_metric_mixed_named.yaml",
     "metric.name: datasets[0] (iris, classification) does not report val_rmse; its trials "
     "report val_accuracy, val_loss, train_loss; every dataset of this study reports val_loss, "
     "train_loss (%:3:16)"},
    {"bad_metric_goal_direction.yaml",
     "metric.goal: val_rmse is an error: goal must be minimize (%:3:32)"},
    {"bad_metric_goal_score.yaml",
     "metric.goal: val_accuracy is a score: goal must be maximize (%:3:36)"},
    {"bad_dataset_task.yaml",
     "datasets[0]: dataset 'csv:prices.csv?task=regresion': task: expected one of "
     "classification, regression, got 'regresion' (%:2:12)"},
    {"bad_validation_fraction.yaml",
     "validation.fraction: expected a fraction in (0, 1), got 1.5 (%:4:13)"},
    {"bad_stratify.yaml", "validation.stratify: expected true or false, got \"yes\" (%:3:39)"},
    {"bad_early_terminate.yaml",
     "early_terminate.warmup_epochs: not a setting of type asha; expected one of type, min_epochs, "
     "eta (%:3:31)"},
    {"bad_patience_twice.yaml",
     "parameters.patience: also set by early_stopping.patience; give it in one place (%:5:3)"},
    // keep_weights (kept models): a positive integer up to store::kMaxKeptPerDataset.
    {"bad_keep_weights_negative.yaml",
     "keep_weights.top: expected a positive integer, got -2 (%:3:21)"},
    {"bad_keep_weights_fraction.yaml",
     "keep_weights.top: expected a positive integer, got 2.5 (%:3:21)"},
    {"bad_keep_weights_text.yaml",
     "keep_weights.top: expected a positive integer, got \"all\" (%:3:21)"},
    {"bad_keep_weights_huge.yaml",
     "keep_weights.top: expected at most 100 (kept models per dataset), got 1000000000 (%:3:21)"},
    {"bad_keep_weights_key.yaml", "keep_weights.tpo: unknown key (did you mean 'top'?)"},
    {"bad_keep_weights_scalar.yaml", "keep_weights: expected a mapping of top, got 5 (%:3:15)"},
    {"bad_keep_weights_empty.yaml",
     "keep_weights: expected top: K (how many of each dataset's best trials keep their weights) "
     "(%:3:15)"},
    // Hostile input (issue 13): each refused at its place, before anything is built or stored.
    {"bad_alias_recursive.yaml",
     "invalid YAML: an alias refers to a node that contains it (a recursive alias); a study file "
     "must be a tree (%:4:34)"},
    {"bad_billion_laughs.yaml",
     "the document has more than 100000 nodes with its aliases expanded "
     "(SpecLimits::max_nodes) (%:7:36)"},
    {"bad_deep_nesting.yaml", "nesting deeper than 64 levels (SpecLimits::max_depth) (%:4:83)"},
    {"bad_invalid_utf8.yaml", "the text is not UTF-8 (byte 0xe9); save the file as UTF-8 (%:4:26)"},
    {"bad_too_many_datasets.yaml",
     "datasets: 101 datasets; at most 100 (SpecLimits::max_datasets) (%:2:11)"},
    {"bad_too_many_seeds.yaml", "seeds: 1001 seeds; at most 1000 (SpecLimits::max_seeds) (%:3:8)"},
    {"bad_too_many_values.yaml",
     "parameters.learning_rate.values: 10001 values; at most 10000 (SpecLimits::max_values) "
     "(%:6:27)"},
    {"bad_units_huge.yaml",
     "parameters.units: expected at most 1000000 (NetworkLimits::max_units), got 1000000000 "
     "(%:4:18)"},
    {"bad_hidden_layers_huge.yaml",
     "parameters.hidden_layers: expected at most 10000 (NetworkLimits::max_hidden_layers), got "
     "1000000000 (%:4:31)"},
    {"bad_layers_too_wide.yaml",
     "parameters.layers: expected at most 1000000 units per layer (NetworkLimits::max_units), got "
     "[20000000,1] (%:5:29)"},
    {"bad_trials_too_many.yaml",
     "budget.trials: expected at most 1000000 trials (SpecLimits::max_trials), got 100000000 "
     "(%:4:18)"},
    {"bad_grid_trials_too_many.yaml",
     "parameters: the grid has 1000000 configurations x 2 (datasets x seeds); at most 1000000 "
     "trials (SpecLimits::max_trials; or set budget.trials) (%:5:3)"},
    {"bad_value_nan.yaml", "parameters.learning_rate: expected a finite number, got NaN (%:4:26)"},
    {"bad_value_inf.yaml",
     "parameters.weight_decay: expected a finite number, got infinity (%:4:32)"},
    {"bad_number_overflow.yaml",
     "parameters.learning_rate: expected a finite number, got infinity (%:4:26)"},
    {"bad_network_too_large.yaml",
     "parameters: the search space allows a network too large: 4 hidden layers of 100000 units "
     "have 30000400000 or more parameters; at most 100000000 (NetworkLimits::max_parameters) "
     "(%:4:3)"},
    {"bad_network_memory.yaml",
     "parameters: the search space allows a network too large: 1 hidden layer of 10000 units in "
     "a pack of 1 with batches of 1000000 rows needs about 114441 or more MiB; at most 8192 MiB "
     "(NetworkLimits::max_bytes) (%:4:3)"},
    // Issue 52: aliases bounded by bytes, quotes that hide no brackets, every number bounded.
    {"bad_alias_bytes.yaml",
     "the document's strings come to more than 4194304 bytes with its aliases expanded "
     "(SpecLimits::max_expanded_bytes) (%:6:437)"},
    {"bad_quote_hidden_nesting.yaml",
     "nesting deeper than 64 levels (SpecLimits::max_depth) (%:3:76)"},
    {"bad_block_scalar_quote_nesting.yaml",
     "nesting deeper than 64 levels (SpecLimits::max_depth) (%:5:75)"},
    {"bad_epochs_huge.yaml",
     "parameters.epochs: 1000000000 is too large; at most 100000 (SpecLimits::max_epochs) "
     "(%:4:19)"},
    {"bad_budget_hours_huge.yaml",
     "budget.hours: 1000000 hours is too long; at most 10000 (SpecLimits::max_hours) (%:3:17)"},
};

void PrintTo(const BadFile& bad, std::ostream* os) {
  *os << bad.file;
}

// The expected message with '%' replaced by the file's path.
std::string expected_message(const BadFile& bad) {
  std::string m = bad.message;
  if (auto at = m.find('%'); at != std::string::npos) m.replace(at, 1, fixture(bad.file));
  return m;
}

class BadStudySpec : public ::testing::TestWithParam<BadFile> {};

TEST_P(BadStudySpec, FailsWithPathExpectationAndLocation) {
  const BadFile& bad = GetParam();
  try {
    load_study_file(fixture(bad.file));
    FAIL() << bad.file << " parsed without error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(expected_message(bad)), std::string::npos)
        << "got:      " << e.what() << "\nexpected: " << expected_message(bad);
    // Every message ends with (FILE:LINE:COL).
    const std::string what = e.what();
    EXPECT_EQ(what.back(), ')') << what;
    EXPECT_NE(what.find(" (" + fixture(bad.file) + ":"), std::string::npos) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(All, BadStudySpec, ::testing::ValuesIn(kBadFiles), [](const auto& p) {
  std::string name = p.param.file;
  name = name.substr(0, name.find('.'));
  return name;
});

TEST(BadStudySpecs, EveryFixtureHasAnExpectedMessage) {
  std::set<std::string> listed;
  for (const BadFile& bad : kBadFiles) listed.insert(bad.file);
  size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(fixture(""))) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("bad_", 0) != 0) continue;
    ++count;
    EXPECT_TRUE(listed.count(name)) << name << " has no expected message";
  }
  EXPECT_EQ(count, std::size(kBadFiles));
  EXPECT_GE(count, 20u);
}

}  // namespace
}  // namespace layerlab::study
