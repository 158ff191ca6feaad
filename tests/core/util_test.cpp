#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>
#include <set>

#include "core/device.h"
#include "core/file_util.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/rng.h"
#include "core/staged_directory.h"
#include "core/timer.h"
#include "tests/support/test_support.h"

namespace strata {
namespace {

TEST(Rng, SeededAndIndependentStreams) {
  Rng a(42), b(42);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.next_u64(), b.next_u64());
  Rng c(42);
  Rng f1 = c.fork(1), f2 = c.fork(2);
  EXPECT_NE(f1.next_u64(), f2.next_u64());
}

TEST(Rng, StateRoundTripsExactlyIncludingTheSpareNormal) {
  Rng a(7);
  for (int i = 0; i < 1000; ++i) a.next_u64();
  a.normal();  // leaves a spare
  Rng b(99);
  b.restore_state(a.state(), "test");
  EXPECT_EQ(b.seed(), 7u);
  EXPECT_EQ(a.normal(), b.normal());  // the spare
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next_u64(), b.next_u64());
  EXPECT_EQ(a.fork(3).next_u64(), b.fork(3).next_u64());
  testing::expect_user_error([&] { b.restore_state("7 0 0 1 2 3", "resume.ckpt"); },
                             {"resume.ckpt: malformed random-number state", "312 words of an mt19937_64"});
  testing::expect_user_error([&] { b.restore_state(a.state() + " 5", "resume.ckpt"); },
                             {"resume.ckpt: malformed random-number state (text after the engine's 312 words)"});
}

TEST(Rng, BelowIsInRangeAndPermutationIsBijective) {
  Rng r(3);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(r.below(7), 7u);
  auto p = r.permutation(100);
  std::set<int64_t> s(p.begin(), p.end());
  EXPECT_EQ(s.size(), 100u);
  EXPECT_EQ(*s.begin(), 0);
  EXPECT_EQ(*s.rbegin(), 99);
}

TEST(Rng, NormalHasRoughlyUnitVariance) {
  Rng r(5);
  double sum = 0, sq = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    double x = r.normal();
    sum += x;
    sq += x * x;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.05);
  EXPECT_NEAR(sq / n, 1.0, 0.05);
}

TEST(Hash, StableAndSensitive) {
  EXPECT_EQ(hash_string("strata").hex(), hash_string("strata").hex());
  EXPECT_NE(hash_string("strata").hex(), hash_string("strata!").hex());
  EXPECT_EQ(hash_string("x").hex().size(), 32u);
  Hasher h1, h2;
  h1.add("ab").add("c");
  h2.add("a").add("bc");
  EXPECT_NE(h1.digest(), h2.digest());
}

TEST(Median, OddEvenAndTimed) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  int calls = 0;
  double ms = time_median_ms([&] { ++calls; }, 2, 5);
  EXPECT_EQ(calls, 7);
  EXPECT_GE(ms, 0);
}

TEST(AtomicFile, CommitRenamesAndAbandonLeavesNothing) {
  fs::path dir = fs::temp_directory_path() / fmt::format("strata-atomic-{}", ::getpid());
  fs::remove_all(dir);
  write_file_atomic(dir / "a.txt", "hello");
  EXPECT_EQ(read_file(dir / "a.txt"), "hello");
  {
    AtomicFile f(dir / "b.txt");
    f.write("partial");
    EXPECT_TRUE(fs::exists(f.temp_path()));
  }  // destroyed without commit
  EXPECT_FALSE(fs::exists(dir / "b.txt"));
  size_t files = 0;
  for (auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
  fs::remove_all(dir);
}

// STRATA_HUGE_PAGES and other switches: 'off' once meant on (anything but '0' did).
TEST(Environment, OnOffSwitchesReadEitherWayAndRefuseTheRest) {
  for (const char* v : {"1", "true", "YES", "On"}) EXPECT_EQ(parse_on_off(v), std::optional<bool>(true)) << v;
  for (const char* v : {"0", "false", "No", "OFF"}) EXPECT_EQ(parse_on_off(v), std::optional<bool>(false)) << v;
  for (const char* v : {"", "2", "of", "enabled", "on "}) EXPECT_EQ(parse_on_off(v), std::nullopt) << v;
}

// A symbolic link is written through (the link stays, its target gets the data, also
// along a chain and when the target does not exist yet); a folder, a named pipe or a
// device is refused by name before anything is written (once each was replaced by a
// regular file, /dev/full included).
TEST(AtomicFile, WritesThroughLinksAndRefusesWhatIsNoRegularFile) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("strata-atomic-links-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  fs::create_symlink("sub/target.csv", dir / "link.csv");  // relative to the link's folder, target absent
  fs::create_symlink("link.csv", dir / "chain.csv");
  write_file_atomic(dir / "chain.csv", "first");
  EXPECT_TRUE(fs::is_symlink(dir / "chain.csv"));
  EXPECT_TRUE(fs::is_symlink(dir / "link.csv"));
  EXPECT_EQ(read_file(dir / "sub/target.csv"), "first");
  write_file_atomic(dir / "link.csv", "second");
  EXPECT_EQ(read_file(dir / "sub/target.csv"), "second");
  EXPECT_EQ(output_file_path(dir / "chain.csv"), dir / "sub/target.csv");

  ASSERT_EQ(::mkfifo((dir / "pipe").c_str(), 0600), 0);
  testing::expect_user_error([&] { write_file_atomic(dir / "pipe", "x"); },
                             {"cannot write '" + (dir / "pipe").string() + "': it is a named pipe"});
  testing::expect_user_error([&] { write_file_atomic(dir / "sub", "x"); }, {"it is a folder"});
  testing::expect_user_error([&] { AtomicFile f("/dev/null"); },
                             {"cannot write '/dev/null': it is a character device"});
  fs::create_symlink("pipe", dir / "to-pipe");
  testing::expect_user_error([&] { write_file_atomic(dir / "to-pipe", "x"); }, {"to-pipe': it is a named pipe"});
  EXPECT_TRUE(fs::is_fifo(dir / "pipe"));
  size_t files = 0;
  for (auto& e : fs::recursive_directory_iterator(dir)) files += e.is_regular_file() && !e.is_symlink();
  EXPECT_EQ(files, 1u) << "no temporaries left";
  fs::remove_all(dir);
}

TEST(StagedDirectory, LeftoversOfKilledProcessesAreFoundAdoptedAndCleanedUp) {
  const fs::path root = fs::temp_directory_path() / fmt::format("strata-staged-left-{}", ::getpid());
  fs::remove_all(root);
  const fs::path out = root / "out";
  const auto named = [&](const std::string& suffix) { return fs::path(out.string() + suffix); };
  write_file_atomic(named(".partial-2147483000") / "a.txt", "dead");  // above any pid_max: its process is gone
  write_file_atomic(named(".partial-1") / "a.txt", "init");           // pid 1 always runs
  write_file_atomic(named(fmt::format(".partial-{}", ::getpid())) / "a.txt", "earlier process, same pid");
  write_file_atomic(named(".partial-12x") / "a.txt", "not a pid");
  const std::vector<StagedDirectory::Leftover> l = StagedDirectory::leftovers(out);
  ASSERT_EQ(l.size(), 3u);
  std::map<int64_t, bool> running;
  for (const auto& x : l) running[x.pid] = x.running;
  EXPECT_FALSE(running.at(2147483000));
  EXPECT_TRUE(running.at(1));
  EXPECT_FALSE(running.at(::getpid())) << "a folder with this pid was left by an earlier process";
  {
    // A fresh start never replaces the folder an earlier process with this pid left: it
    // stages beside it, under <pid>.1, which leftovers() names with this pid as well.
    StagedDirectory d(out, "a.txt", "--out");
    EXPECT_EQ(d.staging_path(), named(fmt::format(".partial-{}.1", ::getpid())));
    EXPECT_EQ(read_file(named(fmt::format(".partial-{}", ::getpid())) / "a.txt"), "earlier process, same pid");
    std::map<std::string, int64_t> pids;
    for (const auto& x : StagedDirectory::leftovers(out)) pids[x.path.filename().string()] = x.pid;
    EXPECT_EQ(pids.at(d.staging_path().filename().string()), ::getpid());
    EXPECT_EQ(pids.size(), 4u);
    // Adopting a folder that already has this process's name keeps it where it is.
    StagedDirectory a(out, "a.txt", "--out", named(fmt::format(".partial-{}", ::getpid())));
    EXPECT_EQ(a.staging_path(), named(fmt::format(".partial-{}", ::getpid())));
  }
  EXPECT_FALSE(fs::exists(named(fmt::format(".partial-{}.1", ::getpid())))) << "the failed fresh start's folder";
  EXPECT_TRUE(fs::exists(named(fmt::format(".partial-{}", ::getpid())) / "a.txt"));
  write_file_atomic(named(".partial-7.") / "a.txt", "not a staging name");
  write_file_atomic(named(".partial-7.2x") / "a.txt", "not a staging name");
  EXPECT_EQ(StagedDirectory::leftovers(out).size(), 3u);
  {
    // Adopted: renamed to a free name of this process (the plain one is taken); kept when
    // the work fails (no commit).
    StagedDirectory d(out, "a.txt", "--out", named(".partial-2147483000"));
    EXPECT_EQ(d.staging_path(), named(fmt::format(".partial-{}.1", ::getpid())));
    EXPECT_FALSE(fs::exists(named(".partial-2147483000")));
    EXPECT_EQ(read_file(d.staging_path() / "a.txt"), "dead");
  }
  EXPECT_EQ(read_file(named(fmt::format(".partial-{}.1", ::getpid())) / "a.txt"), "dead")
      << "an adopted folder is kept";
  fs::remove_all(named(fmt::format(".partial-{}", ::getpid())));
  fs::rename(named(fmt::format(".partial-{}.1", ::getpid())), named(fmt::format(".partial-{}", ::getpid())));
  // A commit removes what a killed commit left moved aside (.old-<pid> of a dead process).
  write_file_atomic(named(".old-2147483000") / "a.txt", "stale");
  write_file_atomic(named(".old-1") / "a.txt", "another process's");
  {
    StagedDirectory d(out, "a.txt", "--out", named(fmt::format(".partial-{}", ::getpid())));
    d.commit();
  }
  EXPECT_EQ(read_file(out / "a.txt"), "dead");
  EXPECT_FALSE(fs::exists(named(".old-2147483000")));
  EXPECT_TRUE(fs::exists(named(".old-1")));
  fs::remove_all(root);
}

TEST(StagedDirectory, AppearsWholeOnCommitAndReplacesOnlyAnEarlierOutput) {
  const fs::path root = fs::temp_directory_path() / fmt::format("strata-staged-{}", ::getpid());
  fs::remove_all(root);
  const fs::path out = root / "out";
  {
    StagedDirectory d(out, "meta.json", "--out");
    write_file_atomic(d.staging_path() / "a.npy", "first");
    EXPECT_FALSE(fs::exists(out)) << "visible before commit";
  }  // abandoned: nothing at the final path, no staging folder left
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(fs::is_empty(root));
  {
    StagedDirectory d(out, "meta.json", "--out");
    write_file_atomic(d.staging_path() / "a.npy", "first");
    write_file_atomic(d.staging_path() / "meta.json", "{}");
    d.commit();
  }
  EXPECT_EQ(read_file(out / "a.npy"), "first");
  {
    // An earlier output (it holds the marker) is replaced whole: no file of it survives.
    StagedDirectory d(out, "meta.json", "--out");
    write_file_atomic(d.staging_path() / "b.npy", "second");
    d.commit();
  }
  EXPECT_FALSE(fs::exists(out / "a.npy"));
  EXPECT_EQ(read_file(out / "b.npy"), "second");
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(root)) names.insert(e.path().filename().string());
  EXPECT_EQ(names, std::set<std::string>{"out"}) << "staging or old folders left behind";
  // A user's file, or a folder without the marker, is refused and left as it was.
  write_file_atomic(root / "notes.txt", "mine");
  testing::expect_user_error(
      [&] { StagedDirectory d(root / "notes.txt", "meta.json", "--out"); },
      {"--out '", "notes.txt' exists and is not a folder", "only an earlier output is replaced"});
  write_file_atomic(root / "docs" / "keep.md", "mine");
  testing::expect_user_error([&] { StagedDirectory d(root / "docs", "meta.json", "--out"); },
                             {"--out '", "docs' is a folder that holds no earlier output (no meta.json)"});
  EXPECT_EQ(read_file(root / "notes.txt"), "mine");
  EXPECT_EQ(read_file(root / "docs" / "keep.md"), "mine");
  // An empty folder is taken.
  fs::create_directories(root / "empty");
  {
    StagedDirectory d(root / "empty", "meta.json", "--out");
    write_file_atomic(d.staging_path() / "c.npy", "third");
    d.commit();
  }
  EXPECT_EQ(read_file(root / "empty" / "c.npy"), "third");
  testing::expect_user_error([&] { StagedDirectory d(root / ".", "meta.json", "--out"); }, {"names no folder"});
  fs::remove_all(root);
}

TEST(UtilErrorTest, MessagesNameTheInput) {
  testing::expect_user_error([] { read_file("/nonexistent/strata/file.bin"); },
                             {"cannot open '/nonexistent/strata/file.bin'", "No such file"});
  const fs::path folder = fs::temp_directory_path();
  testing::expect_user_error([&] { read_file(folder); },
                             {"cannot read '" + folder.string() + "': it is a folder, expected a file"});
  testing::expect_user_error([] { parse_device("tpu", "--device"); }, {"--device", "unknown device 'tpu'"});
  testing::expect_user_error([] { parse_dtype("f16", "model.dtype"); }, {"model.dtype", "'f16'"});
  testing::expect_user_error([] { parse_log_level("loud"); }, {"'loud'"});
  EXPECT_EQ(parse_device("cuda:3").index, 3);
  EXPECT_EQ((SourceLocation{"a.yaml", 3, 7}).str(), "a.yaml:3:7");
}

}  // namespace
}  // namespace strata
