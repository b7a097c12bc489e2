#include "common/error.h"

namespace layerlab {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kFailedPrecondition:
      return "failed_precondition";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kAborted:
      return "aborted";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
}

}  // namespace layerlab
