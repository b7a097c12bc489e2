#include "study/provenance.h"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "nn/registries.h"

namespace layerlab::study {

const char* build_version();  // with build_revision(), in the generated build_revision.cc

namespace {

using nlohmann::json;

std::string host_name() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "unknown";
  return host;
}

std::string os_name() {
  utsname u{};
  if (uname(&u) != 0) return "unknown";
  return fmt::format("{} {} {} {}", u.sysname, u.release, u.version, u.machine);
}

std::string compiler() {
#if defined(__clang__)
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "GCC " __VERSION__;
#else
  return "unknown";
#endif
}

std::string precision_name(backend::Precision p) {
  for (const std::string& name : nn::precisions().names())
    if (nn::precisions().get(name) == p) return name;
  return "unknown";
}

std::string text(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

bool same_double(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

// An epoch column: SQLite's REAL columns store -0.0 as 0, so a zero's sign is not compared
// (no column can be -0: losses, accuracies and RMSEs are sums of non-negative terms).
bool same_column(double a, double b) {
  return (a == 0 && b == 0) || same_double(a, b);
}

std::string number(double v) {
  return fmt::format("{}", v);  // shortest text that reads back as the same double
}

std::string number(const std::optional<double>& v) {
  return v ? number(*v) : "none";
}

// Where a and b first differ ("" when equal), numbers bit for bit; `skip` lists keys of the
// top-level object to leave out.
std::optional<Difference> compare(const std::string& path, const json& a, const json& b,
                                  const std::vector<std::string>& skip = {}) {
  auto differ = [&](std::string sa, std::string sb) {
    return Difference{0, path, std::move(sa), std::move(sb)};
  };
  if (a.is_number() && b.is_number()) {
    if (a.is_number_integer() && b.is_number_integer()) {
      if (a == b) return std::nullopt;
      return differ(a.dump(), b.dump());
    }
    if (same_double(a.get<double>(), b.get<double>())) return std::nullopt;
    return differ(number(a.get<double>()), number(b.get<double>()));
  }
  if (a.is_object() && b.is_object()) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : a.items()) keys.push_back(k);
    for (const auto& [k, v] : b.items())
      if (!a.contains(k)) keys.push_back(k);
    for (const std::string& k : keys) {
      if (std::find(skip.begin(), skip.end(), k) != skip.end()) continue;
      const std::string sub = path.empty() ? k : path + "." + k;
      if (!a.contains(k)) return Difference{0, sub, "(missing)", text(b[k])};
      if (!b.contains(k)) return Difference{0, sub, text(a[k]), "(missing)"};
      if (auto d = compare(sub, a[k], b[k])) return d;
    }
    return std::nullopt;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size())
      return differ(fmt::format("{} items", a.size()), fmt::format("{} items", b.size()));
    for (size_t i = 0; i < a.size(); ++i)
      if (auto d = compare(fmt::format("{}[{}]", path, i), a[i], b[i])) return d;
    return std::nullopt;
  }
  if (a == b) return std::nullopt;
  return differ(text(a), text(b));
}

}  // namespace

json provenance(const backend::Backend& b) {
  return {{"layerlab_version", build_version()},
          {"revision", build_revision()},
          {"backend", b.name()},
          {"backend_description", b.describe()},
          {"threads", b.threads()},
          {"precision", precision_name(b.precision())},
          {"host", host_name()},
          {"os", os_name()},
          {"compiler", compiler()}};
}

std::vector<std::string> provenance_differences(const json& recorded, const json& here) {
  std::vector<std::string> out;
  if (!recorded.is_object() || !here.is_object()) return out;
  for (const char* field : {"host", "revision", "layerlab_version", "backend_description",
                            "threads", "precision", "os", "compiler"}) {
    if (!recorded.contains(field) || !here.contains(field)) continue;
    if (recorded[field] == here[field]) continue;
    out.push_back(fmt::format("{}: '{}' (record) vs '{}' (here)", field, text(recorded[field]),
                              text(here[field])));
  }
  return out;
}

std::string Difference::describe() const {
  const std::string where = epoch > 0 ? fmt::format("epoch {}, ", epoch) : "final result, ";
  return fmt::format("{}{}: stored {} vs rerun {}", where, field, stored, rerun);
}

std::optional<Difference> first_difference(const store::TrialRecord& stored,
                                           const std::vector<store::EpochRow>& stored_epochs,
                                           const RerunRecord& rerun) {
  std::string metric = "val_metric";
  if (stored.result.is_object() && stored.result.contains("metric") &&
      stored.result["metric"].is_string())
    metric = stored.result["metric"].get<std::string>();
  const size_t n = std::min(stored_epochs.size(), rerun.epochs.size());
  for (size_t i = 0; i < n; ++i) {
    const store::EpochRow& s = stored_epochs[i];
    const store::EpochRow& r = rerun.epochs[i];
    auto at = [&](std::string field, std::string a, std::string b) {
      return Difference{s.epoch, std::move(field), std::move(a), std::move(b)};
    };
    if (s.epoch != r.epoch) return at("epoch", std::to_string(s.epoch), std::to_string(r.epoch));
    const std::pair<const char*, std::pair<double, double>> fields[] = {
        {"train_loss", {s.train_loss, r.train_loss}},
        {"val_loss", {s.val_loss, r.val_loss}},
        {metric.c_str(), {s.val_metric, r.val_metric}}};
    for (const auto& [name, v] : fields)
      if (!same_column(v.first, v.second)) return at(name, number(v.first), number(v.second));
    const json se = s.extra.is_null() ? json::object() : s.extra;
    const json re = r.extra.is_null() ? json::object() : r.extra;
    if (auto d = compare("", se, re)) {
      d->epoch = s.epoch;
      return d;
    }
  }
  if (stored_epochs.size() != rerun.epochs.size())
    return Difference{static_cast<int>(n) + 1, "epochs",
                      fmt::format("{} epochs", stored_epochs.size()),
                      fmt::format("{} epochs", rerun.epochs.size())};
  if (stored.status != rerun.status)
    return Difference{0, "status", store::to_string(stored.status), store::to_string(rerun.status)};
  if (stored.value.has_value() != rerun.value.has_value() ||
      (stored.value && !same_double(*stored.value, *rerun.value)))
    return Difference{0, "value", number(stored.value), number(rerun.value)};
  std::vector<std::string> skip = {"seconds", "worker", "backend", "pack_size", "provenance"};
  // Results stored before layerlab recorded the parameter count lack it: not a difference.
  if (stored.result.is_object() && !stored.result.contains("parameter_count"))
    skip.push_back("parameter_count");
  return compare("", stored.result, rerun.result, skip);
}

}  // namespace layerlab::study
