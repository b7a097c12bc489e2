// The worker flags as `run`, `worker` and `serve` parse them: --pack takes a number or auto
// (the default), `run` passes auto on to the workers it starts, and each worker resolves it
// for its own device.
#include "cli/worker_flags.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/error.h"

namespace layerlab::cli {
namespace {

// The flags after parsing `args` (as `layerlab worker ARGS` would).
WorkerFlags parse(std::vector<std::string> args) {
  CLI::App app;
  WorkerFlags f;
  add_worker_flags(app, f);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last to first
  app.parse(args);
  return f;
}

// The value following `option` in args, or "" when it is not there.
std::string value_of(const std::vector<std::string>& args, const std::string& option) {
  const auto it = std::find(args.begin(), args.end(), option);
  return it == args.end() || it + 1 == args.end() ? "" : *(it + 1);
}

TEST(WorkerFlags, PackIsAutoByDefaultAndResolvesToOneOnTheCpu) {
  const WorkerFlags f = parse({});
  EXPECT_TRUE(f.pack.is_auto());
  EXPECT_EQ(worker_options(f).pack, 1);
  EXPECT_EQ(worker::describe(resolved_pack(f)), "pack 1 (auto: cpu)");
}

TEST(WorkerFlags, AutoIsPassedOnToWorkersSoEachResolvesItForItsDevice) {
  struct Case {
    std::string device;
    int pack;
  };
  for (const Case& c : {Case{"cpu", 1}, Case{"cuda", 64}, Case{"cuda:1", 64}}) {
    for (std::vector<std::string> given : {std::vector<std::string>{}, {"--pack", "auto"}}) {
      given.insert(given.end(), {"--device", c.device});
      const std::vector<std::string> args = worker_args(parse(given));  // as `run` starts one
      EXPECT_EQ(value_of(args, "--pack"), "auto") << c.device;
      const WorkerFlags w = parse(args);
      EXPECT_EQ(worker_options(w).pack, c.pack) << c.device;
      EXPECT_EQ(worker::describe(resolved_pack(w)),
                "pack " + std::to_string(c.pack) + " (auto: " + c.device + ")");
    }
  }
}

TEST(WorkerFlags, AGivenPackIsKeptAndPassedOn) {
  for (const char* device : {"cpu", "cuda:0"}) {
    const WorkerFlags f = parse({"--pack", "8", "--device", device});
    EXPECT_EQ(worker_options(f).pack, 8) << device;
    EXPECT_EQ(value_of(worker_args(f), "--pack"), "8");
    EXPECT_EQ(worker::describe(resolved_pack(f)), "pack 8");
  }
  EXPECT_EQ(worker_options(parse({"--pack=1"})).pack, 1);
}

TEST(WorkerFlags, ABadPackStopsTheParseNamingTheOption) {
  for (const char* bad : {"0", "-3", "abc", "autox", "99999999999"}) {
    try {
      parse({"--pack", bad});
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << bad;
      EXPECT_EQ(std::string(e.what()).rfind("--pack: expected a whole number from 1 to 65536 or "
                                            "'auto', got '" +
                                                std::string(bad) + "'",
                                            0),
                0u)
          << e.what();
    }
  }
}

TEST(WorkerFlags, HelpShowsThePacksValuesAndDefault) {
  CLI::App app;
  WorkerFlags f;
  add_worker_flags(app, f);
  const std::string help = app.help();
  EXPECT_NE(help.find("--pack INT|auto=auto"), std::string::npos) << help;
}

}  // namespace
}  // namespace layerlab::cli
