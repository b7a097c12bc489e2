// Resolving the study a command names (`status REF`, `worker --study REF`...) in a real
// SQLite store: by name, by id, and what is not an id.
#include "cli/study_ref.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "support/temp_and_errors.h"

namespace layerlab::cli {
namespace {

using ::layerlab::testing::TempDir;
using ::layerlab::testing::throws_error;

class StudyRefTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = store::open_store("sqlite:" + dir_.path("s.db"));
    first_ = store_->create_study("first", nlohmann::json::object());
    second_ = store_->create_study("second", nlohmann::json::object());
  }
  TempDir dir_;
  std::unique_ptr<store::Store> store_;
  int64_t first_ = 0;
  int64_t second_ = 0;
};

TEST_F(StudyRefTest, AStudyIsFoundByItsNameAndByItsId) {
  EXPECT_EQ(resolve_study(*store_, "second").id, second_);
  EXPECT_EQ(resolve_study(*store_, std::to_string(second_)).name, "second");
  EXPECT_EQ(resolve_study(*store_, std::to_string(first_)).name, "first");
}

TEST_F(StudyRefTest, ANameThatIsAnotherStudysIdNamesTheStudyOfThatName) {
  // "1" is the id of "first" and the name of the third study: the name wins, as before.
  const int64_t third = store_->create_study(std::to_string(first_), nlohmann::json::object());
  EXPECT_EQ(resolve_study(*store_, std::to_string(first_)).id, third);
}

TEST_F(StudyRefTest, WhatIsNotACanonicalIdOfAStudyIsUnknownAndTheMessageListsTheStudies) {
  const std::string padded = "0" + std::to_string(second_);
  for (const std::string& ref :
       {std::string("999"), padded, std::string("-1"), std::string("+2"),
        std::string("99999999999999999999999"), std::string(" 2"), std::string("2 ")})
    EXPECT_TRUE(throws_error([&] { resolve_study(*store_, ref); }, ErrorCode::kNotFound,
                             "in this store; its studies: first, second"))
        << "'" << ref << "'";
}

TEST(StudyRef, AnEmptyStoreSaysItHasNoStudiesForAnIdToo) {
  TempDir dir;
  auto store = store::open_store("sqlite:" + dir.path("empty.db"));
  EXPECT_TRUE(throws_error([&] { resolve_study(*store, "1"); }, ErrorCode::kNotFound,
                           "no study '1' in this store: it has no studies yet"));
}

}  // namespace
}  // namespace layerlab::cli
