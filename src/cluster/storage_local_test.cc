// A cluster member over a real storage engine, a file store and the
// PostgreSQL catalog (LocalOfStorage): restoring a node's batches into an
// empty data directory when the store does not hold one of them, or does
// not answer. The start fails naming the batch, the directory is left
// holding none of the node's batches, the catalog still lists them all,
// and the next start restores them. A restore cut short (the restore
// marker left) is finished by the next start before anything is removed.
// The runbook's command for a batch lost for good (docs/operations.md,
// read at test time and run with the psql client) lets the node start.

#include "cluster/storage_local.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "cluster/cluster_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "io/posix_file_system.h"
#include "objectstore/local_batch_store.h"
#include "otlp/decode.h"
#include "storage/format/layout.h"
#include "storage/format/object_layout.h"
#include "storage/storage.h"
#include "storage/testing/commit_testing.h"

namespace strata::cluster {
namespace {

using ::strata::cluster::testing::IdsOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A local file store that stops answering (every call Unavailable) while
// `answers` is false: a store that is down or out of reach.
class SwitchedStore : public objectstore::BatchStore {
 public:
  explicit SwitchedStore(std::unique_ptr<objectstore::BatchStore> store)
      : store_(std::move(store)) {}
  std::atomic<bool> answers{true};

  absl::Status PutIfAbsent(std::string_view key, std::string_view data) override {
    if (!answers) return Down();
    return store_->PutIfAbsent(key, data);
  }
  absl::Status PutStreamIfAbsent(std::string_view key, uint64_t size,
                                 const objectstore::PartReader& read) override {
    if (!answers) return Down();
    return store_->PutStreamIfAbsent(key, size, read);
  }
  absl::StatusOr<std::string> Get(std::string_view key, uint64_t offset, uint64_t length) override {
    if (!answers) return Down();
    return store_->Get(key, offset, length);
  }
  absl::StatusOr<objectstore::ObjectInfo> Head(std::string_view key) override {
    if (!answers) return Down();
    return store_->Head(key);
  }
  absl::StatusOr<objectstore::ListPage> List(std::string_view prefix, std::string_view continuation,
                                             int max_keys) override {
    if (!answers) return Down();
    return store_->List(prefix, continuation, max_keys);
  }
  absl::Status DeleteMany(const std::vector<std::string>& keys) override {
    if (!answers) return Down();
    return store_->DeleteMany(keys);
  }
  std::string Describe() const override { return store_->Describe(); }

 private:
  static absl::Status Down() { return absl::UnavailableError("the store does not answer"); }
  const std::unique_ptr<objectstore::BatchStore> store_;
};

// The psql client: PostgreSQL 15's (scripts/setup.sh --tests installs it),
// else the first on PATH; "" when there is none.
std::string PsqlClient() {
  constexpr char kPostgres15[] = "/usr/lib/postgresql/15/bin/psql";
  if (access(kPostgres15, X_OK) == 0) return kPostgres15;
  const char* path = std::getenv("PATH");
  const std::vector<std::string> dirs =
      absl::StrSplit(path == nullptr ? "" : path, ':', absl::SkipEmpty());
  for (const std::string& dir : dirs) {
    const std::string candidate = dir + "/psql";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// The SQL of the command docs/operations.md gives, in "Restoring this
// node's batches failed", to take a lost batch out of the catalog: the
// section's fenced block must be exactly
//   psql '<catalog url>' -c "<SQL naming '<batch id>'>"
// with nothing in the SQL that a shell changes inside double quotes, so
// that running psql with the SQL as its argument is running the doc's
// command. An error says what was not found.
absl::StatusOr<std::string> RunbookRemovalSql() {
  const std::string path = std::string(STRATA_SOURCE_ROOT) + "/docs/operations.md";
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::string heading = "\n### Restoring this node's batches failed\n";
  const size_t start = doc.find(heading);
  if (start == std::string::npos) {
    return absl::NotFoundError(
        absl::StrCat(path, " has no heading \"", absl::StripAsciiWhitespace(heading), "\""));
  }
  // The section ends at the next heading of its level or above.
  size_t end = doc.size();
  for (const char* next : {"\n### ", "\n## ", "\n# "}) {
    end = std::min(end, doc.find(next, start + heading.size()));
  }
  const std::string section = doc.substr(start, end - start);
  const std::string block_open = "\n```sh\npsql '<catalog url>' -c \"";
  const std::string block_close = "\"\n```\n";
  const size_t sql_start = section.find(block_open);
  const size_t sql_end = sql_start == std::string::npos
                             ? sql_start
                             : section.find(block_close, sql_start + block_open.size());
  if (sql_end == std::string::npos) {
    return absl::NotFoundError(absl::StrCat(
        path,
        ", section \"Restoring this node's batches failed\": no fenced ```sh block of the "
        "shape psql '<catalog url>' -c \"<SQL>\" (the command that takes a lost batch out "
        "of the catalog); if the runbook changed, change this test with it"));
  }
  std::string sql =
      section.substr(sql_start + block_open.size(), sql_end - sql_start - block_open.size());
  if (sql.find_first_of("\"$`\\") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": the runbook's SQL holds a character a shell changes inside double quotes: ", sql));
  }
  if (sql.find("'<batch id>'") == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the runbook's SQL does not name '<batch id>': ", sql));
  }
  return sql;
}

struct PsqlRun {
  int exit_code = -1;  // -1: not started, or ended by a signal
  std::string output;  // stdout and stderr
};

// Runs `psql url -c sql`, as an operator's shell would.
PsqlRun RunPsql(const std::string& psql, const std::string& url, const std::string& sql) {
  PsqlRun run;
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return run;
  // Made before fork(): the child only calls async-signal-safe functions.
  std::vector<std::string> args = {psql, url, "-c", sql};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof(buffer))) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    run.output.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
    run.exit_code = WEXITSTATUS(status);
  }
  return run;
}

class StorageLocalTest : public testing::SharedCatalogTest {
 protected:
  void SetUp() override {
    testing::SharedCatalogTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto store = objectstore::LocalBatchStore::Open(fs_, tmp_.path() + "/store");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::make_unique<SwitchedStore>(*std::move(store));
  }
  // Node `node`'s storage engine on data directory `name`.
  absl::StatusOr<std::unique_ptr<storage::Storage>> OpenNode(const std::string& name,
                                                             int node = 1) {
    storage::StorageOptions options;
    options.node = node;
    options.object_store = store_.get();
    options.shared_catalog = true;
    options.upload.poll_interval = std::chrono::milliseconds(10);
    // No maintenance: a retired batch's directory stays where the storage
    // engine left it until the next boot, so a boot shows what is durable.
    options.start_maintenance = false;
    return storage::Storage::Open(fs_, tmp_.path() + "/" + name, options);
  }
  // Joins as node `node` over `storage`.
  std::unique_ptr<ClusterMember> Join(storage::Storage& storage, const std::string& instance,
                                      const std::string& node = "01") {
    absl::StatusOr<ClusterMember::Local> local = LocalOfStorage(storage);
    EXPECT_TRUE(local.ok()) << local.status();
    if (!local.ok()) return nullptr;
    ClusterMemberOptions options;
    options.node = node;
    options.instance = instance;
    absl::StatusOr<std::unique_ptr<ClusterMember>> member =
        ClusterMember::Join(*shared_, *std::move(local), options);
    EXPECT_TRUE(member.ok()) << member.status();
    return member.ok() ? *std::move(member) : nullptr;
  }
  // Node 01 writes two batches on data directory "one", uploads them and
  // registers them in the catalog, then stops; returns their ids.
  std::vector<storage::BatchId> TwoBatchesInTheCatalog() {
    auto one = OpenNode("one");
    EXPECT_TRUE(one.ok()) << one.status();
    if (!one.ok()) return {};
    for (int n = 0; n < 2; ++n) EXPECT_TRUE(testing::WriteOneSpan(**one).ok());
    std::vector<storage::BatchId> ids;
    for (const auto& batch : (*one)->Pin()->batches()) {
      ids.push_back(batch->id());
      EXPECT_TRUE((*one)->uploader()->WaitUploaded(batch->id(), std::chrono::seconds(30)).ok());
    }
    EXPECT_EQ(ids.size(), 2u);
    std::unique_ptr<ClusterMember> member = Join(**one, "first");
    EXPECT_NE(member, nullptr);
    if (member == nullptr) return {};
    EXPECT_TRUE(member->Sync().ok());
    EXPECT_TRUE(member->Leave().ok());
    EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString(), ids[1].ToString()));
    return ids;
  }
  std::vector<std::string> CatalogIds() { return IdsOf(*shared_->List()); }
  void LeaveARestoreCutShort(const std::string& name);
  std::string MetaKey(const storage::BatchId& id) {
    return storage::BatchObjectKey(id.Day(), id, storage::kBatchMetaFileName);
  }
  size_t StoredObjects() {
    absl::StatusOr<objectstore::ListPage> page = store_->List("", "", 1000);
    EXPECT_TRUE(page.ok()) << page.status();
    return page.ok() ? page->objects.size() : 0;
  }
  // The batches of the data directory `name` as a boot finds them.
  size_t BatchesAtBoot(const std::string& name) {
    auto again = OpenNode(name);
    EXPECT_TRUE(again.ok()) << again.status();
    return again.ok() ? (*again)->Pin()->size() : 0;
  }

  PosixFileSystem fs_;
  storage::testing::ScopedTempDir tmp_{"storage_local"};
  std::unique_ptr<SwitchedStore> store_;
};

// The second batch's meta.json is gone from the store: the first, restored
// already, is forgotten again, durably, so that a restart still finds the
// directory empty (rather than taking it for the node's own and removing
// the second batch from the catalog).
TEST_F(StorageLocalTest, ABatchMissingFromTheStoreFailsTheRestoreAndKeepsNone) {
  const std::vector<storage::BatchId> ids = TwoBatchesInTheCatalog();
  ASSERT_EQ(ids.size(), 2u);
  const absl::StatusOr<std::string> meta_json = store_->Get(MetaKey(ids[1]), 0, 1 << 20);
  ASSERT_TRUE(meta_json.ok()) << meta_json.status();
  ASSERT_TRUE(store_->DeleteMany({MetaKey(ids[1])}).ok());
  const size_t objects = StoredObjects();
  {
    auto again = OpenNode("one-again");
    ASSERT_TRUE(again.ok()) << again.status();
    std::unique_ptr<ClusterMember> member = Join(**again, "second");
    ASSERT_NE(member, nullptr);
    absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
    ASSERT_FALSE(restored.ok());
    EXPECT_EQ(restored.status().code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(std::string(restored.status().message()),
                HasSubstr("restoring batch " + ids[1].ToString() + " (day " + ids[1].Day() +
                          ") of node id 01 from the object store: the store "));
    EXPECT_THAT(std::string(restored.status().message()),
                HasSubstr(" does not hold the batch: no " + MetaKey(ids[1]) + ";"));
    EXPECT_THAT(std::string(restored.status().message()),
                HasSubstr("the batch catalog still lists the node's 2 batches and none is kept "
                          "here, so the next start restores them all again"));
    EXPECT_EQ((*again)->Pin()->size(), 0u);
    EXPECT_EQ(member->Stats().batches_restored, 0u);
    ASSERT_TRUE(member->Leave().ok());
  }
  EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString(), ids[1].ToString()));
  EXPECT_EQ(StoredObjects(), objects);  // the first batch's objects stay
  EXPECT_EQ(BatchesAtBoot("one-again"), 0u);
  // The object is back: the next start restores both and removes nothing.
  ASSERT_TRUE(store_->PutIfAbsent(MetaKey(ids[1]), *meta_json).ok());
  auto again = OpenNode("one-again");
  ASSERT_TRUE(again.ok()) << again.status();
  std::unique_ptr<ClusterMember> member = Join(**again, "third");
  ASSERT_NE(member, nullptr);
  absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(*restored, 2u);
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString(), ids[1].ToString()));
  EXPECT_EQ(member->Stats().batches_removed, 0u);
  EXPECT_EQ((*again)->Pin()->size(), 2u);
}

// The runbook's way out when a batch's objects are lost for good
// (docs/operations.md, "Restoring this node's batches failed"): its psql
// command, read from the doc and run with the real psql client, takes the
// batch out of the catalog and moves the generation; a node that had
// adopted the batch drops it at its next Sync(), and the node's next start
// on an empty directory restores the other batch and syncs.
TEST_F(StorageLocalTest, TheRunbooksCatalogCommandLetsTheNodeStartWithoutTheLostBatch) {
  const std::string psql = PsqlClient();
  if (psql.empty()) {
    GTEST_SKIP() << "no psql client (/usr/lib/postgresql/15/bin/psql, or on PATH); "
                    "scripts/setup.sh --tests installs it";
  }
  const absl::StatusOr<std::string> runbook_sql = RunbookRemovalSql();
  ASSERT_TRUE(runbook_sql.ok()) << runbook_sql.status();
  const std::vector<storage::BatchId> ids = TwoBatchesInTheCatalog();
  ASSERT_EQ(ids.size(), 2u);
  // Node 02, on the same store and catalog, adopts both.
  auto two = OpenNode("two", 2);
  ASSERT_TRUE(two.ok()) << two.status();
  std::unique_ptr<ClusterMember> other = Join(**two, "other", "02");
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(other->Sync().ok());
  EXPECT_EQ(other->Stats().batches_adopted, 2u);
  EXPECT_EQ((*two)->Pin()->size(), 2u);
  // The second batch's meta.json is lost, and node 01's start on an
  // empty directory fails naming it.
  ASSERT_TRUE(store_->DeleteMany({MetaKey(ids[1])}).ok());
  {
    auto again = OpenNode("one-again");
    ASSERT_TRUE(again.ok()) << again.status();
    std::unique_ptr<ClusterMember> member = Join(**again, "second");
    ASSERT_NE(member, nullptr);
    absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
    ASSERT_FALSE(restored.ok());
    EXPECT_EQ(restored.status().code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(std::string(restored.status().message()),
                HasSubstr("restoring batch " + ids[1].ToString()));
    ASSERT_TRUE(member->Leave().ok());
  }
  ASSERT_THAT(CatalogIds(), ElementsAre(ids[0].ToString(), ids[1].ToString()));
  const absl::StatusOr<int64_t> generation = shared_->Generation();
  ASSERT_TRUE(generation.ok()) << generation.status();
  // The runbook's command, with the batch id the message names.
  const std::string sql = absl::StrReplaceAll(*runbook_sql, {{"<batch id>", ids[1].ToString()}});
  const PsqlRun run = RunPsql(psql, url(), sql);
  ASSERT_EQ(run.exit_code, 0) << psql << " '" << url() << "' -c \"" << sql << "\":\n" << run.output;
  EXPECT_THAT(run.output, HasSubstr("DELETE 1")) << sql;
  EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString())) << sql;
  const absl::StatusOr<int64_t> moved = shared_->Generation();
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(*moved, *generation + 1) << sql;
  // Node 02 drops its adopted copy.
  ASSERT_TRUE(other->Sync().ok());
  EXPECT_EQ(other->Stats().batches_dropped, 1u);
  {
    const auto snapshot = (*two)->Pin();
    ASSERT_EQ(snapshot->size(), 1u);
    EXPECT_EQ(snapshot->batches()[0]->id().ToString(), ids[0].ToString());
  }
  // Node 01 starts again on an empty directory: it restores the other
  // batch, syncs without removing anything, and counts what is left of the
  // lost batch in the store as objects no catalog names (deleted once
  // `delete_after` has passed).
  auto fresh = OpenNode("one-after");
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  std::unique_ptr<ClusterMember> member = Join(**fresh, "third");
  ASSERT_NE(member, nullptr);
  absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(*restored, 1u);
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString()));
  EXPECT_EQ(member->Stats().batches_removed, 0u);
  {
    const auto snapshot = (*fresh)->Pin();
    ASSERT_EQ(snapshot->size(), 1u);
    EXPECT_EQ(snapshot->batches()[0]->id().ToString(), ids[0].ToString());
  }
  ASSERT_TRUE(member->ReconcileStore().ok());
  EXPECT_EQ(member->Stats().orphans_waiting, 1u);
  ASSERT_TRUE(member->Leave().ok());
  ASSERT_TRUE(other->Leave().ok());
}

// The store does not answer at the restore: the start fails naming the
// first batch, with the store's error; nothing is kept or removed.
TEST_F(StorageLocalTest, AStoreThatDoesNotAnswerFailsTheRestore) {
  const std::vector<storage::BatchId> ids = TwoBatchesInTheCatalog();
  ASSERT_EQ(ids.size(), 2u);
  {
    auto again = OpenNode("one-again");
    ASSERT_TRUE(again.ok()) << again.status();
    std::unique_ptr<ClusterMember> member = Join(**again, "second");
    ASSERT_NE(member, nullptr);
    store_->answers = false;
    absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
    store_->answers = true;
    ASSERT_FALSE(restored.ok());
    EXPECT_EQ(restored.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(std::string(restored.status().message()),
                HasSubstr("restoring batch " + ids[0].ToString() + " (day " + ids[0].Day() +
                          ") of node id 01 from the object store: the store does not answer"));
    EXPECT_EQ((*again)->Pin()->size(), 0u);
    ASSERT_TRUE(member->Leave().ok());
  }
  EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString(), ids[1].ToString()));
  EXPECT_EQ(BatchesAtBoot("one-again"), 0u);
}

// What a process killed in the middle of a restore leaves in data
// directory `name`: the restore marker, and the first of this node's
// batches the catalog lists restored, not the others.
void StorageLocalTest::LeaveARestoreCutShort(const std::string& name) {
  auto node = OpenNode(name);
  ASSERT_TRUE(node.ok()) << node.status();
  absl::StatusOr<CatalogListing> listing = shared_->List();
  ASSERT_TRUE(listing.ok()) << listing.status();
  ASSERT_GE(listing->batches.size(), 2u);
  ASSERT_TRUE((*node)->SetRestoreMarked(true).ok());
  ASSERT_TRUE((*node)->RestoreOwnBatch(listing->batches[0].meta_json).ok());
}

// A start finds the marker and a directory holding one of the node's two
// batches: it does not take the directory for the node's own (Sync()
// refuses to run), restores the other batch, removes the marker, and the
// catalog keeps both.
TEST_F(StorageLocalTest, ARestoreCutShortIsFinishedAtTheNextStartAndRemovesNothing) {
  const std::vector<storage::BatchId> ids = TwoBatchesInTheCatalog();
  ASSERT_EQ(ids.size(), 2u);
  LeaveARestoreCutShort("one-again");
  const std::string marker = storage::DataDirPaths(tmp_.path() + "/one-again").RestoreMarker();
  // Boot keeps the marker (not a stray entry) and the restored batch.
  EXPECT_EQ(BatchesAtBoot("one-again"), 1u);
  ASSERT_TRUE(*fs_.Exists(marker));
  auto again = OpenNode("one-again");
  ASSERT_TRUE(again.ok()) << again.status();
  std::unique_ptr<ClusterMember> member = Join(**again, "second");
  ASSERT_NE(member, nullptr);
  const absl::Status early = member->Sync();
  EXPECT_EQ(early.code(), absl::StatusCode::kFailedPrecondition) << early;
  EXPECT_THAT(std::string(early.message()), HasSubstr("restore marker"));
  EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString(), ids[1].ToString()));
  absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(*restored, 1u);
  EXPECT_FALSE(*fs_.Exists(marker));
  for (int round = 0; round < 2; ++round) ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString(), ids[1].ToString()));
  EXPECT_EQ(member->Stats().batches_removed, 0u);
  EXPECT_EQ((*again)->Pin()->size(), 2u);
  ASSERT_TRUE(member->Leave().ok());
  member.reset();
  again->reset();
  EXPECT_EQ(BatchesAtBoot("one-again"), 2u);
}

// A start finds the marker while the store does not answer: it fails
// naming the batch and the marker, and changes nothing (the batch
// restored before stays, so does the marker); the next start finishes.
TEST_F(StorageLocalTest, ARestoreCutShortThatCannotBeFinishedChangesNothing) {
  const std::vector<storage::BatchId> ids = TwoBatchesInTheCatalog();
  ASSERT_EQ(ids.size(), 2u);
  LeaveARestoreCutShort("one-again");
  const std::string marker = storage::DataDirPaths(tmp_.path() + "/one-again").RestoreMarker();
  {
    auto again = OpenNode("one-again");
    ASSERT_TRUE(again.ok()) << again.status();
    std::unique_ptr<ClusterMember> member = Join(**again, "second");
    ASSERT_NE(member, nullptr);
    store_->answers = false;
    absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
    store_->answers = true;
    ASSERT_FALSE(restored.ok());
    EXPECT_EQ(restored.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(std::string(restored.status().message()),
                HasSubstr("restoring batch " + ids[1].ToString()));
    EXPECT_THAT(std::string(restored.status().message()),
                HasSubstr("keeps the restore marker, so the next start finishes the restore"));
    EXPECT_EQ((*again)->Pin()->size(), 1u);
    EXPECT_TRUE(*fs_.Exists(marker));
    ASSERT_TRUE(member->Leave().ok());
  }
  EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString(), ids[1].ToString()));
  EXPECT_EQ(BatchesAtBoot("one-again"), 1u);
  EXPECT_TRUE(*fs_.Exists(marker));
  auto again = OpenNode("one-again");
  ASSERT_TRUE(again.ok()) << again.status();
  std::unique_ptr<ClusterMember> member = Join(**again, "third");
  ASSERT_NE(member, nullptr);
  absl::StatusOr<size_t> restored = member->RestoreOwnBatches();
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(*restored, 1u);
  ASSERT_TRUE(member->Sync().ok());
  EXPECT_THAT(CatalogIds(), ElementsAre(ids[0].ToString(), ids[1].ToString()));
  EXPECT_EQ((*again)->Pin()->size(), 2u);
}

// A restore that fails in the start that began it takes out the marker
// with its batches: the directory holds none of the node's, as before.
TEST_F(StorageLocalTest, AFailedRestoreRemovesTheMarkerItWrote) {
  const std::vector<storage::BatchId> ids = TwoBatchesInTheCatalog();
  ASSERT_EQ(ids.size(), 2u);
  ASSERT_TRUE(store_->DeleteMany({MetaKey(ids[1])}).ok());
  auto again = OpenNode("one-again");
  ASSERT_TRUE(again.ok()) << again.status();
  std::unique_ptr<ClusterMember> member = Join(**again, "second");
  ASSERT_NE(member, nullptr);
  EXPECT_FALSE(member->RestoreOwnBatches().ok());
  EXPECT_FALSE(*fs_.Exists(storage::DataDirPaths(tmp_.path() + "/one-again").RestoreMarker()));
  EXPECT_EQ((*again)->Pin()->size(), 0u);
}

}  // namespace
}  // namespace strata::cluster
