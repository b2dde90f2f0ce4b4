#include "core/gpu_funnel.hpp"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "base/log.hpp"
#include "base/trace.hpp"

namespace hgas::core {
namespace {

// The process's funnel: one thread that runs the jobs of every funneled device, first come
// first served. A job's caller waits for it (the cost seed-style manual funneling pays: a
// hand-off per operation instead of concurrent issue from every thread).
class funnel {
public:
    static funnel &get() {
        static funnel f;  // lives to exit; its thread is joined when the last device goes
        return f;
    }
    void acquire() {
        std::lock_guard<std::mutex> g(mu_);
        if (users_++ == 0) {
            stop_ = false;
            thread_ = std::thread([this] { loop(); });
        }
    }
    void release() {
        std::thread t;
        {
            std::lock_guard<std::mutex> g(mu_);
            if (--users_ == 0) {
                stop_ = true;
                cv_.notify_all();
                t = std::move(thread_);
            }
        }
        if (t.joinable()) t.join();
    }
    // Runs f on the funnel thread and returns when it is done. A hand-off that is not done
    // within timeout_s (HGAS_TIMEOUT) ends the process: the funnel thread is stuck inside a
    // job (a GPU call that does not return), which no error return can undo, because the job
    // refers to its caller's stack. The funnel thread is sent SIGABRT, so that the crash
    // report shows where it is stuck, rather than the job hanging without a word.
    void run(const std::function<void()> &f, const char *what, int rank, double timeout_s) {
        job j{&f, what};
        std::unique_lock<std::mutex> lk(mu_);
        q_.push_back(&j);
        cv_.notify_all();
        const auto limit = std::chrono::duration<double>(timeout_s);
        if (done_.wait_for(lk, limit, [&] { return j.done; })) return;
        const char *stuck = current_ ? current_ : "nothing (its queue does not move)";
        HGASI_ERROR("gpu", "rank %d: its GPU operation (%s) waited %g s for the process's GPU funnel thread "
                    "(HGAS_GPU_SHARING=funneled), which is still inside %s; ending the process with that thread's "
                    "backtrace (HGAS_GPU_SHARING=threads issues from each rank's thread instead)",
                    rank, what, timeout_s, stuck);
        pthread_kill(thread_.native_handle(), SIGABRT);
        lk.unlock();
        // The signal ends the process (hgas's crash report prints the funnel thread's stack);
        // should a handler of the program's return from it instead, end it from here.
        std::this_thread::sleep_for(std::chrono::seconds(5));
        std::abort();
    }
    uint64_t issued() const { return issued_.load(std::memory_order_relaxed); }

private:
    struct job {
        const std::function<void()> *f;
        const char *what;
        bool done = false;
    };
    void loop() {
        trace::thread_name("gpu funnel");
        std::unique_lock<std::mutex> lk(mu_);
        for (;;) {
            cv_.wait(lk, [&] { return stop_ || !q_.empty(); });
            if (q_.empty()) return;  // stopping, nothing left
            job *j = q_.front();
            q_.pop_front();
            current_ = j->what;
            lk.unlock();
            (*j->f)();
            lk.lock();
            current_ = nullptr;
            j->done = true;
            issued_.fetch_add(1, std::memory_order_relaxed);
            done_.notify_all();
        }
    }
    std::mutex mu_;
    std::condition_variable cv_, done_;
    std::deque<job *> q_;
    const char *current_ = nullptr;  // the job the funnel thread is in (under mu_)
    std::thread thread_;
    int users_ = 0;
    bool stop_ = false;
    std::atomic<uint64_t> issued_{0};
};

// A rank's device with its issuing funneled. The device object is not thread safe: the funnel
// thread and the rank's own threads (test, advance) take its mutex.
class funneled_device final : public gpu::device {
public:
    funneled_device(std::unique_ptr<gpu::device> d, int rank, double timeout_s)
        : d_(std::move(d)), rank_(rank), timeout_s_(timeout_s) {
        funnel::get().acquire();
    }
    ~funneled_device() override {
        funnel::get().release();
        d_.reset();
    }
    gpu::kind which() const override { return d_->which(); }
    std::string describe() const override { return d_->describe() + ", funneled"; }
    int ordinal() const override { return d_->ordinal(); }
    int streams() const override { return d_->streams(); }
    result<void *> alloc_segment(uint16_t seg, size_t n, std::string &blob) override {
        return d_->alloc_segment(seg, n, blob);
    }
    result<void *> map_peer(int peer, const std::string &blob, size_t n) override { return d_->map_peer(peer, blob, n); }
    void segments_attached() override { d_->segments_attached(); }
    bool owns(const void *p, size_t n) override { return d_->owns(p, n); }
    result<gpu::ticket> copy_async(void *dst, const void *src, size_t n, int stream, bool track) override {
        return issue<gpu::ticket>("a copy", [&] { return d_->copy_async(dst, src, n, stream, track); });
    }
    result<gpu::ticket> copy_waited(void *dst, const void *src, size_t n, int stream) override {
        return issue<gpu::ticket>("a copy", [&] { return d_->copy_waited(dst, src, n, stream); });
    }
    result<gpu::ticket> gather(char *buf, char *packed, const blocks &b, bool unpack, int stream) override {
        return issue<gpu::ticket>("a pack or unpack", [&] { return d_->gather(buf, packed, b, unpack, stream); });
    }
    result<gpu::ticket> mark(int stream) override {
        return issue<gpu::ticket>("a stream mark", [&] { return d_->mark(stream); });
    }
    result<bool> test(gpu::ticket t) override {
        std::lock_guard<std::mutex> g(mu_);
        return d_->test(t);
    }
    std::string ticket_state(gpu::ticket t) override {  // for timeout messages: never waits for the funnel
        std::unique_lock<std::mutex> g(mu_, std::try_to_lock);
        if (!g.owns_lock()) return "(" + d_->describe() + ": its GPU funnel thread is inside one of its operations)";
        return d_->ticket_state(t);
    }
    void advance() override {
        std::lock_guard<std::mutex> g(mu_);
        d_->advance();
    }
    result<uint64_t> amo(void *p, amo_op op, unsigned width, uint64_t operand, uint64_t compare) override {
        return issue<uint64_t>("a device atomic", [&] { return d_->amo(p, op, width, operand, compare); });
    }
    result<void *> alloc_pinned(size_t n) override { return d_->alloc_pinned(n); }
    void free_pinned(void *p) override { d_->free_pinned(p); }
    status register_host(void *p, size_t n) override { return d_->register_host(p, n); }
    void unregister_host(void *p) override { d_->unregister_host(p); }
    result<bool> register_user(void *p, size_t n) override { return d_->register_user(p, n); }
    void unregister_user(void *p) override { d_->unregister_user(p); }

private:
    // Runs op on the funnel thread; a failure's message (thread-local there) comes back too.
    template <class T, class Op>
    result<T> issue(const char *what, Op op) {
        result<T> r = status::internal;
        std::string why;
        funnel::get().run([&] {
            std::lock_guard<std::mutex> g(mu_);
            r = op();
            if (!r.ok()) why = last_error();
        }, what, rank_, timeout_s_);
        if (!r.ok()) return fail(r.error(), "%s", why.c_str());
        return r;
    }
    std::unique_ptr<gpu::device> d_;
    std::mutex mu_;
    const int rank_;
    const double timeout_s_;
};

}  // namespace

std::unique_ptr<gpu::device> funnel_device(std::unique_ptr<gpu::device> d, int rank, double timeout_s) {
    return std::make_unique<funneled_device>(std::move(d), rank, timeout_s);
}

uint64_t funneled_operations() { return funnel::get().issued(); }

}  // namespace hgas::core
