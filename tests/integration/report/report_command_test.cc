// `layerlab report` end to end on a study run by the real `layerlab run`: the JSON's
// numbers agree with the trials `layerlab export` gives, the HTML is one self-contained
// file (Plotly and the figure code inlined, nothing to fetch) carrying the same numbers.
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include "integration/report/report_study.h"
#include "store/store.h"
#include "support/known_pareto_study.h"

namespace layerlab {
namespace {

using nlohmann::json;
using testing::occurrences;
using testing::read_file;
using testing::report;
using testing::report_study;

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

struct Cell {
  std::vector<double> values;
  double mean() const { return mean_of(values); }
};

// (dataset, activation, depth) -> values of the completed trials.
std::map<std::tuple<std::string, std::string, int>, Cell> cells(const json& exported) {
  std::map<std::tuple<std::string, std::string, int>, Cell> out;
  for (const json& t : exported["trials"]) {
    if (t["status"] != "completed") continue;
    out[{t["dataset"], t["params"]["activation"], t["params"]["hidden_layers"].get<int>()}]
        .values.push_back(t["value"].get<double>());
  }
  return out;
}

json report_json() {
  const auto dir = report_study().study.dir;
  const auto r = report("depth-report -o " + (dir / "report.json").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(read_file(dir / "report.json"));
}

TEST(ReportCommand, JsonNumbersAgreeWithTheTrials) {
  const json& exported = report_study().exported;
  ASSERT_EQ(exported["trials"].size(), 24u);
  const json r = report_json();
  EXPECT_EQ(r["study"]["name"], "depth-report");
  EXPECT_EQ(r["study"]["metric"], "val_accuracy");
  EXPECT_EQ(r["study"]["goal"], "maximize");
  EXPECT_EQ(r["trials"]["analysed"], 24);
  EXPECT_EQ(r["trials"]["stored"], 24);
  EXPECT_EQ(r["depth"]["split_by"], json({"activation"}));

  // Every (dataset, activation) curve: mean and count at each depth, and the plateau rule.
  const auto expected = cells(exported);
  ASSERT_EQ(r["depth"]["curves"].size(), 4u);
  for (const json& c : r["depth"]["curves"]) {
    ASSERT_EQ(c["points"].size(), 3u);
    // The rule, applied here to the reported means and standard errors.
    double best_mean = -1, best_se = 0;
    int best_depth = 0;
    for (const json& p : c["points"]) {
      const Cell& cell = expected.at({c["dataset"], c["label"], p["depth"].get<int>()});
      EXPECT_EQ(p["n"], 2);
      EXPECT_NEAR(p["mean"].get<double>(), cell.mean(), 1e-12) << c["dataset"] << c["label"];
      const double se = std::abs(cell.values[0] - cell.values[1]) / 2;  // sd / sqrt(2), n = 2
      EXPECT_NEAR(p["se"].get<double>(), se, 1e-12);
      if (p["mean"].get<double>() > best_mean) {
        best_mean = p["mean"].get<double>();
        best_se = p["se"].get<double>();
        best_depth = p["depth"];
      }
    }
    const json& plateau = c["plateau"];
    EXPECT_EQ(plateau["best_depth"], best_depth);
    int first_within = 0;
    for (const json& p : c["points"])
      if (!first_within && p["mean"].get<double>() >= best_mean - best_se)
        first_within = p["depth"];
    EXPECT_EQ(plateau["plateau_depth"], first_within);
    EXPECT_EQ(plateau["best_is_deepest"], best_depth == 4);
    EXPECT_EQ(plateau["deeper_worse"],
              best_depth != 4 && c["points"][2]["mean"].get<double>() < best_mean - best_se);
  }

  // Time against depth: the least-squares line through each dataset's 12 trials.
  ASSERT_EQ(r["time"].size(), 2u);
  for (const json& t : r["time"]) {
    std::vector<double> x, y;
    for (const json& trial : exported["trials"])
      if (trial["dataset"] == t["dataset"]) {
        x.push_back(trial["params"]["hidden_layers"].get<double>());
        y.push_back(trial["result"]["seconds"].get<double>());
      }
    const double mx = mean_of(x), my = mean_of(y);
    double sxx = 0, sxy = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      sxx += (x[i] - mx) * (x[i] - mx);
      sxy += (x[i] - mx) * (y[i] - my);
    }
    EXPECT_EQ(t["n"], 12);
    EXPECT_NEAR(t["fit"]["slope"].get<double>(), sxy / sxx, 1e-9);
    EXPECT_NEAR(t["fit"]["intercept"].get<double>(), my - sxy / sxx * mx, 1e-9);
  }

  // Importance: 12 analysed trials per dataset are too few to tell (no shares, n said); the
  // best configuration of each dataset is the (activation, depth) with the highest mean over
  // its two seeds.
  ASSERT_EQ(r["importance"].size(), 2u);
  for (const json& d : r["importance"]) {
    EXPECT_EQ(d["n"], 12);
    EXPECT_EQ(d["verdict"], "too_few_trials");
    EXPECT_TRUE(d["ranked"].empty());
  }
  std::map<std::string, double> best_mean;
  for (const auto& [key, cell] : expected)
    best_mean[std::get<0>(key)] = std::max(best_mean[std::get<0>(key)], cell.mean());
  ASSERT_EQ(r["best"].size(), 12u);  // 6 configurations per dataset
  for (const json& b : r["best"]) {
    if (b["rank"] != 1) continue;
    EXPECT_NEAR(b["mean"].get<double>(), best_mean.at(b["dataset"]), 1e-12);
    EXPECT_EQ(b["params"].size(), 2u);
  }
  EXPECT_EQ(r["effects"]["categorical"].size(), 2u);  // activation on each dataset
  EXPECT_TRUE(r["effects"]["binary"].empty());

  // `-o -` writes the same document to stdout.
  const auto out = report("depth-report --format json -o -");
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(json::parse(out.out), r);
}

TEST(ReportCommand, HtmlIsSelfContainedAndCarriesTheSameNumbers) {
  const auto dir = report_study().study.dir;
  const auto r = report("depth-report -o " + (dir / "report.html").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  const std::string html = read_file(dir / "report.html");
  EXPECT_EQ(html.rfind("<!doctype html>", 0), 0u);
  EXPECT_GT(html.size(), 1'000'000u) << "Plotly is inlined";
  EXPECT_NE(html.find("plotly.js v"), std::string::npos);
  EXPECT_NE(html.find("function metricFigure("), std::string::npos);
  EXPECT_FALSE(std::regex_search(
      html, std::regex(R"(<(script|link)\b[^>]*\b(src|href)\s*=)", std::regex::icase)))
      << "a script or stylesheet to fetch";
  EXPECT_FALSE(std::regex_search(html, std::regex(R"(<script[^>]*type="module")")));
  for (const char* id : {"plot-depth", "plot-time-fit", "plot-importance", "plot-study-metric",
                         "plot-study-time", "plot-study-history", "plot-study-parcoords",
                         "plot-study-curves", "plot-pareto-parameters", "plot-pareto-seconds"})
    EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;

  // The numbers inside are the JSON report's.
  const std::string open = "<script type=\"application/json\" id=\"report-data\">";
  const size_t at = html.find(open);
  ASSERT_NE(at, std::string::npos);
  const size_t end = html.find("</script>", at);
  const json data = json::parse(html.substr(at + open.size(), end - at - open.size()));
  EXPECT_EQ(data["findings"], report_json());
  EXPECT_EQ(data["page"]["metric_summary"]["trials"], 24);
  EXPECT_EQ(data["page"]["curves"].size(), 2u);  // the best trial of each dataset
  EXPECT_EQ(data["page"]["history"]["total"], 24);
  // The Pareto view's points and fronts: every trial of each dataset, the findings' fronts.
  ASSERT_EQ(data["page"]["pareto"]["datasets"].size(), 2u);
  for (size_t d = 0; d < 2; ++d) {
    const json& view = data["page"]["pareto"]["datasets"][d];
    EXPECT_EQ(view["points"]["total"], 12);
    EXPECT_EQ(view["fronts"], data["findings"]["pareto"][d]["fronts"]);
  }

  const auto out = report("depth-report --format html -o -");
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(out.out.rfind("<!doctype html>", 0), 0u);
}

// The findings list each dataset's non-dominated configurations: on a study with known
// fronts (tests/support/known_pareto_study.h), exactly those, in JSON and in the HTML.
TEST(ReportCommand, ListsTheKnownParetoFronts) {
  const auto dir = testing::fresh_dir("report-pareto");
  const std::string url = "sqlite:" + (dir / "s.db").string();
  {
    auto st = store::open_store(url);
    testing::write_known_pareto_study(*st);
  }
  const std::string study = testing::kKnownParetoStudy;
  const auto r = testing::run_layerlab("report " + study + " --format json -o - --store " + url);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json f = json::parse(r.out);
  EXPECT_NE(f["rules"]["pareto"].get<std::string>().find("Pareto"), std::string::npos);
  ASSERT_EQ(f["pareto"].size(), 2u);
  size_t rows = 0;
  for (const json& d : f["pareto"]) {
    for (const auto& [cost, want] : testing::kKnownFronts.at(d["dataset"])) {
      std::vector<int64_t> got;
      for (const json& t : d["fronts"][cost]["trials"]) {
        got.push_back(t["number"]);
        EXPECT_TRUE(t["params"].contains("hidden_layers")) << t.dump();
      }
      EXPECT_EQ(got, want) << d["dataset"] << " against " << cost;
      rows += got.size();
    }
  }

  const auto html = testing::run_layerlab("report " + study + " -o - --store " + url);
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const std::string& page = html.out;
  const size_t table = page.find("id=\"pareto-table\"");
  ASSERT_NE(table, std::string::npos);
  const std::string body = page.substr(table, page.find("</table>", table) - table);
  EXPECT_EQ(occurrences(body, "<tr"), rows + 1);  // a header row, then one row per front trial
  EXPECT_NE(body.find("activation=tanh"), std::string::npos);
  // The answers name each dataset's fronts: iris from #1 to #7 against the parameter count.
  EXPECT_NE(page.find("4 non-dominated against parameter count, from #1 (0.85, 1000 parameters) "
                      "to #7 (0.97, 8000 parameters)"),
            std::string::npos);
}

}  // namespace
}  // namespace layerlab
