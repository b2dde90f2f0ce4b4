// A rank program for launcher tests that uses only the boot layer: detect, connect, barrier,
// finalize, with switches that make chosen ranks misbehave. launcher.sh drives it.
//
//   boot_prog [--lines N] [--tail] [--exit R:X] [--kill R] [--hang R|all] [--no-connect R] [--quit R]
//             [--pids DIR] [--shm] [--topology]
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/settings.hpp"
#include "base/status.hpp"
#include "boot/boot.hpp"

using namespace hgas;

namespace {

struct args {
    int lines = 0;
    bool tail = false;       // end stdout with a line that has no newline
    int exit_rank = -1, exit_code = 0;
    int kill_rank = -1;      // SIGKILLs itself after the first barrier
    int hang_rank = -1;      // sleeps forever after the first barrier; -2 = every rank
    int no_connect = -1;     // never connects to the store
    int quit_rank = -1;      // exits 0 after the first barrier without finalize
    std::string pids;        // write <dir>/rank<R>.pid
    bool shm = false;        // create /dev/shm/hgas-<job>-<rank>-test and leave it
    bool topology = false;   // allgather node names and print the layout
};

[[noreturn]] void sleep_forever() {
    for (;;) pause();
}

int fail_with(int rank, const char *what, status st) {
    std::fprintf(stderr, "boot_prog rank %d: %s failed: %s: %s\n", rank, what, status_name(st), last_error().c_str());
    return 1;
}

bool parse(int argc, char **argv, args &a) {
    for (int i = 1; i < argc; ++i) {
        std::string o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        auto rank_arg = [&](const char *s) { return std::strcmp(s, "all") == 0 ? -2 : std::atoi(s); };
        if (o == "--tail") a.tail = true;
        else if (o == "--shm") a.shm = true;
        else if (o == "--topology") a.topology = true;
        else if (!v) return false;
        else if (o == "--lines") a.lines = std::atoi(v), ++i;
        else if (o == "--exit") {
            if (std::sscanf(v, "%d:%d", &a.exit_rank, &a.exit_code) != 2) return false;
            ++i;
        } else if (o == "--kill") a.kill_rank = std::atoi(v), ++i;
        else if (o == "--hang") a.hang_rank = rank_arg(v), ++i;
        else if (o == "--no-connect") a.no_connect = std::atoi(v), ++i;
        else if (o == "--quit") a.quit_rank = std::atoi(v), ++i;
        else if (o == "--pids") a.pids = v, ++i;
        else return false;
    }
    return true;
}

}  // namespace

int main(int argc, char **argv) {
    args a;
    if (!parse(argc, argv, a)) {
        std::fprintf(stderr, "boot_prog: bad arguments (see the comment at the top of boot_prog.cpp)\n");
        return 2;
    }
    auto cfg = settings::from_env();
    if (!cfg.ok()) return fail_with(-1, "reading settings", cfg.error());
    auto job = boot::detect(*cfg);
    if (!job.ok()) return fail_with(-1, "detect", job.error());
    const int me = job->rank;
    if (!a.pids.empty()) {
        if (FILE *f = std::fopen((a.pids + "/rank" + std::to_string(me) + ".pid").c_str(), "w")) {
            std::fprintf(f, "%d\n", static_cast<int>(getpid()));
            std::fclose(f);
        }
    }
    if (a.shm) {
        const std::string name = "/hgas-" + job->job_id + "-" + std::to_string(me) + "-test";
        int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
        if (fd >= 0) close(fd);
    }
    if (a.no_connect == me) sleep_forever();

    const double boot_timeout = cfg->seconds(setting::boot_timeout), timeout = cfg->seconds(setting::timeout);
    auto cl = boot::client::connect(*job, boot_timeout);
    if (!cl.ok()) return fail_with(me, "connect", cl.error());
    boot::client &c = **cl;
    if (status st = c.barrier("start", boot_timeout); st != status::ok) return fail_with(me, "barrier 'start'", st);
    if (me == 0) std::printf("launcher=%s size=%d job=%s\n", job->launcher.c_str(), job->size, job->job_id.c_str());

    if (a.topology) {
        std::vector<std::string> names;
        if (status st = c.allgather("nodes", job->node_name, names, timeout); st != status::ok)
            return fail_with(me, "allgather 'nodes'", st);
        auto t = boot::topology::from_node_names(names, me);
        std::printf("rank %d node %s (%d of %d) local %d of %d\n", me, job->node_name.c_str(), t.node_me, t.node_n,
                    t.local_rank, t.local_n);
    }
    for (int i = 0; i < a.lines; ++i) std::printf("rank %d line %d\n", me, i);
    if (a.lines > 0) std::fprintf(stderr, "rank %d to stderr\n", me);
    if (a.tail) std::printf("rank %d tail without newline", me);
    std::fflush(stdout);

    if (a.kill_rank == me) raise(SIGKILL);
    if (a.hang_rank == me || a.hang_rank == -2) sleep_forever();
    if (a.quit_rank == me) _exit(0);  // no finalize, no destructors: the connection just closes

    if (status st = c.barrier("end", timeout); st != status::ok) return fail_with(me, "barrier 'end'", st);
    if (status st = c.finalize(); st != status::ok) return fail_with(me, "finalize", st);
    return a.exit_rank == me ? a.exit_code : 0;
}
