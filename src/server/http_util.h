// The HTTP edge: JSON responses, errors as {"error": {"code", "message"}} with the status
// that fits (docs/api.md), and checked query parameters.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "server/http.h"

namespace layerlab::server {

// The status for an error of the core: 400, 404, 409, 500, 503.
int http_status(ErrorCode code);
// The error code string of a status (401 and 413 come from the HTTP layer itself).
const char* status_code_name(int http_status);

// `body` is shared, so a cached response is sent without a copy.
void send_body(Response& res, std::shared_ptr<const std::string> body, const char* content_type,
               int status = 200);
void send_json(Response& res, const nlohmann::json& body, int status = 200);
void send_json_text(Response& res, std::shared_ptr<const std::string> body, int status = 200);
void send_error(Response& res, int status, const std::string& message);

// One line on stderr: "server: " and `text` with its control characters escaped, so that
// a request path or a name quoted in an error can neither forge a line nor reach a terminal.
void log_line(std::string_view text);

using Handler = std::function<void(const Request&, Response&)>;
// Runs `h`, turning layerlab::Error into its status, bad_alloc into a 503 and any other
// exception into a 500 (the request is the boundary: nothing escapes into the server's
// threads). A 5xx answer says only what kind of trouble it is; what happened, which may name
// the store's host or a statement, goes to the log.
void run_guarded(const Handler& h, const Request& req, Response& res);

// Query parameters; a bad value is kInvalidArgument naming the parameter, and so is one
// longer than max_param_bytes (checked before it is parsed).
constexpr size_t kMaxParamBytes = 1024;
constexpr size_t kMaxFieldsParamBytes = 4096;  // /columns?fields=, a list of names
constexpr size_t kMaxQueryBytes = 8192;        // all names and values together: else a 414
size_t max_param_bytes(const std::string& name);
size_t query_bytes(const Request& req);
std::string query_text(const Request& req, const char* name, const std::string& fallback);
int64_t query_int(const Request& req, const char* name, int64_t fallback, int64_t min, int64_t max);

// A path id (the n-th capture of the route pattern): a positive integer, else kNotFound.
int64_t path_id(const Request& req, size_t match, const char* what);

// A cache key made of the parsed, validated parts of a request, so no raw query text can
// make one request's key equal another's.
std::string cache_key(const nlohmann::json& parts);

}  // namespace layerlab::server
