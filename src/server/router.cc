#include <charconv>

#include "server/context.h"

namespace layerlab::server {

store::StudyRecord Context::study(const std::string& id_or_name) {
  int64_t id = 0;
  auto [end, ec] = std::from_chars(id_or_name.data(), id_or_name.data() + id_or_name.size(), id);
  if (ec == std::errc() && end == id_or_name.data() + id_or_name.size()) {
    if (id <= 0) throw not_found("no study with id " + id_or_name);
    return store().get_study(id);
  }
  if (auto s = store().find_study(id_or_name)) return *s;
  throw not_found("no study named '" + id_or_name + "'");
}

void Router::get(const std::string& pattern, Handler h) {
  routes_.push_back({"GET", RoutePattern(pattern), std::move(h)});
}

void Router::post(const std::string& pattern, Handler h) {
  routes_.push_back({"POST", RoutePattern(pattern), std::move(h)});
}

std::vector<Router::RouteInfo> Router::routes() const {
  std::vector<RouteInfo> out;
  for (const Route& r : routes_) out.push_back({r.method, r.pattern.text()});
  return out;
}

void Router::dispatch(Request& req, Response& res) const {
  if (req.path.size() > kMaxPath) {
    send_error(res, 414, "the path is over " + std::to_string(kMaxPath) + " bytes");
    return;
  }
  if (query_bytes(req) > kMaxQueryBytes) {
    send_error(res, 414, "the query string is over " + std::to_string(kMaxQueryBytes) + " bytes");
    return;
  }
  const std::string method = req.method == "HEAD" ? "GET" : req.method;
  std::string allowed;
  for (const Route& route : routes_) {
    std::vector<std::string> captures;
    if (!route.pattern.match(req.path, captures)) continue;
    if (route.method != method) {
      if (allowed.find(route.method) == std::string::npos)
        allowed += (allowed.empty() ? "" : ", ") + route.method;
      continue;
    }
    req.matches = std::move(captures);
    run_guarded(route.handler, req, res);
    return;
  }
  if (!allowed.empty()) {
    res.set_header("Allow", allowed);
    send_error(res, 405, req.method + " " + req.path + " is not allowed; use " + allowed);
  } else {
    send_error(res, 404, "no route " + req.method + " " + req.path);
  }
}

}  // namespace layerlab::server
