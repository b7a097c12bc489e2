#include "backend/module_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "common/error.h"

#ifndef LAYERLAB_BACKEND_INTERFACE
#error "LAYERLAB_BACKEND_INTERFACE must be defined (src/backend/CMakeLists.txt)"
#endif
#ifndef LAYERLAB_MODULE_RELDIR
#define LAYERLAB_MODULE_RELDIR "../lib/layerlab"
#endif

namespace layerlab::backend {
namespace {

namespace fs = std::filesystem;

std::string dl_error() {
  const char* e = dlerror();
  return e ? e : "unknown dlopen error";
}

std::string env_value(const std::string& var) {
  const char* v = std::getenv(var.c_str());
  return v ? v : "";
}

std::string rebuild_hint(const ModuleSearch& s) {
  return "rebuild it with this layerlab (cmake -DLAYERLAB_CUDA=ON, then build) or set " +
         s.env_var + " to the one built with it";
}

// The module's own dlopen failure, with a hint when it names a library the module needs.
[[noreturn]] void cannot_load(const ModuleSearch& s, const std::string& where,
                              const std::string& why) {
  std::string hint;
  if (why.find("cannot open shared object file") != std::string::npos)
    hint = "; a library it needs is missing: install it or add its directory to LD_LIBRARY_PATH";
  throw failed_precondition("cannot load the " + s.label + " " + where + ": " + why + hint);
}

const BackendModule& check(const ModuleSearch& s, void* handle, const std::string& where) {
  dlerror();
  void* entry = dlsym(handle, kModuleEntry);
  if (!entry) throw failed_precondition(where + " is not a layerlab backend module: " + dl_error());
  const BackendModule* m = reinterpret_cast<layerlab_backend_module_entry_fn>(entry)();
  if (!m)
    throw failed_precondition(where + " is not a usable layerlab backend module: " + kModuleEntry +
                              " returned nothing");
  if (m->abi != kModuleAbi)
    throw failed_precondition(where + " was built for another layerlab (module ABI " +
                              std::to_string(m->abi) + ", this layerlab's " +
                              std::to_string(kModuleAbi) + "): " + rebuild_hint(s));
  if (std::strcmp(m->interface, LAYERLAB_BACKEND_INTERFACE) != 0)
    throw failed_precondition(where + " is stale: built from other backend sources (layerlab " +
                              m->version + ", backend interface " + m->interface +
                              "; this layerlab " + LAYERLAB_BACKEND_INTERFACE +
                              "): " + rebuild_hint(s));
  if (s.device != m->device)
    throw failed_precondition(where + " is a '" + m->device + "' backend module, not a '" +
                              s.device + "' one");
  if (!m->device_count || !m->make)
    throw failed_precondition(where + " is not a usable layerlab backend module: it lacks " +
                              (m->make ? "device_count" : "make"));
  return *m;
}

}  // namespace

const ModuleSearch& cuda_module_search() {
  static const ModuleSearch s{"cuda", "CUDA backend module", "liblayerlab_cuda.so",
                              "LAYERLAB_CUDA_MODULE"};
  return s;
}

std::vector<std::string> module_candidates(const ModuleSearch& s) {
  if (const std::string chosen = env_value(s.env_var); !chosen.empty()) return {chosen};
  std::vector<std::string> out;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && exe.has_parent_path()) {
    const fs::path dir = exe.parent_path();
    out.push_back((dir / s.file).string());
    out.push_back((dir / LAYERLAB_MODULE_RELDIR / s.file).lexically_normal().string());
  }
  out.push_back(s.file);
  return out;
}

const BackendModule& load_module(const ModuleSearch& s) {
  const std::vector<std::string> candidates = module_candidates(s);
  const bool chosen = !env_value(s.env_var).empty();
  std::string tried;
  for (const std::string& path : candidates) {
    const bool bare = path.find('/') == std::string::npos;
    if (!bare) {
      std::error_code ec;
      if (!fs::exists(path, ec)) {
        if (chosen)
          throw failed_precondition(s.env_var + "=" + path + ": no such file (it should name the " +
                                    s.label + ", " + s.file + ")");
        tried += (tried.empty() ? "" : ", ") + path;
        continue;
      }
    }
    // RTLD_NOW: a missing symbol shows here, not in the middle of a trial. RTLD_LOCAL: the
    // module's symbols stay its own.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const std::string why = dl_error();
      // The bare name that the search path does not hold: not found (anything else means it
      // was found and one of its own libraries is missing or broken).
      if (bare && why.rfind(path + ": cannot open shared object file", 0) == 0) {
        tried += (tried.empty() ? "" : " and ") + std::string("the library search path");
        break;
      }
      cannot_load(s, bare ? path + " (found through the library search path)" : path, why);
    }
    return check(s, handle, path);
  }
  throw failed_precondition("the " + s.label + " " + s.file + " was not found (tried " + tried +
                            "); set " + s.env_var + " to its path");
}

}  // namespace layerlab::backend
