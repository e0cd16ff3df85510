#pragma once

// PodVector is a growable array of trivially copyable values for the column
// writer's open page (levels and dictionary indices) and its list memos.
// Appending a few values costs a capacity check and the stores: the writer
// appends one to three short stretches per list row, and std::vector's
// resize(n, value) and range insert take general out-of-line paths that
// cost about 60 instructions a call (6% of the span writer's instructions).
// clear() keeps the capacity, as std::vector's does.
//
// Thread-safety: single owner.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <type_traits>

#include "common/check.h"

namespace strata::parquet {

template <typename T>
class PodVector {
  static_assert(std::is_trivially_copyable_v<T>, "PodVector copies values with memcpy");

 public:
  PodVector() = default;
  PodVector(PodVector&&) noexcept = default;
  PodVector& operator=(PodVector&&) noexcept = default;
  PodVector(const PodVector&) = delete;
  PodVector& operator=(const PodVector&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

  void clear() { size_ = 0; }
  // Drops the values from `size` on (size <= size()).
  void Truncate(size_t size) {
    STRATA_CHECK(size <= size_, "PodVector::Truncate grows");
    size_ = size;
  }

  void push_back(T value) {
    if (size_ == capacity_) Grow(size_ + 1);
    data_[size_++] = value;
  }
  // Appends `count` copies of value. A short fill (the levels of a list
  // row) stores kSlack values, which the slack past the capacity has room
  // for, so it needs no memset call. Appending none writes nothing: a
  // vector that never grew has no slack to write into.
  void Append(size_t count, T value) {
    if (count == 0) return;
    if (capacity_ - size_ < count) Grow(size_ + count);
    T* at = data_.get() + size_;
    if (count <= kSlack) {
      for (size_t i = 0; i < kSlack; ++i) at[i] = value;
    } else {
      std::fill_n(at, count, value);
    }
    size_ += count;
  }
  // Appends `count` unspecified values and returns where the first one is,
  // for a caller that fills them in (and may Truncate the ones it did not).
  T* Extend(size_t count) {
    if (capacity_ - size_ < count) Grow(size_ + count);
    T* at = data_.get() + size_;
    size_ += count;
    return at;
  }
  // Appends values[0, count); values must not point into this vector.
  void Append(const T* values, size_t count) {
    if (count == 0) return;
    if (capacity_ - size_ < count) Grow(size_ + count);
    std::memcpy(data_.get() + size_, values, count * sizeof(T));
    size_ += count;
  }

 private:
  // Values allocated past the capacity, written only by short fills.
  static constexpr size_t kSlack = std::max<size_t>(1, 16 / sizeof(T));

  // Doubles the capacity (at least to `need`, at least 256 values).
  void Grow(size_t need) {
    const size_t capacity = std::max({need, 2 * capacity_, size_t{256}});
    std::unique_ptr<T[]> data(new T[capacity + kSlack]);
    if (size_ > 0) std::memcpy(data.get(), data_.get(), size_ * sizeof(T));
    data_ = std::move(data);
    capacity_ = capacity;
  }

  std::unique_ptr<T[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace strata::parquet
