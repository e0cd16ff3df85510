// Fuzzes the OAuth client registration parser (api/oauth_requests.h): the
// JSON body anyone may POST to /oauth/register. It must never crash, and
// whatever it accepts must hold only redirect URIs CheckRedirectUri()
// accepts, within the documented limits.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/oauth_requests.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<strata::api::ClientRegistration> parsed =
      strata::api::ParseClientRegistration(input);
  if (parsed.ok()) {
    if (parsed->redirect_uris.empty() ||
        parsed->redirect_uris.size() > strata::api::kMaxRedirectUris ||
        parsed->name.size() > strata::api::kMaxClientNameBytes) {
      std::abort();
    }
    for (const auto& uri : parsed->redirect_uris) {
      if (!strata::api::CheckRedirectUri(uri).ok()) std::abort();
    }
  }
  (void)strata::api::CheckRedirectUri(input);
  return 0;
}
