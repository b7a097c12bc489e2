#include "store/records.h"

#include <algorithm>

#include "common/error.h"
#include "common/strings.h"

namespace layerlab::store {
namespace {

template <typename Enum, size_t N>
Enum parse(std::string_view name, const std::array<Enum, N>& all, const char* what) {
  std::vector<std::string> known;
  for (Enum e : all) {
    if (name == to_string(e)) return e;
    known.emplace_back(to_string(e));
  }
  throw invalid_argument("unknown " + std::string(what) + " '" + std::string(name) +
                         "'; expected one of: " + join(known, ", "));
}

}  // namespace

const char* to_string(StudyStatus s) {
  switch (s) {
    case StudyStatus::kRunning:
      return "running";
    case StudyStatus::kFinished:
      return "finished";
    case StudyStatus::kCancelled:
      return "cancelled";
  }
  return "?";
}

const char* to_string(TrialStatus s) {
  switch (s) {
    case TrialStatus::kQueued:
      return "queued";
    case TrialStatus::kRunning:
      return "running";
    case TrialStatus::kCompleted:
      return "completed";
    case TrialStatus::kPruned:
      return "pruned";
    case TrialStatus::kEarlyStopped:
      return "early_stopped";
    case TrialStatus::kDiverged:
      return "diverged";
    case TrialStatus::kFailed:
      return "failed";
    case TrialStatus::kCancelled:
      return "cancelled";
  }
  return "?";
}

const char* to_string(WorkerStatus s) {
  switch (s) {
    case WorkerStatus::kIdle:
      return "idle";
    case WorkerStatus::kBusy:
      return "busy";
    case WorkerStatus::kStopped:
      return "stopped";
  }
  return "?";
}

StudyStatus parse_study_status(std::string_view name) {
  static constexpr std::array kAll = {StudyStatus::kRunning, StudyStatus::kFinished,
                                      StudyStatus::kCancelled};
  return parse(name, kAll, "study status");
}

TrialStatus parse_trial_status(std::string_view name) {
  return parse(name, kAllTrialStatuses, "trial status");
}

WorkerStatus parse_worker_status(std::string_view name) {
  static constexpr std::array kAll = {WorkerStatus::kIdle, WorkerStatus::kBusy,
                                      WorkerStatus::kStopped};
  return parse(name, kAll, "worker status");
}

bool is_param_key(std::string_view key) {
  if (key.size() > kMaxParamKey) return false;
  bool part_start = true;  // a name must start here
  for (char c : key) {
    if (c == '.') {
      if (part_start) return false;
      part_start = true;
    } else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               c == '_') {
      part_start = false;
    } else {
      return false;
    }
  }
  return !part_start;
}

bool is_finished(TrialStatus s) {
  return s != TrialStatus::kQueued && s != TrialStatus::kRunning;
}

int64_t StudyCounts::total() const {
  int64_t n = 0;
  for (int64_t c : by_status) n += c;
  return n;
}

int64_t StudyCounts::finished() const {
  return total() - (*this)[TrialStatus::kQueued] - (*this)[TrialStatus::kRunning];
}

}  // namespace layerlab::store
