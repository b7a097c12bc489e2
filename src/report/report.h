// layerlab report: a study's findings (report/findings.h) as JSON, or as one self-contained
// HTML page with the findings' plots and the study page's plots (report/html_page.h).
#pragma once

#include <string>
#include <string_view>

#include "store/store.h"

namespace layerlab::report {

enum class Format { kHtml, kJson };

// "html" or "json"; kInvalidArgument naming --format otherwise.
Format parse_format(std::string_view text);
// The format an output path asks for when --format is not given: json for a *.json file,
// html otherwise (stdout included).
Format format_for_path(std::string_view path);

// The report of a study in the store. kFailedPrecondition, naming the study and its trials'
// statuses, when no trial can be analysed yet.
std::string make_report(store::Store& store, const store::StudyRecord& study, Format format);

}  // namespace layerlab::report
