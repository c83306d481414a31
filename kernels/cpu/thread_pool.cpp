// SPDX-License-Identifier: MIT
// The pool publishes one job at a time (a task pointer, its context and the range); worker i runs chunk i and
// the caller runs chunk 0. Workers spin briefly before sleeping, so that back-to-back matrix products (one per
// layer and token) do not pay a wake-up each.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "cpu/cpu_kernels.h"
#include "ember/error.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define EMBER_CPU_RELAX() _mm_pause()
#else
#define EMBER_CPU_RELAX() std::this_thread::yield()
#endif

namespace ember::cpu {

namespace {

// How long a worker waiting for the next job, or the caller waiting for the workers, spins before it sleeps.
// Decode runs hundreds of small products a token with short serial steps between them; a sleeping worker pays a
// futex wake-up (tens of microseconds) on each.
constexpr auto kSpinTime = std::chrono::microseconds(200);

// Spins until done() or kSpinTime has passed; returns done().
template <typename Done>
bool spin_until(Done&& done) {
    const auto until = std::chrono::steady_clock::now() + kSpinTime;
    for (;;) {
        for (int i = 0; i < 32; ++i) {
            if (done()) return true;
            EMBER_CPU_RELAX();
        }
        if (std::chrono::steady_clock::now() >= until) return done();
    }
}

}  // namespace

struct ThreadPool::State {
    int n_threads = 1;
    std::vector<std::thread> workers;

    std::mutex caller_mutex;  // one parallel_for at a time
    std::mutex mutex;         // guards the job, the exception and the sleeping
    std::condition_variable wake;
    std::condition_variable done;
    std::atomic<uint64_t> generation{0};
    std::atomic<int> pending{0};  // workers still running a chunk of the current job
    bool stop = false;

    Task task = nullptr;
    void* ctx = nullptr;
    int64_t n = 0;
    int chunks = 0;
    std::exception_ptr error;

    void run_chunk(Task t, void* c, int64_t total, int n_chunks, int index) {
        const int64_t begin = total * index / n_chunks;
        const int64_t end = total * (index + 1) / n_chunks;
        if (begin == end) return;
        try {
            t(c, begin, end);
        } catch (...) {
            std::lock_guard lock(mutex);
            if (!error) error = std::current_exception();
        }
    }

    void worker_loop(int index) {
        uint64_t seen = 0;
        for (;;) {
            spin_until([&] { return generation.load(std::memory_order_acquire) != seen; });
            Task t;
            void* c;
            int64_t total;
            int n_chunks;
            {
                std::unique_lock lock(mutex);
                wake.wait(lock, [&] { return stop || generation.load(std::memory_order_relaxed) != seen; });
                if (stop) return;
                seen = generation.load(std::memory_order_relaxed);
                t = task;
                c = ctx;
                total = n;
                n_chunks = chunks;
            }
            if (index >= n_chunks) continue;
            run_chunk(t, c, total, n_chunks, index);
            if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                { std::lock_guard lock(mutex); }
                done.notify_one();
            }
        }
    }
};

ThreadPool::ThreadPool(int n_threads) : state_(std::make_unique<State>()) {
    if (n_threads < 1) throw Error("thread pool needs at least 1 thread, got " + std::to_string(n_threads));
    state_->n_threads = n_threads;
    state_->workers.reserve(static_cast<size_t>(n_threads - 1));
    for (int i = 1; i < n_threads; ++i) state_->workers.emplace_back([this, i] { state_->worker_loop(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(state_->mutex);
        state_->stop = true;
    }
    state_->wake.notify_all();
    for (std::thread& t : state_->workers) t.join();
}

int ThreadPool::size() const { return state_->n_threads; }

void ThreadPool::run(int64_t n, Task task, void* ctx) {
    if (n <= 0) return;
    State& s = *state_;
    const int chunks = static_cast<int>(std::min<int64_t>(s.n_threads, n));
    if (chunks == 1) {
        task(ctx, 0, n);
        return;
    }
    std::lock_guard caller(s.caller_mutex);
    {
        std::lock_guard lock(s.mutex);
        s.task = task;
        s.ctx = ctx;
        s.n = n;
        s.chunks = chunks;
        s.error = nullptr;
        s.pending.store(chunks - 1, std::memory_order_relaxed);
        s.generation.fetch_add(1, std::memory_order_release);
    }
    s.wake.notify_all();
    s.run_chunk(task, ctx, n, chunks, 0);
    spin_until([&] { return s.pending.load(std::memory_order_acquire) == 0; });
    std::exception_ptr error;
    {
        std::unique_lock lock(s.mutex);
        s.done.wait(lock, [&] { return s.pending.load(std::memory_order_acquire) == 0; });
        error = s.error;
        s.error = nullptr;
    }
    if (error) std::rethrow_exception(error);
}

}  // namespace ember::cpu
