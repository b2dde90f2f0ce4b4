#include "core/gpu_funnel.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

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
    // Runs f on the funnel thread and returns when it is done.
    void run(const std::function<void()> &f) {
        job j{&f};
        std::unique_lock<std::mutex> lk(mu_);
        q_.push_back(&j);
        cv_.notify_all();
        done_.wait(lk, [&] { return j.done; });
    }
    uint64_t issued() const { return issued_.load(std::memory_order_relaxed); }

private:
    struct job {
        const std::function<void()> *f;
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
            lk.unlock();
            (*j->f)();
            lk.lock();
            j->done = true;
            issued_.fetch_add(1, std::memory_order_relaxed);
            done_.notify_all();
        }
    }
    std::mutex mu_;
    std::condition_variable cv_, done_;
    std::deque<job *> q_;
    std::thread thread_;
    int users_ = 0;
    bool stop_ = false;
    std::atomic<uint64_t> issued_{0};
};

// A rank's device with its issuing funneled. The device object is not thread safe: the funnel
// thread and the rank's own threads (test, advance) take its mutex.
class funneled_device final : public gpu::device {
public:
    explicit funneled_device(std::unique_ptr<gpu::device> d) : d_(std::move(d)) { funnel::get().acquire(); }
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
        return issue<gpu::ticket>([&] { return d_->copy_async(dst, src, n, stream, track); });
    }
    result<gpu::ticket> gather(char *buf, char *packed, const blocks &b, bool unpack, int stream) override {
        return issue<gpu::ticket>([&] { return d_->gather(buf, packed, b, unpack, stream); });
    }
    result<gpu::ticket> mark(int stream) override {
        return issue<gpu::ticket>([&] { return d_->mark(stream); });
    }
    result<bool> test(gpu::ticket t) override {
        std::lock_guard<std::mutex> g(mu_);
        return d_->test(t);
    }
    void advance() override {
        std::lock_guard<std::mutex> g(mu_);
        d_->advance();
    }
    result<uint64_t> amo(void *p, amo_op op, unsigned width, uint64_t operand, uint64_t compare) override {
        return issue<uint64_t>([&] { return d_->amo(p, op, width, operand, compare); });
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
    result<T> issue(Op op) {
        result<T> r = status::internal;
        std::string why;
        funnel::get().run([&] {
            std::lock_guard<std::mutex> g(mu_);
            r = op();
            if (!r.ok()) why = last_error();
        });
        if (!r.ok()) return fail(r.error(), "%s", why.c_str());
        return r;
    }
    std::unique_ptr<gpu::device> d_;
    std::mutex mu_;
};

}  // namespace

std::unique_ptr<gpu::device> funnel_device(std::unique_ptr<gpu::device> d) {
    return std::make_unique<funneled_device>(std::move(d));
}

uint64_t funneled_operations() { return funnel::get().issued(); }

}  // namespace hgas::core
