#include "base/shm.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace hgas {

std::string random_tag() {
    uint64_t v = 0;
    size_t got = 0;
    auto *p = reinterpret_cast<unsigned char *>(&v);
    while (got < sizeof v) {
        ssize_t n = getrandom(p + got, sizeof v - got, 0);
        if (n > 0) got += static_cast<size_t>(n);
        else if (n < 0 && errno != EINTR) std::abort();  // no kernel randomness: no safe name to make
    }
    static const char hex[] = "0123456789abcdef";
    std::string out(16, '0');
    for (int i = 0; i < 16; ++i) out[i] = hex[(v >> (60 - 4 * i)) & 15];
    return out;
}

result<int> shm_create_unique(const std::string &prefix, std::string &name, const char *what) {
    // Two clashes in a row with 64 random bits are already not chance; eight end the search.
    constexpr int k_attempts = 8;
    int err = 0;
    for (int i = 0; i < k_attempts; ++i) {
        name = prefix + "-" + random_tag();
        int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            // The umask may have taken bits from 0600; the job's other ranks (this user) need
            // read and write, nobody else anything.
            if (fchmod(fd, 0600) != 0) {
                err = errno;
                ::close(fd);
                shm_unlink(name.c_str());
                return fail(status::no_memory, "cannot set mode 0600 on %s shared memory %s: %s", what, name.c_str(),
                            std::strerror(err));
            }
            return fd;
        }
        err = errno;
        if (err != EEXIST) break;
    }
    if (err == EEXIST)
        return fail(status::no_memory,
                    "cannot create %s shared memory: %d random names under /dev/shm%s-* all existed already; "
                    "something on this machine is filling /dev/shm with such names (see who owns them: "
                    "ls -l /dev/shm)",
                    what, k_attempts, prefix.c_str());
    return fail(status::no_memory, "cannot create %s shared memory %s: %s%s", what, name.c_str(), std::strerror(err),
                err == ENOSPC || err == ENOMEM ? " (is /dev/shm full?)" : "");
}

}  // namespace hgas
