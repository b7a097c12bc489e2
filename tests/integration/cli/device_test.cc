// The CUDA backend as a module loaded at run time, seen from the command line: the layerlab
// binary links neither the CUDA runtime nor cuBLAS (its ELF DT_NEEDED entries), and asking
// for a CUDA device that cannot be had is one line naming what is missing, exit code 3.
#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "integration/run_command.h"

namespace layerlab {
namespace {

using testing::run_layerlab;

// The string entries of one tag in the dynamic section of a 64-bit little-endian ELF file
// (what `readelf -d` lists): DT_NEEDED, the libraries the dynamic loader loads with it;
// DT_RUNPATH, where it looks for them.
std::vector<std::string> dynamic_strings(const std::string& path, int64_t tag) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  std::vector<std::string> out;
  if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(data, ELFMAG, SELFMAG) != 0 ||
      data[EI_CLASS] != ELFCLASS64) {
    ADD_FAILURE() << path << " is not a 64-bit ELF file";
    return out;
  }
  Elf64_Ehdr eh;
  std::memcpy(&eh, data, sizeof eh);
  auto section = [&](size_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, data + eh.e_shoff + i * eh.e_shentsize, sizeof sh);
    return sh;
  };
  if (eh.e_shoff + size_t{eh.e_shnum} * eh.e_shentsize > bytes.size()) {
    ADD_FAILURE() << path << ": section headers out of the file";
    return out;
  }
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr dyn = section(i);
    if (dyn.sh_type != SHT_DYNAMIC) continue;
    const Elf64_Shdr strtab = section(dyn.sh_link);
    for (size_t off = 0; off + sizeof(Elf64_Dyn) <= dyn.sh_size; off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, data + dyn.sh_offset + off, sizeof d);
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag == tag)
        out.emplace_back(reinterpret_cast<const char*>(data + strtab.sh_offset + d.d_un.d_val));
    }
  }
  return out;
}

bool any_starts_with(const std::vector<std::string>& names, const std::string& prefix) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return n.rfind(prefix, 0) == 0; });
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += n + " ";
  return s;
}

TEST(CudaModule, TheBinaryLinksNoCudaLibrary) {
  const auto needed = dynamic_strings(LAYERLAB_BINARY, DT_NEEDED);
  // The reader works: the binary needs OpenBLAS and the C library.
  EXPECT_TRUE(any_starts_with(needed, "libopenblas")) << joined(needed);
  EXPECT_TRUE(any_starts_with(needed, "libc.so")) << joined(needed);
  for (const char* cuda : {"libcuda", "libcublas", "libnv"})
    EXPECT_FALSE(any_starts_with(needed, cuda)) << cuda << " in: " << joined(needed);
}

#ifdef LAYERLAB_BUILT_CUDA_MODULE
TEST(CudaModule, TheModuleLinksTheCudaLibraries) {
  const auto needed = dynamic_strings(LAYERLAB_BUILT_CUDA_MODULE, DT_NEEDED);
  EXPECT_TRUE(any_starts_with(needed, "libcublas.so")) << joined(needed);
  EXPECT_TRUE(any_starts_with(needed, "libcudart.so")) << joined(needed);
  // It sits beside the binary, where the binary looks for it.
  EXPECT_EQ(std::filesystem::path(LAYERLAB_BUILT_CUDA_MODULE).parent_path(),
            std::filesystem::path(LAYERLAB_BINARY).parent_path());
}
#endif

// `layerlab train --device cuda` with the environment `env`: exit code 3 and one line.
std::string train_on_cuda_error(const std::string& env) {
  const auto r = run_layerlab("train --dataset iris --epochs 1 --units 4 --device cuda:0", env);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  return r.err;
}

TEST(CudaModule, AMissingModuleIsNamed) {
  const std::string err =
      train_on_cuda_error("LAYERLAB_CUDA_MODULE=/nonexistent/dir/liblayerlab_cuda.so");
  EXPECT_NE(err.find("layerlab train: error: device 'cuda:0': "), std::string::npos) << err;
#ifdef LAYERLAB_HAVE_CUDA
  EXPECT_NE(err.find("LAYERLAB_CUDA_MODULE=/nonexistent/dir/liblayerlab_cuda.so: no such file"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("use --device cpu"), std::string::npos) << err;
#else
  EXPECT_NE(err.find("built without CUDA (rebuild it with -DLAYERLAB_CUDA=ON)"), std::string::npos)
      << err;
#endif
}

TEST(CudaModule, AWorkerAskedForAMissingModuleStopsWithTheReason) {
  const auto dir = std::filesystem::temp_directory_path() / "layerlab-cuda-module-worker";
  std::filesystem::create_directories(dir);
  const auto r =
      run_layerlab("worker --store sqlite:" + (dir / "w.db").string() + " --device cuda -q",
                   "LAYERLAB_CUDA_MODULE=/nonexistent/liblayerlab_cuda.so timeout 60");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("device 'cuda'"), std::string::npos) << r.err;
#ifdef LAYERLAB_HAVE_CUDA
  EXPECT_NE(r.err.find("/nonexistent/liblayerlab_cuda.so: no such file"), std::string::npos)
      << r.err;
#endif
  std::filesystem::remove_all(dir);
}

#ifdef LAYERLAB_HAVE_CUDA
TEST(CudaModule, AFileThatIsNoModuleIsNamed) {
  const auto path = std::filesystem::temp_directory_path() / "layerlab-cli-not-a-module.so";
  std::ofstream(path) << "not ELF\n";
  const std::string err = train_on_cuda_error("LAYERLAB_CUDA_MODULE=" + path.string());
  EXPECT_NE(err.find("cannot load the CUDA backend module " + path.string()), std::string::npos)
      << err;
  std::filesystem::remove(path);
}

TEST(CudaModule, AStaleModuleIsRefused) {
  const std::string err =
      train_on_cuda_error(std::string("LAYERLAB_CUDA_MODULE=") + FAKE_MODULE_stale_interface);
  EXPECT_NE(err.find(std::string(FAKE_MODULE_stale_interface) + " is stale"), std::string::npos)
      << err;
}

// The module beside the binary, found without any setting; on a machine without a GPU (this
// one, usually) it loads and says there is no device, in CUDA's own words.
TEST(CudaModule, TheBuiltModuleLoadsAndNamesTheMissingDevice) {
  const auto r = run_layerlab("train --dataset iris --epochs 1 --units 4 --device cuda",
                              "env -u LAYERLAB_CUDA_MODULE");
  if (r.exit_code == 0) GTEST_SKIP() << "a CUDA device is visible here: it trained";
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("device 'cuda:0': no CUDA device visible (cudaGetDeviceCount: "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("use --device cpu"), std::string::npos) << r.err;
}
#endif

// Every directory the loader searches for the binary's libraries is absolute: an empty
// entry (CMake pads an installed target's build-tree RUNPATH with a trailing ':') or a
// relative one means the current directory, where anyone could leave a libcrypto.so.3.
TEST(Binary, ItsLibrarySearchPathHasNoRelativeDirectory) {
  std::vector<std::string> paths = dynamic_strings(LAYERLAB_BINARY, DT_RUNPATH);
  for (std::string& p : dynamic_strings(LAYERLAB_BINARY, DT_RPATH)) paths.push_back(p);
  for (const std::string& list : paths) {
    size_t from = 0;
    for (;;) {
      const size_t colon = list.find(':', from);
      const std::string dir = list.substr(from, colon - from);
      EXPECT_TRUE(dir.rfind('/', 0) == 0 || dir.rfind("$ORIGIN", 0) == 0)
          << "'" << dir << "' in '" << list << "'";
      if (colon == std::string::npos) break;
      from = colon + 1;
    }
  }
}

}  // namespace
}  // namespace layerlab
