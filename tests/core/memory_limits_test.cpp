#include "core/memory_limits.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "core/buffer_pool.h"
#include "core/host_memory.h"
#include "core/tensor.h"
#include "tests/support/test_support.h"

namespace strata {
namespace {
namespace fs = std::filesystem;

constexpr int64_t kMiB = int64_t{1} << 20;

// A cgroup filesystem laid out in a private folder.
class FakeCgroupTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / fmt::format("strata-cgroup-{}-{}", getpid(), counter_++);
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void put(const std::string& relative, const std::string& text) {
    const fs::path p = root_ / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  fs::path root_;
  static inline int counter_ = 0;
};

TEST_F(FakeCgroupTree, V2TakesTheLimitedLevelAboveTheProcessAndDropsInactivePageCache) {
  put("user.slice/app.scope/memory.max", "max\n");
  put("user.slice/app.scope/memory.current", "100\n");
  put("user.slice/memory.max", std::to_string(1024 * kMiB) + "\n");
  put("user.slice/memory.current", std::to_string(512 * kMiB) + "\n");
  put("user.slice/memory.stat",
      fmt::format("anon {}\nfile {}\ninactive_file {}\n", 300 * kMiB, 200 * kMiB, 128 * kMiB));
  const auto m = cgroup_memory("0::/user.slice/app.scope\n", root_);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->limit, 1024 * kMiB);
  EXPECT_EQ(m->usage, 384 * kMiB);  // 512 MiB less 128 MiB of inactive page cache
  EXPECT_EQ(m->headroom(), 640 * kMiB);
  EXPECT_EQ(m->limit_file, root_ / "user.slice/memory.max");
}

TEST_F(FakeCgroupTree, TheTightestOfSeveralLimitedLevelsBinds) {
  put("a/memory.max", std::to_string(4096 * kMiB));
  put("a/memory.current", std::to_string(1024 * kMiB));  // 3 GiB left
  put("a/b/memory.max", std::to_string(2048 * kMiB));
  put("a/b/memory.current", std::to_string(1536 * kMiB));  // 512 MiB left: binds
  const auto m = cgroup_memory("0::/a/b\n", root_);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->headroom(), 512 * kMiB);
  EXPECT_EQ(m->limit_file, root_ / "a/b/memory.max");
  // Over its limit (usage above it): nothing left, not a negative size.
  put("a/b/memory.current", std::to_string(3000 * kMiB));
  EXPECT_EQ(cgroup_memory("0::/a/b\n", root_)->headroom(), 0);
}

TEST_F(FakeCgroupTree, V1MemoryControllerWinsOverTheUnifiedLineAndAContainersOwnCgroupIsTheMountRoot) {
  // Docker without a cgroup namespace: /proc/self/cgroup names /docker/ab12, but the
  // container's mount shows its own cgroup at the root of the controller's mount.
  put("memory/memory.limit_in_bytes", std::to_string(2048 * kMiB) + "\n");
  put("memory/memory.usage_in_bytes", std::to_string(1024 * kMiB) + "\n");
  put("memory/memory.stat", fmt::format("cache {}\ntotal_inactive_file {}\n", 600 * kMiB, 256 * kMiB));
  put("memory.max", "1\n");  // a v2 file at the root: not the memory controller here
  const std::string self = "12:cpu,cpuacct:/docker/ab12\n4:blkio,memory:/docker/ab12\n0::/docker/ab12\n";
  const auto m = cgroup_memory(self, root_);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->limit_file, root_ / "memory/memory.limit_in_bytes");
  EXPECT_EQ(m->headroom(), (2048 - 1024 + 256) * kMiB);
}

TEST_F(FakeCgroupTree, NoLimitAnywhereIsNoBound) {
  // v1 writes "unlimited" as the largest page-aligned int64; v2 as "max".
  put("memory/memory.limit_in_bytes", "9223372036854771712\n");
  put("memory/memory.usage_in_bytes", "4096\n");
  EXPECT_FALSE(cgroup_memory("4:memory:/\n", root_).has_value());
  put("x/memory.max", "max\n");
  put("x/memory.current", "4096\n");
  EXPECT_FALSE(cgroup_memory("0::/x\n", root_).has_value());
  EXPECT_FALSE(cgroup_memory("", root_).has_value());                    // no /proc/self/cgroup
  EXPECT_FALSE(cgroup_memory("0::/x\n", root_ / "absent").has_value());  // no cgroup filesystem
}

TEST(ByteSizeTest, ParsesBytesAndBinaryUnits) {
  EXPECT_EQ(parse_byte_size("123", "X"), 123);
  EXPECT_EQ(parse_byte_size("100k", "X"), 100 * 1024);
  EXPECT_EQ(parse_byte_size("512M", "X"), 512 * kMiB);
  EXPECT_EQ(parse_byte_size("8G", "X"), int64_t{8} << 30);
  EXPECT_EQ(parse_byte_size("1.5GiB", "X"), int64_t{3} << 29);
  EXPECT_EQ(parse_byte_size("2TB", "X"), int64_t{2} << 40);
  for (const char* bad : {"", "abc", "8X", "-1", "0", "G", "1.2.3G"})
    testing::expect_user_error([&] { (void)parse_byte_size(bad, "STRATA_MEMORY_LIMIT"); },
                               {fmt::format("STRATA_MEMORY_LIMIT='{}': expected a size in bytes, or a number with K, "
                                            "M, G or T (powers of 1024), e.g. 8G",
                                            bad)});
}

// Sets an environment variable while alive, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(MemoryLimitTest, StrataMemoryLimitCapsWhatTheProcessMayAllocate) {
  const MemoryHeadroom machine = memory_headroom();
  ASSERT_GE(machine.bytes, 0) << "/proc/meminfo has no MemAvailable: the allocation check would be off";
  {
    // A cap 100 MiB above what the process holds now: a 256 MiB buffer is refused
    // before it is touched, and the error says which bound refused it.
    long long pages = 0, resident_pages = 0;
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fscanf(f, "%lld %lld", &pages, &resident_pages), 2);
    std::fclose(f);
    const int64_t resident = resident_pages * sysconf(_SC_PAGESIZE);
    const std::string cap = std::to_string((resident + 100 * kMiB) / 1024) + "K";
    ScopedEnv env("STRATA_MEMORY_LIMIT", cap);
    const MemoryHeadroom h = memory_headroom();
    EXPECT_TRUE(h.limited);
    EXPECT_LE(h.bytes, 100 * kMiB);
    EXPECT_GE(h.bytes, 50 * kMiB);  // what this test's process grows by meanwhile is small
    EXPECT_NE(h.bound.find("left under STRATA_MEMORY_LIMIT=" + cap + " ("), std::string::npos) << h.bound;
    EXPECT_NEAR(available_host_bytes(), h.bytes, 4 * kMiB);  // the resident set moves a little between reads
    release_host_pool();  // a kept block would be reused without a new allocation
    try {
      (void)Tensor::empty({64 * kMiB}, DType::F32);
      ADD_FAILURE() << "a 256 MiB tensor under a cap 100 MiB above the resident set was allocated";
    } catch (const OutOfMemoryError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("out of host memory: a buffer of 256.0 MiB does not fit in the "), std::string::npos) << what;
      EXPECT_NE(what.find("MiB left under STRATA_MEMORY_LIMIT=" + cap), std::string::npos) << what;
    }
    // Small buffers are not checked, and fit.
    EXPECT_EQ(Tensor::empty({1024}, DType::F32).numel(), 1024);
  }
  {
    ScopedEnv env("STRATA_MEMORY_LIMIT", "lots");
    testing::expect_user_error([] { (void)memory_headroom(); }, {"STRATA_MEMORY_LIMIT='lots': expected a size"});
  }
  // Unset again: the bound is the machine's (or this machine's cgroup's) again.
  EXPECT_EQ(memory_headroom().bound.find("STRATA_MEMORY_LIMIT"), std::string::npos);
}

}  // namespace
}  // namespace strata
