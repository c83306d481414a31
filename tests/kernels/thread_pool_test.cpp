// SPDX-License-Identifier: MIT
// The thread pool: every index covered exactly once, repeated use, more threads than work, exceptions.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cpu/cpu_kernels.h"

namespace {

using ember::cpu::ThreadPool;

TEST(ThreadPool, CoversEveryIndexExactlyOnce) {
    for (int threads : {1, 2, 3, 8}) {
        ThreadPool pool(threads);
        EXPECT_EQ(pool.size(), threads);
        for (int64_t n : {0, 1, 2, 3, 7, 100, 1001}) {
            std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
            std::atomic<int> calls{0};
            pool.parallel_for(n, [&](int64_t begin, int64_t end) {
                EXPECT_LT(begin, end);
                calls.fetch_add(1);
                for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
            });
            for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "n " << n;
            EXPECT_LE(calls.load(), std::min<int64_t>(threads, n));
        }
    }
}

TEST(ThreadPool, ChunksAreContiguousAndRunOnDistinctThreads) {
    ThreadPool pool(2);
    std::mutex m;
    std::set<std::thread::id> ids;
    std::vector<std::pair<int64_t, int64_t>> ranges;
    pool.parallel_for(10, [&](int64_t b, int64_t e) {
        std::lock_guard lock(m);
        ids.insert(std::this_thread::get_id());
        ranges.emplace_back(b, e);
    });
    std::sort(ranges.begin(), ranges.end());
    ASSERT_EQ(ranges.size(), 2u);
    EXPECT_EQ(ranges[0], std::make_pair(int64_t{0}, int64_t{5}));
    EXPECT_EQ(ranges[1], std::make_pair(int64_t{5}, int64_t{10}));
    EXPECT_EQ(ids.size(), 2u);
    EXPECT_TRUE(ids.count(std::this_thread::get_id()));  // the caller participates
}

TEST(ThreadPool, RepeatedUseGivesCorrectSums) {
    ThreadPool pool(3);
    std::vector<int64_t> data(999);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<int64_t>(i);
    for (int round = 0; round < 3000; ++round) {
        std::atomic<int64_t> total{0};
        const int64_t n = 1 + round % 999;
        pool.parallel_for(n, [&](int64_t b, int64_t e) {
            int64_t s = 0;
            for (int64_t i = b; i < e; ++i) s += data[static_cast<size_t>(i)];
            total.fetch_add(s);
        });
        ASSERT_EQ(total.load(), n * (n - 1) / 2) << "round " << round;
    }
}

TEST(ThreadPool, FirstExceptionIsRethrownAfterAllChunksFinish) {
    ThreadPool pool(2);
    for (int round = 0; round < 50; ++round) {
        std::atomic<int> finished{0};
        EXPECT_THROW(pool.parallel_for(2, [&](int64_t b, int64_t) {
            if (b == round % 2) throw std::runtime_error("chunk failed");
            finished.fetch_add(1);
        }),
                     std::runtime_error);
        EXPECT_EQ(finished.load(), 1);
    }
    std::atomic<int> after{0};
    pool.parallel_for(4, [&](int64_t b, int64_t e) { after.fetch_add(static_cast<int>(e - b)); });
    EXPECT_EQ(after.load(), 4);  // still usable
}

TEST(ThreadPool, CallersFromSeveralThreadsAreSerialized) {
    ThreadPool pool(2);
    std::atomic<int64_t> total{0};
    std::vector<std::thread> callers;
    for (int c = 0; c < 3; ++c)
        callers.emplace_back([&] {
            for (int round = 0; round < 200; ++round)
                pool.parallel_for(10, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
        });
    for (std::thread& t : callers) t.join();
    EXPECT_EQ(total.load(), 3 * 200 * 10);
}

TEST(ThreadPool, RejectsZeroThreads) { EXPECT_THROW(ThreadPool pool(0), ember::Error); }

}  // namespace
