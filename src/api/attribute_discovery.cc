// DiscoverAttributes and AttributeDiscoveryJson (attribute_discovery.h).

#include "api/attribute_discovery.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/params.h"
#include "common/status_macros.h"
#include "otlp/json_writer.h"
#include "query/sql_helpers.h"
#include "storage/offload/data_file_resolver.h"

namespace strata::api {
namespace {

using internal::CellInt;
using internal::CellString;
using internal::NextParam;

struct SignalTable {
  const char* view;
  const char* time_column;
};

SignalTable TableOf(Signal signal) {
  switch (signal) {
    case Signal::kSpans:
      return {"spans_stored", "start_time_unix_nano"};
    case Signal::kLogs:
      return {"logs_stored", "time_unix_nano"};
    case Signal::kMetrics:
      return {"metrics_stored", "time_unix_nano"};
  }
  return {"spans_stored", "start_time_unix_nano"};
}

std::string_view TypeName(int64_t code) {
  static constexpr std::string_view kNames[] = {"empty",  "string", "bool",   "int",
                                                "double", "array",  "kvlist", "bytes"};
  return code >= 0 && code < 8 ? kNames[code] : "unknown";
}

// The newest kDiscoveryBatches batches whose rows of `signal` meet the
// window, as view files (only that signal's list filled); and how many met
// it in all.
query::ViewFiles NewestFiles(const storage::Snapshot& snapshot, const std::string& data_dir,
                             const AttributeDiscoveryQuery& q, int64_t* in_window,
                             uint64_t* key_misses) {
  struct Candidate {
    uint64_t newest = 0;
    std::string path;
    const storage::SignalMeta* signal = nullptr;
    const storage::LiveBatch* batch = nullptr;
    const char* file = "";
  };
  std::vector<Candidate> candidates;
  const auto start = static_cast<uint64_t>(std::max<int64_t>(0, q.start));
  const auto end = static_cast<uint64_t>(std::max<int64_t>(0, q.end));
  for (const auto& batch : snapshot.batches()) {
    const storage::BatchMeta& meta = batch->meta();
    const storage::SignalMeta* signal = nullptr;
    bool has_file = false;
    const char* file = "";
    switch (q.signal) {
      case Signal::kSpans:
        signal = &meta.spans;
        has_file = meta.spans_parquet.has_value();
        file = "spans.parquet";
        break;
      case Signal::kLogs:
        signal = &meta.logs;
        has_file = meta.logs_parquet.has_value();
        file = "logs.parquet";
        break;
      case Signal::kMetrics:
        signal = &meta.metrics;
        has_file = meta.metrics_parquet.has_value();
        file = "metrics.parquet";
        break;
    }
    if (!has_file || !signal->event_time.has_value() || signal->event_time->max < start ||
        signal->event_time->min >= end) {
      continue;
    }
    std::string path = absl::StrCat(batch->dir(), "/", file);
    if (!path.starts_with('/')) path = absl::StrCat(data_dir, "/", path);
    candidates.push_back(
        Candidate{signal->event_time->max, std::move(path), signal, batch.get(), file});
  }
  *in_window = static_cast<int64_t>(candidates.size());
  const size_t keep = std::min(candidates.size(), kDiscoveryBatches);
  std::partial_sort(candidates.begin(), candidates.begin() + static_cast<ptrdiff_t>(keep),
                    candidates.end(),
                    [](const Candidate& a, const Candidate& b) { return a.newest > b.newest; });
  query::ViewFiles files;
  files.sequence = snapshot.sequence();
  std::vector<std::string>* list = q.signal == Signal::kSpans  ? &files.spans
                                   : q.signal == Signal::kLogs ? &files.logs
                                                               : &files.metrics;
  *key_misses = 0;
  for (size_t i = 0; i < keep; ++i) {
    // An evicted batch's file is read from its cached copy, held with the
    // files; one that cannot be fetched keeps its (missing) local path, so
    // the query fails naming it.
    absl::StatusOr<storage::ResolvedFile> resolved =
        storage::ResolveDataFile(*candidates[i].batch, candidates[i].file);
    if (resolved.ok() && resolved->hold != nullptr) {
      list->push_back(std::move(resolved->path));
      files.holds.push_back(std::move(resolved->hold));
    } else {
      list->push_back(std::move(candidates[i].path));
    }
    if (q.key.has_value()) {
      const auto misses = candidates[i].signal->promotion_misses.find(*q.key);
      if (misses != candidates[i].signal->promotion_misses.end()) *key_misses += misses->second;
    }
  }
  return files;
}

// The unnested entries of family `prefix` from the sample `s`: one row per
// attribute with its key, type code and value as text (NULL for arrays,
// kvlists, bytes and empty values). The value lists are unnested beside
// the keys (DuckDB pads a list that is NULL, or shorter, with NULLs), so no
// lambda runs per row.
std::string EntriesSql(std::string_view family, std::string_view prefix) {
  const std::string p(prefix);
  return absl::StrCat("SELECT '", std::string(family), "' AS family, key, type, coalesce(sv,",
                      " CAST(iv AS VARCHAR), CAST(dv AS VARCHAR), CAST(bv AS VARCHAR)) AS value",
                      " FROM (SELECT unnest(", p, "_keys) AS key, unnest(", p, "_types) AS type,",
                      " unnest(", p, "_str) AS sv, unnest(", p, "_int) AS iv, unnest(", p,
                      "_double) AS dv, unnest(", p, "_bool) AS bv FROM s)");
}

// The attribute families: their names in answers and their columns'
// prefix.
struct AttributeFamily {
  std::string_view name;
  std::string_view prefix;
};
constexpr AttributeFamily kAttributeFamilies[] = {{"attribute", "attr"},
                                                  {"resource", "resource_attr"}};

// The value of entry `index` of family `prefix` as text, as EntriesSql
// writes it.
std::string ValueAt(std::string_view prefix, std::string_view index) {
  const std::string p(prefix);
  const std::string i = absl::StrCat("[", std::string(index), "]");
  return absl::StrCat("coalesce(", p, "_str", i, ", CAST(", p, "_int", i, " AS VARCHAR), CAST(", p,
                      "_double", i, " AS VARCHAR), CAST(", p, "_bool", i, " AS VARCHAR))");
}

// How the sample `s` and its entries `e` are read: every key, one key
// through the lists, or one key through its promoted column.
struct SampleSql {
  std::string columns;  // of s
  std::string entries;  // the SELECT of e (family, key, type, value)
  std::string others;   // of a row over s: 0, or the promoted path's check
};

SampleSql EveryKeySql() {
  std::string columns;
  for (const AttributeFamily& family : kAttributeFamilies) {
    const std::string p(family.prefix);
    absl::StrAppend(&columns, columns.empty() ? "" : ", ", p, "_keys, ", p, "_types, ", p, "_str, ",
                    p, "_int, ", p, "_double, ", p, "_bool");
  }
  return {columns,
          absl::StrCat(EntriesSql("attribute", "attr"), " UNION ALL ",
                       EntriesSql("resource", "resource_attr")),
          "0"};
}

// Key `k` (a parameter) through list_position: the key's first occurrence
// in each family, so a row counts once per family that carries it.
SampleSql KeySql(const std::string& k) {
  SampleSql sql{.others = "0"};
  for (const AttributeFamily& family : kAttributeFamilies) {
    const std::string p(family.prefix);
    absl::StrAppend(&sql.columns, sql.columns.empty() ? "" : ", ", "list_position(", p, "_keys, ",
                    k, ") AS ", p, "_i, ", p, "_types, ", p, "_str, ", p, "_int, ", p, "_double, ",
                    p, "_bool");
    absl::StrAppend(&sql.entries, sql.entries.empty() ? "" : " UNION ALL ", "SELECT '",
                    std::string(family.name), "' AS family, ", k, " AS key, ", p, "_types[", p,
                    "_i] AS type, ", ValueAt(p, p + "_i"), " AS value FROM s WHERE ", p, "_i > 0");
  }
  return sql;
}

// Key `k` through `column`, the promoted column of `promoted` that holds
// the key's first occurrence there whenever it is a string. The caller
// has checked that no batch read recorded a promotion miss for the key,
// so the column is null exactly where the family lacks the key. The other
// family is only checked: `others` counts its rows with the key, and the
// caller reads the lists (KeySql) when there are any.
SampleSql PromotedKeySql(const std::string& k, const AttributeFamily& promoted,
                         std::string_view column) {
  const AttributeFamily& other =
      &promoted == &kAttributeFamilies[0] ? kAttributeFamilies[1] : kAttributeFamilies[0];
  return {absl::StrCat(std::string(column), " AS promoted, list_position(",
                       std::string(other.prefix), "_keys, ", k, ") AS other_i"),
          absl::StrCat("SELECT '", std::string(promoted.name), "' AS family, ", k,
                       " AS key, 1 AS type, promoted AS value FROM s WHERE promoted IS NOT NULL"),
          "count_if(other_i > 0)"};
}

namespace discovery_column {
enum : size_t { kFamily, kKey, kTypes, kKeyCount, kValue, kValueCount, kRows, kOthers, kCount };
}  // namespace discovery_column

}  // namespace

absl::StatusOr<Signal> ParseSignal(std::string_view name, std::string_view value) {
  if (value == "spans") return Signal::kSpans;
  if (value == "logs") return Signal::kLogs;
  if (value == "metrics") return Signal::kMetrics;
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(name), ": not one of spans, logs, metrics: ", QuoteForError(value)));
}

namespace {

// One read of the sample by `sample` into *discovery (its attributes,
// rows_sampled and keys_truncated); *others is the sample's `others`.
absl::Status ReadSample(query::QueryPool& pool, const query::ViewFiles& files,
                        const AttributeDiscoveryQuery& q, const CallOptions& call,
                        std::vector<query::QueryParam> params, const std::string& sample_filter,
                        const SampleSql& sample, AttributeDiscovery* discovery, int64_t* others) {
  const SignalTable table = TableOf(q.signal);
  // Limits are validated integers, not request text. The sample is
  // materialized once: a LIMIT without an order may pick other rows on
  // each scan, and keys and values must come from the same rows. Its
  // entries are grouped once, by (family, key, type, value); keys and their
  // values are then counted from those groups, far fewer than the entries.
  // The sample's row count comes on every row, and on a row of its own
  // (family NULL) when no key was found.
  const std::string sql = absl::StrCat(
      "WITH s AS MATERIALIZED (SELECT ", sample.columns, " FROM ", table.view, " WHERE ",
      sample_filter, " LIMIT ", kDiscoveryRows, "), e AS MATERIALIZED (", sample.entries,
      "), g AS MATERIALIZED (SELECT family, key, type, value, count(*) AS n FROM e GROUP BY ALL"
      "), k AS (SELECT family, key, list_sort(list(DISTINCT type)) AS types,"
      " CAST(sum(n) AS BIGINT) AS n FROM g GROUP BY family, key ORDER BY n DESC, family, key"
      " LIMIT ",
      q.limit + 1,
      "), v AS (SELECT family, key, value, CAST(sum(n) AS BIGINT) AS n FROM g"
      " WHERE value IS NOT NULL GROUP BY family, key, value QUALIFY row_number() OVER"
      " (PARTITION BY family, key ORDER BY sum(n) DESC, value) <= ",
      q.values,
      "), kv AS (SELECT k.family, k.key, k.types, k.n AS kn, v.value, v.n AS vn FROM k LEFT JOIN v"
      " ON k.family = v.family AND k.key = v.key), m AS (SELECT count(*) AS n, ",
      sample.others,
      " AS others FROM s) SELECT kv.family, kv.key, array_to_string(kv.types, ','), kv.kn,"
      " kv.value, kv.vn, m.n, m.others FROM m LEFT JOIN kv ON true"
      " ORDER BY kv.kn DESC, kv.family, kv.key, kv.vn DESC NULLS LAST, kv.value");
  // Keys with their values, plus the one row that says a key more exists.
  const auto max_rows = static_cast<size_t>((q.limit + 1) * std::max<int64_t>(1, q.values) + 1);
  STRATA_ASSIGN_OR_RETURN(
      query::QueryResult result,
      pool.Run(files, sql, internal::Options(call, std::move(params), max_rows)));
  STRATA_RETURN_IF_ERROR(
      internal::CheckShape(result, discovery_column::kCount, "attribute discovery"));
  discovery->attributes.clear();
  discovery->keys_truncated = false;
  for (const auto& row : result.rows) {
    STRATA_ASSIGN_OR_RETURN(discovery->rows_sampled, CellInt(row[discovery_column::kRows]));
    STRATA_ASSIGN_OR_RETURN(*others, CellInt(row[discovery_column::kOthers]));
    if (!row[discovery_column::kFamily].has_value()) continue;
    const std::string family = CellString(row[discovery_column::kFamily]);
    const std::string key = CellString(row[discovery_column::kKey]);
    if (discovery->attributes.empty() || discovery->attributes.back().family != family ||
        discovery->attributes.back().key != key) {
      if (static_cast<int64_t>(discovery->attributes.size()) == q.limit) {
        discovery->keys_truncated = true;
        break;
      }
      DiscoveredAttribute attribute{.family = family, .key = key};
      STRATA_ASSIGN_OR_RETURN(attribute.count, CellInt(row[discovery_column::kKeyCount]));
      const std::string types = CellString(row[discovery_column::kTypes]);
      for (size_t begin = 0; begin < types.size();) {
        size_t comma = types.find(',', begin);
        if (comma == std::string::npos) comma = types.size();
        STRATA_ASSIGN_OR_RETURN(int64_t type, CellInt(types.substr(begin, comma - begin)));
        attribute.types.emplace_back(TypeName(type));
        begin = comma + 1;
      }
      std::sort(attribute.types.begin(), attribute.types.end());
      discovery->attributes.push_back(std::move(attribute));
    }
    if (row[discovery_column::kValue].has_value()) {
      AttributeValueCount value{.value = *row[discovery_column::kValue]};
      STRATA_ASSIGN_OR_RETURN(value.count, CellInt(row[discovery_column::kValueCount]));
      discovery->attributes.back().values.push_back(std::move(value));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AttributeDiscovery> DiscoverAttributes(query::QueryPool& pool,
                                                      const storage::Snapshot& snapshot,
                                                      const std::string& data_dir,
                                                      const AttributeDiscoveryQuery& q,
                                                      const CallOptions& call) {
  AttributeDiscovery discovery;
  uint64_t key_misses = 0;
  const query::ViewFiles files =
      NewestFiles(snapshot, data_dir, q, &discovery.batches_in_window, &key_misses);
  discovery.batches_read =
      static_cast<int64_t>(files.spans.size() + files.logs.size() + files.metrics.size());
  const SignalTable table = TableOf(q.signal);
  std::vector<query::QueryParam> params;
  params.emplace_back(static_cast<uint64_t>(q.start));
  params.emplace_back(static_cast<uint64_t>(q.end));
  std::string sample_filter =
      absl::StrCat(table.time_column, " >= $1 AND ", table.time_column, " < $2");
  if (q.service.has_value()) {
    absl::StrAppend(&sample_filter, " AND service_name = ", NextParam(params));
    params.emplace_back(*q.service);
  }
  int64_t others = 0;
  if (!q.key.has_value()) {
    STRATA_RETURN_IF_ERROR(ReadSample(pool, files, q, call, std::move(params), sample_filter,
                                      EveryKeySql(), &discovery, &others));
  } else {
    const std::string k = NextParam(params);
    params.emplace_back(*q.key);
    // A promoted column answers for its family when no batch read holds a
    // row whose first occurrence of the key has another type; spans store
    // their attribute columns, the other views compute them from the
    // lists (no faster than KeySql).
    const AttributeFamily* promoted = nullptr;
    std::string_view column;
    for (const AttributeFamily& family : kAttributeFamilies) {
      if (family.name == "attribute" && q.signal != Signal::kSpans) continue;
      column = query::PromotedColumnOf(family.prefix, *q.key);
      if (!column.empty()) {
        promoted = &family;
        break;
      }
    }
    if (promoted != nullptr && key_misses == 0) {
      STRATA_RETURN_IF_ERROR(ReadSample(pool, files, q, call, params, sample_filter,
                                        PromotedKeySql(k, *promoted, column), &discovery, &others));
    }
    if (promoted == nullptr || key_misses != 0 || others != 0) {
      STRATA_RETURN_IF_ERROR(ReadSample(pool, files, q, call, std::move(params), sample_filter,
                                        KeySql(k), &discovery, &others));
    }
  }
  discovery.complete = discovery.batches_read == discovery.batches_in_window &&
                       discovery.rows_sampled < kDiscoveryRows;
  return discovery;
}

std::string AttributeDiscoveryJson(const AttributeDiscoveryQuery& q,
                                   const AttributeDiscovery& discovery) {
  static constexpr std::string_view kSignalNames[] = {"spans", "logs", "metrics"};
  std::string out;
  otlp::JsonWriter w(&out);
  w.BeginObject();
  w.Key("signal");
  w.String(kSignalNames[static_cast<int>(q.signal)]);
  w.Key("start_time_unix_nano");
  w.IntString(q.start);
  w.Key("end_time_unix_nano");
  w.IntString(q.end);
  w.Key("attributes");
  w.BeginArray();
  for (const DiscoveredAttribute& attribute : discovery.attributes) {
    w.BeginObject();
    w.Key("key");
    w.String(attribute.key);
    w.Key("family");
    w.String(attribute.family);
    w.Key("types");
    w.BeginArray();
    for (const std::string& type : attribute.types) w.String(type);
    w.EndArray();
    w.Key("count");
    w.Int(attribute.count);
    w.Key("values");
    w.BeginArray();
    for (const AttributeValueCount& value : attribute.values) {
      w.BeginObject();
      w.Key("value");
      w.String(value.value);
      w.Key("count");
      w.Int(value.count);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("keys_truncated");
  w.Bool(discovery.keys_truncated);
  w.Key("sample");
  w.BeginObject();
  w.Key("rows");
  w.Int(discovery.rows_sampled);
  w.Key("rows_max");
  w.Int(kDiscoveryRows);
  w.Key("batches_read");
  w.Int(discovery.batches_read);
  w.Key("batches_max");
  w.Int(static_cast<int64_t>(kDiscoveryBatches));
  w.Key("batches_in_window");
  w.Int(discovery.batches_in_window);
  w.Key("complete");
  w.Bool(discovery.complete);
  w.EndObject();
  w.EndObject();
  return out;
}

}  // namespace strata::api
