#include "server/model_downloads.h"

#include "common/error.h"

namespace layerlab::server {

// A download in progress: released with the response that references it.
struct ModelDownloads::Slot {
  Slot(ModelDownloads& d, std::string c) : downloads(d), client(std::move(c)) {}
  ~Slot() { downloads.finish(client); }
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;

  ModelDownloads& downloads;
  std::string client;
  std::shared_ptr<const std::string> bytes;
};

std::shared_ptr<const std::string> ModelDownloads::start(
    int64_t trial_id, const std::string& client,
    const std::function<std::optional<std::string>()>& load) {
  std::shared_ptr<const std::string> bytes;
  {
    MutexLock lock(mu_);
    if (per_client_[client] >= max_per_client_)
      throw TooManyDownloads("this client is downloading " + std::to_string(max_per_client_) +
                             " models already; finish one first");
    if (total_ >= max_total_)
      throw unavailable("the server is sending " + std::to_string(max_total_) +
                        " models already; try again later");
    ++per_client_[client];
    ++total_;
    if (auto it = models_.find(trial_id); it != models_.end()) bytes = it->second.lock();
  }
  auto slot = std::make_shared<Slot>(*this, client);  // from here, released on every path
  if (!bytes) {
    std::optional<std::string> loaded = load();
    if (!loaded) return nullptr;
    bytes = std::make_shared<const std::string>(std::move(*loaded));
    MutexLock lock(mu_);
    std::erase_if(models_, [](const auto& kv) { return kv.second.expired(); });
    models_[trial_id] = bytes;
  }
  slot->bytes = bytes;
  return std::shared_ptr<const std::string>(slot, slot->bytes.get());
}

void ModelDownloads::finish(const std::string& client) {
  MutexLock lock(mu_);
  --total_;
  if (--per_client_[client] == 0) per_client_.erase(client);
}

}  // namespace layerlab::server
