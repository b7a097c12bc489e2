// The dashboard's files, embedded in the binary (cmake/EmbedFiles.cmake). Requests map to
// embedded names only; nothing here reads the file system.
#include "embedded.h"
#include "server/context.h"

namespace layerlab::server {
namespace {

const char* content_type(std::string_view name) {
  auto ends = [&](std::string_view ext) {
    return name.size() >= ext.size() && name.substr(name.size() - ext.size()) == ext;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

void serve_embedded(httplib::Response& res, const std::string& name, const char* cache) {
  const auto bytes = embedded::find(embedded::web_files(), name);
  if (!bytes) throw not_found("no dashboard file " + name);
  res.set_header("Cache-Control", cache);
  res.set_content(bytes->data(), bytes->size(), content_type(name));
}

}  // namespace

void add_static_routes(Router& r) {
  r.get("/", [](const httplib::Request&, httplib::Response& res) {
    serve_embedded(res, "web/index.html", "no-cache");
  });
  // Names of letters, digits, '_', '-' and single dots: no "..", no encoded separators.
  r.get(R"(/((?:js|css)(?:/[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)+))",
        [](const httplib::Request& req, httplib::Response& res) {
          serve_embedded(res, "web/" + req.matches[1].str(), "no-cache");
        });
  r.get("/vendor/plotly.min.js", [](const httplib::Request&, httplib::Response& res) {
    serve_embedded(res, "web/node_modules/plotly.js-dist-min/plotly.min.js",
                   "public, max-age=86400");
  });
}

}  // namespace layerlab::server
