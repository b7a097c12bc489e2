// Errors thrown inside layerlab. The code says what the caller should do (after abseil's
// Status codes); the edges (cli/, server/, worker loop) turn them into messages, exit codes
// and HTTP statuses. Messages name where the problem is (file:line, parameter, URL).
#pragma once

#include <stdexcept>
#include <string>

namespace layerlab {

enum class ErrorCode {
  kInvalidArgument,     // the input is wrong: fix it, do not retry
  kNotFound,            // a named thing does not exist
  kFailedPrecondition,  // the system is not in a state where this can run (e.g. package missing)
  kUnavailable,         // a service is away: retry after a backoff
  kAborted,             // a transaction lost a race: retry it
  kInternal,            // a bug
};

const char* error_code_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

inline Error invalid_argument(const std::string& m) {
  return {ErrorCode::kInvalidArgument, m};
}
inline Error not_found(const std::string& m) {
  return {ErrorCode::kNotFound, m};
}
inline Error failed_precondition(const std::string& m) {
  return {ErrorCode::kFailedPrecondition, m};
}
inline Error unavailable(const std::string& m) {
  return {ErrorCode::kUnavailable, m};
}
inline Error internal_error(const std::string& m) {
  return {ErrorCode::kInternal, m};
}

}  // namespace layerlab
