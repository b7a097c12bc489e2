// In a build with CUDA, points LAYERLAB_CUDA_MODULE at the module this build made, unless the
// environment already names one (bench/gpu/run.sh does, for a build carried elsewhere): the
// test binary does not live beside it, where the layerlab binary finds it.
#include <cstdlib>

namespace {

#ifdef LAYERLAB_BUILT_CUDA_MODULE
[[maybe_unused]] const bool module_env_set = [] {
  ::setenv("LAYERLAB_CUDA_MODULE", LAYERLAB_BUILT_CUDA_MODULE, /*overwrite=*/0);
  return true;
}();
#endif

}  // namespace
