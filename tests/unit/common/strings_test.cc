#include "common/strings.h"

#include <gtest/gtest.h>

#include "common/registry.h"

namespace layerlab {
namespace {

TEST(EditDistance, CountsEditsAndSwaps) {
  EXPECT_EQ(edit_distance("relu", "relu"), 0u);
  EXPECT_EQ(edit_distance("rellu", "relu"), 1u);
  EXPECT_EQ(edit_distance("irsi", "iris"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(ClosestMatch, SuggestsOnlyLikelyTypos) {
  const std::vector<std::string> names = {"iris", "wine", "digits", "breast_cancer"};
  EXPECT_EQ(closest_match("irsi", names), "iris");
  EXPECT_EQ(closest_match("digts", names), "digits");
  EXPECT_EQ(closest_match("breast-cancer", names), "breast_cancer");
  EXPECT_EQ(closest_match("mnist", names), "");
}

TEST(Registry, UnknownNameListsKnownOnesAndSuggests) {
  Registry<int> r("colour");
  r.add("red", 1).add("green", 2);
  EXPECT_EQ(r.get("green"), 2);
  try {
    r.get("gren");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_STREQ(e.what(), "unknown colour 'gren' (did you mean 'green'?); known: green, red");
  }
}

}  // namespace
}  // namespace layerlab
