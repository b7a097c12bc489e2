#include "data/confine.h"

#include <vector>

#include "common/error.h"
#include "common/text_safety.h"
#include "data/spec.h"

namespace layerlab::data {
namespace {

namespace fs = std::filesystem;

// True when `p` is `dir` or lies under it (both canonical).
bool inside(const fs::path& p, const fs::path& dir) {
  auto pi = p.begin();
  for (auto di = dir.begin(); di != dir.end(); ++di, ++pi) {
    if (di->empty()) continue;  // a trailing separator
    if (pi == p.end() || *pi != *di) return false;
  }
  return true;
}

}  // namespace

std::string confine_to_directory(const std::string& dataset_spec, const fs::path& data_dir) {
  const Spec spec = Spec::parse(dataset_spec);
  const std::string& kind = spec.name();
  if (kind != "csv:" && kind != "libsvm:" && kind != "idx:") return dataset_spec;
  const std::string quoted = "dataset '" + excerpt(dataset_spec, 200) + "': ";
  if (data_dir.empty())
    throw invalid_argument(quoted +
                           "file datasets are off on this server; the operator must start it "
                           "with `layerlab serve --data-dir DIR` and the file must lie in DIR");
  std::error_code ec;
  const fs::path root = fs::canonical(data_dir, ec);
  if (ec || !fs::is_directory(root))
    throw failed_precondition("the data directory '" + data_dir.string() +
                              "' does not exist or is not a directory");

  std::vector<std::string> paths;
  if (kind == "idx:") {
    const std::string& t = spec.target();
    const size_t comma = t.find(',');
    if (comma == std::string::npos || comma == 0 || comma + 1 == t.size() ||
        t.find(',', comma + 1) != std::string::npos)
      spec.fail("expected idx:IMAGES,LABELS (two paths, one comma)");
    paths = {t.substr(0, comma), t.substr(comma + 1)};
  } else {
    if (spec.target().empty()) spec.fail("expected " + kind + "PATH");
    paths = {spec.target()};
  }

  std::string target;
  for (const std::string& given : paths) {
    if (given.find('\0') != std::string::npos)
      throw invalid_argument(quoted + "a path holds a NUL character");
    const fs::path p(given);
    const fs::path joined = p.is_absolute() ? p : root / p;
    // '..' is taken lexically first, so the part of the path that does not exist holds no
    // '..' that could climb back through a link; weakly_canonical then follows every link
    // of the part that exists. The result has neither links nor '..' left to resolve.
    const fs::path resolved = fs::weakly_canonical(joined.lexically_normal(), ec);
    if (ec)
      throw invalid_argument(quoted + "cannot resolve '" + excerpt(given) + "': " + ec.message());
    if (!inside(resolved, root))
      throw invalid_argument(quoted + "'" + excerpt(given) +
                             "' is outside the server's data directory; name a file inside it "
                             "(relative paths are taken from the data directory)");
    const std::string r = resolved.string();
    if (r.find('?') != std::string::npos || (kind == "idx:" && r.find(',') != std::string::npos))
      throw invalid_argument(quoted + "the resolved path '" + excerpt(r) +
                             "' holds a character reserved in dataset specs ('?' or ',')");
    if (!target.empty()) target += ',';
    target += r;
  }
  const size_t q = dataset_spec.find('?');
  return kind + target + (q == std::string::npos ? "" : dataset_spec.substr(q));
}

}  // namespace layerlab::data
