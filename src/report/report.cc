#include "report/report.h"

#include "analysis/study_cache.h"
#include "common/error.h"
#include "report/findings.h"
#include "report/html_page.h"
#include "report/page_data.h"

namespace layerlab::report {
namespace {

std::string statuses_text(const store::StudyCounts& counts) {
  std::string out;
  for (store::TrialStatus s : store::kAllTrialStatuses)
    if (counts[s] > 0)
      out += (out.empty() ? "" : ", ") + std::to_string(counts[s]) + " " + store::to_string(s);
  return out.empty() ? "no trials stored" : out;
}

}  // namespace

Format parse_format(std::string_view text) {
  if (text == "html") return Format::kHtml;
  if (text == "json") return Format::kJson;
  throw invalid_argument("--format: expected html or json, got '" + std::string(text) + "'");
}

Format format_for_path(std::string_view path) {
  return path.ends_with(".json") ? Format::kJson : Format::kHtml;
}

std::string make_report(store::Store& store, const store::StudyRecord& study, Format format) {
  analysis::StudyCache cache(store);
  std::string out;
  cache.with_study(study.id, [&](analysis::StudyView& view) {
    const Findings f = analyse(view);
    const store::StudyCounts counts = store.counts(study.id);
    if (f.sample.trials.empty())
      throw failed_precondition("study '" + study.name +
                                "' has no trial to analyse: none is completed or early-stopped "
                                "with a value yet (" +
                                statuses_text(counts) + ")");
    const nlohmann::json findings = findings_json(f, study, counts);
    if (format == Format::kJson)
      out = findings.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    else
      out = render_html(findings, study_page_data(store, study, view));
  });
  return out;
}

}  // namespace layerlab::report
