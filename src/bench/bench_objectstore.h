#pragma once

// `strata bench objectstore`, in the same run against the same S3 server:
//
//  1. The store alone: create-only put throughput of batch-sized objects
//     on local disk (LocalBatchStore) against S3 (S3BatchStore), same
//     bytes, keys and concurrency; then 64 KiB ranged reads from both.
//  2. Offload (issue 25): the same generated spans written through the
//     storage engine twice, into a local data directory alone and with
//     background upload to S3 (Storage with an object store): durable
//     spans/s of each (acknowledged after the local fsync in both), their
//     ratio `s3_ratio`, and how long the upload took to drain after the
//     last acknowledgement. Then trace by id on the uploaded batches:
//     cold, with every spans.parquet moved aside as an eviction would
//     leave it, so the lookup reads its ranges from S3 (the filter and
//     spans.tidx stay local): `trace_cold_p50_ms`; then warm, from local
//     disk: `trace_warm_p50_ms`. Both keep the footers a batch's first
//     lookup parsed in memory, as a running server does.
//
// Prints tables and, last, one JSON line. Deletes what it wrote.
//
// The S3 server: --endpoint, --bucket, --region, or else the S3_TEST_*
// variables `scripts/radosgw.sh start DIR` prints; credentials from
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or else S3_TEST_*. With
// none of them it starts a RADOS gateway itself (--radosgw-script, run
// from the source tree by default) and stops it at the end.

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
  // Offload phase: spans written (0 skips the phase), per request, and
  // clients; trace lookups timed.
  uint64_t spans = 200'000;
  int request_spans = 512;
  int clients = 32;
  int lookups = 200;
  // Started when no S3 server is given.
  std::string radosgw_script = "scripts/radosgw.sh";
};

int RunBenchObjectStore(const BenchObjectStoreOptions& options);

}  // namespace strata::bench
