#include "cluster/compaction_gate.h"

namespace strata::cluster {

void ClusterCompactionGate::Attach(ClusterMember* member) {
  MutexLock lock(&mu_);
  member_ = member;
}

void ClusterCompactionGate::Detach() {
  MutexLock lock(&mu_);
  member_ = nullptr;
}

bool ClusterCompactionGate::Admits(const storage::LiveBatch& batch) {
  MutexLock lock(&mu_);
  return member_ != nullptr && member_->AdmitsForCompaction(batch);
}

bool ClusterCompactionGate::Claim(const std::string& day) {
  MutexLock lock(&mu_);
  return member_ != nullptr && member_->ClaimDay(day);
}

void ClusterCompactionGate::Ended(const std::string& day, bool published) {
  MutexLock lock(&mu_);
  if (member_ != nullptr) member_->CompactionEnded(day, published);
}

}  // namespace strata::cluster
