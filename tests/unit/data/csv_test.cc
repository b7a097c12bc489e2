// csv: happy paths and every malformed-file error, with file and line.
#include <gtest/gtest.h>

#include "test_util.h"

namespace layerlab::data {
namespace {

using testing::fixture;

std::string csv(std::string_view name, std::string_view query = "") {
  return "csv:" + fixture(name) + std::string(query);
}

TEST(Csv, StringLabelsSortedWithNames) {
  Dataset d = load(csv("string_labels.csv"));
  EXPECT_EQ(d.rows, 4);  // the blank line is not a row
  EXPECT_EQ(d.features, 2);
  EXPECT_EQ(d.feature_names, (std::vector<std::string>{"x1", "x2"}));
  EXPECT_EQ(d.classes, 3);
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"setosa", "versicolor", "virginica"}));
  EXPECT_EQ(d.y, (std::vector<float>{0, 2, 0, 1}));
  EXPECT_EQ(d.x, (std::vector<float>{1.5f, 2, 3, 4.25f, 5, 6, 7, 8}));
}

TEST(Csv, LabelColumnByName) {
  testing::TempDir dir;
  Dataset d = load("csv:" + dir.write("mid.csv", "a,kind,b\n1,0,2\n3,1,4\n") + "?label=kind");
  EXPECT_EQ(d.feature_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(d.x, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(d.y, (std::vector<float>{0, 1}));
}

TEST(Csv, IntegerLabelsSortedNumerically) {
  testing::TempDir dir;
  std::string p = dir.write("ints.csv", "a,label\n1,10\n2,9\n3,-1\n4,10\n5,+9\n");
  Dataset d = load("csv:" + p);
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"-1", "9", "10"}));
  EXPECT_EQ(d.y, (std::vector<float>{2, 1, 0, 2, 1}));
}

TEST(Csv, RegressionWithSeveralTargetsQuotedHeaderAndCrlf) {
  Dataset d = load(csv("regression.csv", "?task=regression&label=y1,y2"));
  EXPECT_EQ(d.task, Task::kRegression);
  EXPECT_EQ(d.classes, 0);
  EXPECT_EQ(d.targets, 2);
  EXPECT_EQ(d.rows, 3);
  EXPECT_EQ(d.feature_names, (std::vector<std::string>{"name, with comma", "b"}));
  EXPECT_EQ(d.x, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(d.y, (std::vector<float>{10, 20, 30, 40, 50, 60}));
  EXPECT_TRUE(d.class_names.empty());
}

TEST(Csv, GzipDetectedByMagic) {
  Dataset d = load(csv("small.csv.gz"));
  EXPECT_EQ(d.rows, 2);
  EXPECT_EQ(d.x, (std::vector<float>{1, 2, 3, 4}));
  // Same bytes under a name that does not say gzip.
  testing::TempDir dir;
  std::ifstream in(fixture("small.csv.gz"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(load("csv:" + dir.write("plain-name.txt", bytes)).x, d.x);
}

TEST(Csv, DeclaredClasses) {
  testing::TempDir dir;
  std::string p = dir.write("two.csv", "a,label\n1,2\n2,2\n");
  Dataset d = load("csv:" + p + "?classes=4");
  EXPECT_EQ(d.classes, 4);
  EXPECT_EQ(d.y, (std::vector<float>{2, 2}));
  EXPECT_EQ(load("csv:" + p).classes, 1);
}

TEST(CsvErrors, FileNotFound) {
  EXPECT_LOAD_ERROR("csv:/no/such/file.csv", ErrorCode::kNotFound,
                    "csv:/no/such/file.csv: file not found: /no/such/file.csv");
  EXPECT_LOAD_ERROR("csv:" + std::string(LAYERLAB_SOURCE_DIR), ErrorCode::kInvalidArgument,
                    "is a directory");
}

TEST(CsvErrors, EmptyFile) {
  EXPECT_LOAD_ERROR(csv("empty.csv"), ErrorCode::kInvalidArgument,
                    "empty.csv: empty file (no header row)");
}

TEST(CsvErrors, HeaderOnly) {
  EXPECT_LOAD_ERROR(csv("header_only.csv"), ErrorCode::kInvalidArgument,
                    "header_only.csv: no data rows after the header");
}

TEST(CsvErrors, RaggedRow) {
  EXPECT_LOAD_ERROR(csv("ragged.csv"), ErrorCode::kInvalidArgument,
                    "csv:" + fixture("ragged.csv") + ": line 4: expected 5 columns, got 4");
}

TEST(CsvErrors, NonNumericCellNamesTheColumn) {
  EXPECT_LOAD_ERROR(csv("non_numeric.csv"), ErrorCode::kInvalidArgument,
                    "non_numeric.csv: line 4: column 'f1': expected a number, got 'abc'");
}

TEST(CsvErrors, NanAndInf) {
  EXPECT_LOAD_ERROR(csv("nan.csv"), ErrorCode::kInvalidArgument,
                    "nan.csv: line 3: column 'f1': value 'nan' is not finite");
  EXPECT_LOAD_ERROR(csv("inf.csv"), ErrorCode::kInvalidArgument,
                    "inf.csv: line 4: column 'f0': value '-inf' is not finite");
  testing::TempDir dir;
  EXPECT_LOAD_ERROR("csv:" + dir.write("big.csv", "a,label\n1e39,0\n"), ErrorCode::kInvalidArgument,
                    "line 2: column 'a': value '1e39' is too large");
  EXPECT_LOAD_ERROR("csv:" + dir.write("huge.csv", "a,label\n1e999,0\n"),
                    ErrorCode::kInvalidArgument, "line 2: column 'a': value '1e999' is not finite");
}

TEST(CsvErrors, EmptyCell) {
  EXPECT_LOAD_ERROR(csv("missing_cell.csv"), ErrorCode::kInvalidArgument,
                    "missing_cell.csv: line 3: column 'f1': empty cell");
}

TEST(CsvErrors, MissingLabelColumnListsColumns) {
  EXPECT_LOAD_ERROR(csv("ragged.csv", "?label=y"), ErrorCode::kInvalidArgument,
                    "ragged.csv: no label column 'y'; columns: f0, f1, f2, f3, label");
}

TEST(CsvErrors, LabelOutOfDeclaredRange) {
  EXPECT_LOAD_ERROR(csv("label_out_of_range.csv", "?classes=3"), ErrorCode::kInvalidArgument,
                    "label_out_of_range.csv: line 4: label 3 out of range 0..2 (classes=3)");
  // Without classes= the labels 0, 1, 3 are three classes.
  EXPECT_EQ(load(csv("label_out_of_range.csv")).class_names,
            (std::vector<std::string>{"0", "1", "3"}));
}

TEST(CsvErrors, FractionalLabelSuggestsRegression) {
  EXPECT_LOAD_ERROR(csv("fractional_label.csv"), ErrorCode::kInvalidArgument,
                    "line 2: label '0.5' is not an integer class id (use task=regression");
  EXPECT_EQ(load(csv("fractional_label.csv", "?task=regression")).y, (std::vector<float>{0.5f, 1}));
}

TEST(CsvErrors, SeveralLabelsNeedRegression) {
  EXPECT_LOAD_ERROR(csv("regression.csv", "?label=y1,y2"), ErrorCode::kInvalidArgument,
                    "classification takes one label column, got 2");
  EXPECT_LOAD_ERROR(csv("regression.csv", "?task=regression&classes=2"),
                    ErrorCode::kInvalidArgument, "classes= applies to task=classification only");
}

TEST(CsvErrors, CorruptAndTruncatedGzip) {
  EXPECT_LOAD_ERROR(csv("corrupt.csv.gz"), ErrorCode::kInvalidArgument,
                    "corrupt.csv.gz: corrupt gzip data");
  EXPECT_LOAD_ERROR(csv("truncated.csv.gz"), ErrorCode::kInvalidArgument,
                    "truncated.csv.gz: corrupt gzip data: the data ends early");
}

TEST(CsvErrors, BadLabels) {
  testing::TempDir dir;
  EXPECT_LOAD_ERROR("csv:" + dir.write("l.csv", "a,label\n1,x\n2,\n"), ErrorCode::kInvalidArgument,
                    "l.csv: line 3: empty label");
  EXPECT_LOAD_ERROR("csv:" + dir.write("n.csv", "a,label\n1,inf\n"), ErrorCode::kInvalidArgument,
                    "n.csv: line 2: label 'inf' is not finite");
  EXPECT_LOAD_ERROR("csv:" + dir.write("s.csv", "a,label\n1,cat\n") + "?classes=2",
                    ErrorCode::kInvalidArgument, "s.csv: line 2: label 'cat' is not an integer");
}

TEST(CsvErrors, UnterminatedQuote) {
  testing::TempDir dir;
  EXPECT_LOAD_ERROR("csv:" + dir.write("q.csv", "a,label\n\"1,0\n"), ErrorCode::kInvalidArgument,
                    "q.csv: line 2: unterminated quoted field");
}

// A study's metric is checked at parse time from task_of(): it must be the task load() gives,
// for every kind of dataset.
TEST(TaskOf, IsTheTaskTheLoadedDatasetHas) {
  const std::string libsvm = "libsvm:" + fixture("good.libsvm");
  for (const std::string& spec :
       {std::string("iris"), std::string("wine"), std::string("breast_cancer"),
        std::string("digits"), std::string("spirals?n=60"), std::string("moons?n=60"),
        std::string("xor?n=60"), std::string("checkerboard?n=60"), csv("string_labels.csv"),
        csv("regression.csv", "?task=regression&label=y1,y2"), csv("regression.csv", "?label=y2"),
        libsvm, libsvm + "?task=regression"}) {
    const Dataset d = load(spec);
    EXPECT_EQ(task_of(spec), d.task) << spec;
  }
  EXPECT_EQ(task_of(csv("regression.csv", "?task=regression")), Task::kRegression);
  EXPECT_EQ(task_of("x.csv?task=regression"), Task::kRegression);  // not opened
  EXPECT_STREQ(task_name(Task::kRegression), "regression");
  EXPECT_TRUE(
      testing::throws_error([] { task_of("x.csv?task=regresion"); }, ErrorCode::kInvalidArgument,
                            "task: expected one of classification, regression, got 'regresion'"));
}

}  // namespace
}  // namespace layerlab::data
