// libsvm: happy paths and errors.
#include <gtest/gtest.h>

#include "test_util.h"

namespace layerlab::data {
namespace {

using testing::fixture;

TEST(Libsvm, SparseRowsBecomeDense) {
  Dataset d = load("libsvm:" + fixture("good.libsvm"));
  EXPECT_EQ(d.rows, 3);
  EXPECT_EQ(d.features, 3);
  EXPECT_EQ(d.feature_names, (std::vector<std::string>{"f1", "f2", "f3"}));
  EXPECT_EQ(d.x, (std::vector<float>{0.5f, 0, 2, 0, 1.5f, 0, 1, 2, 3}));
  EXPECT_EQ(d.classes, 2);
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(d.y, (std::vector<float>{0, 1, 0}));
}

TEST(Libsvm, PlusMinusOneLabels) {
  Dataset d = load("libsvm:" + fixture("plus_minus.libsvm"));
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"-1", "1"}));
  EXPECT_EQ(d.y, (std::vector<float>{1, 0, 1}));
}

TEST(Libsvm, FeaturesAndRegression) {
  Dataset d = load("libsvm:" + fixture("good.libsvm") + "?features=4&task=regression");
  EXPECT_EQ(d.features, 4);
  EXPECT_EQ(d.task, Task::kRegression);
  EXPECT_EQ(d.classes, 0);
  EXPECT_EQ(d.y, (std::vector<float>{1, 2, 1}));
  EXPECT_EQ(d.x.size(), 12u);
  EXPECT_LOAD_ERROR("libsvm:" + fixture("good.libsvm") + "?features=2", ErrorCode::kInvalidArgument,
                    "good.libsvm: line 1: feature index 3 beyond features=2");
}

TEST(LibsvmErrors, BadToken) {
  EXPECT_LOAD_ERROR("libsvm:" + fixture("bad_token.libsvm"), ErrorCode::kInvalidArgument,
                    "libsvm:" + fixture("bad_token.libsvm") +
                        ": line 2: bad token 'junk' (expected INDEX:VALUE)");
  EXPECT_LOAD_ERROR("libsvm:" + fixture("bad_value.libsvm"), ErrorCode::kInvalidArgument,
                    "bad_value.libsvm: line 2: feature 2: expected a number, got 'x1.5'");
}

TEST(LibsvmErrors, IndexZero) {
  EXPECT_LOAD_ERROR("libsvm:" + fixture("index_zero.libsvm"), ErrorCode::kInvalidArgument,
                    "index_zero.libsvm: line 2: feature index 0 in '0:1' (indices start at 1)");
}

TEST(LibsvmErrors, UnorderedIndices) {
  EXPECT_LOAD_ERROR(
      "libsvm:" + fixture("unordered.libsvm"), ErrorCode::kInvalidArgument,
      "unordered.libsvm: line 2: feature index 2 after 3 (indices must be ascending)");
}

TEST(LibsvmErrors, LabelNotANumber) {
  EXPECT_LOAD_ERROR("libsvm:" + fixture("bad_label.libsvm"), ErrorCode::kInvalidArgument,
                    "bad_label.libsvm: line 1: label 'abc' is not a number");
}

TEST(LibsvmErrors, LabelOutOfDeclaredRange) {
  EXPECT_LOAD_ERROR("libsvm:" + fixture("good.libsvm") + "?classes=2", ErrorCode::kInvalidArgument,
                    "good.libsvm: line 3: label 2 out of range 0..1 (classes=2)");
}

TEST(LibsvmErrors, EmptyAndMissing) {
  EXPECT_LOAD_ERROR("libsvm:" + fixture("empty.csv"), ErrorCode::kInvalidArgument,
                    "empty.csv: empty file (no data lines)");
  EXPECT_LOAD_ERROR("libsvm:/nope.svm", ErrorCode::kNotFound, "file not found: /nope.svm");
}

}  // namespace
}  // namespace layerlab::data
