// Store URLs and open_store(): the one place that maps a URL to an implementation.
#include <optional>
#include <string>

#include "common/error.h"
#include "common/secret_text.h"
#include "store/pg_store.h"
#include "store/sqlite_store.h"
#include "store/store.h"

namespace layerlab::store {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Takes layerlab's own parameter, pool_mode, out of a postgresql URL's query (libpq rejects
// parameters it does not know) into out.transaction_pooling; out.path is what is left.
void take_pool_mode(std::string_view url, StoreUrl& out) {
  const size_t question = url.find('?');
  if (question == std::string_view::npos) {
    out.path = std::string(url);
    return;
  }
  std::string kept;
  std::optional<std::string_view> mode;
  std::string_view query = url.substr(question + 1);
  while (true) {
    const size_t amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    if (starts_with(item, "pool_mode=")) {
      if (mode) throw invalid_argument("store URL '" + out.text + "' gives pool_mode twice");
      mode = item.substr(10);
    } else if (!item.empty()) {
      kept += kept.empty() ? "?" : "&";
      kept += item;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  if (mode && *mode != "session" && *mode != "transaction")
    throw invalid_argument("store URL '" + out.text + "': pool_mode '" + std::string(*mode) +
                           "' is neither session (a direct connection or a session pooler, the "
                           "default) nor transaction (a transaction pooler such as PgBouncer's "
                           "pool_mode = transaction)");
  out.transaction_pooling = mode == "transaction";
  out.path = std::string(url.substr(0, question)) + kept;
}

}  // namespace

StoreUrl parse_store_url(std::string_view url) {
  StoreUrl out;
  out.text = mask_secrets(url);
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
    take_pool_mode(url, out);  // out.path: for libpq, password included; never in a message
    return out;
  }
  if (url.empty()) throw invalid_argument("empty store URL" + expected);
  throw invalid_argument("unknown store URL '" + out.text + "'" + expected);
}

std::unique_ptr<Store> open_store(std::string_view url, const StoreOptions& options) {
  StoreUrl parsed = parse_store_url(url);
  if (!options.label.empty()) parsed.text = options.label;
  switch (parsed.kind) {
    case StoreUrl::Kind::kSqlite:
      return open_sqlite_store(parsed, options);
    case StoreUrl::Kind::kPostgres:
      return open_postgres_store(parsed, options);
  }
  throw internal_error("store URL '" + parsed.text + "': unhandled kind");
}

}  // namespace layerlab::store
