// Ranks on other hosts: which hosts are this machine, this machine's address toward a host,
// and the command line rsh (ssh) runs there.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "options.hpp"

namespace hgasrun {
namespace {

std::string numeric(const sockaddr *sa) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in *>(sa)->sin_addr, buf, sizeof buf);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 *>(sa)->sin6_addr, buf, sizeof buf);
    return buf;
}

std::vector<std::string> addresses_of(const std::string &name) {
    std::vector<std::string> out;
    addrinfo hints{}, *res = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(name.c_str(), nullptr, &hints, &res) != 0) return out;
    for (addrinfo *p = res; p; p = p->ai_next) out.push_back(numeric(p->ai_addr));
    freeaddrinfo(res);
    return out;
}

}  // namespace

bool is_local_host(const std::string &name) {
    char me[HOST_NAME_MAX + 1] = {};
    gethostname(me, sizeof me - 1);
    if (name == "localhost" || name == me) return true;
    // One of this machine's addresses (loopback included), by number or through the resolver.
    std::vector<std::string> mine;
    ifaddrs *ifs = nullptr;
    if (getifaddrs(&ifs) == 0) {
        for (ifaddrs *i = ifs; i; i = i->ifa_next)
            if (i->ifa_addr && (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6))
                mine.push_back(numeric(i->ifa_addr));
        freeifaddrs(ifs);
    }
    for (const auto &a : addresses_of(name)) {
        if (a.rfind("127.", 0) == 0 || a == "::1") return true;
        for (const auto &m : mine)
            if (a == m) return true;
    }
    return false;
}

std::string local_address_toward(const std::string &name) {
    // A UDP socket "connected" to the host sends nothing, but the kernel picks the route and
    // with it the source address that the host can reach us at.
    addrinfo hints{}, *res = nullptr;
    hints.ai_socktype = SOCK_DGRAM;
    if (getaddrinfo(name.c_str(), "9", &hints, &res) != 0) return "";
    std::string out;
    for (addrinfo *p = res; p && out.empty(); p = p->ai_next) {
        int fd = socket(p->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0) continue;
        sockaddr_storage ss{};
        socklen_t len = sizeof ss;
        if (connect(fd, p->ai_addr, p->ai_addrlen) == 0 &&
            getsockname(fd, reinterpret_cast<sockaddr *>(&ss), &len) == 0) {
            out = numeric(reinterpret_cast<sockaddr *>(&ss));
            if (ss.ss_family == AF_INET6) out = "[" + out + "]";
        }
        close(fd);
    }
    freeaddrinfo(res);
    return out;
}

std::string shell_quote(const std::string &word) {
    std::string q = "'";
    for (char c : word) {
        if (c == '\'') q += "'\\''";
        else q += c;
    }
    return q + "'";
}

std::vector<std::string> split_words(const std::string &text) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : text) {
        if (c == ' ' || c == '\t') {
            if (!cur.empty()) out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
}

std::string remote_command(const std::string &cwd, const std::vector<std::string> &env,
                           const std::vector<std::string> &cmd) {
    // The first line of stdin is the secret; the rest of stdin stays open while hgasrun lives.
    // The rank runs in the background with stdin from /dev/null; a watcher reads fd 3 (the
    // shell's stdin: asynchronous lists get /dev/null as stdin) and sends SIGTERM at its end.
    std::string s = "cd " + shell_quote(cwd) + " 2>/dev/null; IFS= read -r HGAS_BOOT_SECRET || exit 127; "
                    "export HGAS_BOOT_SECRET; exec 3<&0; exec env";
    for (const auto &e : env) s += " " + shell_quote(e);
    s += " sh -c " +
         shell_quote("\"$@\" </dev/null 3<&- & p=$!; "
                     "(read -r _ <&3; kill -TERM $p) >/dev/null 2>&1 & w=$!; exec 3<&-; "
                     "wait $p; s=$?; kill $w 2>/dev/null; exit $s") +
         " hgas-rank";
    for (const auto &c : cmd) s += " " + shell_quote(c);
    return "exec /bin/sh -c " + shell_quote(s);  // whatever the login shell on the host is
}

}  // namespace hgasrun
