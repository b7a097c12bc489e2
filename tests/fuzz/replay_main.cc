// main() for the regression replay in ordinary (non-libFuzzer) builds: runs every file named
// on the command line, and every file in every directory named, through the target's
// LLVMFuzzerTestOneInput. A crash fails the test as it fails a fuzzing run. CTest runs it on
// tests/fuzz/regressions/TARGET and the target's seeds (tests/fuzz/CMakeLists.txt).
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) __attribute__((weak));

#if defined(__SANITIZE_ADDRESS__)
#define LAYERLAB_REPLAY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LAYERLAB_REPLAY_ASAN 1
#endif
#endif

int main(int argc, char** argv) {
#ifndef LAYERLAB_REPLAY_ASAN
  // An input that regresses into a huge allocation fails fast (bad_alloc) instead of
  // swapping the test machine. ASan reserves terabytes of address space: no limit there.
  const rlimit limit{rlim_t{4} << 30, rlim_t{4} << 30};
  setrlimit(RLIMIT_AS, &limit);
#endif
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path p(argv[i]);
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(p))
        if (e.is_regular_file() && e.path().filename().string()[0] != '.' &&
            e.path().extension() != ".md")
          files.push_back(e.path());
    } else if (std::filesystem::exists(p)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "replay: %s does not exist\n", argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", f.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replay: %zu inputs, no crash\n", files.size());
  return 0;
}
