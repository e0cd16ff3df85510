// The gRPC adapter: strata's OTLP/gRPC server (GrpcServer) and the load
// generator's OTLP/gRPC client (NewGrpcClient). The only file of strata that
// includes gRPC headers.

#include "server/grpc_adapter.h"

#include <fcntl.h>
#include <grpc/compression.h>
#include <grpc/grpc.h>
#include <grpcpp/alarm.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/channel_arguments.h>
#include <grpcpp/support/status.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/host_port.h"
#include "common/mutex.h"
#include "common/runbook.h"
#include "fmt/format.h"
#include "otlp/proto_wire.h"
#include "server/gzip.h"
#include "server/otlp_client.h"

namespace strata::server {
namespace {

using Clock = std::chrono::steady_clock;

// Debian's Abseil has its own string_view, which fmt cannot format.
std::string_view ViewOf(absl::string_view s) { return std::string_view(s.data(), s.size()); }

// ---------------------------------------------------------------------------
// Hand-encoded google.rpc.Status / RetryInfo (the OTLP spec's retry advice)
// and the few response fields the client reads. strata does not link
// libprotobuf's generated classes, so these small messages are written and
// read with the wire format directly.

constexpr std::string_view kRetryInfoTypeUrl = "type.googleapis.com/google.rpc.RetryInfo";

void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void AppendVarintField(std::string* out, uint32_t field, uint64_t v) {
  AppendVarint(out, uint64_t{field} << 3 | static_cast<uint64_t>(otlp::WireType::kVarint));
  AppendVarint(out, v);
}

void AppendLenField(std::string* out, uint32_t field, std::string_view bytes) {
  AppendVarint(out, uint64_t{field} << 3 | static_cast<uint64_t>(otlp::WireType::kLen));
  AppendVarint(out, bytes.size());
  out->append(bytes);
}

// google.rpc.Status { 1: code, 2: message, 3: [Any { 1: type_url, 2: RetryInfo {
// 1: retry_delay Duration { 1: seconds } } }] }.
std::string EncodeStatusWithRetryInfo(int code, std::string_view message,
                                      std::chrono::seconds retry_after) {
  std::string duration;
  AppendVarintField(&duration, 1, static_cast<uint64_t>(retry_after.count()));
  std::string retry_info;
  AppendLenField(&retry_info, 1, duration);
  std::string any;
  AppendLenField(&any, 1, kRetryInfoTypeUrl);
  AppendLenField(&any, 2, retry_info);
  std::string status;
  AppendVarintField(&status, 1, static_cast<uint64_t>(code));
  AppendLenField(&status, 2, message);
  AppendLenField(&status, 3, any);
  return status;
}

// The first length-delimited field `field` of `message`, or nullopt (also for
// malformed bytes).
std::optional<std::string_view> FindLenField(std::string_view message, uint32_t field) {
  otlp::WireReader reader(message);
  while (!reader.done()) {
    uint32_t tag;
    if (!reader.ReadTag(&tag)) return std::nullopt;
    if (tag == otlp::Tag(field, otlp::WireType::kLen)) {
      std::string_view payload;
      if (!reader.ReadLen(&payload)) return std::nullopt;
      return payload;
    }
    if (!reader.SkipField(tag)) return std::nullopt;
  }
  return std::nullopt;
}

std::optional<uint64_t> FindVarintField(std::string_view message, uint32_t field) {
  otlp::WireReader reader(message);
  while (!reader.done()) {
    uint32_t tag;
    if (!reader.ReadTag(&tag)) return std::nullopt;
    if (tag == otlp::Tag(field, otlp::WireType::kVarint)) {
      uint64_t v;
      if (!reader.ReadVarint(&v)) return std::nullopt;
      return v;
    }
    if (!reader.SkipField(tag)) return std::nullopt;
  }
  return std::nullopt;
}

// The retry delay of the RetryInfo in a google.rpc.Status, rounded up to whole
// seconds; 0 when there is none.
std::chrono::seconds RetryAfterFromStatusDetails(std::string_view details) {
  otlp::WireReader reader(details);
  while (!reader.done()) {
    uint32_t tag;
    if (!reader.ReadTag(&tag)) return std::chrono::seconds(0);
    if (tag != otlp::Tag(3, otlp::WireType::kLen)) {
      if (!reader.SkipField(tag)) return std::chrono::seconds(0);
      continue;
    }
    std::string_view any;
    if (!reader.ReadLen(&any)) return std::chrono::seconds(0);
    if (FindLenField(any, 1) != kRetryInfoTypeUrl) continue;
    std::optional<std::string_view> retry_info = FindLenField(any, 2);
    if (!retry_info) return std::chrono::seconds(0);
    std::optional<std::string_view> duration = FindLenField(*retry_info, 1);
    if (!duration) return std::chrono::seconds(0);
    const int64_t seconds = static_cast<int64_t>(FindVarintField(*duration, 1).value_or(0));
    const int64_t nanos = static_cast<int64_t>(FindVarintField(*duration, 2).value_or(0));
    return std::chrono::seconds(std::max<int64_t>(0, seconds + (nanos > 0 ? 1 : 0)));
  }
  return std::chrono::seconds(0);
}

// Export<Signal>ServiceResponse { 1: partial_success { 1: rejected_<rows> } }.
int64_t RejectedRowsFromResponse(std::string_view response) {
  std::optional<std::string_view> partial = FindLenField(response, 1);
  if (!partial) return 0;
  return static_cast<int64_t>(FindVarintField(*partial, 1).value_or(0));
}

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::string out;
  std::vector<grpc::Slice> slices;
  if (!buffer.Valid() || !buffer.Dump(&slices).ok()) return out;
  out.reserve(buffer.Length());
  for (const grpc::Slice& slice : slices) {
    out.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return out;
}

grpc::Status ToGrpcStatus(const absl::Status& status, std::chrono::seconds retry_after) {
  const int code = static_cast<int>(status.code());
  const std::string message(status.message());
  const bool retryable = status.code() == absl::StatusCode::kResourceExhausted ||
                         status.code() == absl::StatusCode::kUnavailable;
  if (retryable && retry_after.count() > 0) {
    std::string details = EncodeStatusWithRetryInfo(code, message, retry_after);
    return grpc::Status(static_cast<grpc::StatusCode>(code), message, details);
  }
  return grpc::Status(static_cast<grpc::StatusCode>(code), message);
}

// Whether `message` is a gzip member rather than a protobuf message. A
// protobuf message cannot start with 0x1f (field 3, wire type 7, which does
// not exist), so the gzip magic 1f 8b is unambiguous. The server refuses
// deflate, the one other gRPC compression (its zlib header, 0x78, is a valid
// protobuf tag).
bool IsGzip(std::string_view message) {
  return message.size() >= 2 && static_cast<uint8_t>(message[0]) == 0x1f &&
         static_cast<uint8_t>(message[1]) == 0x8b;
}

// The gRPC listening address for a strata "host:port" (port 0 allowed).
absl::StatusOr<std::string> GrpcListenAddress(std::string_view address) {
  // ParseHostPort accepts ports 1-65535; port 0 (pick a free port) is
  // checked with a stand-in port and put back.
  const bool any_port = address.size() >= 2 && address.substr(address.size() - 2) == ":0";
  std::string checked(address);
  if (any_port) checked.back() = '1';
  absl::StatusOr<HostPort> parsed = ParseHostPort(checked);
  if (!parsed.ok()) return parsed.status();
  const int port = any_port ? 0 : parsed->port;
  if (parsed->host.empty()) return fmt::format("[::]:{}", port);
  if (parsed->host.find(':') != std::string::npos) {
    return fmt::format("[{}]:{}", parsed->host, port);
  }
  return fmt::format("{}:{}", parsed->host, port);
}

// The TLS pair gRPC's FileWatcherCertificateProvider reads, as an
// in-memory file (memfd) at /proc/self/fd/<n>: the key is never copied to
// disk, and Replace() switches to a new whole file in one step (dup3 onto
// the same descriptor), so gRPC never reads half of an update. The watcher
// reads the key "file" and the chain "file" (both this one) separately and
// retries when a file's modification time changed in between; each new file
// gets a later modification time than the last, so a read that straddles a
// Replace() is retried rather than taken as a mismatched pair.
// Thread-safety: Replace() and path() from any thread.
class PemMemoryFile {
 public:
  static absl::StatusOr<std::unique_ptr<PemMemoryFile>> Create(const std::string& pem) {
    auto file = std::unique_ptr<PemMemoryFile>(new PemMemoryFile());
    absl::StatusOr<int> fd = file->Write(pem);
    if (!fd.ok()) return fd.status();
    MutexLock lock(&file->mu_);
    file->fd_ = *fd;
    return file;
  }
  ~PemMemoryFile() {
    MutexLock lock(&mu_);
    if (fd_ >= 0) close(fd_);
  }
  PemMemoryFile(const PemMemoryFile&) = delete;
  PemMemoryFile& operator=(const PemMemoryFile&) = delete;

  std::string path() {
    MutexLock lock(&mu_);
    return fmt::format("/proc/self/fd/{}", fd_);
  }

  absl::Status Replace(const std::string& pem) {
    absl::StatusOr<int> fresh = Write(pem);
    if (!fresh.ok()) return fresh.status();
    MutexLock lock(&mu_);
    const int moved = dup3(*fresh, fd_, O_CLOEXEC);
    const int error = errno;
    close(*fresh);
    if (moved < 0) {
      return absl::InternalError(
          fmt::format("cannot swap the TLS pair for OTLP/gRPC: dup3: {}", std::strerror(error)));
    }
    return absl::OkStatus();
  }

 private:
  PemMemoryFile() = default;

  // A new memfd holding `pem`, with the next modification time.
  absl::StatusOr<int> Write(const std::string& pem) ABSL_LOCKS_EXCLUDED(mu_) {
    const int fd = memfd_create("strata-grpc-tls", MFD_CLOEXEC);
    auto fail = [fd](const char* step) {
      const int error = errno;
      if (fd >= 0) close(fd);
      return absl::InternalError(fmt::format("cannot hold the TLS pair for OTLP/gRPC: {}: {}", step,
                                             std::strerror(error)));
    };
    if (fd < 0) return fail("memfd_create");
    size_t done = 0;
    while (done < pem.size()) {
      const ssize_t n = write(fd, pem.data() + done, pem.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return fail("write");
      done += static_cast<size_t>(n);
    }
    int64_t mtime;
    {
      MutexLock lock(&mu_);
      last_mtime_sec_ = std::max<int64_t>(last_mtime_sec_ + 1, std::time(nullptr));
      mtime = last_mtime_sec_;
    }
    const timespec times[2] = {{.tv_sec = static_cast<time_t>(mtime), .tv_nsec = 0},
                               {.tv_sec = static_cast<time_t>(mtime), .tv_nsec = 0}};
    if (futimens(fd, times) != 0) return fail("futimens");
    return fd;
  }

  Mutex mu_;
  int fd_ ABSL_GUARDED_BY(mu_) = -1;
  int64_t last_mtime_sec_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

// ---------------------------------------------------------------------------
// Server

class GrpcServer::Impl {
 public:
  Impl(IngestService& ingest, uint64_t max_message_bytes, std::chrono::nanoseconds request_timeout)
      : ingest_(ingest),
        max_message_bytes_(max_message_bytes),
        request_timeout_(request_timeout),
        service_(this) {}

  IngestService& ingest() const { return ingest_; }
  uint64_t max_message_bytes() const { return max_message_bytes_; }
  std::chrono::nanoseconds request_timeout() const { return request_timeout_; }
  void CountGzipInflated() { gzip_inflated_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t gzip_inflated() const { return gzip_inflated_.load(std::memory_order_relaxed); }

  absl::Status Start(const GrpcServerOptions& options);
  void Shutdown(std::chrono::nanoseconds drain_timeout);
  uint16_t port() const { return static_cast<uint16_t>(port_); }
  absl::Status ReloadTls(const std::string& key_and_chain_pem) {
    if (tls_file_ == nullptr) {
      return absl::FailedPreconditionError("OTLP/gRPC was started without TLS");
    }
    return tls_file_->Replace(key_and_chain_pem);
  }

 private:
  // Hands every call, whatever its method, to a new ExportReactor.
  class Service final : public grpc::CallbackGenericService {
   public:
    explicit Service(Impl* impl) : impl_(impl) {}
    grpc::ServerGenericBidiReactor* CreateReactor(
        grpc::GenericCallbackServerContext* context) override;

   private:
    Impl* const impl_;
  };

  // Constant after construction.
  IngestService& ingest_;
  const uint64_t max_message_bytes_;
  const std::chrono::nanoseconds request_timeout_;
  // Set by Start() for TLS, then constant. Declared before server_ (and the
  // file before the provider that reads it) so that they go after it.
  std::unique_ptr<PemMemoryFile> tls_file_;
  std::shared_ptr<grpc::experimental::CertificateProviderInterface> tls_provider_;
  // Declared before server_ so that it is destroyed after it.
  Service service_;
  // Set by Start(), then constant.
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  // A test counter; relaxed, nothing is ordered by it.
  std::atomic<uint64_t> gzip_inflated_{0};

  Mutex shutdown_mu_;
  bool shut_down_ ABSL_GUARDED_BY(shutdown_mu_) = false;
};

namespace {

// One Export call: a unary call served through the generic bidi-streaming
// reactor. It reads one message, hands it to IngestService, and finishes
// with the answer.
//
// Lifetime: three references. gRPC's is dropped in OnDone (which gRPC runs
// only after Finish was called and every reaction has returned); the
// second ("work") is dropped when strata's side is done with the call: right
// after a refusal before Export, or in the storage answer; the third is the
// request-timeout alarm's, dropped when its callback runs (it fires, or is
// cancelled once the message arrived or the call ended). Whoever drops the
// last one deletes the reactor, so a storage answer that arrives after the
// call was cancelled and gRPC is done with it still finds the reactor alive.
//
// Invariants:
//  1. Finish (or StartWriteAndFinish) is called exactly once: by the first
//     of the answer, a refusal, or OnCancel to claim `finished_`.
//  2. After the finish was claimed by someone else, a path touches nothing
//     but the references (the server may be gone by then).
//  3. The answer's path drops its reference before calling Finish, so the
//     last reference of an answered call is gRPC's, dropped on a gRPC
//     thread while the server is alive.
class ExportReactor final : public grpc::ServerGenericBidiReactor {
 public:
  ExportReactor(GrpcServer::Impl* server, grpc::GenericCallbackServerContext* context)
      : server_(server), context_(context), arrival_(Clock::now()) {
    Begin();
  }

  void OnReadDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override {
    request_alarm_.Cancel();
    Unref();
  }

 private:
  ~ExportReactor() override = default;

  void Begin();
  // The request-timeout alarm: `fired` is false when it was cancelled.
  void OnRequestTimeout(bool fired);
  void OnExported(const ExportOutcome& outcome);
  // Refuses the call with `status` if nobody finished it yet, and drops the
  // work reference. For refusals on gRPC threads, before Export.
  void Refuse(const absl::Status& status, std::optional<RejectReason> reason);
  // Claims the right to finish the call (invariant 1); observes its latency.
  bool ClaimFinish();
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  GrpcServer::Impl* const server_;
  grpc::GenericCallbackServerContext* const context_;  // valid until OnDone
  const Clock::time_point arrival_;
  std::optional<Signal> signal_;  // set by Begin()
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;  // set by the finisher only

  // Fires request_timeout after the call's start unless cancelled first
  // (grpc::Alarm is safe to cancel from any thread, and again).
  grpc::Alarm request_alarm_;
  // Set once the request message has been read, before Export; tells a
  // late-firing alarm to leave the call alone. Release-acquire: it only
  // orders itself.
  std::atomic<bool> message_arrived_{false};

  // Acquire-release so that the deleting thread sees every write made
  // before another reference was dropped.
  std::atomic<int> refs_{3};
  Mutex mu_;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

grpc::ServerGenericBidiReactor* GrpcServer::Impl::Service::CreateReactor(
    grpc::GenericCallbackServerContext* context) {
  return new ExportReactor(impl_, context);
}

namespace {

void ExportReactor::Begin() {
  signal_ = SignalForGrpcMethod(context_->method());
  if (!signal_) {
    Unref();  // no alarm for a refused call
    Refuse(absl::UnimplementedError(fmt::format(
               "unknown method {}; strata serves the OTLP Export methods of TraceService, "
               "LogsService and MetricsService",
               context_->method())),
           std::nullopt);
    return;
  }
  std::string_view authorization;
  const auto& metadata = context_->client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    authorization = std::string_view(it->second.data(), it->second.size());
  }
  // Authorize counts its own refusals.
  if (absl::Status s = server_->ingest().Authorize(authorization, *signal_, Transport::kGrpc);
      !s.ok()) {
    Unref();  // no alarm for a refused call
    Refuse(s, std::nullopt);
    return;
  }
  request_alarm_.Set(std::chrono::system_clock::now() +
                         std::chrono::duration_cast<std::chrono::system_clock::duration>(
                             server_->request_timeout()),
                     [this](bool fired) { OnRequestTimeout(fired); });
  StartRead(&request_);
}

void ExportReactor::OnRequestTimeout(bool fired) {
  // A fired alarm finishes the call only if nothing else did (invariant 1):
  // once the message has arrived, OnReadDone cancelled the alarm, and a
  // cancellation that loses the race to the firing finds the finish claimed
  // or the Export under way; then the storage answer or OnCancel finishes.
  if (fired && !message_arrived_.load(std::memory_order_acquire) && ClaimFinish()) {
    server_->ingest().metrics().CountRejected(*signal_, Transport::kGrpc,
                                              RejectReason::kDeadlineExceeded);
    // The pending read then completes with ok=false and finds the finish
    // claimed.
    Finish(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                        fmt::format("the request message did not arrive within {} ms of the "
                                    "call's start (the server's request timeout)",
                                    std::chrono::duration_cast<std::chrono::milliseconds>(
                                        server_->request_timeout())
                                        .count())));
  }
  Unref();
}

void ExportReactor::OnReadDone(bool ok) {
  if (ok) message_arrived_.store(true, std::memory_order_release);
  request_alarm_.Cancel();
  if (!ok) {
    request_.Clear();
    if (context_->IsCancelled()) {
      // Cancelled, or gRPC refused the message (too large): gRPC has
      // settled the status the client sees; a Finish is required all the
      // same.
      Refuse(absl::CancelledError("the call was cancelled"), std::nullopt);
    } else {
      Refuse(absl::InvalidArgumentError("the call carried no request message"),
             RejectReason::kInvalidArgument);
    }
    return;
  }
  const uint64_t wire_bytes = request_.Length();
  std::string message = Flatten(request_);
  request_.Clear();
  if (IsGzip(message)) {
    server_->CountGzipInflated();
    absl::StatusOr<std::string> inflated = GunzipLimited(message, server_->max_message_bytes());
    if (!inflated.ok()) {
      if (inflated.status().code() == absl::StatusCode::kOutOfRange) {
        Refuse(absl::ResourceExhaustedError(fmt::format(
                   "the request message inflates to more than {} bytes, the server's limit",
                   server_->max_message_bytes())),
               RejectReason::kBodyTooLarge);
      } else {
        Refuse(absl::InvalidArgumentError(fmt::format("the gzip-compressed request message: {}",
                                                      ViewOf(inflated.status().message()))),
               RejectReason::kInvalidArgument);
      }
      return;
    }
    message = std::move(*inflated);
  }
  server_->ingest().Export(*signal_, Encoding::kProtobuf, Transport::kGrpc,
                           std::make_shared<const std::string>(std::move(message)), wire_bytes,
                           [this](ExportOutcome outcome) { OnExported(outcome); });
}

void ExportReactor::OnExported(const ExportOutcome& outcome) {
  if (!ClaimFinish()) {
    // Cancelled before the answer came (invariant 2).
    Unref();
    return;
  }
  grpc::Status status = grpc::Status::OK;
  if (outcome.status.ok()) {
    grpc::Slice slice(IngestService::EncodeResponse(*signal_, Encoding::kProtobuf, outcome));
    response_ = grpc::ByteBuffer(&slice, 1);
  } else {
    status = ToGrpcStatus(outcome.status, outcome.retry_after);
  }
  Unref();  // gRPC's reference keeps the reactor until OnDone (invariant 3)
  if (status.ok()) {
    StartWriteAndFinish(&response_, grpc::WriteOptions(), status);
  } else {
    Finish(std::move(status));
  }
}

void ExportReactor::OnCancel() {
  if (!ClaimFinish()) return;
  if (signal_ && context_->deadline() <= std::chrono::system_clock::now()) {
    server_->ingest().metrics().CountRejected(*signal_, Transport::kGrpc,
                                              RejectReason::kDeadlineExceeded);
  }
  // The client will not see this status; gRPC requires a Finish all the same.
  Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the call was cancelled"));
}

void ExportReactor::Refuse(const absl::Status& status, std::optional<RejectReason> reason) {
  if (ClaimFinish()) {
    if (reason && signal_) {
      server_->ingest().metrics().CountRejected(*signal_, Transport::kGrpc, *reason);
    }
    Finish(ToGrpcStatus(status, std::chrono::seconds(0)));
  }
  Unref();
}

bool ExportReactor::ClaimFinish() {
  {
    MutexLock lock(&mu_);
    if (finished_) return false;
    finished_ = true;
  }
  server_->ingest().metrics().ObserveExportLatency(Transport::kGrpc, Clock::now() - arrival_);
  return true;
}

}  // namespace

absl::Status GrpcServer::Impl::Start(const GrpcServerOptions& options) {
  absl::StatusOr<std::string> address = GrpcListenAddress(options.address);
  if (!address.ok()) return address.status();
  const uint64_t wire_limit = options.max_wire_message_bytes == 0 ? options.max_message_bytes
                                                                  : options.max_wire_message_bytes;
  for (const auto& [name, value] : {std::pair{"max_message_bytes", options.max_message_bytes},
                                    std::pair{"max_wire_message_bytes", wire_limit}}) {
    if (value == 0 || value > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
      return absl::InvalidArgumentError(
          fmt::format("{} {} must be from 1 to {}", name, value, std::numeric_limits<int>::max()));
    }
  }
  if (options.max_concurrent_streams_per_connection < 1) {
    return absl::InvalidArgumentError("max_concurrent_streams_per_connection must be positive");
  }
  if (options.request_timeout <= std::chrono::nanoseconds(0)) {
    return absl::InvalidArgumentError("request_timeout must be positive");
  }
  if (options.memory_quota_bytes < wire_limit ||
      options.memory_quota_bytes > std::numeric_limits<size_t>::max()) {
    return absl::InvalidArgumentError(fmt::format(
        "memory_quota_bytes {} must be at least the largest message as received ({} bytes)",
        options.memory_quota_bytes, wire_limit));
  }
  grpc::ServerBuilder builder;
  // One quota for the transport's buffers (grpc_adapter.h, Memory).
  grpc::ResourceQuota quota("strata-otlp-grpc");
  quota.Resize(static_cast<size_t>(options.memory_quota_bytes));
  builder.SetResourceQuota(quota);
  // Plaintext, or TLS from the in-memory pair (grpc_adapter.h).
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (!options.tls_key_and_chain_pem.empty()) {
    absl::StatusOr<std::unique_ptr<PemMemoryFile>> file =
        PemMemoryFile::Create(options.tls_key_and_chain_pem);
    if (!file.ok()) return file.status();
    tls_file_ = std::move(*file);
    const std::string path = tls_file_->path();
    tls_provider_ = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
        path, path, GrpcServer::kTlsRefreshSeconds);
    grpc::experimental::TlsServerCredentialsOptions tls_options(tls_provider_);
    tls_options.watch_identity_key_cert_pairs();
    tls_options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    credentials = grpc::experimental::TlsServerCredentials(tls_options);
  }
  builder.AddListeningPort(*address, credentials, &port_);
  builder.RegisterCallbackGenericService(&service_);
  // The message as received; the inflated size is checked by the reactor.
  builder.SetMaxReceiveMessageSize(static_cast<int>(wire_limit));
  // gzip is inflated by the reactor under the size limit, not by gRPC core,
  // which in 1.51 inflates a whole message before checking its size
  // (grpc_adapter.h, step 3).
  builder.AddChannelArgument(GRPC_ARG_ENABLE_PER_MESSAGE_DECOMPRESSION, 0);
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_GZIP, true);
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_DEFLATE, false);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             options.max_concurrent_streams_per_connection);
  // gRPC sets SO_REUSEPORT by default, which would let a second server bind
  // the same port silently and share its connections.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port_ == 0) {
    server_.reset();
    return absl::FailedPreconditionError(
        fmt::format("cannot listen on {} (OTLP/gRPC): gRPC could not bind it (its log line "
                    "just before this one says why); {}",
                    options.address, RunbookRef("cannot-listen")));
  }
  return absl::OkStatus();
}

void GrpcServer::Impl::Shutdown(std::chrono::nanoseconds drain_timeout) {
  MutexLock lock(&shutdown_mu_);
  if (shut_down_ || server_ == nullptr) return;
  shut_down_ = true;
  // grpc::Server::Shutdown returns when every call has ended (OnDone ran),
  // cancelling those still open at the deadline.
  server_->Shutdown(std::chrono::system_clock::now() +
                    std::chrono::duration_cast<std::chrono::system_clock::duration>(
                        std::max(std::chrono::nanoseconds(0), drain_timeout)));
}

GrpcServer::GrpcServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GrpcServer::~GrpcServer() { Shutdown(std::chrono::nanoseconds(0)); }

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Start(IngestService& ingest,
                                                              const GrpcServerOptions& options) {
  auto impl = std::make_unique<Impl>(ingest, options.max_message_bytes, options.request_timeout);
  if (absl::Status s = impl->Start(options); !s.ok()) return s;
  return std::unique_ptr<GrpcServer>(new GrpcServer(std::move(impl)));
}

uint16_t GrpcServer::port() const { return impl_->port(); }

absl::Status GrpcServer::ReloadTls(const std::string& key_and_chain_pem) {
  return impl_->ReloadTls(key_and_chain_pem);
}

void GrpcServer::Shutdown(std::chrono::nanoseconds drain_timeout) {
  impl_->Shutdown(drain_timeout);
}

uint64_t GrpcServer::TEST_gzip_messages_inflated() const { return impl_->gzip_inflated(); }

// ---------------------------------------------------------------------------
// Client

namespace {

// The most a gzip payload given to the client may inflate to.
constexpr size_t kMaxClientPayloadBytes = size_t{1} << 30;

class GrpcClient final : public OtlpClient {
 public:
  explicit GrpcClient(const OtlpClientOptions& options) : options_(options) {
    for (int i = 0; i < kSignalCount; ++i) {
      methods_[i] = std::string(GrpcMethodFor(static_cast<Signal>(i)));
    }
    if (!options.token.empty()) authorization_ = "Bearer " + options.token;
  }

  // Creates the channels; `target` is gRPC's form of options.target.
  void Connect(const std::string& target) {
    const int connections = std::max(1, options_.connections);
    for (int i = 0; i < connections; ++i) {
      grpc::ChannelArguments args;
      // A private subchannel pool and a distinct argument set make each
      // channel its own TCP connection instead of sharing one.
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
      args.SetInt("strata.client_channel", i);
      args.SetMaxReceiveMessageSize(64 << 20);
      stubs_.push_back(std::make_unique<grpc::GenericStub>(
          grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args)));
    }
  }

  ~GrpcClient() override;

  void Export(Signal signal, std::shared_ptr<const std::string> payload, Done done) override;

 private:
  struct Call {
    grpc::ClientContext context;
    grpc::ByteBuffer request;
    grpc::ByteBuffer response;
    Done done;
  };

  void OnCallDone(const std::shared_ptr<Call>& call, const grpc::Status& status);
  // After a Call and its ClientContext were destroyed.
  void OnCallFreed();

  const OtlpClientOptions options_;
  std::array<std::string, kSignalCount> methods_;
  std::string authorization_;
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs_;
  // Round-robin over the channels; relaxed, only spreading matters.
  std::atomic<uint64_t> next_channel_{0};

  Mutex mu_;
  CondVar idle_;
  // Calls not yet answered, for cancellation at destruction.
  std::unordered_map<Call*, std::shared_ptr<Call>> calls_ ABSL_GUARDED_BY(mu_);
  // Call objects not yet destroyed. A Call's ClientContext holds a reference
  // to its channel, and gRPC destroys the completion callback (and with it
  // the last reference to the Call) on its own thread after the callback
  // returned. The destructor waits for this count to reach 0 so that the
  // last channel reference is always dropped by the destructor: a channel
  // released on one of gRPC's callback threads tears down the callback
  // queue that thread is running on (a gRPC 1.51 crash, grpc_cq_internal_unref
  // "prior > 0").
  int live_calls_ ABSL_GUARDED_BY(mu_) = 0;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
};

// Keeps a payload alive for as long as gRPC holds the slice that points into
// it.
void ReleasePayload(void* holder) {
  delete static_cast<std::shared_ptr<const std::string>*>(holder);
}

void GrpcClient::Export(Signal signal, std::shared_ptr<const std::string> payload, Done done) {
  if (options_.gzip && IsGzip(*payload)) {
    // With gzip, gRPC compresses each message itself (grpc-encoding: gzip).
    // Its C++ API cannot send a message that is already compressed, so a
    // gzip payload is inflated here first; an uncompressed payload (the
    // cheap way, and the one the load generator uses) goes as it is. The two
    // cannot be confused: a protobuf message never starts with gzip's magic.
    absl::StatusOr<std::string> inflated = GunzipLimited(*payload, kMaxClientPayloadBytes);
    if (!inflated.ok()) {
      done(ExportReply{
          .status = absl::InvalidArgumentError(fmt::format("the payload is not valid gzip: {}",
                                                           ViewOf(inflated.status().message())))});
      return;
    }
    payload = std::make_shared<const std::string>(std::move(*inflated));
  }
  {
    MutexLock lock(&mu_);
    ++live_calls_;
  }
  std::shared_ptr<Call> call(new Call, [this](Call* freed) {
    delete freed;
    OnCallFreed();
  });
  call->done = std::move(done);
  call->context.set_deadline(std::chrono::system_clock::now() + options_.timeout);
  if (!authorization_.empty()) call->context.AddMetadata("authorization", authorization_);
  if (options_.gzip) call->context.set_compression_algorithm(GRPC_COMPRESS_GZIP);
  {
    auto* holder = new std::shared_ptr<const std::string>(payload);
    grpc::Slice slice(const_cast<char*>(payload->data()), payload->size(), ReleasePayload, holder);
    call->request = grpc::ByteBuffer(&slice, 1);
  }
  bool closing;
  {
    MutexLock lock(&mu_);
    closing = closing_;
    if (!closing) calls_.emplace(call.get(), call);
  }
  if (closing) {
    call->done(ExportReply{.status = absl::UnavailableError("the client is closing")});
    return;
  }
  grpc::GenericStub& stub =
      *stubs_[next_channel_.fetch_add(1, std::memory_order_relaxed) % stubs_.size()];
  stub.UnaryCall(&call->context, methods_[static_cast<int>(signal)], grpc::StubOptions(),
                 &call->request, &call->response,
                 [this, call](const grpc::Status& status) { OnCallDone(call, status); });
}

void GrpcClient::OnCallDone(const std::shared_ptr<Call>& call, const grpc::Status& status) {
  ExportReply reply;
  reply.status =
      absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
  if (status.ok()) {
    reply.rejected_rows = RejectedRowsFromResponse(Flatten(call->response));
  } else if (!status.error_details().empty()) {
    reply.retry_after = RetryAfterFromStatusDetails(status.error_details());
  }
  call->done(std::move(reply));
  call->done = nullptr;
  MutexLock lock(&mu_);
  calls_.erase(call.get());
}

void GrpcClient::OnCallFreed() {
  MutexLock lock(&mu_);
  if (--live_calls_ == 0) idle_.SignalAll();
}

GrpcClient::~GrpcClient() {
  std::vector<std::shared_ptr<Call>> open;
  {
    MutexLock lock(&mu_);
    closing_ = true;
    for (const auto& [raw, call] : calls_) open.push_back(call);
  }
  // Without the lock: a cancelled call's completion may run inline here.
  for (const std::shared_ptr<Call>& call : open) call->context.TryCancel();
  open.clear();
  MutexLock lock(&mu_);
  // Each call ends promptly once cancelled; its deadline bounds the wait in
  // any case. Its Call is freed right after its answer.
  while (live_calls_ > 0) idle_.WaitFor(&mu_, std::chrono::milliseconds(100));
}

}  // namespace

absl::StatusOr<std::unique_ptr<OtlpClient>> NewGrpcClient(const OtlpClientOptions& options) {
  absl::StatusOr<HostPort> parsed = ParseHostPort(options.target);
  if (!parsed.ok()) return parsed.status();
  std::string target;
  if (parsed->host.empty()) {
    target = fmt::format("localhost:{}", parsed->port);
  } else if (parsed->host.find(':') != std::string::npos) {
    target = fmt::format("[{}]:{}", parsed->host, parsed->port);
  } else {
    target = fmt::format("{}:{}", parsed->host, parsed->port);
  }
  auto client = std::make_unique<GrpcClient>(options);
  client->Connect(target);
  return std::unique_ptr<OtlpClient>(std::move(client));
}

}  // namespace strata::server
