// Finding and loading a backend module (module.h) with dlopen. Built into every layerlab,
// with or without CUDA, so that its failure paths are tested everywhere.
#pragma once

#include <string>
#include <vector>

#include "backend/module.h"

namespace layerlab::backend {

struct ModuleSearch {
  std::string device;   // "cuda": the device family, for messages and the module's check
  std::string label;    // "CUDA backend module", for messages
  std::string file;     // "liblayerlab_cuda.so"
  std::string env_var;  // "LAYERLAB_CUDA_MODULE"
};

// The CUDA backend's: liblayerlab_cuda.so, LAYERLAB_CUDA_MODULE.
const ModuleSearch& cuda_module_search();

// Where the module is looked for, in order. $env_var alone when it is set and not empty (an
// explicit choice: a wrong one is an error, not a reason to look elsewhere). Otherwise: the
// directory of the running executable (/proc/self/exe; where the build tree puts the module
// beside build/<preset>/src/cli/layerlab), the install layout's module directory relative to
// it (bin/../lib/layerlab), then the bare file name, which dlopen looks up in the library
// search path (LD_LIBRARY_PATH, ld.so.cache, the system directories).
std::vector<std::string> module_candidates(const ModuleSearch& s);

// Loads the module from the first candidate that exists (a bare name: that dlopen finds) and
// checks that it was built with this layerlab. A module stays loaded for the life of the
// process (its code backs every backend it made); loading it again is cheap. Throws
// failed_precondition naming what is missing: the module (with the places tried), a library
// the module needs (dlopen's words, e.g. "libcublasLt.so.13: cannot open shared object
// file"), or a module from another build.
const BackendModule& load_module(const ModuleSearch& s);

}  // namespace layerlab::backend
