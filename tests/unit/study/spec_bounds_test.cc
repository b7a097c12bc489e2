// Study files past their bounds (issue 52): aliases bounded by the bytes they expand to,
// brackets a quote cannot hide from the nesting pre-check, a stated bound for every number,
// and splits too small to learn from. Each is InvalidArgument naming FILE:LINE:COL.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "study/spec.h"
#include "support/temp_and_errors.h"
#include "test_util.h"

namespace layerlab::study {
namespace {

using layerlab::testing::contains;
using testing::error_of;

const std::string kHead = "name: a\ndatasets: [iris]\n";

// `n` uses of the alias *x, as a list under an unknown-to-nobody key.
std::string aliases(int n) {
  std::string list = "[";
  for (int i = 0; i < n; ++i) list += i ? ", *x" : "*x";
  return list + "]";
}

TEST(AliasBytes, ManyAliasesToOneLongStringAreRefusedAtTheAlias) {
  // 100 KB named once, used 100 times: 10 MB of text with only 102 nodes.
  const std::string yaml = kHead + "x: &x \"" + std::string(100'000, 'a') + "\"\nparameters:\n" +
                           "  activation: {values: " + aliases(100) + "}\n";
  const std::string e = error_of(yaml);
  EXPECT_TRUE(contains(e,
                       "the document's strings come to more than 4194304 bytes with its "
                       "aliases expanded (SpecLimits::max_expanded_bytes)"))
      << e;
  // The 42nd alias crosses 4 MiB; it is on line 5.
  EXPECT_TRUE(contains(e, "(study.yaml:5:")) << e;
}

TEST(AliasBytes, AFewAliasesPass) {
  const StudySpec s = testing::parse(kHead +
                                     "parameters:\n  units: &w {values: [4, 8]}\n"
                                     "  batch_size: *w\n  activation: {values: [&r relu, tanh]}\n");
  EXPECT_EQ(s.parameters.size(), 3u);
}

TEST(AliasBytes, TheBoundIsAFieldAndCountsEveryUse) {
  SpecLimits l;
  l.max_expanded_bytes = 1000;
  const std::string yaml = kHead + "parameters:\n  activation: &x {values: [\"" +
                           std::string(200, 'r') + "\"]}\n  init: *x\n  optimizer: *x\n" +
                           "  lr_schedule: *x\n  precision: *x\n";
  try {
    parse_study(yaml, "s.yaml", l);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "more than 1000 bytes")) << e.what();
    EXPECT_TRUE(contains(e.what(), "(s.yaml:8:")) << e.what();  // the 4th use: 1,100 bytes
  }
}

// The reviewer's input and its variants: a quote the pre-check used to skip to its end
// hid every bracket after it.
TEST(QuoteHiddenNesting, UnclosedQuotesHideNoBrackets) {
  const std::string open(1'000'000, '[');
  for (const std::string& text :
       {"\"" + open, "'" + open, "name: a\ndatasets: \"" + open, "name: a\ndatasets: '" + open,
        "\"" + std::string(1'000'000, '{'), "'[{" + open + "{{{"}) {
    const std::string e = error_of(text);
    EXPECT_TRUE(contains(e, "nesting deeper than 64 levels (SpecLimits::max_depth)"))
        << e.substr(0, 200);
  }
}

TEST(QuoteHiddenNesting, AQuoteThatYamlReadsAsTextHidesNothing) {
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  // In a block scalar, and in a plain scalar's next line, a quote is text; the quote that
  // seems to close it lies lines below, past the real flow collection on line 4.
  for (const std::string& text :
       {"name: a\nnote: |\n  \"\ndatasets: " + deep + "\nx: \"\n",
        "name: a\nnote: >\n  '\ndatasets: " + deep + "\nx: '\n",
        "name: a\nnote: plain\n  \"text\ndatasets: " + deep + "\nx: \"\n"}) {
    const std::string e = error_of(text);
    EXPECT_TRUE(
        contains(e, "nesting deeper than 64 levels (SpecLimits::max_depth) (study.yaml:4:75)"))
        << e;
  }
  // A quoted scalar that goes on to the next line (here through an escaped line break) is
  // counted through as well: brackets in a string, refused rather than risked.
  EXPECT_TRUE(contains(error_of("name: a\nnote: \"a\\\ndatasets: " + deep + "\nx: \"\n"),
                       "nesting deeper than 64 levels (SpecLimits::max_depth) (study.yaml:3:75)"));
}

TEST(QuoteHiddenNesting, BracketsInsideAClosedQuoteStillPass) {
  const std::string open(100, '[');
  EXPECT_TRUE(contains(error_of(kHead + "parameters:\n  activation: {value: \"" + open + "\"}\n"),
                       "parameters.activation: unknown activation"));
  EXPECT_TRUE(contains(error_of(kHead + "parameters:\n  activation: {value: '" + open + "''x'}\n"),
                       "parameters.activation: unknown activation"));
}

// yaml-cpp queues every token of a flow collection before its first event: their number
// is bounded before it reads them.
TEST(FlowTokens, AFlatListOfAMillionEntriesIsRefusedBeforeYamlCppReadsIt) {
  std::string list = "[";
  for (int i = 0; i < 1'000'000; ++i) list += "a,";
  const std::string e = error_of("name: a\ndatasets: " + list + "]\n");
  EXPECT_TRUE(contains(e,
                       "more than 400000 tokens inside [...] and {...} (4 x "
                       "SpecLimits::max_nodes) (study.yaml:2:"))
      << e;
}

TEST(FlowTokens, AJsonBodyIsCountedBeforeItIsParsed) {
  std::string list = "[";
  for (int i = 0; i < 1'000'000; ++i) list += "1,";
  SpecLimits l;
  l.max_nodes = 1000;
  try {
    parse_study_text("{\"name\": \"a\",\n \"datasets\": " + list + "1]}", "body", l);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(),
                         "more than 4000 tokens inside [...] and {...} (4 x "
                         "SpecLimits::max_nodes) (body:2:"))
        << e.what();
  }
}

TEST(FlowTokens, TenThousandValuesInBracketsPass) {
  std::string list = "[";
  for (int i = 1; i <= 10'000; ++i) list += std::to_string(i) + (i < 10'000 ? ", " : "]");
  EXPECT_NO_THROW(testing::parse(kHead + "parameters:\n  epochs: {values: " + list + "}\n"));
}

// Every number of a study file has a stated bound.
struct Case {
  std::string yaml;  // after kHead
  std::string message;
  std::string place;
};

TEST(NumericBounds, EachIsRefusedWithItsFieldAndPlace) {
  const std::vector<Case> cases = {
      {"parameters:\n  epochs: {value: 1000000000}\n",
       "parameters.epochs: 1000000000 is too large; at most 100000 (SpecLimits::max_epochs)",
       "4:19"},
      {"parameters:\n  epochs: {distribution: int_uniform, min: 1, max: 100001}\n",
       "at most 100000 (SpecLimits::max_epochs)", "4:52"},
      {"parameters:\n  patience: {values: [1, 200000]}\n", "(SpecLimits::max_epochs)", "4:26"},
      {"parameters:\n  warmup_epochs: {value: 100001}\n", "(SpecLimits::max_epochs)", "4:26"},
      {"parameters:\n  lr_step_epochs: {value: 100001}\n", "(SpecLimits::max_epochs)", "4:27"},
      {"parameters:\n  batch_size: {value: 1000001}\n", "(SpecLimits::max_batch_size)", "4:23"},
      {"parameters:\n  learning_rate: {distribution: log_uniform, min: 0.001, max: 1000}\n",
       "parameters.learning_rate: 1000 is too large; at most 100 (SpecLimits::max_rate)", "4:63"},
      {"parameters:\n  weight_decay: {value: 101}\n", "(SpecLimits::max_rate)", "4:25"},
      {"parameters:\n  lr_gamma: {value: 1e9}\n", "(SpecLimits::max_rate)", "4:21"},
      {"parameters:\n  lr_min: {value: 1000}\n", "(SpecLimits::max_rate)", "4:19"},
      {"early_stopping: {patience: 3000000000}\n",
       "early_stopping.patience: 3000000000 is too large; at most 100000 (SpecLimits::max_epochs)",
       "3:28"},
      {"early_terminate: {type: asha, min_epochs: 100001}\n", "(SpecLimits::max_epochs)", "3:43"},
      {"early_terminate: {type: asha, eta: 1001}\n", "at most 1000 (SpecLimits::max_eta)", "3:36"},
      {"early_terminate: {type: median, warmup_epochs: 100001}\n", "(SpecLimits::max_epochs)",
       "3:48"},
      {"budget: {hours: 10001}\n", "budget.hours: 10001 hours is too long; at most 10000", "3:17"},
      {"method: random\nbudget: {trials: 1000001}\n", "(SpecLimits::max_trials)", "4:18"},
      {"parameters:\n  units: {value: 1000001}\n", "(NetworkLimits::max_units)", "4:18"},
      {"parameters:\n  hidden_layers: {value: 10001}\n", "(NetworkLimits::max_hidden_layers)",
       "4:26"},
  };
  for (const Case& c : cases) {
    const std::string e = error_of(kHead + c.yaml);
    EXPECT_TRUE(contains(e, c.message)) << c.yaml << e;
    EXPECT_TRUE(contains(e, "(study.yaml:" + c.place + ")")) << c.yaml << e;
  }
}

TEST(NumericBounds, TheBoundsThemselvesPass) {
  EXPECT_NO_THROW(
      testing::parse(kHead +
                     "method: random\nbudget: {trials: 10, hours: 10000}\nearly_stopping: "
                     "{patience: 100000}\nparameters:\n"
                     "  epochs: {value: 100000}\n  batch_size: {value: 1000000}\n"
                     "  learning_rate: {distribution: log_uniform, min: 0.001, max: 100}\n"));
}

TEST(NumericBounds, AreFieldsAndStoredStudiesAreNotHeldToThem) {
  SpecLimits l;
  l.max_epochs = 10;
  const std::string yaml = kHead + "parameters:\n  epochs: {value: 11}\n";
  EXPECT_THROW(parse_study(yaml, "s.yaml", l), Error);
  EXPECT_NO_THROW(parse_study(yaml, "s.yaml", SpecLimits::stored()));
}

// Splits: each split of each dataset holds at least one row.

TEST(SplitSizes, AFractionThatLeavesNoValidationRowIsRefusedAtTheFraction) {
  const StudySpec s = testing::parse("name: a\ndatasets: [iris]\nvalidation: {fraction: 1.0e-9}\n");
  EXPECT_TRUE(::layerlab::testing::throws_error(
      [&] { check_datasets(s); }, ErrorCode::kInvalidArgument,
      "datasets[0] (iris): 150 rows split into 150 for training and 0 for validation "
      "(validation.fraction 1e-09 of each class); at least 1 and 1 needed "
      "(SpecLimits::min_train_rows, min_validation_rows) (study.yaml:3:24)"));
}

TEST(SplitSizes, ATinyCsvIsRefusedAtItsEntry) {
  ::layerlab::testing::TempDir dir;
  const std::string csv = dir.path("tiny.csv");
  std::ofstream(csv) << "x,label\n1,a\n2,b\n3,c\n";
  const StudySpec s = testing::parse("name: a\ndatasets:\n  - iris\n  - \"csv:" + csv + "\"\n");
  EXPECT_TRUE(::layerlab::testing::throws_error(
      [&] { check_datasets(s); }, ErrorCode::kInvalidArgument,
      "datasets[1] (csv:" + csv + "): 3 rows split into 3 for training and 0 for validation"));
  EXPECT_TRUE(::layerlab::testing::throws_error([&] { check_datasets(s); },
                                                ErrorCode::kInvalidArgument, "(study.yaml:4:5)"));
}

TEST(SplitSizes, TheMinimumsAreFields) {
  SpecLimits l;
  l.min_validation_rows = 31;  // iris at 0.2: 10 of each of 3 classes
  EXPECT_NO_THROW(check_datasets(testing::parse(kHead)));
  EXPECT_THROW(check_datasets(testing::parse(kHead), l), Error);
}

}  // namespace
}  // namespace layerlab::study
