// Kept models sent to clients (/api/v1/trials/{id}/model). A model is up to
// store::kMaxWeightBytes, and a client that never reads holds its response for as long as
// the connection lives: so each model in use is one shared, immutable buffer that every
// download of it references, and downloads are counted per client address and in total.
// The bytes held for downloads are at most max_total x kMaxWeightBytes (one model's bytes
// when all download the same one). Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/mutex.h"

namespace layerlab::server {

class ModelDownloads {
 public:
  ModelDownloads(size_t max_total, size_t max_per_client)
      : max_total_(max_total), max_per_client_(max_per_client) {}

  // A download of trial `trial_id`'s model by `client`: its bytes (loaded by `load` unless
  // a download of the same model is in progress), held together with the download's slot
  // until the returned pointer's last copy goes (the response is sent or the client gone).
  // Null when `load` finds no model. kUnavailable when max_total downloads are in progress;
  // TooManyDownloads when this client already has max_per_client.
  std::shared_ptr<const std::string> start(int64_t trial_id, const std::string& client,
                                           const std::function<std::optional<std::string>()>& load);

  size_t max_total() const { return max_total_; }
  size_t max_per_client() const { return max_per_client_; }

 private:
  struct Slot;
  void finish(const std::string& client);

  const size_t max_total_;
  const size_t max_per_client_;
  Mutex mu_;
  size_t total_ GUARDED_BY(mu_) = 0;
  std::map<std::string, size_t> per_client_ GUARDED_BY(mu_);
  std::map<int64_t, std::weak_ptr<const std::string>> models_ GUARDED_BY(mu_);
};

// Thrown by ModelDownloads::start when the client has its limit of downloads (a 429).
struct TooManyDownloads : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace layerlab::server
