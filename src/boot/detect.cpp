// Who am I: rank and size from the launcher's environment, the store address and secret.
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "boot/boot.hpp"
#include "boot/wire.hpp"

namespace hgas::boot {
namespace {

struct env_pair {
    const char *rank, *size, *launcher;
};

// Order matters where launchers nest: mpirun or mpiexec inside an sbatch script leaves the
// batch step's SLURM_PROCID=0 / SLURM_NTASKS in every rank's environment, while the MPI
// launcher's own variables are per rank. So the MPI launchers' variables are read first.
constexpr env_pair k_launchers[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "mpirun"},
    {"PMI_RANK", "PMI_SIZE", "pmi"},
    {"SLURM_PROCID", "SLURM_NTASKS", "slurm"},
};

// A non-negative decimal from the environment; false if absent or not a number.
status env_int(const char *name, long long &out, bool &present) {
    const char *v = std::getenv(name);
    present = v != nullptr;
    if (!present) return status::ok;
    if (!wire::parse_int(v, out) || out < 0 || out > INT_MAX)
        return fail(status::bootstrap, "%s='%s' is not a non-negative integer", name, v);
    return status::ok;
}

// FNV-1a: the job id only has to be short and the same on every rank, not secret.
std::string short_hash(const std::string &s) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%012llx", static_cast<unsigned long long>(h & 0xffffffffffffull));
    return buf;
}

}  // namespace

result<job_info> detect(const settings &cfg) {
    job_info job;
    long long rank = cfg.integer(setting::rank), size = cfg.integer(setting::size);
    if ((rank >= 0) != (size >= 0))
        return fail(status::bootstrap, "HGAS_RANK and HGAS_SIZE must be set together (only %s is set)",
                    rank >= 0 ? "HGAS_RANK" : "HGAS_SIZE");
    if (rank >= 0) {
        // hgasrun marks its ranks with its own variable, the way srun sets SLURM_*; HGAS_RANK
        // set by hand means "no launcher": rank 0 then serves the store as under srun.
        job.launcher = std::getenv("HGASRUN_PID") ? "hgasrun" : "env";
    } else {
        for (const env_pair &e : k_launchers) {
            bool has_rank = false, has_size = false;
            HGAS_TRY(env_int(e.rank, rank, has_rank));
            HGAS_TRY(env_int(e.size, size, has_size));
            if (has_rank && has_size) {
                job.launcher = e.launcher;
                break;
            }
            rank = size = -1;
        }
    }
    if (job.launcher.empty()) {
        job.launcher = "singleton";
        rank = 0;
        size = 1;
    }
    if (size < 1 || rank >= size)
        return fail(status::bootstrap, "rank %lld of a job of %lld ranks (from the %s environment) is out of range",
                    rank, size, job.launcher.c_str());
    job.rank = static_cast<int>(rank);
    job.size = static_cast<int>(size);
    job.addr = cfg.text(setting::boot_addr);
    job.secret = cfg.text(setting::boot_secret);

    if (job.size > 1 && job.addr.empty())
        return fail(status::bootstrap,
                    "this is rank %d of %d (from the %s environment) but HGAS_BOOT_ADDR is not set, so the ranks "
                    "cannot find each other: start the job with 'hgasrun -n %d prog', or set HGAS_BOOT_ADDR "
                    "(e.g. tcp:<first node>:29500, served by rank 0) and HGAS_BOOT_SECRET (the same random value "
                    "on every rank) in the environment of every rank",
                    job.rank, job.size, job.launcher.c_str(), job.size);
    if (!job.addr.empty() && job.secret.empty())
        return fail(status::bootstrap,
                    "HGAS_BOOT_ADDR is set but HGAS_BOOT_SECRET is not: set it to the same random value on every "
                    "rank (e.g. export HGAS_BOOT_SECRET=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \\n'))");
    if (!job.addr.empty()) {
        wire::address a;
        HGAS_TRY(wire::parse_address(job.addr, a));
    }

    job.node_name = cfg.text(setting::node_name);
    if (job.node_name.empty()) {
        char host[HOST_NAME_MAX + 1] = {};
        if (gethostname(host, sizeof host - 1) != 0)
            return fail(status::bootstrap, "gethostname failed (%s): set HGAS_NODE_NAME", std::strerror(errno));
        job.node_name = host;
    }

    job.job_id = cfg.text(setting::job_id);
    if (job.job_id.empty())
        // A singleton has no secret; its pid keeps concurrent singletons' shared-memory names apart.
        job.job_id = job.secret.empty() ? "p" + std::to_string(getpid()) : short_hash(job.secret);
    for (char c : job.job_id)
        if (c == '/' || c == '\0')
            return fail(status::bootstrap, "HGAS_JOB_ID='%s' must not contain '/' (it is part of file names)",
                        job.job_id.c_str());
    return job;
}

std::string random_secret(size_t bytes) {
    std::string raw(bytes, '\0');
    size_t got = 0;
    while (got < bytes) {
        ssize_t n = getrandom(raw.data() + got, bytes - got, 0);
        if (n > 0) got += static_cast<size_t>(n);
        else if (n < 0 && errno != EINTR) std::abort();  // no kernel randomness: nothing safe to return
    }
    static const char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * bytes);
    for (unsigned char c : raw) {
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 15]);
    }
    return out;
}

}  // namespace hgas::boot
