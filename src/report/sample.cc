#include "report/sample.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace layerlab::report {
namespace {

int rank(const Scalar& s) {
  if (s.string >= 0) return 1;
  return std::isnan(s.number) ? 2 : 0;
}

}  // namespace

bool ScalarOrder::operator()(const Scalar& a, const Scalar& b) const {
  const int ra = rank(a), rb = rank(b);
  if (ra != rb) return ra < rb;
  if (ra == 0) return a.number < b.number;
  if (ra == 1)
    return view->strings[static_cast<size_t>(a.string)] <
           view->strings[static_cast<size_t>(b.string)];
  return false;
}

bool same_level(const Scalar& a, const Scalar& b) {
  if (rank(a) != rank(b)) return false;
  if (a.string >= 0) return a.string == b.string;  // interned: equal strings, equal index
  return std::isnan(a.number) || a.number == b.number;
}

nlohmann::json number_json(double v) {
  if (!std::isfinite(v)) return nullptr;
  if (std::abs(v) < 9e15 && v == std::trunc(v)) return static_cast<int64_t>(v);
  return v;
}

nlohmann::json number_json(const std::optional<double>& v) {
  return v ? number_json(*v) : nlohmann::json(nullptr);
}

Sample select_trials(const StudyView& view) {
  Sample s;
  s.view = &view;
  s.trials.reserve(view.trials.size());
  for (const CachedTrial& t : view.trials) {
    if (analysis::analysed(t))
      s.trials.push_back(&t);
    else
      ++(t.status == store::TrialStatus::kPruned ? s.pruned : s.no_value);
  }
  std::sort(s.trials.begin(), s.trials.end(),
            [](const CachedTrial* a, const CachedTrial* b) { return a->number < b->number; });
  return s;
}

std::vector<std::pair<std::string, std::vector<const CachedTrial*>>> Sample::by_dataset() const {
  std::vector<std::vector<const CachedTrial*>> groups(view->datasets.size());
  for (const CachedTrial* t : trials) groups[static_cast<size_t>(t->dataset)].push_back(t);
  std::vector<std::pair<std::string, std::vector<const CachedTrial*>>> out;
  for (size_t d = 0; d < groups.size(); ++d)
    if (!groups[d].empty()) out.emplace_back(view->datasets[d], std::move(groups[d]));
  return out;
}

bool Sample::varies(int param) const {
  if (param < 0) return false;
  const auto p = static_cast<size_t>(param);
  for (const CachedTrial* t : trials)
    if (!same_level(t->params[p], trials.front()->params[p])) return true;
  return false;
}

std::vector<int> Sample::varied_params() const {
  std::vector<int> out;
  for (size_t i = 0; i < view->param_names.size(); ++i) {
    const int p = static_cast<int>(i);
    if (view->param_names[i] != "seed" && varies(p)) out.push_back(p);
  }
  return out;
}

const std::string& Sample::param_name(int param) const {
  return view->param_names.at(static_cast<size_t>(param));
}

std::optional<study::ParamKind> Sample::param_kind(int param) const {
  try {
    return study::param_kind(param_name(param));
  } catch (const Error&) {
    return std::nullopt;
  }
}

nlohmann::json Sample::level_json(int param, const Scalar& s) const {
  if (s.missing()) return nullptr;
  if (s.string < 0 && param_kind(param) == study::ParamKind::kBool) return s.number != 0;
  return view->scalar_json(s);
}

}  // namespace layerlab::report
