#include "cli/worker_flags.h"

#include <chrono>

namespace layerlab::cli {

void add_worker_flags(CLI::App& cmd, WorkerFlags& f) {
  cmd.add_option("--store", f.store_url, "store URL (sqlite:PATH or postgresql://...)")
      ->capture_default_str();
  cmd.add_option("--broker", f.broker_url,
                 "broker URL (amqp://user:pass@host:port/vhost); default: the store is the queue");
  cmd.add_option("--threads", f.threads, "CPU threads for each trial the worker trains")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  // Parsed here, so a bad value stops the command before it does anything.
  cmd.add_option_function<std::string>(
         "--pack", [&f](const std::string& text) { f.pack = worker::parse_pack(text); },
         "train up to this many same-shape trials at once as one batched computation; auto: "
         "1 on the CPU (packs are slower there), 64 on a GPU")
      ->type_name("INT|auto")
      ->default_str(worker::to_string(f.pack));
  cmd.add_option("--device", f.device, "cpu or cuda[:N]")->capture_default_str();
  cmd.add_option("--lease-seconds", f.lease_seconds,
                 "lease of a claimed trial, renewed every third")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  cmd.add_option("--max-attempts", f.max_attempts,
                 "deliveries (or lost leases) before a trial fails; the same on every process")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
}

std::vector<std::string> worker_args(const WorkerFlags& f) {
  std::vector<std::string> args{"--store",         f.store_url,
                                "--threads",       std::to_string(f.threads),
                                "--pack",          worker::to_string(f.pack),
                                "--device",        f.device,
                                "--lease-seconds", std::to_string(f.lease_seconds),
                                "--max-attempts",  std::to_string(f.max_attempts)};
  if (!f.broker_url.empty()) args.insert(args.end(), {"--broker", f.broker_url});
  return args;
}

worker::ResolvedPack resolved_pack(const WorkerFlags& f) {
  return worker::resolve_pack(f.pack, f.device);
}

worker::WorkerOptions worker_options(const WorkerFlags& f) {
  worker::WorkerOptions o;
  o.store_url = f.store_url;
  o.broker_url = f.broker_url;
  o.threads = f.threads;
  o.pack = resolved_pack(f).size;
  o.device = f.device;
  o.lease = std::chrono::milliseconds(static_cast<int64_t>(f.lease_seconds * 1000));
  o.max_attempts = f.max_attempts;
  return o;
}

}  // namespace layerlab::cli
