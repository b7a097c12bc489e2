#include "server/http_util.h"

#include <charconv>
#include <iostream>

#include "common/text_safety.h"

namespace layerlab::server {
namespace {

constexpr const char* kRetryAfterSeconds = "5";
constexpr const char* kInternalMessage = "internal error (the server's log says what happened)";

}  // namespace

int http_status(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kFailedPrecondition:
      return 409;
    case ErrorCode::kUnavailable:
    case ErrorCode::kAborted:  // a transaction lost a race every time it was retried: try again
      return 503;
    case ErrorCode::kInternal:
      return 500;
  }
  return 500;
}

const char* status_code_name(int status) {
  switch (status) {
    case 400:
      return "invalid_argument";
    case 401:
      return "unauthenticated";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 405:
      return "method_not_allowed";
    case 409:
      return "failed_precondition";
    case 413:
      return "payload_too_large";
    case 414:
      return "uri_too_long";
    case 429:
      return "too_many_requests";
    case 503:
      return "unavailable";
    default:
      return status >= 500 ? "internal" : "bad_request";
  }
}

void send_body(Response& res, std::shared_ptr<const std::string> body, const char* content_type,
               int status) {
  res.status = status;
  res.content_type = content_type;
  res.body = std::move(body);
}

void send_json_text(Response& res, std::shared_ptr<const std::string> body, int status) {
  send_body(res, std::move(body), "application/json", status);
}

void send_json(Response& res, const nlohmann::json& body, int status) {
  send_json_text(res,
                 std::make_shared<const std::string>(
                     body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)),
                 status);
}

void send_error(Response& res, int status, const std::string& message) {
  send_json(res, {{"error", {{"code", status_code_name(status)}, {"message", message}}}}, status);
}

void log_line(std::string_view text) {
  std::cerr << "server: " + printable(text) + "\n";
}

// Answers to anyone who reaches the port name no store location, host or SQL: a 5xx error
// says what kind of trouble it is, and the log says the rest.
void run_guarded(const Handler& h, const Request& req, Response& res) {
  const auto log_request = [&req](std::string_view what) {
    log_line(req.method + " " + req.path + ": " + std::string(what));
  };
  try {
    h(req, res);
  } catch (const Error& e) {
    const int status = http_status(e.code());
    res = Response{};
    if (status < 500) {
      send_error(res, status, e.what());
      return;
    }
    log_request(e.what());
    if (status == 503) {
      send_error(res, 503,
                 "the store cannot be reached or is busy; try again (the server's log says why)");
      // The store is away or busy: when to ask again (RFC 9110), for clients and balancers.
      res.set_header("Retry-After", kRetryAfterSeconds);
    } else {
      send_error(res, status, kInternalMessage);
    }
  } catch (const std::bad_alloc&) {
    log_request("out of memory");
    res = Response{};
    send_error(res, 503, "the server ran out of memory for this request");
  } catch (const std::exception& e) {
    log_request(e.what());
    res = Response{};
    send_error(res, 500, kInternalMessage);
  }
}

std::string cache_key(const nlohmann::json& parts) {
  return parts.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

size_t max_param_bytes(const std::string& name) {
  return name == "fields" ? kMaxFieldsParamBytes : kMaxParamBytes;
}

size_t query_bytes(const Request& req) {
  size_t n = 0;
  for (const auto& [name, value] : req.params) n += name.size() + value.size() + 2;  // & =
  return n;
}

std::string query_text(const Request& req, const char* name, const std::string& fallback) {
  if (!req.has_param(name)) return fallback;
  std::string text = req.param(name);
  if (text.size() > max_param_bytes(name))
    throw invalid_argument(std::string(name) + ": " + std::to_string(text.size()) +
                           " bytes, over the limit of " + std::to_string(max_param_bytes(name)));
  return text;
}

int64_t query_int(const Request& req, const char* name, int64_t fallback, int64_t min,
                  int64_t max) {
  if (!req.has_param(name)) return fallback;
  const std::string text = query_text(req, name, "");
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max)
    throw invalid_argument(std::string(name) + ": expected an integer from " + std::to_string(min) +
                           " to " + std::to_string(max) + ", got '" + text + "'");
  return v;
}

int64_t path_id(const Request& req, size_t match, const char* what) {
  const std::string& text = req.matches.at(match);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v <= 0)
    throw not_found(std::string("no ") + what + " with id '" + text + "'");
  return v;
}

}  // namespace layerlab::server
