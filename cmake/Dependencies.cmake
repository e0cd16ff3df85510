# Every third-party dependency, found once. scripts/setup.sh installs them:
# Debian packages into system paths, npm-delivered DuckDB into .deps/.
find_package(Threads REQUIRED)
find_package(absl REQUIRED)
find_package(Protobuf REQUIRED)
find_package(simdjson REQUIRED)
find_package(CLI11 REQUIRED)
find_package(spdlog REQUIRED)
find_package(fmt REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
# RE2 for PromQL's and LogQL's regular expressions (label matchers,
# label_replace, line filters): its syntax and semantics are those of Go's
# regexp, which Prometheus and Loki use.
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
# libpq, PostgreSQL's client library, for the shared control store of several
# nodes (src/postgres, the only code that includes libpq-fe.h).
pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)
if(STRATA_TESTS)
  find_package(GTest REQUIRED)
endif()
if(STRATA_BENCH)
  find_package(benchmark REQUIRED)
endif()

set(STRATA_DEPS_DIR "${PROJECT_SOURCE_DIR}/.deps" CACHE PATH "Where scripts/setup.sh puts fetched dependencies")
set(STRATA_DUCKDB_DIR "${STRATA_DEPS_DIR}/duckdb")
if(NOT EXISTS "${STRATA_DUCKDB_DIR}/lib/libduckdb.so" OR NOT EXISTS "${STRATA_DUCKDB_DIR}/include/duckdb.h")
  message(FATAL_ERROR "DuckDB 1.4.4 not found under ${STRATA_DUCKDB_DIR}; run scripts/setup.sh")
endif()
add_library(duckdb SHARED IMPORTED GLOBAL)
set_target_properties(duckdb PROPERTIES
  IMPORTED_LOCATION "${STRATA_DUCKDB_DIR}/lib/libduckdb.so")
# duckdb.h is included by exactly one adapter (src/query); mark it a system
# header so its own warnings do not fail our build.
target_include_directories(duckdb SYSTEM INTERFACE "${STRATA_DUCKDB_DIR}/include")

set(STRATA_PROTO_DIR "${STRATA_DEPS_DIR}/protos")

# OTLP transports (src/server): gRPC's C++ library for OTLP/gRPC, Boost
# (Beast/Asio, header-only) for OTLP/HTTP and the API listener, zlib for gzip,
# OpenSSL for HTTPS on those two (gRPC brings its own TLS).
find_package(gRPC CONFIG REQUIRED)
find_package(Boost 1.74 REQUIRED)
find_package(ZLIB REQUIRED)
find_package(OpenSSL 3 REQUIRED)

# The object store's S3 client (src/objectstore): libcurl for HTTP(S).
find_package(CURL REQUIRED)

# The control plane (src/control): libsodium for token randomness, hashing
# and constant-time comparison.
pkg_check_modules(SODIUM REQUIRED IMPORTED_TARGET libsodium)
