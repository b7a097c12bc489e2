// The command line meets a newcomer: `layerlab` alone lists the commands, a mistyped
// command gets a "did you mean", and a study name the store does not have lists the
// store's studies (bounded) with a "did you mean", or says the store has none.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "integration/run_command.h"
#include "store/store.h"

namespace layerlab {
namespace {

using testing::run_layerlab;

const std::vector<std::string> kCommands = {"train",  "run",    "worker", "studies", "status",
                                            "trials", "export", "report", "cancel",  "serve",
                                            "submit", "rerun",  "best",   "predict", "datasets"};

TEST(Newcomer, LayerlabAloneListsEveryCommandOnALineOfItsOwn) {
  const auto r = run_layerlab("");
  EXPECT_EQ(r.exit_code, 1) << "as `git` alone: the commands listed, nothing done";
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("usage: layerlab COMMAND"), std::string::npos) << r.out;
  for (const std::string& c : kCommands) {
    // "  status    Progress and best trials of a study"
    const std::regex line("(^|\n)  " + c + " +[A-Z][^\n]+\n");
    EXPECT_TRUE(std::regex_search(r.out, line)) << "no line for " << c << " in:\n" << r.out;
  }
  EXPECT_EQ(r.out.find("A subcommand is required"), std::string::npos) << r.out;
  // Asked for by name, the same list is a success.
  const auto help = run_layerlab("help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out, r.out);
}

TEST(Newcomer, AMistypedCommandGetsADidYouMean) {
  const auto r = run_layerlab("statsu quick");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "layerlab: error: 'statsu' is not a layerlab command (did you mean 'status'?); "
            "`layerlab` alone lists the commands\n");
  const auto far = run_layerlab("frobnicate");
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_EQ(far.err,
            "layerlab: error: 'frobnicate' is not a layerlab command; `layerlab` alone lists "
            "the commands\n");
  // Options and real commands are untouched.
  EXPECT_EQ(run_layerlab("--version").exit_code, 0);
  EXPECT_EQ(run_layerlab("status --help").exit_code, 0);
}

// A store with `depth-sweep` and 24 more studies, made through the store itself.
std::string store_with_studies(const std::filesystem::path& dir, int more) {
  const std::string url = "sqlite:" + (dir / "s.db").string();
  auto store = store::open_store(url);
  store->create_study("depth-sweep", nlohmann::json::object());
  for (int i = 1; i <= more; ++i) {
    const std::string name = (i < 10 ? "s0" : "s") + std::to_string(i);  // s01, s02, ...
    store->create_study(name, nlohmann::json::object());
  }
  return url;
}

TEST(Newcomer, AnUnknownStudyListsTheStoresStudiesWithADidYouMean) {
  const auto dir = testing::fresh_dir("cli-unknown-study");
  const std::string url = store_with_studies(dir, 24);
  std::string listed = "depth-sweep";
  for (int i = 1; i <= 19; ++i) listed += (i < 10 ? ", s0" : ", s") + std::to_string(i);
  // Wherever a command resolves a study name.
  for (const std::string cmd : {"status", "trials", "export", "cancel", "report", "best"}) {
    SCOPED_TRACE(cmd);
    const auto r = run_layerlab(cmd + " depth-swep --store " + url +
                                (cmd == "report" ? " -o " + (dir / "r.html").string() : ""));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, "layerlab " + cmd +
                         ": error: no study 'depth-swep' in this store (did you mean "
                         "'depth-sweep'?); its studies: " +
                         listed + " ... and 5 more (`layerlab studies`)\n");
  }
  // Nothing close: the list alone.
  const auto r = run_layerlab("status zzzzzzzzzz --store " + url);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no study 'zzzzzzzzzz' in this store; its studies: depth-sweep, s01"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;
}

TEST(Newcomer, AFewStudiesAreAllListed) {
  const auto dir = testing::fresh_dir("cli-few-studies");
  const std::string url = store_with_studies(dir, 1);
  const auto r = run_layerlab("trials depth_sweep --store " + url);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "layerlab trials: error: no study 'depth_sweep' in this store (did you mean "
            "'depth-sweep'?); its studies: depth-sweep, s01\n");
}

TEST(Newcomer, AnEmptyStoreSaysItHasNoStudies) {
  const auto dir = testing::fresh_dir("cli-empty-store");
  const std::string empty = "sqlite:" + (dir / "empty.db").string();
  ASSERT_TRUE(store::open_store(empty)->list_studies().empty());  // a store, with nothing in it
  const auto r = run_layerlab("status nosuch --store " + empty);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "layerlab status: error: no study 'nosuch' in this store: it has no studies yet "
            "(`layerlab run STUDY.yaml` or `layerlab submit` adds one)\n");
}

}  // namespace
}  // namespace layerlab
