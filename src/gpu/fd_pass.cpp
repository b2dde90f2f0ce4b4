#include "gpu/fd_pass.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/clock.hpp"
#include "base/log.hpp"

namespace hgas::gpu::fdpass {

namespace {

// The reply: 0 and the fd as SCM_RIGHTS, or an errno-like code and no fd.
struct reply {
    int32_t code;
};

// Abstract socket address: sun_path starts with NUL, the length counts only the bytes used.
socklen_t make_addr(const std::string &name, sockaddr_un &a) {
    std::memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    const size_t n = std::min(name.size(), sizeof a.sun_path - 1);
    std::memcpy(a.sun_path + 1, name.data(), n);
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
}

// Waits until fd is ready for `events`, up to `ms` milliseconds; false on timeout or error.
bool wait_for(int fd, short events, int ms) {
    pollfd p{fd, events, 0};
    for (;;) {
        const int r = poll(&p, 1, ms);
        if (r < 0 && errno == EINTR) continue;
        return r > 0 && (p.revents & (events | POLLHUP)) != 0;
    }
}

bool read_all(int fd, void *buf, size_t n, int ms) {
    char *b = static_cast<char *>(buf);
    while (n) {
        if (!wait_for(fd, POLLIN, ms)) return false;
        const ssize_t r = recv(fd, b, n, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        b += r;
        n -= static_cast<size_t>(r);
    }
    return true;
}

}  // namespace

std::string socket_name(const std::string &job_id, int rank, const char *purpose, const std::string &tag) {
    return "hgas-" + job_id + "-" + std::to_string(rank) + "-" + purpose + (tag.empty() ? "" : "-" + tag);
}

result<std::unique_ptr<server>> server::start(const std::string &name, provider p) {
    std::unique_ptr<server> s(new server());
    s->name_ = name;
    s->provide_ = std::move(p);
    s->listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->listen_fd_ < 0) return fail(status::transport, "fd passing: socket: %s", std::strerror(errno));
    sockaddr_un a;
    const socklen_t len = make_addr(name, a);
    if (bind(s->listen_fd_, reinterpret_cast<sockaddr *>(&a), len) != 0)
        return fail(status::transport, "fd passing: cannot bind the abstract socket @%s: %s%s", name.c_str(),
                    std::strerror(errno),
                    errno == EADDRINUSE ? " (another process of a job with the same HGAS_JOB_ID and rank?)" : "");
    if (listen(s->listen_fd_, 64) != 0)
        return fail(status::transport, "fd passing: listen on @%s: %s", name.c_str(), std::strerror(errno));
    if (pipe2(s->stop_pipe_, O_CLOEXEC) != 0)
        return fail(status::transport, "fd passing: pipe: %s", std::strerror(errno));
    s->thread_ = std::thread([srv = s.get()] { srv->run(); });
    return s;
}

server::~server() {
    if (thread_.joinable()) {
        const char c = 1;
        while (write(stop_pipe_[1], &c, 1) < 0 && errno == EINTR) {
        }
        thread_.join();
    }
    for (int fd : {listen_fd_, stop_pipe_[0], stop_pipe_[1]})
        if (fd >= 0) close(fd);
}

void server::run() {
    for (;;) {
        pollfd p[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
        const int r = poll(p, 2, -1);
        if (r < 0) {
            if (errno == EINTR) continue;
            HGASI_WARN("mem", "fd passing server @%s: poll: %s", name_.c_str(), std::strerror(errno));
            return;
        }
        if (p[1].revents) return;
        if (!(p[0].revents & POLLIN)) continue;
        const int conn = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (conn < 0) continue;
        serve(conn);
        close(conn);
    }
}

void server::serve(int conn) {
    // Only processes of this user: anyone on the node may connect to an abstract socket, and a
    // GPU memory fd gives full access to the memory.
    ucred cr{};
    socklen_t crlen = sizeof cr;
    if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) != 0 || cr.uid != getuid()) {
        HGASI_WARN("mem", "fd passing server @%s: refused a connection from uid %u (pid %d)", name_.c_str(),
                   static_cast<unsigned>(cr.uid), static_cast<int>(cr.pid));
        return;
    }
    uint32_t key = 0;
    if (!read_all(conn, &key, sizeof key, 5000)) return;  // a client that vanished: nothing to answer
    const int fd = provide_(key);
    reply rp{fd >= 0 ? 0 : ENOENT};
    iovec iov{&rp, sizeof rp};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
    if (fd >= 0) {
        m.msg_control = ctl;
        m.msg_controllen = sizeof ctl;
        cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    // Counted before the answer goes out: a client that has its answer (and a test that
    // waited for that client) must find the request counted.
    __atomic_add_fetch(&served_, 1, __ATOMIC_RELEASE);
    ssize_t w;
    do {
        w = sendmsg(conn, &m, MSG_NOSIGNAL);
    } while (w < 0 && errno == EINTR);
    if (w < 0) HGASI_DEBUG("mem", "fd passing server @%s: sendmsg: %s", name_.c_str(), std::strerror(errno));
}

result<int> fetch(const std::string &name, uint32_t key, double timeout_s) {
    const deadline dl(timeout_s);
    sockaddr_un a;
    const socklen_t len = make_addr(name, a);
    int s = -1;
    for (int attempt = 0;; ++attempt) {
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0) return fail(status::transport, "fd passing: socket: %s", std::strerror(errno));
        if (connect(s, reinterpret_cast<sockaddr *>(&a), len) == 0) break;
        const int e = errno;
        close(s);
        // ECONNREFUSED: nobody listens on the name (yet); EAGAIN: its backlog is full.
        if ((e != ECONNREFUSED && e != EAGAIN && e != EINTR) || dl.expired())
            return fail(status::transport, "fd passing: cannot connect to @%s: %s (after %d attempts)", name.c_str(),
                        std::strerror(e), attempt + 1);
        usleep(attempt < 10 ? 1000 : 10000);
    }
    const int ms = static_cast<int>(std::max(1.0, dl.remaining() * 1000));
    ssize_t w;
    do {
        w = send(s, &key, sizeof key, MSG_NOSIGNAL);
    } while (w < 0 && errno == EINTR);
    if (w != static_cast<ssize_t>(sizeof key)) {
        const int e = errno;
        close(s);
        return fail(status::transport, "fd passing: cannot send the request to @%s: %s", name.c_str(), std::strerror(e));
    }
    if (!wait_for(s, POLLIN, ms)) {
        close(s);
        return fail(status::timeout, "fd passing: @%s did not answer for key %u within %.0f s", name.c_str(), key,
                    timeout_s);
    }
    reply rp{-1};
    iovec iov{&rp, sizeof rp};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
    m.msg_control = ctl;
    m.msg_controllen = sizeof ctl;
    ssize_t r;
    do {
        r = recvmsg(s, &m, MSG_CMSG_CLOEXEC | MSG_WAITALL);
    } while (r < 0 && errno == EINTR);
    const int e = errno;
    close(s);
    int fd = -1;
    for (cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
            std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
    if (r != static_cast<ssize_t>(sizeof rp)) {
        if (fd >= 0) close(fd);
        return fail(status::transport, "fd passing: short answer from @%s (%s)", name.c_str(),
                    r < 0 ? std::strerror(e) : "connection closed: refused, or the server stopped");
    }
    if (rp.code != 0 || fd < 0 || (m.msg_flags & MSG_CTRUNC)) {
        if (fd >= 0) close(fd);
        return fail(status::transport, "fd passing: @%s has no fd for key %u%s", name.c_str(), key,
                    (m.msg_flags & MSG_CTRUNC) ? " (control data truncated: out of file descriptors?)" : "");
    }
    return fd;
}

}  // namespace hgas::gpu::fdpass
