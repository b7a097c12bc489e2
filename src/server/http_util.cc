#include "server/http_util.h"

#include <charconv>
#include <iostream>

namespace layerlab::server {

int http_status(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kFailedPrecondition:
      return 409;
    case ErrorCode::kUnavailable:
      return 503;
    case ErrorCode::kAborted:
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
    case 404:
      return "not_found";
    case 405:
      return "method_not_allowed";
    case 409:
      return "failed_precondition";
    case 413:
      return "payload_too_large";
    case 503:
      return "unavailable";
    default:
      return status >= 500 ? "internal" : "bad_request";
  }
}

void send_body(httplib::Response& res, std::shared_ptr<const std::string> body,
               const char* content_type, int status) {
  res.status = status;
  const size_t size = body->size();
  res.set_content_provider(
      size, content_type,
      [body = std::move(body)](size_t offset, size_t length, httplib::DataSink& sink) {
        return sink.write(body->data() + offset, length);
      });
}

void send_json_text(httplib::Response& res, std::shared_ptr<const std::string> body, int status) {
  send_body(res, std::move(body), "application/json", status);
}

void send_json(httplib::Response& res, const nlohmann::json& body, int status) {
  send_json_text(res,
                 std::make_shared<const std::string>(
                     body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)),
                 status);
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, {{"error", {{"code", status_code_name(status)}, {"message", message}}}}, status);
}

httplib::Server::Handler guarded(Handler h) {
  return [h = std::move(h)](const httplib::Request& req, httplib::Response& res) {
    try {
      h(req, res);
    } catch (const Error& e) {
      const int status = http_status(e.code());
      if (status >= 500)
        std::cerr << "server: " << req.method << " " << req.path << ": " << e.what() << "\n";
      send_error(res, status, e.what());
    } catch (const std::exception& e) {
      std::cerr << "server: " << req.method << " " << req.path << ": " << e.what() << "\n";
      send_error(res, 500, std::string("internal error: ") + e.what());
    }
  };
}

std::string query_text(const httplib::Request& req, const char* name, const std::string& fallback) {
  return req.has_param(name) ? req.get_param_value(name) : fallback;
}

int64_t query_int(const httplib::Request& req, const char* name, int64_t fallback, int64_t min,
                  int64_t max) {
  if (!req.has_param(name)) return fallback;
  const std::string text = req.get_param_value(name);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max)
    throw invalid_argument(std::string(name) + ": expected an integer from " + std::to_string(min) +
                           " to " + std::to_string(max) + ", got '" + text + "'");
  return v;
}

int64_t path_id(const httplib::Request& req, size_t match, const char* what) {
  const std::string text = req.matches[static_cast<int>(match)].str();
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v <= 0)
    throw not_found(std::string("no ") + what + " with id '" + text + "'");
  return v;
}

}  // namespace layerlab::server
