#include "report/html_findings.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <utility>

#include "report/html_text.h"

namespace layerlab::report {
namespace {

using nlohmann::json;

std::string section(const std::string& id, const std::string& title, const std::string& body) {
  return "<section class=\"card\" id=\"" + id + "\">\n<h2>" + title + "</h2>\n" + body +
         "</section>\n";
}

std::string note(const json& text) {
  return text.is_string() ? "<p class=\"note\">" + escape_html(text.get<std::string>()) + "</p>\n"
                          : "";
}

std::string name(const json& f, const char* key) {
  return escape_html(f.value(key, ""));
}

std::string params_text(const json& params) {
  std::string out;
  for (const auto& [k, v] : params.items())
    out += (out.empty() ? "" : ", ") + escape_html(k) + "=" + cell(v);
  return out.empty() ? "\u2014" : out;
}

std::string join(const json& names, const std::string& sep) {
  std::string out;
  for (const json& n : names) out += (out.empty() ? "" : sep) + cell(n);
  return out;
}

std::string signed_seconds(const json& v) {
  return v.is_number() ? fmt::format("{:+.3g} s", v.get<double>()) : "\u2014";
}

// "[31%, 58%]": a share's bootstrap interval.
std::string interval(const json& share) {
  return "[" + percent(share["low"]) + ", " + percent(share["high"]) + "]";
}

// One dataset's importance in words: the important parameters with their shares and
// intervals, or why none is named (n always said).
std::string importance_answer(const json& d) {
  const std::string n = "n = " + cell(d["n"]);
  const std::string verdict = d["verdict"];
  if (verdict == "nothing_varies") return "no parameter varies (" + n + ")";
  if (verdict == "too_few_trials")
    return "too few trials to tell (" + n + ", at least " + cell(d["min_n"]) + " needed)";
  if (verdict == "noise")
    return "no parameter explains the metric better than noise (out-of-bag R\u00b2 " +
           cell(d["oob_r2"], 2) + ", " + n + ")";
  std::string named;
  for (const json& p : d["ranked"])
    if (p["important"].get<bool>())
      named += (named.empty() ? "" : ", ") + name(p, "parameter") + " " + percent(p["share"]) +
               " " + interval(p);
  return (named.empty() ? std::string("no parameter stands out alone") : named) +
         " of the variance; interactions " + percent(d["interactions"]["share"]) +
         " (out-of-bag R\u00b2 " + cell(d["oob_r2"], 2) + ", " + n + ")";
}

// The costs a Pareto front trades the metric against: the key and its words.
constexpr std::pair<const char*, const char*> kCosts[] = {{"parameter_count", "parameter count"},
                                                          {"seconds", "training time"}};

std::string cost_text(const json& t, const std::string& cost) {
  if (cost == "seconds") return t["seconds"].is_number() ? cell(t["seconds"], 3) + " s" : "\u2014";
  return t["parameter_count"].is_number() ? cell(t["parameter_count"]) + " parameters" : "\u2014";
}

// "#7 (0.97, 8000 parameters)".
std::string front_point(const json& t, const std::string& cost) {
  return "#" + cell(t["number"]) + " (" + cell(t["value"]) + ", " + cost_text(t, cost) + ")";
}

}  // namespace

std::string plot_div(const std::string& figure) {
  return "<div class=\"plot\" id=\"plot-" + figure + "\" data-figure=\"" + figure + "\"></div>\n";
}

// Each dataset's best configuration: "dataset: a=1, b=2: mean 0.97 +- 0.01 (n = 3)".
std::string best_answers(const json& f) {
  std::string body = "<h3>Best configuration per dataset</h3>\n<ul class=\"answers\">\n";
  for (const json& b : f["best"]) {
    if (b["rank"] != 1) continue;
    body += "<li><b>" + name(b, "dataset") + "</b>: " + params_text(b["params"]) + ": mean " +
            cell(b["mean"]) + (b["se"].is_number() ? " \u00b1 " + cell(b["se"], 3) + " (SE)" : "") +
            " over n = " + cell(b["n"]) + " trial" + (b["n"] == 1 ? "" : "s") + ", best trial #" +
            cell(b["best_trial"]) + "</li>\n";
  }
  if (f["best"].empty()) body += "<li>no analysed trial yet</li>\n";
  return body + "</ul>\n";
}

// The 2015 study's questions (RQ1: where does the metric stop improving with depth; RQ2:
// is training time linear in depth), asked only of a study that varies the depth.
std::string depth_answers(const json& f) {
  const std::string metric = escape_html(f["study"]["metric"].get<std::string>());
  std::string body =
      "<h3>" + metric + " against depth (the 2015 study's RQ1/RQ2)</h3>\n<ul class=\"answers\">\n";
  for (const json& c : f["depth"]["curves"])
    body += "<li><b>" + name(c, "dataset") + "</b> \u00b7 " + name(c, "label") + ": " +
            escape_html(c["plateau"]["verdict"].get<std::string>()) + " (best mean " +
            cell(c["plateau"]["best_mean"]) + " at depth " + cell(c["plateau"]["best_depth"]) +
            ")</li>\n";
  if (f["depth"]["curves"].empty()) body += "<li>" + cell(f["depth"]["note"]) + "</li>\n";
  body += "</ul>\n<h3>Training time against depth</h3>\n<ul class=\"answers\">\n";
  for (const json& t : f["time"]) {
    body += "<li><b>" + name(t, "dataset") + "</b>: ";
    if (t["fit"].is_object())
      body += signed_seconds(t["fit"]["slope"]) + " per hidden layer (R\u00b2 " +
              cell(t["fit"]["r2"], 3) + " over " + cell(t["fit"]["n"]) + " trials); ";
    body += escape_html(t["verdict"].get<std::string>());
    if (t["r2_means"].is_number() && t["points"].size() >= 3)
      body += " (R\u00b2 of the per-depth means " + cell(t["r2_means"], 3) + ")";
    body += "</li>\n";
  }
  if (f["time"].empty()) body += "<li>no depth to fit against</li>\n";
  return body + "</ul>\n";
}

std::string answers_section(const json& f) {
  const std::string metric = escape_html(f["study"]["metric"].get<std::string>());
  std::string body = best_answers(f);
  if (f["study"]["varies_depth"].get<bool>()) body += depth_answers(f);
  body += "<h3>Trade-offs: " + metric + " against cost</h3>\n<ul class=\"answers\">\n";
  for (const json& d : f["pareto"]) {
    std::string parts;
    for (const auto& [key, words] : kCosts) {
      const json& trials = d["fronts"][key]["trials"];
      if (trials.empty()) continue;
      parts += (parts.empty() ? "" : "; ") + std::to_string(trials.size()) +
               " non-dominated against " + words + ", from " + front_point(trials.front(), key) +
               (trials.size() > 1 ? " to " + front_point(trials.back(), key) : std::string());
    }
    body += "<li><b>" + name(d, "dataset") +
            "</b>: " + (parts.empty() ? std::string("no trial with a value and a cost") : parts) +
            "</li>\n";
  }
  body += "</ul>\n<h3>Which parameters matter</h3>\n<ul class=\"answers\">\n";
  for (const json& d : f["importance"])
    body += "<li><b>" + name(d, "dataset") + "</b>: " + importance_answer(d) + "</li>\n";
  body += "</ul>\n";
  return section("answers", "Answers", body);
}

std::string trials_section(const json& f) {
  const json& t = f["trials"];
  HtmlTable table({"trials", "#count"}, "trials-table");
  table.row({"planned", cell(t["planned"])}).row({"stored", cell(t["stored"])});
  table.row({"<b>analysed</b>", "<b>" + cell(t["analysed"]) + "</b>"});
  for (const auto& [why, n] : t["left_out"].items())
    table.row({"left out: " + escape_html(why), cell(n)});
  return section("trials", "Trials",
                 table.str() + "<p class=\"muted small\">" +
                     escape_html(f["rules"]["sample"].get<std::string>()) + "</p>\n");
}

std::string depth_section(const json& f) {
  if (!f["study"]["varies_depth"].get<bool>()) return "";
  const json& d = f["depth"];
  const std::string metric = escape_html(f["study"]["metric"].get<std::string>());
  std::string body = note(d["note"]);
  if (!d["curves"].empty()) {
    body += "<p class=\"muted\">Mean \u00b1 standard error of " + metric +
            " at each depth, per dataset; one line per " +
            (d["split_by"].empty() ? std::string("study") : join(d["split_by"], " \u00d7 ")) +
            " level. Star: plateau depth; triangle: no plateau observed.</p>\n" + plot_div("depth");
    HtmlTable plateaus(
        {"dataset", "group", "#best depth", "#best mean", "#plateau depth", "verdict"},
        "plateau-table");
    std::set<double> depths;
    for (const json& c : d["curves"]) {
      const json& p = c["plateau"];
      plateaus.row({name(c, "dataset"), name(c, "label"), cell(p["best_depth"]),
                    cell(p["best_mean"]), cell(p["plateau_depth"]),
                    escape_html(p["verdict"].get<std::string>())});
      for (const json& q : c["points"]) depths.insert(q["depth"].get<double>());
    }
    std::vector<std::string> columns = {"dataset", "group"};
    for (double x : depths) columns.push_back("#depth " + cell(json(x)));
    HtmlTable means(columns, "depth-table");
    for (const json& c : d["curves"]) {
      std::map<double, std::string> at;
      for (const json& q : c["points"])
        at[q["depth"].get<double>()] =
            with_se(q["mean"], q["se"]) + " <span class=\"muted\">(" + cell(q["n"]) + ")</span>";
      std::vector<std::string> row = {name(c, "dataset"), name(c, "label")};
      for (double x : depths) row.push_back(at.count(x) ? at[x] : "");
      means.row(row);
    }
    body += "<h3>Plateau per curve</h3>\n" + plateaus.str() +
            "<h3>Mean \u00b1 standard error (n) per depth</h3>\n" + means.str();
  }
  return section("depth", metric + " against depth (RQ1)", body);
}

std::string time_section(const json& f) {
  if (!f["study"]["varies_depth"].get<bool>()) return "";
  std::string body;
  if (f["time"].empty()) {
    body = note(f["depth"]["note"]);
  } else {
    body =
        "<p class=\"muted\">Mean \u00b1 std of the training time at each depth; dashed: the "
        "least-squares line through every trial.</p>\n" +
        plot_div("time-fit");
    HtmlTable table({"dataset", "#n", "#slope (s per layer)", "#intercept (s)", "#R\u00b2",
                     "#R\u00b2 of the means", "verdict"},
                    "time-table");
    for (const json& t : f["time"]) {
      const json fit = t["fit"].is_object() ? t["fit"] : json::object();
      table.row({name(t, "dataset"), cell(t["n"]), cell(fit.value("slope", json())),
                 cell(fit.value("intercept", json())), cell(fit.value("r2", json()), 3),
                 cell(t["r2_means"], 3), escape_html(t["verdict"].get<std::string>())});
    }
    body += table.str();
  }
  return section("time", "Training time against depth (RQ2)", body);
}

std::string importance_section(const json& f) {
  std::string body =
      "<p class=\"muted\">Share of the metric's variance each parameter explains alone over "
      "the search space, the rest being interactions (fANOVA over a random forest, with "
      "bootstrap intervals; see the rules below).</p>\n" +
      plot_div("importance");
  HtmlTable imp({"dataset", "#n", "parameter", "#share", "#90% interval", "important"},
                "importance-table");
  for (const json& d : f["importance"]) {
    if (d["verdict"] != "shares") {
      imp.row(
          {name(d, "dataset"), cell(d["n"]), "<i>" + importance_answer(d) + "</i>", "", "", ""});
      continue;
    }
    for (const json& p : d["ranked"])
      imp.row({name(d, "dataset"), cell(d["n"]), name(p, "parameter"), percent(p["share"]),
               interval(p), p["important"].get<bool>() ? "yes" : "no"});
    imp.row({name(d, "dataset"), cell(d["n"]), "<i>interactions</i>",
             percent(d["interactions"]["share"]), interval(d["interactions"]), ""});
  }
  body += imp.str();
  const json& e = f["effects"];
  if (!e["categorical"].empty()) {
    HtmlTable t({"dataset", "parameter", "level", "#n", "#mean \u00b1 SE", "#\u0394 to best",
                 "#\u03b7\u00b2"},
                "categorical-effects");
    for (const json& c : e["categorical"])
      for (const json& l : c["levels"])
        t.row({name(c, "dataset"), name(c, "parameter"), cell(l["level"]), cell(l["n"]),
               with_se(l["mean"], l["se"]), cell(l["diff_to_best"], 3), cell(c["eta2"], 3)},
              l["level"] == c["best_level"] ? "best" : "");
    body += "<h3>Effects of named parameters</h3>\n" + t.str();
  }
  if (!e["binary"].empty()) {
    HtmlTable t({"dataset", "parameter", "#n true / false", "#mean true", "#mean false",
                 "#difference", "#95% CI", "#Cohen's d"},
                "binary-effects");
    for (const json& b : e["binary"])
      t.row({name(b, "dataset"), name(b, "parameter"),
             cell(b["n_true"]) + " / " + cell(b["n_false"]), cell(b["mean_true"]),
             cell(b["mean_false"]), cell(b["diff"], 3),
             b["ci95"].is_array() ? "[" + cell(b["ci95"][0], 3) + ", " + cell(b["ci95"][1], 3) + "]"
                                  : "\u2014",
             cell(b["cohens_d"], 3)});
    body += "<h3>Effects of true/false parameters</h3>\n" + t.str();
  }
  return section("importance", "Which parameters matter", body);
}

std::string best_section(const json& f) {
  HtmlTable t({"dataset", "#rank", "parameters", "#trials", "#mean \u00b1 SE", "#best value",
               "#best trial"},
              "best-table");
  for (const json& c : f["best"])
    t.row({name(c, "dataset"), cell(c["rank"]), params_text(c["params"]), cell(c["n"]),
           with_se(c["mean"], c["se"]), cell(c["best_value"]),
           fmt::format("#{}", cell(c["best_trial"]))});
  return section("best", "Best configurations", t.str());
}

std::string pareto_section(const json& f) {
  const std::string metric = escape_html(f["study"]["metric"].get<std::string>());
  std::string body =
      "<p class=\"muted\">Every analysed trial of each dataset (grey) and its Pareto front "
      "(the line): the trials no other trial beats on " +
      metric + " at a cost at most as high. Hover a point for its configuration.</p>\n";
  body += "<h3>Against parameter count</h3>\n" + plot_div("pareto-parameters") +
          "<h3>Against training time</h3>\n" + plot_div("pareto-seconds");
  HtmlTable t({"dataset", "against", "#trial", "#" + metric, "#parameters", "#training time (s)",
               "configuration"},
              "pareto-table");
  std::string uncosted;
  for (const json& d : f["pareto"]) {
    for (const auto& [key, words] : kCosts) {
      const json& front = d["fronts"][key];
      for (const json& c : front["trials"])
        t.row({name(d, "dataset"), words, fmt::format("#{}", cell(c["number"])), cell(c["value"]),
               cell(c["parameter_count"]), cell(c["seconds"], 3), params_text(c["params"])});
      if (front["without_cost"].get<int64_t>() > 0)
        uncosted += "<li><b>" + name(d, "dataset") + "</b>: " + cell(front["without_cost"]) +
                    " ranked trials have no " + words + " and are not placed</li>\n";
    }
  }
  body += "<h3>Non-dominated configurations</h3>\n" +
          (t.empty() ? std::string("<p class=\"note\">No trial has a value and a cost yet.</p>\n")
                     : t.str());
  if (!uncosted.empty()) body += "<ul class=\"muted small\">\n" + uncosted + "</ul>\n";
  return section("pareto", "Trade-offs: " + metric + " against cost", body);
}

std::string rules_section(const json& f) {
  std::string body = "<ol class=\"rules\">\n";
  for (const char* key : {"sample", "plateau", "time", "effects", "importance", "best", "pareto"})
    if (f["rules"].contains(key))
      body += "<li><b>" + escape_html(key) + "</b>: " + name(f["rules"], key) + "</li>\n";
  return section("rules", "Methods and rules", body + "</ol>\n");
}

}  // namespace layerlab::report
