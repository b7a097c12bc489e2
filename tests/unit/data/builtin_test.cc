// Built-in datasets, the registry and spec parsing.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_util.h"

namespace layerlab::data {
namespace {

using testing::class_counts;

struct Shape {
  const char* name;
  int64_t rows;
  int features;
  int classes;
};

class BuiltinShapes : public ::testing::TestWithParam<Shape> {};

TEST_P(BuiltinShapes, LoadWithTheRightShape) {
  const Shape& s = GetParam();
  Dataset d = load(s.name);
  EXPECT_EQ(d.name, s.name);
  EXPECT_EQ(d.task, Task::kClassification);
  EXPECT_EQ(d.rows, s.rows);
  EXPECT_EQ(d.features, s.features);
  EXPECT_EQ(d.classes, s.classes);
  EXPECT_EQ(d.targets, 1);
  EXPECT_EQ(d.x.size(), static_cast<size_t>(s.rows * s.features));
  EXPECT_EQ(d.y.size(), static_cast<size_t>(s.rows));
  EXPECT_EQ(d.feature_names.size(), static_cast<size_t>(s.features));
  EXPECT_EQ(d.class_names.size(), static_cast<size_t>(s.classes));
  for (int64_t n : class_counts(d)) EXPECT_GT(n, 0);
}

INSTANTIATE_TEST_SUITE_P(All, BuiltinShapes,
                         ::testing::Values(Shape{"iris", 150, 4, 3}, Shape{"wine", 178, 13, 3},
                                           Shape{"breast_cancer", 569, 30, 2},
                                           Shape{"digits", 1797, 64, 10}),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(Builtin, IrisKnownValues) {
  Dataset d = load("iris");
  EXPECT_EQ(d.feature_names[0], "f0");
  EXPECT_EQ(std::vector<float>(d.x.begin(), d.x.begin() + 4),
            (std::vector<float>{5.1f, 3.5f, 1.4f, 0.2f}));
  EXPECT_EQ(d.y[0], 0.0f);
  EXPECT_EQ(std::vector<float>(d.x.end() - 4, d.x.end()),
            (std::vector<float>{5.9f, 3.0f, 5.1f, 1.8f}));
  EXPECT_EQ(d.y[149], 2.0f);
  EXPECT_EQ(class_counts(d), (std::vector<int64_t>{50, 50, 50}));
  EXPECT_EQ(d.class_names, (std::vector<std::string>{"setosa", "versicolor", "virginica"}));
}

TEST(Builtin, OtherKnownValues) {
  Dataset wine = load("wine");
  EXPECT_FLOAT_EQ(wine.x[0], 14.23f);
  EXPECT_FLOAT_EQ(wine.x[12], 1065.0f);
  EXPECT_EQ(class_counts(wine), (std::vector<int64_t>{59, 71, 48}));

  Dataset bc = load("breast_cancer");
  EXPECT_FLOAT_EQ(bc.x[0], 17.99f);
  EXPECT_FLOAT_EQ(bc.x[3], 1001.0f);
  EXPECT_EQ(class_counts(bc), (std::vector<int64_t>{212, 357}));
  EXPECT_EQ(bc.class_names[0], "malignant");

  Dataset digits = load("digits");
  EXPECT_EQ(std::vector<float>(digits.x.begin(), digits.x.begin() + 6),
            (std::vector<float>{0, 0, 5, 13, 9, 1}));
  EXPECT_EQ(digits.y[0], 0.0f);
  EXPECT_EQ(digits.y[1796], 8.0f);
  EXPECT_EQ(*std::max_element(digits.x.begin(), digits.x.end()), 16.0f);
}

TEST(DatasetRegistry, KnownAndDescribed) {
  std::vector<std::string> names = known_datasets();
  for (const char* n : {"iris", "wine", "breast_cancer", "digits", "fashion-mnist", "spirals",
                        "moons", "xor", "checkerboard", "csv:", "libsvm:", "idx:"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  std::vector<DatasetInfo> info = describe_datasets();
  ASSERT_EQ(info.size(), names.size());
  for (const DatasetInfo& i : info) {
    EXPECT_FALSE(i.description.empty()) << i.name;
    EXPECT_EQ(i.description.find('\n'), std::string::npos) << i.name;
  }
}

TEST(DatasetRegistry, UnknownNameSuggests) {
  EXPECT_LOAD_ERROR("irs", ErrorCode::kInvalidArgument, "unknown dataset 'irs'");
  EXPECT_LOAD_ERROR("irs", ErrorCode::kInvalidArgument, "did you mean 'iris'?");
  EXPECT_LOAD_ERROR("spiral?n=10", ErrorCode::kInvalidArgument, "did you mean 'spirals'?");
  EXPECT_LOAD_ERROR("nothing-like-it", ErrorCode::kInvalidArgument, "known: breast_cancer,");
  EXPECT_LOAD_ERROR("cv:x.csv", ErrorCode::kInvalidArgument, "did you mean 'csv:'?");
  EXPECT_LOAD_ERROR("", ErrorCode::kInvalidArgument, "empty dataset name");
}

TEST(DatasetSpec, UnknownQueryKeysListAllowed) {
  EXPECT_LOAD_ERROR("spirals?noice=0.1", ErrorCode::kInvalidArgument,
                    "unknown parameter 'noice' (did you mean 'noise'?); allowed: n, classes, "
                    "turns, noise, seed");
  EXPECT_LOAD_ERROR("iris?seed=1", ErrorCode::kInvalidArgument, "'iris' takes no parameters");
  EXPECT_LOAD_ERROR("csv:x.csv?lable=y", ErrorCode::kInvalidArgument,
                    "allowed: label, task, classes");
}

TEST(DatasetSpec, BadValues) {
  EXPECT_LOAD_ERROR("spirals?n=abc", ErrorCode::kInvalidArgument,
                    "dataset 'spirals?n=abc': n: expected an integer, got 'abc'");
  EXPECT_LOAD_ERROR("spirals?n=0", ErrorCode::kInvalidArgument, "n: must be between");
  EXPECT_LOAD_ERROR("moons?noise=-1", ErrorCode::kInvalidArgument, "noise: must be between 0");
  EXPECT_LOAD_ERROR("moons?noise=nan", ErrorCode::kInvalidArgument, "noise: expected a number");
  EXPECT_LOAD_ERROR("moons?seed=-3", ErrorCode::kInvalidArgument, "seed: expected a non-negative");
  EXPECT_LOAD_ERROR("moons?n=10&n=20", ErrorCode::kInvalidArgument, "'n' given twice");
  EXPECT_LOAD_ERROR("moons?n", ErrorCode::kInvalidArgument,
                    "bad parameter 'n' (expected KEY=VALUE)");
  EXPECT_LOAD_ERROR("fashion-mnist?part=validation", ErrorCode::kInvalidArgument,
                    "part: expected one of train, test, got 'validation'");
  EXPECT_LOAD_ERROR("csv:", ErrorCode::kInvalidArgument, "expected csv:PATH");
  EXPECT_LOAD_ERROR("idx:only-one", ErrorCode::kInvalidArgument, "expected idx:IMAGES,LABELS");
}

TEST(DatasetSpec, BarePathsPickTheirLoader) {
  Dataset d = load(testing::fixture("small.csv.gz"));
  EXPECT_EQ(d.rows, 2);
  Dataset s = load(testing::fixture("good.libsvm") + "?features=5");
  EXPECT_EQ(s.features, 5);
}

}  // namespace
}  // namespace layerlab::data
