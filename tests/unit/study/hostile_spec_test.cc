// Study parsing under hostile input (issue 13): recursive aliases, alias expansion, nesting,
// text that is not UTF-8, JSON bodies (parse_study_text), numbers out of range, and every
// size limit of SpecLimits. Each case must end in InvalidArgument naming the place, never a
// crash, an abort or a large allocation.
#include <gtest/gtest.h>

#include <string>

#include "study/spec.h"
#include "support/temp_and_errors.h"
#include "test_util.h"

namespace layerlab::study {
namespace {

using layerlab::testing::contains;
using nlohmann::json;
using testing::error_of;
using testing::fixture;

// The message parse_study_text() throws for `text` (checking it is InvalidArgument).
std::string text_error(const std::string& text, const SpecLimits& limits = {}) {
  try {
    parse_study_text(text, "body", limits);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    return e.what();
  }
  return "no error";
}

std::string with_limits_error(const std::string& yaml, const SpecLimits& limits) {
  try {
    parse_study(yaml, "study.yaml", limits);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    return e.what();
  }
  return "no error";
}

TEST(HostileYaml, RecursiveAliasIsRefusedWithItsPlace) {
  const std::string e =
      error_of("name: a\ndatasets: [iris]\nparameters:\n  hidden_layers: &h {values: [1, *h]}\n");
  EXPECT_TRUE(contains(e, "an alias refers to a node that contains it")) << e;
  EXPECT_TRUE(contains(e, "(study.yaml:4:")) << e;
}

TEST(HostileYaml, AliasToAnEnclosingListIsRefused) {
  EXPECT_TRUE(contains(error_of("name: a\ndatasets: &d [iris, *d]\n"), "recursive alias"));
}

TEST(HostileYaml, OrdinaryAliasesStillWork) {
  const StudySpec s = testing::parse(
      "name: a\ndatasets: [iris]\nparameters:\n  units: &w {values: [4, 8]}\n"
      "  batch_size: *w\n");
  ASSERT_EQ(s.parameters.size(), 2u);
  EXPECT_EQ(s.parameters[1].second.values, (std::vector<json>{4, 8}));
}

TEST(HostileYaml, BillionLaughsIsRefusedByTheNodeLimit) {
  std::string doc =
      "name: laughs\ndatasets: [iris]\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, "
      "lol, lol]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'i'; ++c) {
    doc += std::string(1, c) + ": &" + c + " [";
    for (int k = 0; k < 10; ++k) doc += std::string(k ? ", " : "") + "*" + prev;
    doc += "]\n";
    prev = c;
  }
  const std::string e = error_of(doc);
  EXPECT_TRUE(contains(e, "nodes with its aliases expanded (SpecLimits::max_nodes)")) << e;
  EXPECT_TRUE(contains(e, "(study.yaml:")) << e;
}

TEST(HostileYaml, NodeLimitIsAField) {
  SpecLimits l;
  l.max_nodes = 5;
  const std::string e =
      with_limits_error("name: a\ndatasets: [iris, wine, digits, breast_cancer]\n", l);
  EXPECT_TRUE(contains(e, "more than 5 nodes")) << e;
}

TEST(HostileYaml, DeepNestingIsRefused) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string e = error_of("name: a\ndatasets: " + deep + "\n");
  EXPECT_TRUE(contains(e, "nesting deeper than 64 levels (SpecLimits::max_depth)")) << e;
  EXPECT_TRUE(contains(e, "(study.yaml:2:")) << e;
}

TEST(HostileYaml, FlowNestingIsCountedOverTheTextFirst) {
  const std::string open(100, '[');
  // Not collections: a comment, a quoted scalar, a plain scalar in block context.
  EXPECT_TRUE(contains(error_of("name: a # " + open + "\ndatasets: ['" + open + "iris']\n"),
                       "datasets[0]: unknown dataset"));
  EXPECT_TRUE(contains(error_of("name: a" + open + "\ndatasets: [iris]\n"),
                       "name: expected a name of at most 100 characters"));
  // A quote inside a plain scalar hides nothing.
  EXPECT_TRUE(contains(error_of("name: a\ndatasets: [it's, " + open + "]\n"),
                       "nesting deeper than 64 levels (SpecLimits::max_depth) (study.yaml:2:"));
  EXPECT_TRUE(contains(error_of("name: a\ndatasets: {\"k\":" + std::string(100, '{') + "}\n"),
                       "nesting deeper than 64 levels"));
}

TEST(HostileYaml, DepthThroughAnAliasCounts) {
  SpecLimits l;
  l.max_depth = 6;
  // Five levels behind an alias used four levels down: nine in all.
  const std::string e = with_limits_error(
      "name: a\ndatasets: [iris]\nx: &x [[[[[1]]]]]\nparameters:\n  units: {values: *x}\n", l);
  EXPECT_TRUE(contains(e, "nesting deeper than 6 levels")) << e;
}

TEST(HostileYaml, TextThatIsNotUtf8IsRefusedWithItsPlace) {
  const std::string e =
      error_of("name: a\ndatasets: [iris]\nparameters:\n  activation: {value: caf\xe9}\n");
  EXPECT_TRUE(contains(e, "the text is not UTF-8 (byte 0xe9)")) << e;
  EXPECT_TRUE(contains(e, "(study.yaml:4:26)")) << e;
}

TEST(HostileYaml, EscapedSurrogateIsRefused) {
  // yaml-cpp refuses it itself; the event pass would otherwise (strings must be UTF-8 for
  // the JSON the study is stored as).
  const std::string e = error_of("name: \"a\\ud800\"\ndatasets: [iris]\n");
  EXPECT_TRUE(contains(e, "invalid YAML: invalid unicode")) << e;
  EXPECT_TRUE(contains(e, "(study.yaml:1:")) << e;
}

TEST(HostileYaml, NanAndInfinityAreNamed) {
  EXPECT_TRUE(contains(error_of("name: a\ndatasets: [iris]\nparameters:\n"
                                "  learning_rate: {value: .nan}\n"),
                       "learning_rate: expected a finite number, got NaN"));
  EXPECT_TRUE(contains(error_of("name: a\ndatasets: [iris]\nparameters:\n"
                                "  dropout: {value: -.inf}\n"),
                       "got -infinity"));
  EXPECT_TRUE(contains(error_of("name: a\ndatasets: [iris]\nvalidation: {fraction: .inf}\n"),
                       "validation.fraction: expected a finite number, got infinity"));
  // 1e400 overflows a double: it is infinity, not 0.
  EXPECT_TRUE(contains(error_of("name: a\ndatasets: [iris]\nparameters:\n"
                                "  learning_rate: {value: 1e400}\n"),
                       "got infinity"));
}

TEST(HostileYaml, LongTextIsQuotedAsAnExcerpt) {
  const std::string e = error_of("name: a\ndatasets: [iris]\nparameters:\n  activation: {value: " +
                                 std::string(100000, 'x') + "}\n");
  EXPECT_LT(e.size(), 1000u) << e.substr(0, 2000);
  EXPECT_TRUE(contains(e, "... (100000 bytes)")) << e.substr(0, 2000);
}

TEST(StudyLimits, TrialsPerStudy) {
  EXPECT_TRUE(contains(error_of("name: a\ndatasets: [iris]\nmethod: random\n"
                                "budget: {trials: 100000000}\n"),
                       "budget.trials: expected at most 1000000 trials (SpecLimits::max_trials), "
                       "got 100000000 (study.yaml:4:18)"));
  SpecLimits l;
  l.max_trials = 10;
  EXPECT_TRUE(contains(with_limits_error("name: a\ndatasets: [iris]\nseeds: [0, 1]\nparameters:\n"
                                         "  units: {values: [1, 2, 3, 4, 5, 6]}\n",
                                         l),
                       "the grid has 6 configurations x 2 (datasets x seeds); at most 10 trials"));
  // The server's larger limit is a field: the same study passes under it.
  l.max_trials = 200'000'000;
  EXPECT_EQ(parse_study("name: a\ndatasets: [iris]\nmethod: random\nbudget: {trials: 100000000}\n",
                        "s.yaml", l)
                .total_trials(),
            100'000'000);
}

TEST(StudyLimits, DatasetsSeedsAndValues) {
  SpecLimits l;
  l.max_datasets = 2;
  l.max_seeds = 2;
  l.max_values = 2;
  EXPECT_TRUE(
      contains(with_limits_error("name: a\ndatasets: [iris, wine, digits]\n", l),
               "datasets: 3 datasets; at most 2 (SpecLimits::max_datasets) (study.yaml:2:11)"));
  EXPECT_TRUE(contains(with_limits_error("name: a\ndatasets: [iris]\nseeds: [0, 1, 2]\n", l),
                       "seeds: 3 seeds; at most 2 (SpecLimits::max_seeds)"));
  EXPECT_TRUE(contains(with_limits_error("name: a\ndatasets: [iris]\nparameters:\n"
                                         "  units: {values: [1, 2, 3]}\n",
                                         l),
                       "parameters.units.values: 3 values; at most 2 (SpecLimits::max_values)"));
}

TEST(StudyLimits, UnitsAndHiddenLayersBeyondTheEngineAreRefused) {
  EXPECT_TRUE(contains(error_of("name: a\ndatasets: [iris]\nparameters:\n"
                                "  units: {value: 1000000000}\n"),
                       "parameters.units: expected at most 1000000 (NetworkLimits::max_units), got "
                       "1000000000"));
  EXPECT_TRUE(contains(error_of("name: a\ndatasets: [iris]\nmethod: random\nbudget: {trials: 5}\n"
                                "parameters:\n  hidden_layers: {distribution: int_uniform, min: "
                                "1, max: 1000000000}\n"),
                       "hidden_layers: expected at most 10000 (NetworkLimits::max_hidden_layers)"));
}

TEST(StudyLimits, LargestNetworkOfTheSearchSpaceIsChecked) {
  // Each value is allowed; the widest with the deepest is not.
  const std::string e = error_of(
      "name: a\ndatasets: [iris]\nmethod: random\nbudget: {trials: 5}\nparameters:\n"
      "  hidden_layers: {distribution: int_uniform, min: 1, max: 100}\n"
      "  units: {values: [8, 20000]}\n");
  EXPECT_TRUE(contains(e,
                       "parameters: the search space allows a network too large: 100 hidden "
                       "layers of 20000 units"))
      << e;
  EXPECT_TRUE(contains(e, "(NetworkLimits::max_parameters) (study.yaml:6:3)")) << e;
  // layers: lists count too.
  EXPECT_TRUE(contains(error_of("name: a\ndatasets: [iris]\nparameters:\n"
                                "  layers: {values: [[8], [50000, 50000]]}\n"),
                       "2 hidden layers of 50000 units"));
  // The memory of the largest batch.
  EXPECT_TRUE(contains(error_of("name: a\ndatasets: [iris]\nparameters:\n"
                                "  hidden_layers: {value: 1}\n  units: {value: 10000}\n"
                                "  batch_size: {value: 1000000}\n"),
                       "(NetworkLimits::max_bytes)"));
  // A smaller limit is a field.
  SpecLimits l;
  l.network.max_parameters = 1000;
  EXPECT_TRUE(contains(with_limits_error("name: a\ndatasets: [iris]\nparameters:\n"
                                         "  units: {values: [8, 64]}\n",
                                         l),
                       "2 hidden layers of 64 units have 4224 or more parameters; at most 1000"));
}

TEST(StudyLimits, FileBytes) {
  SpecLimits l;
  l.max_file_bytes = 10;
  EXPECT_TRUE(contains(with_limits_error("name: a\ndatasets: [iris]\n", l),
                       "the study file has 25 bytes; at most 10 (SpecLimits::max_file_bytes)"));
}

TEST(StudyLimits, StoredStudiesKeepOnlyTheParserLimits) {
  SpecLimits server;
  server.max_trials = 50'000'000;
  const StudySpec s = parse_study(
      "name: a\ndatasets: [iris]\nmethod: random\nbudget: {trials: 20000000}\n", "s.yaml", server);
  // A worker reads it back with the defaults' 1,000,000 trials in force elsewhere.
  EXPECT_EQ(StudySpec::from_json(s.to_json()).total_trials(), 20'000'000);
}

TEST(StudyFromJson, StringsThatAreNotUtf8AreAnErrorNotAnAbort) {
  json j = StudySpec{}.to_json();
  j["name"] = std::string("caf\xe9");
  EXPECT_TRUE(::layerlab::testing::throws_error([&] { StudySpec::from_json(j); },
                                                ErrorCode::kInvalidArgument, "<json>"));
}

// parse_study_text: what the server calls for a POSTed body.

const char* kJsonStudy =
    R"({"name": "j", "datasets": ["iris"], "method": "grid",
  "parameters": {"units": {"values": [4, 8]}, "activation": {"value": "tanh"}}})";

TEST(StudyText, JsonAndYamlGiveTheSameStudy) {
  const StudySpec j = parse_study_text(kJsonStudy, "body");
  const StudySpec y = parse_study_text(
      "name: j\ndatasets: [iris]\nparameters:\n  units: {values: [4, 8]}\n"
      "  activation: {value: tanh}\n",
      "body");
  EXPECT_EQ(j.to_json(), y.to_json());
  EXPECT_EQ(j.source, kJsonStudy);
  // A compact dump and tab-indented JSON read the same (nlohmann sorts the keys, so the
  // parameters come in another order).
  auto unordered = [](const StudySpec& s) {
    json out = s.to_json();
    out.erase("parameter_order");
    return out;
  };
  EXPECT_EQ(unordered(parse_study_text(json::parse(kJsonStudy).dump(), "body")), unordered(j));
  EXPECT_EQ(unordered(parse_study_text(json::parse(kJsonStudy).dump(1, '\t'), "body")),
            unordered(j));
}

TEST(StudyText, JsonErrorsPointIntoTheBody) {
  const std::string e = text_error(
      "{\"name\": \"j\",\n \"datasets\": [\"iris\"],\n \"parameters\": {\"units\": {\"value\": "
      "-3}}}");
  EXPECT_TRUE(contains(e, "parameters.units: expected a positive integer, got -3 (body:3:")) << e;
}

TEST(StudyText, DeepJsonIsRefusedBeforeParsing) {
  const std::string deep =
      "{\"name\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  const std::string e = text_error(deep);
  EXPECT_TRUE(contains(e,
                       "invalid JSON: nesting deeper than 64 levels (SpecLimits::max_depth) "
                       "(body:1:"))
      << e;
  // Brackets inside strings do not count.
  EXPECT_TRUE(contains(text_error("{\"name\": \"" + std::string(1000, '[') + "\"}"),
                       "name: expected a name of at most 100 characters"));
}

TEST(StudyText, NumberOutOfRangeIsInvalidArgumentWithItsPlace) {
  const std::string e = text_error(
      "{\"name\": \"j\", \"datasets\": [\"iris\"],\n \"parameters\": {\"learning_rate\": "
      "{\"value\": 1e400}}}");
  EXPECT_TRUE(contains(e, "invalid JSON: number overflow parsing '1e400'")) << e;
  EXPECT_TRUE(contains(e, "(body:2:")) << e;
}

TEST(StudyText, SyntaxErrorsAndBadUtf8) {
  EXPECT_TRUE(contains(text_error("{\"name\": \"j\",\n \"datasets\": [\"iris\"}"),
                       "invalid JSON: syntax error"));
  const std::string e = text_error("{\"name\": \"caf\xe9\", \"datasets\": [\"iris\"]}");
  EXPECT_TRUE(contains(e, "the text is not UTF-8 (byte 0xe9); save the file as UTF-8 (body:1:14)"))
      << e;
  EXPECT_TRUE(contains(text_error("  \n"), "empty body"));
  // An escaped surrogate pair is valid JSON (one emoji): a name error, not a crash.
  EXPECT_TRUE(contains(text_error("{\"name\": \"\\ud83d\\ude00\", \"datasets\": [\"iris\"]}"),
                       "name: expected a name of at most 100 characters"));
  // A lone surrogate is invalid JSON.
  EXPECT_TRUE(
      contains(text_error("{\"name\": \"\\ud800\", \"datasets\": [\"iris\"]}"), "invalid JSON"));
}

TEST(StudyText, YamlBodiesAreCheckedAsFiles) {
  EXPECT_TRUE(contains(text_error("name: a\ndatasets: &d [iris, *d]\n"), "recursive alias"));
  EXPECT_EQ(parse_study_text("name: y\ndatasets: [iris]\n", "body").name, "y");
}

TEST(StudyText, BodyLimitIsAField) {
  SpecLimits l;
  l.max_file_bytes = 20;
  EXPECT_TRUE(contains(text_error(kJsonStudy, l), "(SpecLimits::max_file_bytes)"));
}

// check_datasets: what `layerlab run` does before it stores anything.

TEST(CheckDatasets, GoodDatasetsPass) {
  EXPECT_NO_THROW(check_datasets(testing::parse("name: a\ndatasets: [iris, \"spirals?n=100\"]\n")));
}

TEST(CheckDatasets, BadRowNamesFileAndLine) {
  const std::string ragged = testing::source_path("tests/data/ragged.csv");
  const StudySpec s = testing::parse("name: a\ndatasets: [iris, \"csv:" + ragged + "\"]\n");
  EXPECT_TRUE(::layerlab::testing::throws_error([&] { check_datasets(s); },
                                                ErrorCode::kInvalidArgument,
                                                "datasets[1]: csv:" + ragged + ": line "));
  const std::string nan = testing::source_path("tests/data/nan.csv");
  EXPECT_TRUE(::layerlab::testing::throws_error(
      [&] { check_datasets(testing::parse("name: a\ndatasets: [\"csv:" + nan + "\"]\n")); },
      ErrorCode::kInvalidArgument, "nan.csv: line "));
}

TEST(CheckDatasets, MissingFileIsNotFound) {
  EXPECT_TRUE(::layerlab::testing::throws_error(
      [&] { check_datasets(testing::parse("name: a\ndatasets: [csv:/nonexistent/x.csv]\n")); },
      ErrorCode::kNotFound, "datasets[0]: csv:/nonexistent/x.csv: file not found"));
}

TEST(CheckDatasets, NetworkIsCheckedWithTheDatasetsInputs) {
  SpecLimits l;
  l.network.max_parameters = 10'000;
  // 200 units: 200 parameters without the data; 64 x 200 + 200 + 200 x 10 + 10 with digits.
  const StudySpec s = parse_study(
      "name: a\ndatasets: [iris, digits]\nparameters:\n  hidden_layers: {value: 1}\n"
      "  units: {value: 200}\n",
      "s.yaml", l);
  EXPECT_TRUE(::layerlab::testing::throws_error(
      [&] { check_datasets(s, l); }, ErrorCode::kInvalidArgument,
      "datasets[1] (digits, 64 features): the search space allows a network too large: 1 hidden "
      "layer of 200 units (64 inputs, 10 outputs) has 15010 parameters; at most 10000"));
}

TEST(CheckDatasets, DataLimitsApply) {
  data::DataLimits d;
  d.max_rows = 100;
  EXPECT_TRUE(::layerlab::testing::throws_error(
      [&] { check_datasets(testing::parse("name: a\ndatasets: [iris]\n"), {}, d); },
      ErrorCode::kInvalidArgument, "datasets[0]: "));
}

}  // namespace
}  // namespace layerlab::study
