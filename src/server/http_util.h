// The HTTP edge: JSON responses, errors as {"error": {"code", "message"}} with the status
// that fits (docs/api.md), and checked query parameters.
#pragma once

#include <httplib.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/error.h"

namespace layerlab::server {

// The status for an error of the core: 400, 404, 409, 500, 503.
int http_status(ErrorCode code);
// The error code string of a status (401 and 413 come from the HTTP layer itself).
const char* status_code_name(int http_status);

// Bodies go out as they are, never compressed per request by httplib: Debian's build
// enables brotli, whose default quality costs ~40 ms for a 46 kB page and seconds for
// Plotly. `body` is shared, so a cached response is sent without a copy.
void send_body(httplib::Response& res, std::shared_ptr<const std::string> body,
               const char* content_type, int status = 200);
void send_json(httplib::Response& res, const nlohmann::json& body, int status = 200);
void send_json_text(httplib::Response& res, std::shared_ptr<const std::string> body,
                    int status = 200);
void send_error(httplib::Response& res, int status, const std::string& message);

using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
// Runs `h`, turning layerlab::Error into its status and anything else into a 500 that says
// what happened (the request is the boundary: nothing escapes into the server's threads).
httplib::Server::Handler guarded(Handler h);

// Query parameters; a bad value is kInvalidArgument naming the parameter.
std::string query_text(const httplib::Request& req, const char* name, const std::string& fallback);
int64_t query_int(const httplib::Request& req, const char* name, int64_t fallback, int64_t min,
                  int64_t max);

// A path id (the n-th regex match): a positive integer, else kNotFound.
int64_t path_id(const httplib::Request& req, size_t match, const char* what);

}  // namespace layerlab::server
