// Passing file descriptors between processes of one node: plain POSIX, no CUDA, so that CI
// covers it on machines without a GPU (tests/unit/test_gpu.cpp).
//
// Used by the cuda device to hand the POSIX file descriptors of its VMM allocations
// (cuMemExportToShareableHandle) to same-node ranks, which import them
// (cuMemImportFromShareableHandle). An fd is a per-process number, so it must travel as
// SCM_RIGHTS ancillary data over a Unix domain socket; pidfd_getfd(2) would avoid the socket
// but needs ptrace permission over the exporter, which sibling processes lack under the
// usual Yama setting (ptrace_scope 1) and in many containers.
//
// The exporter runs a `server`: a thread that accepts connections on an abstract-namespace
// socket (no file in the file system, nothing left behind however the job ends), checks that
// the connecting process belongs to the same user (SO_PEERCRED), reads a 32-bit key and answers
// with the fd the provider returns for it. Importers call fetch(). The name is unique per job
// and rank the same way the shared-memory segment names are (mem::shm_name): job id and rank.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/status.hpp"

namespace hgas::gpu::fdpass {

// The socket name of `rank` in job `job_id` for `purpose` (without the leading NUL of the
// abstract namespace): "hgas-<job>-<rank>-<purpose>", then "-<tag>" when a tag is given. The
// abstract namespace has no file modes: a name another local user can derive from the job id
// is one they can bind first, so the server draws a random tag (base/shm.hpp's random_tag)
// and its peers learn it from the segment blob exchanged through the bootstrap store.
std::string socket_name(const std::string &job_id, int rank, const char *purpose, const std::string &tag = "");

class server {
public:
    // The fd for a key (owned by the provider: it is duplicated into the message), or -1 for
    // an unknown key. Called on the server's thread.
    using provider = std::function<int(uint32_t key)>;
    static result<std::unique_ptr<server>> start(const std::string &name, provider p);
    ~server();  // stops the thread, closes the socket
    server(const server &) = delete;
    server &operator=(const server &) = delete;
    const std::string &name() const { return name_; }
    // Requests answered so far (with an fd or with "unknown key").
    uint64_t served() const { return __atomic_load_n(&served_, __ATOMIC_ACQUIRE); }

private:
    server() = default;
    void run();
    void serve(int conn);
    std::string name_;
    provider provide_;
    int listen_fd_ = -1;
    int stop_pipe_[2] = {-1, -1};
    uint64_t served_ = 0;
    std::thread thread_;
};

// Connects to the server `name` (retrying while it is not listening yet, up to timeout_s),
// asks for `key` and returns the received fd, which the caller owns (close-on-exec).
result<int> fetch(const std::string &name, uint32_t key, double timeout_s);

}  // namespace hgas::gpu::fdpass
