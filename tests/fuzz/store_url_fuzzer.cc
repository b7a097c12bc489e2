// Store URLs: store::parse_store_url on any bytes (a URL comes from a flag, LAYERLAB_STORE
// or a deployment file). Besides the contract (return or layerlab::Error): a PostgreSQL URL's
// libpq part no longer holds layerlab's own pool_mode parameter (libpq would reject it), so
// reading that part again gives it back unchanged, without transaction pooling.
#include "store/store.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using layerlab::store::parse_store_url;
using layerlab::store::StoreUrl;

void check(const std::string& text) {
  const StoreUrl url = parse_store_url(text);
  if (url.kind != StoreUrl::Kind::kPostgres) return;
  const StoreUrl again = parse_store_url(url.path);
  if (again.path != url.path || again.transaction_pooling) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > layerlab::fuzz::kMaxInputBytes) return 0;
  const std::string text(layerlab::fuzz::as_text(data, size));
  layerlab::fuzz::expect_ok_or_error([&] { check(text); });
  return 0;
}
