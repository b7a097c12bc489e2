#include "worker/pack.h"

#include <charconv>

#include "common/error.h"
#include "common/text_safety.h"

namespace layerlab::worker {
namespace {

// auto on the CPU: trial by trial. The CPU backend multiplies a pack member by member, so a
// pack saves no work, and its members' weights leave the caches one trial's stay in: packs
// ran at 0.65-1.0x the trials/s of single trials, which already run their GEMMs at this
// core's peak (docs/benchmarks.md, "Packs on the CPU" and "Throughput studies").
constexpr int kAutoPackCpu = 1;

// auto on CUDA: one strided-batched GEMM per layer for all members is what packs are for
// (DESIGN.md's GPU target). Not measured on this machine (no GPU; docs/benchmarks.md
// "Packs (issue 6)", GPU figures pending): 64 is the smallest pack bench/gpu/ measures
// (K = 64, 512, 4096). A pack whose estimated memory is over NetworkLimits::max_bytes trains
// in parts that fit (nn::train_pack).
constexpr int kAutoPackCuda = 64;

bool is_cuda(const std::string& device) {
  return device == "cuda" || device.rfind("cuda:", 0) == 0;
}

}  // namespace

PackSetting parse_pack(std::string_view text) {
  if (text == "auto") return {};
  int size = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), size);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || size < 1 ||
      size > kMaxPack)
    throw invalid_argument("--pack: expected a whole number from 1 to " + std::to_string(kMaxPack) +
                           " or 'auto', got '" + excerpt(text) + "'");
  return {size};
}

std::string to_string(PackSetting p) {
  return p.is_auto() ? "auto" : std::to_string(p.size);
}

ResolvedPack resolve_pack(PackSetting p, const std::string& device) {
  if (!p.is_auto()) return {p.size, false, device};
  // An unknown device gets the CPU's pack; the backend refuses it when the worker starts.
  return {is_cuda(device) ? kAutoPackCuda : kAutoPackCpu, true, device};
}

std::string describe(const ResolvedPack& p) {
  std::string s = "pack " + std::to_string(p.size);
  if (p.automatic) s += " (auto: " + p.device + ")";
  return s;
}

}  // namespace layerlab::worker
