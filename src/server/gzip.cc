#include "server/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <climits>

#include "absl/status/status.h"
#include "common/check.h"
#include "fmt/format.h"

namespace strata::server {
namespace {

// zlib counts in uInt; larger inputs are fed in pieces of this size.
constexpr size_t kMaxZlibChunk = UINT_MAX;
// Output grows by at least this much (then doubling), so small bodies need
// one or two inflate calls and big ones amortise the copies.
constexpr size_t kMinOutputStep = 64 << 10;

// Frees a z_stream's inflate state on every path out of GunzipLimited.
class InflateStream {
 public:
  InflateStream() = default;
  ~InflateStream() {
    if (initialised_) inflateEnd(&stream_);
  }
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;

  // 16 + MAX_WBITS: a gzip wrapper (not zlib, not raw deflate).
  bool Init() {
    initialised_ = inflateInit2(&stream_, 16 + MAX_WBITS) == Z_OK;
    return initialised_;
  }
  z_stream* get() { return &stream_; }

 private:
  z_stream stream_{};
  bool initialised_ = false;
};

absl::Status Corrupt(size_t member, size_t member_offset, std::string_view what) {
  return absl::InvalidArgumentError(
      fmt::format("gzip body: member {} (at byte {}): {}", member, member_offset, what));
}

}  // namespace

absl::StatusOr<std::string> GunzipLimited(std::string_view in, size_t max_out) {
  if (in.empty()) return absl::InvalidArgumentError("gzip body: empty (no gzip member)");
  InflateStream inflater;
  if (!inflater.Init()) return absl::InternalError("gzip body: zlib inflateInit2 failed");
  z_stream* zs = inflater.get();
  // Output may reach max_out + 1 bytes: one byte past the cap proves the
  // data is over it without inflating any further.
  const size_t out_limit = max_out == SIZE_MAX ? SIZE_MAX : max_out + 1;
  std::string out;
  size_t produced = 0;
  size_t consumed = 0;  // input bytes handed to zlib and used
  size_t member = 1;    // 1-based, for messages
  size_t member_offset = 0;
  for (;;) {
    if (produced == out.size()) {
      if (produced >= out_limit) break;
      const size_t step = std::max(kMinOutputStep, produced);
      out.resize(produced + std::min({step, out_limit - produced, kMaxZlibChunk}));
    }
    const size_t in_chunk = std::min(in.size() - consumed, kMaxZlibChunk);
    zs->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + consumed));
    zs->avail_in = static_cast<uInt>(in_chunk);
    const size_t out_chunk = std::min(out.size() - produced, kMaxZlibChunk);
    zs->next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    zs->avail_out = static_cast<uInt>(out_chunk);
    const int ret = inflate(zs, Z_NO_FLUSH);
    consumed += in_chunk - zs->avail_in;
    produced += out_chunk - zs->avail_out;
    if (produced > max_out) break;
    switch (ret) {
      case Z_OK:
        continue;
      case Z_STREAM_END:
        if (consumed == in.size()) {
          out.resize(produced);
          return out;
        }
        // Another member follows (RFC 1952 section 2.2).
        if (inflateReset(zs) != Z_OK) return absl::InternalError("gzip body: inflateReset failed");
        ++member;
        member_offset = consumed;
        continue;
      case Z_BUF_ERROR:
        // No progress was possible: either the output is full (grown at
        // the top of the loop) or the input ended inside a member.
        if (zs->avail_out == 0) continue;
        return Corrupt(member, member_offset,
                       fmt::format("truncated: input ends after {} bytes inside the member",
                                   in.size() - member_offset));
      case Z_DATA_ERROR:
        return Corrupt(member, member_offset, zs->msg != nullptr ? zs->msg : "corrupt data");
      case Z_MEM_ERROR:
        return absl::ResourceExhaustedError("gzip body: zlib out of memory");
      default:
        return Corrupt(member, member_offset, fmt::format("zlib error {}", ret));
    }
  }
  return absl::OutOfRangeError(
      fmt::format("gzip body: decompresses to more than the limit of {} bytes", max_out));
}

std::string Gzip(std::string_view in, int level) {
  z_stream zs{};
  STRATA_CHECK(deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK,
               "deflateInit2 failed (bad level?)");
  std::string out;
  out.resize(deflateBound(&zs, static_cast<uLong>(std::min(in.size(), kMaxZlibChunk))) + 64);
  size_t consumed = 0;
  size_t produced = 0;
  for (;;) {
    if (produced == out.size()) out.resize(out.size() * 2);
    const size_t in_chunk = std::min(in.size() - consumed, kMaxZlibChunk);
    const bool last = consumed + in_chunk == in.size();
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + consumed));
    zs.avail_in = static_cast<uInt>(in_chunk);
    const size_t out_chunk = std::min(out.size() - produced, kMaxZlibChunk);
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    zs.avail_out = static_cast<uInt>(out_chunk);
    const int ret = deflate(&zs, last ? Z_FINISH : Z_NO_FLUSH);
    STRATA_CHECK(ret == Z_OK || ret == Z_STREAM_END || ret == Z_BUF_ERROR, "deflate failed");
    consumed += in_chunk - zs.avail_in;
    produced += out_chunk - zs.avail_out;
    if (ret == Z_STREAM_END) break;
  }
  deflateEnd(&zs);
  out.resize(produced);
  return out;
}

}  // namespace strata::server
