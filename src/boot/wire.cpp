#include "boot/wire.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace hgas::boot::wire {
namespace {

void put_u32(std::string &out, uint32_t v) {
    const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
    out.append(b, 4);
}

uint32_t get_u32(const char *p) {
    const auto *u = reinterpret_cast<const unsigned char *>(p);
    return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | uint32_t{u[3]};
}

void set_nodelay(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // small request/reply messages
}

struct addrinfo_list {
    addrinfo *head = nullptr;
    ~addrinfo_list() {
        if (head) freeaddrinfo(head);
    }
};

status resolve(const address &a, bool passive, addrinfo_list &out) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    int rc = getaddrinfo(a.host.empty() ? nullptr : a.host.c_str(), a.port.c_str(), &hints, &out.head);
    if (rc != 0)
        return fail(status::bootstrap, "cannot resolve bootstrap store host '%s' port '%s': %s", a.host.c_str(),
                    a.port.c_str(), gai_strerror(rc));
    return status::ok;
}

status fill_unix(const address &a, sockaddr_un &sa) {
    sa = {};
    sa.sun_family = AF_UNIX;
    if (a.path.size() >= sizeof sa.sun_path)
        return fail(status::bootstrap,
                    "unix socket path '%s' is too long (%zu bytes, at most %zu): set TMPDIR to a shorter directory "
                    "or use --boot tcp",
                    a.path.c_str(), a.path.size(), sizeof sa.sun_path - 1);
    std::memcpy(sa.sun_path, a.path.c_str(), a.path.size() + 1);
    return status::ok;
}

}  // namespace

const char *msg_name(msg m) {
    switch (m) {
    case msg::hello: return "HELLO";
    case msg::welcome: return "WELCOME";
    case msg::reject: return "REJECT";
    case msg::put: return "PUT";
    case msg::get: return "GET";
    case msg::value: return "VALUE";
    case msg::barrier: return "BARRIER";
    case msg::barrier_done: return "BARRIER_DONE";
    case msg::who: return "WHO";
    case msg::missing: return "MISSING";
    case msg::abort: return "ABORT";
    case msg::aborted: return "ABORTED";
    case msg::bye: return "BYE";
    case msg::gather: return "GATHER";
    case msg::values: return "VALUES";
    }
    return "?";
}

std::string encode(const message &m) {
    size_t body = 1;
    for (const auto &f : m.fields) body += 4 + f.size();
    std::string out;
    out.reserve(4 + body);
    put_u32(out, static_cast<uint32_t>(body));
    out.push_back(static_cast<char>(m.type));
    for (const auto &f : m.fields) {
        put_u32(out, static_cast<uint32_t>(f.size()));
        out += f;
    }
    return out;
}

void frame_reader::append(const char *data, size_t n) {
    // Drop consumed bytes once they dominate, so a long-lived connection does not grow forever.
    if (pos_ > 4096 && pos_ * 2 > buf_.size()) {
        buf_.erase(0, pos_);
        pos_ = 0;
    }
    buf_.append(data, n);
}

int frame_reader::next(message &out, std::string &err, size_t limit) {
    const size_t avail = buf_.size() - pos_;
    if (avail < 4) return 0;
    const char *p = buf_.data() + pos_;
    const uint32_t len = get_u32(p);
    if (len < 1 || len > limit) {
        err = "frame length " + std::to_string(len) + " outside [1, " + std::to_string(limit) + "]";
        return -1;
    }
    if (avail < 4 + size_t{len}) return 0;
    const char *q = p + 4, *end = q + len;
    const auto type = static_cast<uint8_t>(*q++);
    if (type < static_cast<uint8_t>(msg::hello) || type > static_cast<uint8_t>(msg::values)) {
        err = "unknown message type " + std::to_string(type);
        return -1;
    }
    message m;
    m.type = static_cast<msg>(type);
    while (q < end) {
        if (end - q < 4) {
            err = "truncated field header";
            return -1;
        }
        const uint32_t flen = get_u32(q);
        q += 4;
        if (flen > static_cast<size_t>(end - q)) {
            err = "field longer than its frame";
            return -1;
        }
        m.fields.emplace_back(q, flen);
        q += flen;
    }
    pos_ += 4 + size_t{len};
    out = std::move(m);
    return 1;
}

status parse_address(const std::string &text, address &out) {
    address a;
    if (text.rfind("unix:", 0) == 0) {
        a.is_unix = true;
        a.path = text.substr(5);
        if (a.path.empty() || a.path[0] != '/')
            return fail(status::bootstrap, "bootstrap address '%s': a unix socket needs an absolute path (unix:/dir/sock)",
                        text.c_str());
    } else if (text.rfind("tcp:", 0) == 0) {
        std::string rest = text.substr(4);
        if (!rest.empty() && rest[0] == '[') {  // [v6]:port
            size_t close = rest.find(']');
            if (close == std::string::npos)
                return fail(status::bootstrap, "bootstrap address '%s': missing ']'", text.c_str());
            a.host = rest.substr(1, close - 1);
            rest = rest.substr(close + 1);
            a.port = rest.empty() ? "0" : (rest[0] == ':' ? rest.substr(1) : "");
        } else {
            size_t colon = rest.rfind(':');
            a.host = colon == std::string::npos ? rest : rest.substr(0, colon);
            a.port = colon == std::string::npos ? "0" : rest.substr(colon + 1);
        }
        long long port = -1;
        if (a.host.empty() || !parse_int(a.port, port) || port < 0 || port > 65535)
            return fail(status::bootstrap, "bootstrap address '%s' is not tcp:host:port with a port in 0..65535",
                        text.c_str());
    } else {
        return fail(status::bootstrap,
                    "bootstrap address '%s' is neither unix:/path nor tcp:host:port (check HGAS_BOOT_ADDR)",
                    text.c_str());
    }
    out = std::move(a);
    return status::ok;
}

status listen_on(const address &a, int &fd_out, std::string &bound) {
    if (a.is_unix) {
        sockaddr_un sa;
        HGAS_TRY(fill_unix(a, sa));
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) return fail(status::bootstrap, "socket(AF_UNIX) failed: %s", std::strerror(errno));
        if (bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0) {
            int e = errno;
            close(fd);
            return fail(status::bootstrap,
                        "cannot create the bootstrap store socket %s: %s%s", a.path.c_str(), std::strerror(e),
                        e == EADDRINUSE ? " (another job uses it, or a stale file remains: remove it)" : "");
        }
        // The directory (0700, made by hgasrun) is the real fence; the mode is a second one for
        // sockets placed elsewhere. The secret is checked regardless.
        chmod(a.path.c_str(), 0600);
        if (listen(fd, SOMAXCONN) != 0) {
            int e = errno;
            close(fd);
            unlink(a.path.c_str());
            return fail(status::bootstrap, "listen on %s failed: %s", a.path.c_str(), std::strerror(e));
        }
        fd_out = fd;
        bound = "unix:" + a.path;
        return status::ok;
    }
    addrinfo_list ai;
    HGAS_TRY(resolve(a, true, ai));
    int last = 0;
    for (addrinfo *p = ai.head; p; p = p->ai_next) {
        int fd = socket(p->ai_family, p->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, p->ai_protocol);
        if (fd < 0) {
            last = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // restart on a fixed port at once
        if (bind(fd, p->ai_addr, p->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
            last = errno;
            close(fd);
            continue;
        }
        sockaddr_storage ss{};
        socklen_t len = sizeof ss;
        getsockname(fd, reinterpret_cast<sockaddr *>(&ss), &len);
        int port = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6 *>(&ss)->sin6_port)
                                            : ntohs(reinterpret_cast<sockaddr_in *>(&ss)->sin_port);
        const bool v6_literal = a.host.find(':') != std::string::npos;
        bound = "tcp:" + (v6_literal ? "[" + a.host + "]" : a.host) + ":" + std::to_string(port);
        fd_out = fd;
        return status::ok;
    }
    return fail(status::bootstrap, "cannot listen on tcp:%s:%s for the bootstrap store: %s", a.host.c_str(),
                a.port.c_str(), std::strerror(last));
}

status connect_once(const address &a, const deadline &dl, int &fd_out, int &err) {
    err = 0;
    auto attempt = [&](int family, const sockaddr *sa, socklen_t len) -> int {
        int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            err = errno;
            return -1;
        }
        if (connect(fd, sa, len) == 0) return fd;
        if (errno != EINPROGRESS && errno != EINTR) {
            err = errno;
            close(fd);
            return -1;
        }
        int rev = poll_one(fd, POLLOUT, dl.remaining());
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (rev == 0) soerr = ETIMEDOUT;
        else getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
        if (soerr != 0) {
            err = soerr;
            close(fd);
            return -1;
        }
        return fd;
    };
    if (a.is_unix) {
        sockaddr_un sa;
        HGAS_TRY(fill_unix(a, sa));
        int fd = attempt(AF_UNIX, reinterpret_cast<sockaddr *>(&sa), sizeof sa);
        if (fd < 0) return fail(status::bootstrap, "connect to unix:%s: %s", a.path.c_str(), std::strerror(err));
        fd_out = fd;
        return status::ok;
    }
    addrinfo_list ai;
    HGAS_TRY(resolve(a, false, ai));
    for (addrinfo *p = ai.head; p; p = p->ai_next) {
        int fd = attempt(p->ai_family, p->ai_addr, p->ai_addrlen);
        if (fd >= 0) {
            set_nodelay(fd);
            fd_out = fd;
            return status::ok;
        }
    }
    return fail(status::bootstrap, "connect to tcp:%s:%s: %s", a.host.c_str(), a.port.c_str(), std::strerror(err));
}

status write_all(int fd, const std::string &bytes, const deadline &dl) {
    size_t done = 0;
    while (done < bytes.size()) {
        ssize_t n = send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
        if (n > 0) {
            done += static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (dl.expired() || poll_one(fd, POLLOUT, dl.remaining()) == 0)
                return fail(status::timeout, "sending to the bootstrap store timed out (the store is not reading)");
            continue;
        }
        return fail(status::peer_failed, "bootstrap store connection lost (launcher died?): %s",
                    std::strerror(n < 0 ? errno : EPIPE));
    }
    return status::ok;
}

long read_some(int fd, frame_reader &into) {
    char buf[65536];
    long total = 0;
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n > 0) {
            into.append(buf, static_cast<size_t>(n));
            total += n;
            if (static_cast<size_t>(n) < sizeof buf) return total;
            continue;
        }
        if (n == 0) return total > 0 ? total : 0;  // EOF is seen again by the next call
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return total > 0 ? total : -1;
        return total > 0 ? total : -2;
    }
}

int poll_ms(double seconds) {
    if (seconds < 0) return -1;
    double ms = seconds * 1000.0 + 0.999;
    return ms > 1e6 ? 1000000 : static_cast<int>(ms);  // wake at least every ~17 min to re-check
}

int poll_one(int fd, short events, double seconds) {
    deadline dl(seconds < 0 ? 0 : seconds);
    for (;;) {
        pollfd p{fd, events, 0};
        int rc = poll(&p, 1, seconds < 0 ? -1 : poll_ms(dl.remaining()));
        if (rc > 0) return p.revents;
        if (rc == 0) {
            if (seconds < 0 || dl.expired()) return 0;
            continue;  // woke early (capped timeout): wait for the rest
        }
        if (errno != EINTR) return POLLERR;
    }
}

bool secret_equal(const std::string &a, const std::string &b) {
    const size_t n = a.size() > b.size() ? a.size() : b.size();
    unsigned diff = a.size() != b.size() ? 1u : 0u;
    for (size_t i = 0; i < n; ++i) {
        const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
        const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
        diff |= static_cast<unsigned>(x ^ y);
    }
    // volatile keeps the compiler from turning the loop into an early-exit comparison.
    volatile unsigned sink = diff;
    return sink == 0;
}

bool parse_int(const std::string &text, long long &out) {
    if (text.empty()) return false;
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno || *end) return false;
    out = v;
    return true;
}

std::string join_ranks(const std::vector<int> &ranks) {
    std::string s;
    for (int r : ranks) {
        if (!s.empty()) s += ',';
        s += std::to_string(r);
    }
    return s;
}

std::vector<int> split_ranks(const std::string &text) {
    std::vector<int> out;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find(',', start);
        if (end == std::string::npos) end = text.size();
        long long v = 0;
        if (parse_int(text.substr(start, end - start), v) && v >= 0 && v <= INT_MAX) out.push_back(static_cast<int>(v));
        start = end + 1;
    }
    return out;
}

std::string describe_ranks(const std::vector<int> &ranks) {
    if (ranks.empty()) return "no rank";
    std::string s = ranks.size() == 1 ? "rank " : "ranks ";
    for (size_t i = 0; i < ranks.size();) {
        size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
        if (i) s += ", ";
        s += std::to_string(ranks[i]);
        if (j > i) s += (j == i + 1 ? ", " : "-") + std::to_string(ranks[j]);
        i = j + 1;
    }
    return s;
}

}  // namespace hgas::boot::wire
