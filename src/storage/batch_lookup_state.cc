#include "storage/batch_lookup_state.h"

#include <utility>

namespace strata::storage {

bool LookupCacheBudget::TryCharge(size_t bytes) {
  size_t used = used_bytes_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_bytes_ || used > limit_bytes_ - bytes) return false;
  } while (!used_bytes_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  return true;
}

void LookupCacheBudget::Release(size_t bytes) {
  used_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
}

BatchLookupState::~BatchLookupState() {
  MutexLock lock(&mu_);
  if (charged_bytes_ > 0) budget_->Release(charged_bytes_);
}

std::shared_ptr<const parquet::FileLayout> BatchLookupState::spans_layout() const {
  MutexLock lock(&mu_);
  return spans_layout_;
}

void BatchLookupState::CacheSpansLayout(std::shared_ptr<const parquet::FileLayout> layout) const {
  if (budget_ == nullptr || layout == nullptr) return;
  const size_t bytes = layout->MemoryBytes();
  MutexLock lock(&mu_);
  if (spans_layout_ != nullptr || !budget_->TryCharge(bytes)) return;
  spans_layout_ = std::move(layout);
  charged_bytes_ = bytes;
}

size_t BatchLookupState::cached_bytes() const {
  MutexLock lock(&mu_);
  return charged_bytes_;
}

}  // namespace strata::storage
