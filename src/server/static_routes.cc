// The dashboard's files and the OpenAPI document, embedded in the binary
// (cmake/EmbedFiles.cmake). Requests map to embedded names only; nothing here reads the
// file system.
//
// Caching: Plotly (the one large file) is served under a name that carries a hash of its
// bytes, /vendor/plotly-gl2d.HASH.min.js, with a year's `immutable` lifetime: a browser
// fetches it once per build. index.html names it (the server puts the hashed name in when
// it serves /), and is itself `no-cache`, like the small ES modules, which a browser
// revalidates. Every text file goes out gzip-compressed when the client accepts gzip
// (compressed once per process, on first request, then kept).
#include <openssl/evp.h>
#include <zlib.h>

#include <map>

#include "common/mutex.h"
#include "embedded.h"
#include "server/context.h"

namespace layerlab::server {
namespace {

// The dashboard's Plotly: the gl2d partial bundle (scatter, scattergl, parcoords, splom),
// a third of the full bundle that the offline report inlines.
constexpr std::string_view kPlotly = "web/node_modules/plotly.js/dist/plotly-gl2d.min.js";
// How index.html names it; the hashed name replaces this.
constexpr std::string_view kPlotlyUrl = "/vendor/plotly-gl2d.min.js";
constexpr const char* kImmutable = "public, max-age=31536000, immutable";

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

std::string_view embedded_file(std::string_view name) {
  const auto bytes = embedded::find(embedded::web_files(), name);
  if (!bytes) throw not_found("no dashboard file " + std::string(name));
  return *bytes;
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

// The first 16 hex digits of the SHA-256 of bytes.
std::string content_hash(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &n, EVP_sha256(), nullptr) != 1)
    throw internal_error("sha256 failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < 8 && i < n; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

// /vendor/plotly-gl2d.HASH.min.js for the embedded bytes.
const std::string& plotly_url() {
  static const std::string url = [] {
    const std::string hash = content_hash(embedded_file(kPlotly));
    std::string u(kPlotlyUrl);
    return u.insert(u.size() - std::string_view(".min.js").size(), "." + hash);
  }();
  return url;
}

// index.html with the hashed name of Plotly in place of its plain name.
std::string_view index_html() {
  static const std::string html = [] {
    std::string h(embedded_file("web/index.html"));
    const size_t at = h.find(kPlotlyUrl);
    if (at == std::string::npos) throw internal_error("index.html does not name Plotly");
    return h.replace(at, kPlotlyUrl.size(), plotly_url());
  }();
  return html;
}

// Does Accept-Encoding allow gzip? A "gzip" or "*" coding without q=0.
bool accepts_gzip(const Request& req) {
  const std::string accept = req.header("Accept-Encoding");
  size_t pos = 0;
  while (pos <= accept.size()) {
    size_t end = accept.find(',', pos);
    if (end == std::string::npos) end = accept.size();
    std::string_view item(accept.data() + pos, end - pos);
    pos = end + 1;
    std::string_view coding = item.substr(0, item.find(';'));
    while (!coding.empty() && coding.front() == ' ') coding.remove_prefix(1);
    while (!coding.empty() && coding.back() == ' ') coding.remove_suffix(1);
    if (coding != "gzip" && coding != "*") continue;
    const size_t q = item.find("q=");
    if (q == std::string_view::npos) return true;
    std::string_view value = item.substr(q + 2);
    // q=0, q=0.0, q=0.000: refused; anything else accepts.
    if (value.empty() || value.front() != '0') return true;
    value.remove_prefix(1);
    if (!value.empty() && value.front() == '.') value.remove_prefix(1);
    while (!value.empty() && value.front() == '0') value.remove_prefix(1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (!value.empty()) return true;
  }
  return false;
}

// The gzip forms of files with static lifetime, made on first use and kept: the keys are
// the embedded names (a fixed set), so this holds at most one copy of each.
class GzipCache {
 public:
  std::string_view get(std::string_view name, std::string_view bytes) {
    {
      MutexLock lock(mu_);
      if (auto it = files_.find(name); it != files_.end()) return it->second;
    }
    std::string z = gzip(bytes);  // outside the lock: Plotly takes ~0.1 s
    MutexLock lock(mu_);
    return files_.try_emplace(std::string(name), std::move(z)).first->second;
  }

 private:
  Mutex mu_;
  std::map<std::string, std::string, std::less<>> files_ GUARDED_BY(mu_);
};

std::string_view gzipped(std::string_view name, std::string_view bytes) {
  static GzipCache cache;
  return cache.get(name, bytes);
}

// Sends bytes of static lifetime without a copy, compressed when the client accepts gzip.
void send_static(const Request& req, Response& res, std::string_view name, std::string_view bytes,
                 const char* cache) {
  res.set_header("Cache-Control", cache);
  res.set_header("Vary", "Accept-Encoding");
  res.content_type = content_type(name);
  if (accepts_gzip(req)) {
    res.set_header("Content-Encoding", "gzip");
    res.static_body = gzipped(name, bytes);
  } else {
    res.static_body = bytes;
  }
}

}  // namespace

void add_static_routes(Router& r) {
  r.get("/", [](const Request& req, Response& res) {
    send_static(req, res, "web/index.html", index_html(), "no-cache");
  });
  // Names of letters, digits, '_', '-' and single dots: no "..", no encoded separators.
  for (const char* dir : {"js", "css"}) {
    r.get(std::string("/") + dir + "/{*}", [dir](const Request& req, Response& res) {
      const std::string& rest = req.matches[1];
      for (size_t start = 0, slash = 0; slash != std::string::npos; start = slash + 1) {
        slash = rest.find('/', start);
        if (!is_plain_file_name(std::string_view(rest).substr(start, slash - start)))
          throw not_found("no dashboard file /" + std::string(dir) + "/" + rest);
      }
      const std::string name = std::string("web/") + dir + "/" + rest;
      send_static(req, res, name, embedded_file(name), "no-cache");
    });
  }
  // Plotly under its hashed name (immutable), and under its plain name for anything that
  // asks without the hash (revalidated, like the modules). Any other name is a 404: the
  // name is only ever compared with these two.
  r.get("/vendor/{}", [](const Request& req, Response& res) {
    const std::string path = "/vendor/" + req.matches[1];
    if (path == plotly_url())
      return send_static(req, res, kPlotly, embedded_file(kPlotly), kImmutable);
    if (path == kPlotlyUrl)
      return send_static(req, res, kPlotly, embedded_file(kPlotly), "no-cache");
    throw not_found("no dashboard file " + path);
  });
  // The OpenAPI 3.1 document of everything this router serves (docs/openapi.json).
  r.get("/api/v1/openapi.json", [](const Request&, Response& res) {
    const auto doc = embedded::find(embedded::api_files(), "docs/openapi.json");
    if (!doc) throw internal_error("the OpenAPI document was not embedded");
    res.set_header("Cache-Control", "no-cache");
    res.content_type = "application/json";
    res.static_body = *doc;
  });
}

}  // namespace layerlab::server
