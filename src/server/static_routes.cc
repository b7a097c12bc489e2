// The dashboard's files and the OpenAPI document, embedded in the binary
// (cmake/EmbedFiles.cmake). Requests map to embedded names only; nothing here reads the
// file system.
#include <zlib.h>

#include <mutex>

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

std::string_view embedded_file(const std::string& name) {
  const auto bytes = embedded::find(embedded::web_files(), name);
  if (!bytes) throw not_found("no dashboard file " + name);
  return *bytes;
}

// Sends bytes of static lifetime without a copy.
void send_static(Response& res, std::string_view bytes, const char* type) {
  res.content_type = type;
  res.static_body = bytes;
}

void serve_embedded(Response& res, const std::string& name, const char* cache) {
  res.set_header("Cache-Control", cache);
  send_static(res, embedded_file(name), content_type(name));
}

std::string gzip(std::string_view in) {
  z_stream z{};
  if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
    throw internal_error("zlib: deflateInit2 failed");
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw internal_error("zlib: deflate did not finish");
  return out;
}

// Plotly is 4.8 MB: compressed once per process (0.3 s), then sent as is.
void serve_plotly(const Request& req, Response& res) {
  static constexpr const char* kName = "web/node_modules/plotly.js-dist-min/plotly.min.js";
  res.set_header("Cache-Control", "public, max-age=86400");
  res.set_header("Vary", "Accept-Encoding");
  if (req.header("Accept-Encoding").find("gzip") == std::string::npos)
    return send_static(res, embedded_file(kName), content_type(kName));
  static std::once_flag once;
  static std::string compressed;
  std::call_once(once, [] { compressed = gzip(embedded_file(kName)); });
  res.set_header("Content-Encoding", "gzip");
  send_static(res, compressed, content_type(kName));
}

}  // namespace

void add_static_routes(Router& r) {
  r.get("/",
        [](const Request&, Response& res) { serve_embedded(res, "web/index.html", "no-cache"); });
  // Names of letters, digits, '_', '-' and single dots: no "..", no encoded separators.
  r.get(R"(/((?:js|css)(?:/[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)+))",
        [](const Request& req, Response& res) {
          serve_embedded(res, "web/" + req.matches[1], "no-cache");
        });
  r.get("/vendor/plotly.min.js", serve_plotly);
  // The OpenAPI 3.1 document of everything this router serves (docs/openapi.json).
  r.get("/api/v1/openapi.json", [](const Request&, Response& res) {
    const auto doc = embedded::find(embedded::api_files(), "docs/openapi.json");
    if (!doc) throw internal_error("the OpenAPI document was not embedded");
    res.set_header("Cache-Control", "no-cache");
    send_static(res, *doc, "application/json");
  });
}

}  // namespace layerlab::server
