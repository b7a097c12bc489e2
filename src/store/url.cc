// Store URLs and open_store(): the one place that maps a URL to an implementation.
#include <string>

#include "common/error.h"
#include "common/strings.h"
#include "store/pg_store.h"
#include "store/sqlite_store.h"
#include "store/store.h"

namespace layerlab::store {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

StoreUrl parse_store_url(std::string_view url) {
  StoreUrl out;
  out.text = hide_url_password(url);
  const std::string expected =
      "; expected sqlite:PATH (e.g. sqlite:layerlab.db) or postgresql://user:pass@host:port/db";
  if (starts_with(url, "sqlite:")) {
    std::string_view path = url.substr(7);
    if (starts_with(path, "///")) {
      path.remove_prefix(3);  // SQLAlchemy form: sqlite:///rel.db, sqlite:////abs.db
    } else if (starts_with(path, "//")) {
      throw invalid_argument("store URL '" + out.text +
                             "' names a host; SQLite needs a file: sqlite:PATH or sqlite:///PATH");
    }
    if (path.empty()) throw invalid_argument("store URL '" + out.text + "' has no file" + expected);
    out.kind = StoreUrl::Kind::kSqlite;
    out.path = std::string(path);
    out.text = "sqlite:" + out.path;
    return out;
  }
  if (starts_with(url, "postgresql://") || starts_with(url, "postgres://")) {
    out.kind = StoreUrl::Kind::kPostgres;
    out.path = std::string(url);  // for libpq, password included; never in a message
    return out;
  }
  if (url.empty()) throw invalid_argument("empty store URL" + expected);
  throw invalid_argument("unknown store URL '" + out.text + "'" + expected);
}

std::unique_ptr<Store> open_store(std::string_view url, const StoreOptions& options) {
  StoreUrl parsed = parse_store_url(url);
  switch (parsed.kind) {
    case StoreUrl::Kind::kSqlite:
      return open_sqlite_store(parsed, options);
    case StoreUrl::Kind::kPostgres:
      return open_postgres_store(parsed, options);
  }
  throw internal_error("store URL '" + parsed.text + "': unhandled kind");
}

}  // namespace layerlab::store
