// `layerlab report` on bad input: one line naming the problem, a non-zero exit code, and
// no output file (nor a leftover temporary one).
#include <filesystem>

#include "integration/report/report_study.h"
#include "store/store.h"
#include "study/spec.h"

namespace layerlab {
namespace {

namespace fs = std::filesystem;
using testing::report;
using testing::report_study;

// No file in dir but the ones the study run left.
bool no_report_files(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("bad", 0) == 0) return false;
  return true;
}

void expect_one_line_error(const testing::CommandResult& r, int code, const std::string& part) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("layerlab report: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(part), std::string::npos) << r.err;
}

TEST(ReportErrors, UnknownStudy) {
  const fs::path dir = report_study().study.dir;
  const auto r = report("depth-reprot -o " + (dir / "bad.html").string());
  expect_one_line_error(r, 2,
                        "no study 'depth-reprot' in this store (did you mean 'depth-report'?)");
  EXPECT_TRUE(no_report_files(dir));
}

TEST(ReportErrors, StudyWithoutFinishedTrials) {
  // A study whose trials are all still queued, created through the store API.
  const testing::Study s = testing::write_study("report-waiting", testing::kReportStudy);
  {
    auto store = store::open_store(s.store);
    const auto spec = study::load_study_file(s.file.string());
    const int64_t id = store->create_study("waiting", spec.to_json());
    store->add_trials(id, {{0, "iris", {{"hidden_layers", 1}}, 1},
                           {1, "iris", {{"hidden_layers", 2}}, 1},
                           {2, "wine", {{"hidden_layers", 1}}, 1}});
  }
  const auto r = testing::run_layerlab("report waiting --store " + s.store + " -o " +
                                       (s.dir / "bad.html").string());
  expect_one_line_error(r, 3, "study 'waiting' has no trial to analyse");
  EXPECT_NE(r.err.find("(3 queued)"), std::string::npos) << r.err;
  EXPECT_TRUE(no_report_files(s.dir));
}

TEST(ReportErrors, UnwritableOutput) {
  const fs::path dir = report_study().study.dir;
  expect_one_line_error(report("depth-report -o /nonexistent-layerlab-dir/r.html"), 2,
                        "-o: cannot write '/nonexistent-layerlab-dir/r.html': No such file");
  expect_one_line_error(report("depth-report -o " + dir.string()), 2,
                        "-o: cannot write '" + dir.string() + "': is a directory");
}

TEST(ReportErrors, BadFormat) {
  const fs::path dir = report_study().study.dir;
  expect_one_line_error(report("depth-report --format pdf -o " + (dir / "bad.pdf").string()), 2,
                        "--format: expected html or json, got 'pdf'");
  EXPECT_TRUE(no_report_files(dir));
}

TEST(ReportErrors, MissingStore) {
  const auto r = testing::run_layerlab(
      "report depth-report --store sqlite:/nonexistent-layerlab-dir/x.db -o -");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("/nonexistent-layerlab-dir/x.db"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace layerlab
