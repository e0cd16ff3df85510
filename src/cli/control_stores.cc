#include "cli/control_stores.h"

#include "control/postgres_account_store.h"
#include "control/postgres_oauth.h"
#include "control/postgres_token_store.h"
#include "control/sqlite_account_store.h"
#include "control/sqlite_oauth.h"
#include "control/sqlite_token_store.h"
#include "storage/format/layout.h"

namespace strata::cli {

absl::StatusOr<std::unique_ptr<control::TokenStore>> OpenTokenStore(
    const std::string& data_dir, const std::string& catalog_url) {
  if (!catalog_url.empty()) return control::PostgresTokenStore::Open(catalog_url);
  return control::SqliteTokenStore::Open(storage::DataDirPaths(data_dir).ControlDb());
}

absl::StatusOr<std::unique_ptr<control::AccountStore>> OpenAccountStore(
    const std::string& data_dir, const std::string& catalog_url, absl::Time now) {
  if (!catalog_url.empty()) return control::PostgresAccountStore::Open(catalog_url);
  return control::SqliteAccountStore::Open(storage::DataDirPaths(data_dir).ControlDb(), now);
}

absl::StatusOr<std::unique_ptr<control::OAuth>> OpenOAuth(const std::string& data_dir,
                                                          const std::string& catalog_url,
                                                          absl::Time now) {
  if (!catalog_url.empty()) return control::PostgresOAuth::Open(catalog_url);
  return control::SqliteOAuth::Open(storage::DataDirPaths(data_dir).ControlDb(), now);
}

}  // namespace strata::cli
