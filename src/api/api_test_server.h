#pragma once

// Test helper shared by the API's test files: a QueryPool over a data
// directory, an Api on a storage engine accepting one read token, an
// HttpServer serving an Api's routes on 127.0.0.1 (an ephemeral port),
// and requests to it with curl. Failures are reported as test failures
// (EXPECT) and leave the output null.

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/api_server.h"
#include "gtest/gtest.h"
#include "io/file_system.h"
#include "query/duckdb_engine.h"
#include "query/query_pool.h"
#include "server/http_adapter.h"
#include "server/http_testing.h"
#include "server/testing/http_fetch.h"
#include "storage/storage.h"

namespace strata::api::test_support {

struct LoopbackApi {
  std::unique_ptr<query::QueryPool> pool;
  std::unique_ptr<Api> api;
  std::unique_ptr<server::HttpServer> http_server;
};

// (Re)creates views `spans`, `logs` and `metrics` (and the same as
// `spans_stored`, ...) in `engine` over every such table file under
// `data_dir` now (their data rows only): the ground truth tests compare
// answers with. Returns the number of spans files.
inline size_t CreateTruthViews(query::DuckDbEngine& engine, const std::string& data_dir) {
  std::map<std::string, std::vector<std::string>> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(data_dir)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".parquet") && name != "rollups.parquet") {
      files[name.substr(0, name.size() - 8)].push_back("'" + entry.path().string() + "'");
    }
  }
  for (const auto& [table, list] : files) {
    std::string joined;
    for (const std::string& file : list) joined += (joined.empty() ? "" : ",") + file;
    auto created =
        engine.Query("CREATE OR REPLACE VIEW " + table + " AS SELECT * FROM read_parquet([" +
                     joined + "]) WHERE row_kind = 0");
    EXPECT_TRUE(created.ok()) << created.status();
    created = engine.Query("CREATE OR REPLACE VIEW " + table + "_stored AS SELECT * FROM " + table);
    EXPECT_TRUE(created.ok()) << created.status();
  }
  return files["spans"].size();
}

// A QueryPool over `data_dir`; null (and a test failure naming the
// status) when it cannot open.
inline std::unique_ptr<query::QueryPool> OpenTestPool(const std::string& data_dir,
                                                      int max_concurrent, int threads) {
  query::QueryPoolOptions pool_options;
  pool_options.data_dir = data_dir;
  pool_options.max_concurrent = max_concurrent;
  pool_options.threads = threads;
  auto opened = query::QueryPool::Open(pool_options);
  EXPECT_TRUE(opened.ok()) << opened.status();
  if (!opened.ok()) return nullptr;
  return *std::move(opened);
}

// An HTTP server on a free loopback port serving `api`'s routes (`api`
// must outlive it).
inline absl::StatusOr<std::unique_ptr<server::HttpServer>> ServeOnLoopback(Api& api) {
  server::HttpRouter router;
  api.AddRoutes(&router);
  server::HttpServerOptions http;
  http.address = "127.0.0.1:0";
  return server::HttpServer::Start(http, std::move(router).ToHandler());
}

// `method` `base` + `path` (base: "http://127.0.0.1:<port>") with
// `headers` ("Name: value") and, when not empty, `body`; sent from this
// process (server/testing/http_fetch.h).
inline server::testing::HttpAnswer CallApi(const std::string& base, const std::string& method,
                                           const std::string& path,
                                           const std::vector<std::string>& headers,
                                           const std::string& body = "") {
  return server::testing::Fetch(method, base + path, headers, body);
}

// Starts the pool (two connections), the Api over `storage` (which must
// outlive the result) and the server, accepting `read_token` only; the
// Prometheus endpoints keep `promql_cache_bytes` of decoded files.
inline LoopbackApi StartLoopbackApi(
    storage::Storage* storage, FileSystem* fs, const std::string& data_dir, std::string read_token,
    size_t promql_cache_bytes = internal::PointCache::kDefaultMaxBytes) {
  LoopbackApi out;
  out.pool = OpenTestPool(data_dir, 2, 2);
  if (out.pool == nullptr) return out;
  ApiOptions options;
  options.storage = [storage] { return storage; };
  options.pool = out.pool.get();
  options.fs = fs;
  options.data_dir = data_dir;
  options.authenticate = AcceptOnlyToken(std::move(read_token));
  options.promql_cache_bytes = promql_cache_bytes;
  out.api = std::make_unique<Api>(std::move(options));
  auto started = ServeOnLoopback(*out.api);
  EXPECT_TRUE(started.ok()) << started.status();
  if (started.ok()) out.http_server = *std::move(started);
  return out;
}

// GET /prometheus/api/v1/`path` of `api` with `token` and `params`
// ("name=value", the value URL-encoded, as `curl -G --data-urlencode`).
inline server::testing::HttpAnswer GetPrometheus(const LoopbackApi& api, const std::string& token,
                                                 const std::string& path,
                                                 const std::vector<std::string>& params) {
  return server::testing::Fetch("GET",
                                "http://127.0.0.1:" + std::to_string(api.http_server->port()) +
                                    "/prometheus/api/v1/" + path + "?" +
                                    server::testing::QueryString(params),
                                {"Authorization: Bearer " + token});
}

}  // namespace strata::api::test_support
