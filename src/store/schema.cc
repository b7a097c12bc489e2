#include "store/schema.h"

#include <string>

#include "common/error.h"
#include "store/pg_db.h"
#include "store/sqlite_db.h"

namespace layerlab::store {
namespace {

template <typename Db>
int read_version(Db& db, const SchemaDialect& d, bool locked) {
  if (!db.query(locked ? d.has_version_table_locked : d.has_version_table).next()) return 0;
  auto q = db.query("SELECT COALESCE(MAX(version), 0) FROM schema_version");
  q.next();
  return q.i32(0);
}

template <typename Db>
void check_not_newer(const Db& db, const SchemaDialect& d, int found) {
  const int known = d.steps.back().version;
  if (found > known)
    throw failed_precondition(db.label() + ": the database has schema version " +
                              std::to_string(found) + " but this layerlab knows versions up to " +
                              std::to_string(known) + "; use a newer layerlab");
}

}  // namespace

template <typename Db>
int schema_version(Db& db, const SchemaDialect& dialect) {
  return db.read("schema_version", [&] { return read_version(db, dialect, false); });
}

template <typename Db>
void migrate(Db& db, const SchemaDialect& d, bool create_if_missing, int64_t now_ms) {
  const int found = schema_version(db, d);
  check_not_newer(db, d, found);
  if (found == d.steps.back().version) return;  // the common case: no write at all
  if (found == 0 && !create_if_missing)
    throw not_found(db.label() +
                    ": the database holds no layerlab store (create_if_missing is off)");
  // Every missing step in one transaction: a store moves from its version to the newest or
  // stays where it was, and a new database costs one commit, not one per version.
  db.write("migrate", [&] {
    db.lock_exclusive(d.lock_key);
    const int now = read_version(db, d, true);  // another process may have got here first
    check_not_newer(db, d, now);
    if (now == d.steps.back().version) return;
    db.exec_script(d.version_table);
    for (const Migration& m : d.steps) {
      if (m.version <= now) continue;
      db.exec_script(m.sql);
      db.exec("INSERT INTO schema_version (version, description, applied_at) VALUES (?1, ?2, ?3)",
              m.version, m.description, now_ms);
    }
  });
}

template int schema_version(sqlite::Db&, const SchemaDialect&);
template int schema_version(pg::Db&, const SchemaDialect&);
template void migrate(sqlite::Db&, const SchemaDialect&, bool, int64_t);
template void migrate(pg::Db&, const SchemaDialect&, bool, int64_t);

}  // namespace layerlab::store
