#pragma once

// `strata bench objectstore`: create-only put throughput of batch-sized
// objects on local disk (LocalBatchStore) against an S3 server
// (S3BatchStore) in the same run, with the same bytes, keys and
// concurrency; then ranged reads of 64 KiB at random offsets from both.
// Prints a table and, last, one JSON line (`local_puts_per_sec`,
// `s3_puts_per_sec`, `s3_ratio`, ...). Deletes what it wrote.
//
// The S3 server: --endpoint, --bucket, --region, or else the S3_TEST_*
// variables `scripts/radosgw.sh start DIR` prints; credentials from
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or else S3_TEST_*.
// This is the object store alone; issue 25's spans/s and trace-latency
// benchmark needs offload, which does not exist yet.

#include <cstdint>
#include <string>

namespace strata::bench {

struct BenchObjectStoreOptions {
  int objects = 64;
  uint64_t object_bytes = 4 << 20;
  int concurrency = 4;
  int reads = 200;
  std::string endpoint;
  std::string bucket;
  std::string region;
  std::string addressing = "path";
  // The local store's directory; empty: ./strata-bench-objects, removed after.
  std::string dir;
};

int RunBenchObjectStore(const BenchObjectStoreOptions& options);

}  // namespace strata::bench
