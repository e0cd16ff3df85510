#pragma once

// ClusterCompactionGate: the storage engine's CompactionGate
// (storage/maintenance/compaction.h) for a server in a cluster. The
// storage engine is opened before the ClusterMember that answers for the
// gate can join (the member needs the engine), so the gate is made first
// and the member attached once it has joined; until then, and after it is
// detached, the gate admits no batch and claims no day: nothing is
// compacted while the shared catalog cannot say what is listed.
//
// Thread-safety: safe for concurrent use; Detach() waits for a call in
// progress, so the member may be destroyed once it returns.

#include <string>

#include "absl/base/thread_annotations.h"
#include "cluster/cluster_member.h"
#include "common/mutex.h"
#include "storage/maintenance/compaction.h"

namespace strata::cluster {

class ClusterCompactionGate final : public storage::CompactionGate {
 public:
  // `member` must outlive the attachment (until Detach()).
  void Attach(ClusterMember* member) ABSL_LOCKS_EXCLUDED(mu_);
  void Detach() ABSL_LOCKS_EXCLUDED(mu_);

  bool Admits(const storage::LiveBatch& batch) override ABSL_LOCKS_EXCLUDED(mu_);
  bool Claim(const std::string& day) override ABSL_LOCKS_EXCLUDED(mu_);
  void Ended(const std::string& day, bool published) override ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Mutex mu_;
  ClusterMember* member_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace strata::cluster
