// --pack: how many same-shape trials a worker slot trains as one batched computation. Given
// as a number, or as `auto`, which each worker resolves for its own device (resolve_pack),
// so that one cluster can mix CPU and GPU workers.
#pragma once

#include <string>
#include <string_view>

namespace layerlab::worker {

inline constexpr int kMaxPack = 65536;  // the largest --pack accepted

// What --pack says: a fixed size, or auto (the default).
struct PackSetting {
  int size = 0;  // 1..kMaxPack; 0: auto
  bool is_auto() const { return size == 0; }
  friend bool operator==(const PackSetting&, const PackSetting&) = default;
};

// "auto" or a whole number from 1 to kMaxPack; anything else throws invalid_argument
// naming --pack and what it accepts.
PackSetting parse_pack(std::string_view text);

// "auto" or the number: what parse_pack reads back (the argument `run` gives its workers).
std::string to_string(PackSetting p);

// The pack a worker trains with, and whether it came from auto.
struct ResolvedPack {
  int size = 1;
  bool automatic = false;
  std::string device;  // the device auto was resolved for
};

// The pack for a worker on `device` ("cpu", "cuda", "cuda:N"): a fixed size as given; auto
// as the device's pack (see pack.cc for the figures behind each).
ResolvedPack resolve_pack(PackSetting p, const std::string& device);

// "pack 1 (auto: cpu)", "pack 8": for log lines and banners.
std::string describe(const ResolvedPack& p);

}  // namespace layerlab::worker
