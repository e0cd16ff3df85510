#pragma once

// CheckRemoteCopy(): `strata verify --object-store`'s check of one batch's
// copy in the object store against its local directory (docs/format/
// object-layout.md). Read-only on both sides.
//
//   ok            meta.json is in the store with the local bytes, and every
//                 data file it lists is there with its size (deep: with its
//                 xxh3-64 too, downloading each file)
//   not-uploaded  no meta.json in the store: the batch is still in the
//                 upload lag (or was never uploaded); not damage
//   incomplete    meta.json is there but a data file it lists is not: the
//                 order "data first, meta.json last" was broken
//   mismatch      an object's bytes differ from the local file's
//   unreadable    the local batch or the store could not be read
//
// Thread-safety: reentrant.

#include <string>

#include "io/file_system.h"
#include "objectstore/batch_store.h"
#include "storage/format/batch_id.h"

namespace strata::storage {

enum class RemoteStatus { kOk, kNotUploaded, kIncomplete, kMismatch, kUnreadable };
// "ok", "not-uploaded", "incomplete", "mismatch", "unreadable".
const char* RemoteStatusName(RemoteStatus status);

struct RemoteVerdict {
  RemoteStatus status = RemoteStatus::kOk;
  // Unless ok: the object key concerned and what is wrong.
  std::string key;
  std::string message;
};

// `batch_dir` is the local directory of batch `id` of UTC day `day`.
RemoteVerdict CheckRemoteCopy(FileSystem& fs, objectstore::BatchStore& store,
                              const std::string& day, const BatchId& id,
                              const std::string& batch_dir, bool deep);

}  // namespace strata::storage
