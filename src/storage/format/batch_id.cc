#include "storage/format/batch_id.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "common/check.h"
#include "fmt/format.h"

namespace strata::storage {
namespace {

constexpr int kMinYear = 1970;
constexpr int kMaxYear = 2261;
constexpr int64_t kMicrosPerSecond = 1000000;
constexpr int64_t kSecondsPerDay = 86400;
constexpr char kBase36[] = "0123456789abcdefghijklmnopqrstuvwxyz";

struct CivilDay {
  int year;
  int month;  // 1-12
  int day;    // 1-31
};

bool IsLeapYear(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int DaysInMonth(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeapYear(year) ? 29 : kDays[month - 1];
}

// Days since 1970-01-01 (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(CivilDay c) {
  const int y = c.month <= 2 ? c.year - 1 : c.year;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (c.month > 2 ? c.month - 3 : c.month + 9) + 2) / 5 + c.day - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return int64_t{era} * 146097 + doe - 719468;
}

CivilDay CivilFromDays(int64_t days) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  const int year = static_cast<int>(yoe + era * 400 + (month <= 2 ? 1 : 0));
  return {year, month, day};
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLowerAlnum(char c) { return IsDigit(c) || (c >= 'a' && c <= 'z'); }
int Base36Value(char c) { return IsDigit(c) ? c - '0' : c - 'a' + 10; }

// The decimal value of text[pos, pos + n); the caller has checked the digits.
int64_t Digits(std::string_view text, size_t pos, size_t n) {
  int64_t value = 0;
  for (size_t i = pos; i < pos + n; ++i) value = value * 10 + (text[i] - '0');
  return value;
}

absl::Status BadId(std::string_view id, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format("invalid batch id {}: {}", QuoteForError(id), why));
}

// Checks a calendar date; returns "" if valid, else what is wrong.
std::string CheckDate(CivilDay c) {
  if (c.year < kMinYear || c.year > kMaxYear) {
    return fmt::format("year {} is outside {}-{}", c.year, kMinYear, kMaxYear);
  }
  if (c.month < 1 || c.month > 12) return fmt::format("month {:02} is not 01-12", c.month);
  if (c.day < 1 || c.day > DaysInMonth(c.year, c.month)) {
    return fmt::format("day {:02} does not exist in {:04}-{:02}", c.day, c.year, c.month);
  }
  return "";
}

absl::StatusOr<BatchId> ParseImpl(std::string_view text);

}  // namespace

std::string QuoteForError(std::string_view text) {
  constexpr size_t kMaxBytes = 64;
  std::string out = "\"";
  for (size_t i = 0; i < text.size() && i < kMaxBytes; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  if (text.size() > kMaxBytes)
    out += fmt::format(" (first {} of {} bytes)", kMaxBytes, text.size());
  return out;
}

absl::StatusOr<BatchId> BatchId::Parse(std::string_view text) { return ParseImpl(text); }

absl::StatusOr<BatchId> BatchId::Make(int64_t stamp_micros, int generation, int node) {
  if (stamp_micros < kMinStampMicros || stamp_micros > kMaxStampMicros) {
    return absl::InvalidArgumentError(fmt::format("batch id stamp {} µs is outside {}..{}",
                                                  stamp_micros, kMinStampMicros, kMaxStampMicros));
  }
  if (generation < 0 || generation > kMaxGeneration) {
    return absl::InvalidArgumentError(
        fmt::format("batch id generation {} is outside 0..{}", generation, kMaxGeneration));
  }
  if (node < 0 || node > kMaxNode) {
    return absl::InvalidArgumentError(
        fmt::format("batch id node {} is outside 0..{}", node, kMaxNode));
  }
  return BatchId(stamp_micros, generation, node);
}

std::string BatchId::ToString() const {
  const int64_t days = stamp_micros_ / (kSecondsPerDay * kMicrosPerSecond);
  const int64_t micros_of_day = stamp_micros_ % (kSecondsPerDay * kMicrosPerSecond);
  const int64_t seconds_of_day = micros_of_day / kMicrosPerSecond;
  const CivilDay c = CivilFromDays(days);
  return fmt::format("{:04}{:02}{:02}{:02}{:02}{:02}{:06}{}{}{}", c.year, c.month, c.day,
                     seconds_of_day / 3600, seconds_of_day / 60 % 60, seconds_of_day % 60,
                     micros_of_day % kMicrosPerSecond, kBase36[generation_], kBase36[node_ / 36],
                     kBase36[node_ % 36]);
}

std::string BatchId::Day() const { return DayOfNanos(stamp_nanos()); }

namespace {

absl::StatusOr<BatchId> ParseImpl(std::string_view text) {
  if (text.size() != kBatchIdLength) {
    return BadId(text, fmt::format("length is {}, not {}", text.size(), kBatchIdLength));
  }
  for (size_t i = 0; i < 20; ++i) {
    if (!IsDigit(text[i])) {
      return BadId(text, fmt::format("character {} of the stamp is not a digit", i + 1));
    }
  }
  for (size_t i = 20; i < kBatchIdLength; ++i) {
    if (!IsLowerAlnum(text[i])) {
      return BadId(text, fmt::format("character {} is not one of [0-9a-z]", i + 1));
    }
  }
  const CivilDay date{static_cast<int>(Digits(text, 0, 4)), static_cast<int>(Digits(text, 4, 2)),
                      static_cast<int>(Digits(text, 6, 2))};
  if (std::string why = CheckDate(date); !why.empty()) return BadId(text, why);
  const int64_t hour = Digits(text, 8, 2);
  const int64_t minute = Digits(text, 10, 2);
  const int64_t second = Digits(text, 12, 2);
  if (hour > 23) return BadId(text, fmt::format("hour {:02} is not 00-23", hour));
  if (minute > 59) return BadId(text, fmt::format("minute {:02} is not 00-59", minute));
  if (second > 59) return BadId(text, fmt::format("second {:02} is not 00-59", second));
  const int64_t stamp =
      (DaysFromCivil(date) * kSecondsPerDay + hour * 3600 + minute * 60 + second) *
          kMicrosPerSecond +
      Digits(text, 14, 6);
  return BatchId::Make(stamp, Base36Value(text[20]),
                       Base36Value(text[21]) * 36 + Base36Value(text[22]));
}

}  // namespace

absl::Status ValidateBatchId(std::string_view id) { return ParseImpl(id).status(); }

absl::StatusOr<int> ParseBatchIdNode(std::string_view text) {
  if (text.size() != 2 || !IsLowerAlnum(text[0]) || !IsLowerAlnum(text[1])) {
    return absl::InvalidArgumentError(fmt::format(
        "node {}: expected two characters of 0-9 and a-z (00 to zz)", QuoteForError(text)));
  }
  return Base36Value(text[0]) * 36 + Base36Value(text[1]);
}

absl::Status ValidateDay(std::string_view day) { return DayBounds(day).status(); }

absl::StatusOr<DayBoundsNanos> DayBounds(std::string_view day) {
  auto bad = [day](std::string_view why) {
    return absl::InvalidArgumentError(fmt::format("invalid day {}: {}", QuoteForError(day), why));
  };
  if (day.size() != 10 || day[4] != '-' || day[7] != '-') return bad("not YYYY-MM-DD");
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (!IsDigit(day[i])) return bad("not YYYY-MM-DD");
  }
  const CivilDay date{static_cast<int>(Digits(day, 0, 4)), static_cast<int>(Digits(day, 5, 2)),
                      static_cast<int>(Digits(day, 8, 2))};
  if (std::string why = CheckDate(date); !why.empty()) return bad(why);
  constexpr uint64_t kNanosPerDay = uint64_t{kSecondsPerDay} * 1000000000;
  const uint64_t first = static_cast<uint64_t>(DaysFromCivil(date)) * kNanosPerDay;
  return DayBoundsNanos{first, first + kNanosPerDay};
}

std::string DayOfNanos(uint64_t nanos) {
  constexpr uint64_t kNanosPerDay = uint64_t{kSecondsPerDay} * 1000000000;
  const CivilDay c = CivilFromDays(static_cast<int64_t>(nanos / kNanosPerDay));
  return fmt::format("{:04}-{:02}-{:02}", c.year, c.month, c.day);
}

int64_t SystemClockMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

BatchIdIssuer::BatchIdIssuer(MicrosClock clock, int node) : clock_(std::move(clock)), node_(node) {
  STRATA_CHECK(node_ >= 0 && node_ <= kMaxNode, "batch id node out of range");
}

void BatchIdIssuer::Observe(const BatchId& existing) {
  MutexLock lock(&mu_);
  if (existing.stamp_micros() > last_stamp_micros_) last_stamp_micros_ = existing.stamp_micros();
}

absl::StatusOr<BatchId> BatchIdIssuer::Issue(int generation) {
  const int64_t now = clock_();
  MutexLock lock(&mu_);
  // last_stamp_micros_ <= kMaxStampMicros, so the increment cannot overflow.
  const int64_t stamp = std::max(now, last_stamp_micros_ + 1);
  if (stamp < kMinStampMicros || stamp > kMaxStampMicros) {
    return absl::FailedPreconditionError(fmt::format(
        "cannot issue a batch id: the clock reads {} µs since 1970, the last stamp was {} µs; "
        "stamps must lie in {}..{}",
        now, last_stamp_micros_, kMinStampMicros, kMaxStampMicros));
  }
  absl::StatusOr<BatchId> id = BatchId::Make(stamp, generation, node_);
  if (id.ok()) last_stamp_micros_ = stamp;
  return id;
}

}  // namespace strata::storage
