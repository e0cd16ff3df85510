#pragma once

// BatchStore: where immutable batch files live, behind the few operations
// the engine needs from any object store. Two implementations:
// LocalBatchStore (a directory on local disk, the reference) and
// S3BatchStore (any S3-compatible server). One conformance suite
// (batch_store_conformance_test.cc) runs against both.
//
// Keys are relative paths such as `telemetry/days/day=2026-12-04/<id>.batch/
// meta.json` (ValidateObjectKey() says which are allowed). Objects are
// written once and never modified: there is no overwrite.
//
// Contract (every implementation):
//   1. PutIfAbsent() is create-only: of any number of concurrent puts of one
//      key exactly one returns OK; the others return AlreadyExists. A put
//      that fails or is interrupted (crash, lost connection) leaves no
//      visible object: Get, Head and List see the whole object or nothing.
//   2. After PutIfAbsent() returns OK, Get, Head and List see the object
//      (read-after-write); after DeleteMany() returns OK they do not.
//      PutStreamIfAbsent() is the same for an object read a part at a time,
//      with one exception on S3 (s3_batch_store.h): two streamed puts of
//      one key racing each other may both succeed, the later replacing the
//      earlier. An object that exists when it starts is never replaced.
//      Streamed puts are for data files whose key one writer owns (a
//      batch's id is unique); meta.json, which decides a batch exists, goes
//      through PutIfAbsent().
//   3. List() returns keys in bytewise order, at most `max_keys` a page; a
//      page's `next` continues the listing, and is empty on the last page.
//
// Errors: NotFound for a missing key (Get, Head); AlreadyExists (1);
// InvalidArgument for a bad key or range; for S3, PermissionDenied and
// FailedPrecondition with a message naming the setting to fix (bad
// credentials, a missing bucket), Unavailable once retries are spent.
//
// Thread-safety: implementations are safe for concurrent use.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace strata::objectstore {

struct ObjectInfo {
  std::string key;
  uint64_t size = 0;
};

struct ListPage {
  std::vector<ObjectInfo> objects;
  // Passed back to List() for the next page; empty when this page is the last.
  std::string next;
};

// The most keys one List() page or one DeleteMany() request may hold (S3's
// own limit; larger DeleteMany() calls are split).
inline constexpr int kMaxKeysPerPage = 1000;
inline constexpr size_t kMaxKeyBytes = 1024;

// Bytes [offset, offset + length) of what a streamed put stores: exactly
// `length` bytes, or an error (which ends the put).
using PartReader = std::function<absl::StatusOr<std::string>(uint64_t offset, size_t length)>;

class BatchStore {
 public:
  virtual ~BatchStore() = default;

  // Stores `data` under `key` unless an object of that name exists
  // (AlreadyExists then, and the existing object is unchanged).
  [[nodiscard]] virtual absl::Status PutIfAbsent(std::string_view key, std::string_view data) = 0;

  // Stores the `size` bytes `read` gives under `key`, as PutIfAbsent (with
  // the exception in contract 1), holding at most one part of them in
  // memory at a time (S3: S3Config::part_bytes, sent as a multipart upload
  // when larger; local: kLocalStreamChunkBytes). `read`'s error is
  // returned as it is, and nothing becomes visible.
  [[nodiscard]] virtual absl::Status PutStreamIfAbsent(std::string_view key, uint64_t size,
                                                       const PartReader& read) = 0;

  // Bytes [offset, offset + length) of the object, cut short at its end:
  // empty when `offset` is at or past the end. `length` must be positive.
  [[nodiscard]] virtual absl::StatusOr<std::string> Get(std::string_view key, uint64_t offset,
                                                        uint64_t length) = 0;

  [[nodiscard]] virtual absl::StatusOr<ObjectInfo> Head(std::string_view key) = 0;

  // Objects whose keys start with `prefix`, after the page `continuation`
  // (empty for the first page). 1 <= max_keys <= kMaxKeysPerPage.
  [[nodiscard]] virtual absl::StatusOr<ListPage> List(std::string_view prefix,
                                                      std::string_view continuation,
                                                      int max_keys) = 0;

  // Deletes every key given; keys that do not exist are not an error.
  [[nodiscard]] virtual absl::Status DeleteMany(const std::vector<std::string>& keys) = 0;

  // What the store is, for messages: "local:/data/objects", "s3://bucket/prefix".
  virtual std::string Describe() const = 0;
};

// OK for a key this module accepts: 1 to kMaxKeyBytes bytes of
// [A-Za-z0-9._=/-], no leading or trailing '/', no empty segment and none
// that starts with '.' (so "." and ".." never occur, and stores may keep
// private names that no key can spell). Both stores check it, so a key that works on one works on
// both.
[[nodiscard]] absl::Status ValidateObjectKey(std::string_view key);

}  // namespace strata::objectstore
