// time_interleaved (sparse_compiler/tune/interleaved_timing.h) on a toy machine
// whose cache belongs to whichever candidate ran last: each candidate must be
// timed from its own state, so a plan that evicts the others' data (streaming
// stores) cannot win by making them look slow.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <vector>

#include "sparse_compiler/tune/interleaved_timing.h"

namespace strata::sc {
namespace {

void spin_ms(double ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(ms);
  while (std::chrono::steady_clock::now() < until) {
  }
}

struct ToyMachine {
  int owner = -1;  // the candidate whose data is in the cache; -1: nobody's
  std::vector<int> calls;
  // A call costs hot_ms after the candidate's own call, cold_ms after another's;
  // an evicting candidate (streaming stores) leaves nobody's data behind.
  std::function<void()> candidate(int id, double hot_ms, double cold_ms, bool evicts) {
    calls.push_back(0);
    return [this, id, hot_ms, cold_ms, evicts] {
      ++calls[static_cast<size_t>(id)];
      spin_ms(owner == id ? hot_ms : cold_ms);
      owner = evicts ? -1 : id;
    };
  }
};

TEST(InterleavedTiming, EachCandidateIsTimedFromItsOwnCacheState) {
  ToyMachine m;
  // A plain-store plan: 0.2 ms from its own state, 3 ms after the streaming one
  // evicted its output. The streaming plan: 0.6 ms whatever ran before.
  const auto plain = m.candidate(0, 0.2, 3.0, false);
  const auto streaming = m.candidate(1, 0.6, 0.6, true);
  const std::vector<double> ms = time_interleaved({plain, streaming}, {}, {5, 0});
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_LT(ms[0], 1.0) << "the plain plan was timed after the streaming plan's eviction";
  EXPECT_GT(ms[1], 0.5);
  EXPECT_LT(ms[0], ms[1]) << "the streaming plan must not win by evicting the other's data";
  // One untimed and one timed call per candidate and round.
  EXPECT_EQ(m.calls, (std::vector<int>{10, 10}));
}

TEST(InterleavedTiming, SamplesAreBatchesOfAtLeastTheMinimumLength) {
  ToyMachine m;
  const auto fast = m.candidate(0, 0.05, 0.05, false);
  const auto slow = m.candidate(1, 0.4, 0.4, false);
  // Estimates 0.05 and 0.4 ms, samples of at least 0.2 ms: batches of 4 and 1.
  const std::vector<double> ms = time_interleaved({fast, slow}, {0.05, 0.4}, {3, 0.2});
  EXPECT_EQ(m.calls, (std::vector<int>{3 * (4 + 4), 3 * (1 + 1)}));
  // Per call, not per batch.
  EXPECT_LT(ms[0], 0.15);
  EXPECT_GT(ms[1], 0.35);
}

TEST(InterleavedTiming, TheUntimedPartIsAsLongAsTheSample) {
  // A single-threaded baseline leaves the machine slow for a while, whoever calls
  // next (the other thread asleep): 1.5 ms during which a kernel's call costs 1 ms
  // instead of 0.2 ms. A single untimed call would leave the first calls of the
  // timed batch in that spell.
  using Clock = std::chrono::steady_clock;
  Clock::time_point tired_until = Clock::now();
  std::vector<int> calls(2, 0);
  auto kernel = [&] {
    ++calls[0];
    spin_ms(Clock::now() < tired_until ? 1.0 : 0.2);
  };
  auto baseline = [&] {
    ++calls[1];
    spin_ms(0.1);
    tired_until = Clock::now() + std::chrono::microseconds(1500);
  };
  // Samples of at least 0.6 ms: batches of 3 kernel calls, 6 baseline calls.
  const std::vector<double> ms = time_interleaved({kernel, baseline}, {0.2, 0.1}, {5, 0.6});
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_LT(ms[0], 0.35) << "the kernel's timed calls fell in the spell the baseline left";
  EXPECT_EQ(calls, (std::vector<int>{5 * 2 * 3, 5 * 2 * 6}));
}

TEST(InterleavedTiming, ABudgetStopsTheRoundsAfterTheMinimum) {
  ToyMachine m;
  const auto slow = m.candidate(0, 2.0, 2.0, false);
  // 100 rounds asked, 3 at least, 1 ms of budget: the budget is spent within the
  // first round, so exactly the minimum runs.
  const std::vector<double> ms = time_interleaved({slow}, {}, {100, 0, 1.0, 3});
  EXPECT_EQ(m.calls, (std::vector<int>{6}));
  EXPECT_GT(ms[0], 1.5);
}

}  // namespace
}  // namespace strata::sc
