// The HTML side of a report: escaping, the dashboard's modules as inline script, inline
// script and JSON that cannot end their element early, and a whole page from synthetic
// findings that needs nothing from the network.
#include <gtest/gtest.h>

#include <regex>

#include "common/error.h"
#include "report/findings.h"
#include "report/html_page.h"
#include "report/html_text.h"
#include "report/js_bundle.h"
#include "support/temp_and_errors.h"
#include "unit/report/view_builder.h"

namespace layerlab::report {
namespace {

using ::layerlab::testing::throws_error;
using nlohmann::json;

TEST(HtmlText, EscapesAndFormats) {
  EXPECT_EQ(escape_html("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(cell(json(0.953212)), "0.9532");
  EXPECT_EQ(cell(json(12)), "12");
  EXPECT_EQ(cell(json(nullptr)), "\u2014");
  EXPECT_EQ(cell(json("a<b")), "a&lt;b");
  EXPECT_EQ(percent(json(0.4567)), "45.7%");
  EXPECT_EQ(with_se(json(0.5), json(0.0123)), "0.5 \u00b1 0.012");
  HtmlTable t({"name", "#n"}, "t1");
  t.row({"a", "1"});
  EXPECT_EQ(t.str(),
            "<div class=\"table-wrap\"><table id=\"t1\"><thead><tr><th>name</th><th "
            "class=\"num\">n</th></tr></thead><tbody>\n<tr><td>a</td><td "
            "class=\"num\">1</td></tr>\n</tbody></table></div>\n");
}

TEST(JsBundle, ModulesBecomeScript) {
  const std::string js = module_as_script(
      "import { a,\n  b } from './x.js';\nimport './side.js';\nexport const K = 1;\n"
      "export function f(x) {\n  return x; // export inside\n}\nconst y = 2;\n",
      "m.js");
  EXPECT_EQ(js,
            "\n\n\nconst K = 1;\nfunction f(x) {\n  return x; // export inside\n}\n"
            "const y = 2;\n");
  EXPECT_TRUE(throws_error([] { module_as_script("export default 1;\n", "d.js"); },
                           ErrorCode::kInternal, "d.js:1"));
  EXPECT_TRUE(throws_error([] { module_as_script("const a = 1;\nexport { a };\n", "e.js"); },
                           ErrorCode::kInternal, "e.js:2"));
  EXPECT_TRUE(throws_error([] { module_as_script("import {\n a\n", "u.js"); }, ErrorCode::kInternal,
                           "unterminated import"));
}

TEST(JsBundle, DashboardPlotsHaveNoModuleSyntaxLeft) {
  const std::string js = dashboard_plots_script();
  EXPECT_FALSE(std::regex_search(js, std::regex("(^|\n)(import|export)[ {]")));
  for (const char* f :
       {"function metricFigure(", "function timeFigure(", "function historyFigure(",
        "function parcoordsFigure(", "function curvesFigure(", "function fmtParam("})
    EXPECT_NE(js.find(f), std::string::npos) << f;
}

TEST(HtmlPage, InlineScriptAndJsonCannotCloseTheirElement) {
  const std::string j = script_json({{"name", "</script><script>alert(1)</script>"}});
  EXPECT_EQ(j.find('<'), std::string::npos);
  EXPECT_EQ(json::parse(j)["name"], "</script><script>alert(1)</script>");
  EXPECT_TRUE(throws_error([] { script_text("var s = '</SCRIPT>';", "bad.js"); },
                           ErrorCode::kInternal, "bad.js"));
  EXPECT_EQ(script_text("var s = 1;", "ok.js"), "var s = 1;");
}

TEST(HtmlPage, SelfContainedPageOfSyntheticFindings) {
  testing::ViewBuilder b({"hidden_layers", "activation"});
  for (int depth : {1, 2, 4})
    for (const char* act : {"relu", "tanh"})
      b.add("iris", {{"hidden_layers", depth}, {"activation", act}}, 0.5 + 0.1 * depth, depth)
          .parameters(100 * depth);
  const Findings f = analyse(b.view());
  store::StudyRecord study;
  study.id = 7;
  study.name = "syn<thetic>";
  store::StudyCounts counts;
  counts.by_status[static_cast<size_t>(store::TrialStatus::kCompleted)] = 6;
  counts.by_status[static_cast<size_t>(store::TrialStatus::kQueued)] = 2;
  const json findings = findings_json(f, study, counts);
  EXPECT_EQ(findings["trials"]["analysed"], 6);
  EXPECT_EQ(findings["trials"]["left_out"]["not_finished"], 2);
  EXPECT_EQ(findings["study"]["varied_parameters"], (json{"hidden_layers", "activation"}));
  EXPECT_EQ(findings["depth"]["curves"].size(), 2u);
  EXPECT_EQ(findings["rules"].size(), 7u);
  // Deeper is better and costlier: every depth is on the fronts, both activations tie.
  ASSERT_EQ(findings["pareto"].size(), 1u);
  EXPECT_EQ(findings["pareto"][0]["fronts"]["parameter_count"]["trials"].size(), 6u);
  EXPECT_EQ(findings["pareto"][0]["fronts"]["seconds"]["trials"].size(), 6u);

  const std::string html = render_html(findings, json::object({{"x", "hidden_layers"}}));
  EXPECT_NE(html.find("layerlab report: syn&lt;thetic&gt;"), std::string::npos);
  EXPECT_EQ(html.find("syn<thetic>"), std::string::npos);
  EXPECT_NE(html.find("Plotly"), std::string::npos);
  EXPECT_FALSE(std::regex_search(html, std::regex("<(script|link|img|iframe)[^>]*(src|href)=")));
  for (const char* id : {"plot-depth", "plot-time-fit", "plot-importance", "plot-study-metric",
                         "plot-study-curves", "id=\"best-table\"", "id=\"rules\"",
                         "plot-pareto-parameters", "plot-pareto-seconds", "id=\"pareto-table\"",
                         "6 non-dominated against parameter count, from #0 (0.6, 100 parameters) "
                         "to #5 (0.9, 400 parameters)"})
    EXPECT_NE(html.find(id), std::string::npos) << id;
}

TEST(HtmlPage, AStudyThatDoesNotVaryDepthGetsNoDepthQuestions) {
  // A search over learning rate and activation at one depth: the report asks the generic
  // questions (best configurations, trade-offs, importance), not the 2015 depth ones.
  testing::ViewBuilder b({"hidden_layers", "learning_rate", "activation"});
  for (int i = 0; i < 6; ++i)
    b.add("wine",
          {{"hidden_layers", 3},
           {"learning_rate", 0.001 * (i + 1)},
           {"activation", i % 2 ? "relu" : "tanh"},
           {"seed", 0}},
          0.8 + 0.01 * i);
  const Findings f = analyse(b.view());
  store::StudyRecord study;
  study.name = "lr-search";
  const json findings = findings_json(f, study, store::StudyCounts{});
  EXPECT_FALSE(findings["study"]["varies_depth"].get<bool>());
  EXPECT_TRUE(findings["depth"]["curves"].empty());
  EXPECT_TRUE(findings["time"].empty());
  EXPECT_FALSE(findings["rules"].contains("plateau"));
  const std::string page = render_html(findings, json::object({{"x", "learning_rate"}}));
  const size_t main = page.find("<main>");  // what a reader sees, not the inlined code
  const std::string html = page.substr(main, page.find("</main>") - main);
  for (const char* absent : {"RQ1", "RQ2", "plateau", "id=\"depth\"", "id=\"time\""})
    EXPECT_EQ(html.find(absent), std::string::npos) << absent;
  EXPECT_NE(html.find("Best configuration per dataset"), std::string::npos);
  EXPECT_NE(html.find("best trial #5"), std::string::npos);
  EXPECT_NE(html.find("Which parameters matter"), std::string::npos);
}

}  // namespace
}  // namespace layerlab::report
