// Every malformed study file in tests/data/studies is refused by `layerlab run` with a
// one-line message naming the file (and, except for unreadable ones, line and column) and
// exit code 2, and changes nothing in a store that already holds a study.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "integration/run_command.h"
#include "integration/study_commands.h"

namespace layerlab {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::vector<std::string> bad_files() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(LAYERLAB_SOURCE_DIR) / "tests/data/studies"))
    if (e.path().filename().string().rfind("bad_", 0) == 0) out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

class BadStudyFile : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    const testing::Study s =
        testing::finished_study("bad-study",
                                "name: ok\ndatasets: [iris]\nparameters:\n  units: {values: [4, "
                                "8]}\n  epochs: {value: 2}\n");
    dir_ = s.dir;
    store_ = s.store;
  }
  static json studies() {
    const auto r = testing::run_layerlab("studies --json --store " + store_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }
  static inline fs::path dir_;
  static inline std::string store_;
};

TEST_P(BadStudyFile, IsRefusedWithItsLocationAndStoresNothing) {
  const json before = studies();
  const fs::path file =
      fs::path(LAYERLAB_SOURCE_DIR) / "tests/data/studies" / (GetParam() + ".yaml");
  const auto r = testing::run_layerlab("run " + file.string() + " --workers 1 --store " + store_);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(GetParam() + "\\.yaml:[0-9]+:[0-9]+")))
      << "no file:line:col in: " << r.err;
  EXPECT_EQ(studies(), before);
}

INSTANTIATE_TEST_SUITE_P(Files, BadStudyFile, ::testing::ValuesIn(bad_files()),
                         [](const auto& p) { return p.param; });

TEST(BadStudyFile, AtLeastTwentyCases) {
  EXPECT_GE(bad_files().size(), 20u);
}

TEST(BadStudyFile, MissingFileIsNamed) {
  const auto r = testing::run_layerlab("run /nonexistent/study.yaml --store sqlite:/tmp/never.db");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/study.yaml"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists("/tmp/never.db"));
}

}  // namespace
}  // namespace layerlab
