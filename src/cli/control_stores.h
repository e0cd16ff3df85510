#pragma once

// The control plane's stores for the commands that open them (serve,
// token, user): SQLite in the data directory (control/strata.sqlite), or,
// given the PostgreSQL URL of several servers' catalog (--catalog), the
// PostgreSQL stores they share (docs/format/postgres-control.md), so a
// token, user or MCP OAuth client or grant made on one server is valid on
// all.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "control/account_store.h"
#include "control/oauth.h"
#include "control/token_store.h"

namespace strata::cli {

[[nodiscard]] absl::StatusOr<std::unique_ptr<control::TokenStore>> OpenTokenStore(
    const std::string& data_dir, const std::string& catalog_url);

[[nodiscard]] absl::StatusOr<std::unique_ptr<control::AccountStore>> OpenAccountStore(
    const std::string& data_dir, const std::string& catalog_url, absl::Time now);

// MCP's OAuth (clients, codes, grants, tokens), in the same database as
// OpenAccountStore()'s, whose users its grants reference.
[[nodiscard]] absl::StatusOr<std::unique_ptr<control::OAuth>> OpenOAuth(
    const std::string& data_dir, const std::string& catalog_url, absl::Time now);

}  // namespace strata::cli
