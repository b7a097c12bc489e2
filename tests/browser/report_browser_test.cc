// A report written by `layerlab report` (on a study run by the real `layerlab run`), opened
// from its file in headless Chromium with the network refused (tests/browser/report_page.mjs):
// every plot renders, nothing is fetched, nothing is logged as an error. Screenshots land in
// the test's output folder (report-browser-output next to this binary).
#include <cstdlib>

#include "integration/report/report_study.h"

namespace layerlab::testing {
namespace {

using nlohmann::json;

TEST(ReportBrowser, EveryPlotRendersOfflineWithoutErrors) {
  if (std::system("test -x /usr/bin/chromium") != 0)
    GTEST_SKIP() << "Debian's chromium is not installed (scripts/install-deps.sh test)";
  const auto dir = report_study().study.dir;
  const auto file = dir / "report.html";
  const auto r = report("depth-report -o " + file.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const auto out = std::filesystem::path(LAYERLAB_BINARY_DIR) / "report-browser-output";
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(out);
  const std::string node = std::string("node ") + LAYERLAB_SOURCE_DIR +
                           "/tests/browser/report_page.mjs --report " + file.string() + " --out " +
                           out.string() + " >" + (dir / "node.out").string() + " 2>" +
                           (dir / "node.err").string();
  const int status = std::system(node.c_str());
  const std::string stdout_text = read_file(dir / "node.out");
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "report_page.mjs failed:\n"
      << read_file(dir / "node.err") << stdout_text;
  const json result = json::parse(stdout_text.substr(stdout_text.rfind("{\"ok\"")), nullptr, false);
  ASSERT_TRUE(result.is_object()) << stdout_text;
  EXPECT_TRUE(result["ok"].get<bool>());
  EXPECT_EQ(result["checks"]["plots"].size(), 10u) << result.dump();
  EXPECT_EQ(result["checks"]["depth"]["series"], 4) << result.dump();
  ASSERT_EQ(result["screenshots"].size(), 2u);
  for (const json& shot : result["screenshots"])
    EXPECT_GT(std::filesystem::file_size(shot.get<std::string>()), 10'000u) << shot;
}

}  // namespace
}  // namespace layerlab::testing
