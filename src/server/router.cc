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
  routes_.emplace_back("GET", std::regex(pattern));
  server_.Get(pattern, guarded(std::move(h)));
}

void Router::post(const std::string& pattern, Handler h) {
  routes_.emplace_back("POST", std::regex(pattern));
  server_.Post(pattern, guarded(std::move(h)));
}

void Router::finish() {
  // The server outlives this Router: the fallback keeps its own copy of the routes.
  auto fallback = [routes = routes_](const httplib::Request& req, httplib::Response& res) {
    std::string allowed;
    for (const auto& [method, pattern] : routes)
      if (method != req.method && std::regex_match(req.path, pattern))
        allowed += (allowed.empty() ? "" : ", ") + method;
    if (!allowed.empty()) {
      res.set_header("Allow", allowed);
      send_error(res, 405, req.method + " " + req.path + " is not allowed; use " + allowed);
    } else {
      send_error(res, 404, "no route " + req.method + " " + req.path);
    }
  };
  server_.Get(".*", fallback);
  server_.Post(".*", fallback);
  server_.Put(".*", fallback);
  server_.Patch(".*", fallback);
  server_.Delete(".*", fallback);
}

}  // namespace layerlab::server
