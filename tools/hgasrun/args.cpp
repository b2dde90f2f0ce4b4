// hgasrun's command line: options, hosts and hostfiles, --help (with the settings table) and
// --version. docs/launcher.md describes them.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>

#include <hgas/config.h>

#include "base/settings.hpp"
#include "options.hpp"

namespace hgasrun {
namespace {

const char k_help[] = R"(usage: hgasrun -n N [options] [--] program [args...]
       hgasrun --host a:2,b:2 | --hostfile FILE [-n N] [options] [--] program [args...]

Starts N ranks of `program` as one hgas job: on this machine, or on the hosts given with
--host/--hostfile (started there through ssh, reached over UCX).

options:
  -n N, -np N, --np N, --ranks N
                    number of ranks to start (1..65536); with hosts, default: their slots
  -H, --host LIST   hosts to place ranks on, in order: "a,b" (one slot each) or "a:2,b:2";
                    ranks fill the slots of the first host, then the next (-n at most the
                    slots). This machine ("localhost", its name or one of its addresses)
                    forks its ranks; others are started with the rsh command
  -f, --hostfile FILE
                    the same from a file: one host a line, "name", "name slots=N" (Open MPI)
                    or "name:N" (MPICH); '#' starts a comment
  --rsh CMD         how ranks are started on other hosts (default: $HGAS_RSH or ssh); it is
                    run as CMD <host> <shell command>, like ssh
  -x VAR, -x VAR=value
                    export VAR (with its value here, or the one given) to every rank; local
                    ranks get hgasrun's whole environment anyway, remote ranks get the HGAS_*
                    variables below and the -x ones only
  --timeout SEC     end the whole job after SEC seconds (exit code 124)
  --threads T       ranks as threads: start N/T processes of T ranks each (HGAS_THREADS=T);
                    each of a process's T threads that calls hgas_init becomes one rank
                    (docs/threads.md). N must be a multiple of T; one machine only. Messages
                    about a process name its ranks
  --prefix          prefix each output line with "[rank] "
  --nodes K         pretend the machine is K nodes: ranks are split into K contiguous
                    blocks and block i gets HGAS_NODE_NAME=node<i>, so ranks of different
                    blocks do not share memory (tests the inter-node paths on one machine)
  --bind core|none  core: pin the i-th rank on this machine to the i-th CPU hgasrun may use,
                    the first hardware thread of every physical core first (round robin when
                    there are more ranks than CPUs), so that two ranks never share a core
                    while another is idle. none (the default): the scheduler
                    places them (several jobs on one machine would otherwise pile onto the
                    same first cores)
  --boot unix|tcp|tcp:ADDR
                    where the bootstrap store listens: a unix socket in the job directory
                    (default) or tcp:127.0.0.1 on a free port. With hosts it always listens
                    on TCP (every address of this machine) and remote ranks connect to this
                    machine's address on the route to their host, or to ADDR when given
  --version         print hgas's version
  -h, --help        print this text

Each rank gets HGAS_RANK, HGAS_SIZE, HGAS_BOOT_ADDR, HGAS_BOOT_SECRET, HGAS_JOB_ID and
HGASRUN_PID in its environment (and HGAS_NODE_NAME with --nodes, or the host's name as listed
with hosts), and CUDA_MODULE_LOADING=EAGER unless it is set (docs/device.md: lazy loading can
deadlock kernels that wait on hgas); stdin is /dev/null. A remote rank runs in hgasrun's
directory (where that exists there); its secret travels on rsh's standard input.
The ranks' stdout and stderr are forwarded to hgasrun's, whole lines at a time.
Before starting anything hgasrun checks the HGAS_* settings of its environment (a bad value
is an error, exit 2) and warns once about HGAS_* variables that are no setting.

When a rank exits with a non-zero status or is killed by a signal while others still run,
hgasrun names it, tells the other ranks through the bootstrap store (their waits fail with
HGAS_ERR_PEER_FAILED and that message), waits 2 s, sends SIGTERM, waits 2 s more and
sends SIGKILL. SIGINT, SIGTERM and SIGHUP sent to hgasrun are forwarded to the ranks, then
the job ends the same way (a second one kills the ranks at once). If hgasrun itself is
killed, the kernel kills the ranks (PR_SET_PDEATHSIG); remote ranks get SIGTERM when their
rsh connection closes.

A rank that hangs is named by the others' timeouts (hgas_barrier, hgas_finalize: "rank 2 has
not arrived"), which end the job with that message; ranks still running HGAS_TIMEOUT + 5 s
after another rank exited 0 are named and the job ends.

A rank may end the whole job normally with hgas_global_exit(status) (shmem_global_exit):
the other ranks exit with the same status at their next hgas call; those that make none
within 2 s get SIGTERM, then SIGKILL, as above, and hgasrun exits with that status.

exit status: 0 if every rank exited with 0; the status given to hgas_global_exit if a rank
called it (and no rank had failed before); otherwise the exit status of the first rank that
failed (128+N if it was killed by signal N); 1 if the job ended on a rank's report (a
hung rank) while no rank failed by itself; 124 after --timeout; 128+N if hgasrun got
signal N; 2 for bad options or settings; 1 if the job could not be started.

Files: a job directory $TMPDIR/hgas-<jobid> (mode 0700, holds the store socket) and the
ranks' shared-memory files /dev/shm/hgas-<jobid>-* are removed when the job ends, however
it ends; those left by a killed hgasrun are removed by the next hgasrun on this machine.
)";

void print_help() {
    std::fputs(k_help, stdout);
    // The settings table itself: what the ranks read, and what -x is not needed for.
    std::printf("\nsettings (HGAS_* variables; forwarded to every rank, remote ones included; hgas-info\n"
                "prints each with its value and help):\n");
    for (int i = 0; i < hgas::setting_count; ++i) {
        const hgas::setting_info &si = hgas::info(static_cast<hgas::setting>(i));
        std::printf("  %-28s %-8s default %s\n", si.env, hgas::setting_type_name(si.type),
                    *si.def ? si.def : "\"\"");
    }
}

long long number(const char *opt, const std::string &v, long long lo, long long hi) {
    char *end = nullptr;
    errno = 0;
    long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || errno || *end || x < lo || x > hi)
        usage_error("%s needs an integer in %lld..%lld, not '%s'", opt, lo, hi, v.c_str());
    return x;
}

bool valid_name(const std::string &n) {
    if (n.empty() || !(std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_')) return false;
    for (char c : n)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
}

// -x VAR / -x VAR=value
void export_var(options &o, const std::string &spec) {
    const size_t eq = spec.find('=');
    const std::string name = spec.substr(0, eq);
    if (!valid_name(name)) usage_error("-x needs VAR or VAR=value with a variable name, not '%s'", spec.c_str());
    if (eq != std::string::npos) setenv(name.c_str(), spec.c_str() + eq + 1, 1);
    else if (!std::getenv(name.c_str()))
        usage_error("-x %s: %s is not set in hgasrun's environment (give a value: -x %s=value)", name.c_str(),
                    name.c_str(), name.c_str());
    o.export_names.push_back(name);
}

host parse_host(const std::string &item, const char *what) {
    host h;
    std::string spec = item;
    const size_t sp = spec.find_first_of(" \t");
    if (sp != std::string::npos) {  // "name slots=N" (hostfile)
        std::string rest = spec.substr(sp);
        spec = spec.substr(0, sp);
        for (const auto &w : split_words(rest)) {
            if (w.rfind("slots=", 0) == 0) h.slots = static_cast<int>(number(what, w.substr(6), 1, 65536));
            else if (w.rfind("max_slots=", 0) == 0) continue;  // Open MPI's; hgasrun never oversubscribes
            else usage_error("%s: '%s': expected 'name', 'name slots=N' or 'name:N'", what, item.c_str());
        }
    }
    const size_t colon = spec.rfind(':');
    if (colon != std::string::npos && spec.find(':') == colon) {  // not an IPv6 address
        h.slots = static_cast<int>(number(what, spec.substr(colon + 1), 1, 65536));
        spec = spec.substr(0, colon);
    }
    if (spec.empty()) usage_error("%s: '%s' names no host", what, item.c_str());
    h.name = spec;
    return h;
}

}  // namespace

void usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::fputs("hgasrun: ", stderr);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fputs("\nTry 'hgasrun --help'.\n", stderr);
    std::exit(2);
}

std::vector<host> parse_host_list(const std::string &list, const char *what) {
    std::vector<host> out;
    for (const auto &item : hgas::split(list, ',')) out.push_back(parse_host(item, what));
    if (out.empty()) usage_error("%s names no host", what);
    return out;
}

std::vector<host> read_hostfile(const std::string &path) {
    std::ifstream f(path);
    if (!f) usage_error("cannot read the hostfile '%s': %s", path.c_str(), std::strerror(errno));
    std::vector<host> out;
    std::string line;
    int no = 0;
    while (std::getline(f, line)) {
        ++no;
        line = line.substr(0, line.find('#'));
        const size_t b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
        if (b == std::string::npos) continue;
        const std::string where = path + ":" + std::to_string(no);
        out.push_back(parse_host(line.substr(b, e - b + 1), where.c_str()));
    }
    if (out.empty()) usage_error("the hostfile '%s' names no host", path.c_str());
    return out;
}

options parse_args(int argc, char **argv) {
    options o;
    int i = 1;
    std::string host_list, hostfile;
    bool rsh_given = false;
    auto value = [&](const std::string &arg, const std::string &name) -> std::string {
        if (arg.size() > name.size() && arg.compare(0, name.size() + 1, name + "=") == 0)
            return arg.substr(name.size() + 1);
        if (i + 1 >= argc) usage_error("%s needs a value", name.c_str());
        return argv[++i];
    };
    auto is = [](const std::string &arg, const char *name) {
        return arg == name || arg.rfind(std::string(name) + "=", 0) == 0;
    };
    for (; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (a.empty() || a[0] != '-') break;
        if (a == "-h" || a == "--help") {
            print_help();
            std::exit(0);
        } else if (a == "--version") {
            std::printf("hgasrun (hgas) %s\n", HGAS_VERSION);
            std::exit(0);
        } else if (is(a, "-n") || is(a, "-np") || is(a, "--np") || is(a, "--ranks")) {
            const std::string name = a.substr(0, a.find('='));
            o.n = static_cast<int>(number(name.c_str(), value(a, name), 1, 65536));
        } else if (a.rfind("-n", 0) == 0 && a.size() > 2 && std::isdigit(static_cast<unsigned char>(a[2]))) {
            o.n = static_cast<int>(number("-n", a.substr(2), 1, 65536));  // -n4
        } else if (is(a, "--timeout")) {
            std::string v = value(a, "--timeout");
            char *end = nullptr;
            o.timeout = std::strtod(v.c_str(), &end);
            if (v.empty() || *end || !(o.timeout > 0))
                usage_error("--timeout needs a positive number of seconds, not '%s'", v.c_str());
        } else if (a == "--prefix") {
            o.prefix = true;
        } else if (is(a, "--threads")) {
            o.threads = static_cast<int>(number("--threads", value(a, "--threads"), 1, 1024));
        } else if (is(a, "--nodes")) {
            o.nodes = static_cast<int>(number("--nodes", value(a, "--nodes"), 1, 65536));
        } else if (is(a, "--bind")) {
            const std::string v = value(a, "--bind");
            if (v != "core" && v != "none") usage_error("--bind is 'core' or 'none', not '%s'", v.c_str());
            o.bind = v == "core";
        } else if (is(a, "--boot")) {
            o.boot = value(a, "--boot");
            if (o.boot != "unix" && o.boot != "tcp" && (o.boot.rfind("tcp:", 0) != 0 || o.boot.size() == 4))
                usage_error("--boot is 'unix' or 'tcp', not '%s' (or tcp:ADDR, the address remote ranks connect to)",
                            o.boot.c_str());
        } else if (is(a, "-x")) {
            export_var(o, value(a, "-x"));
        } else if (is(a, "-H") || is(a, "--host")) {
            const std::string name = a.substr(0, a.find('='));
            host_list += (host_list.empty() ? "" : ",") + value(a, name);
        } else if (is(a, "-f") || is(a, "--hostfile")) {
            const std::string name = a.substr(0, a.find('='));
            if (!hostfile.empty()) usage_error("give one hostfile");
            hostfile = value(a, name);
        } else if (is(a, "--rsh")) {
            o.rsh = value(a, "--rsh");
            rsh_given = true;
        } else {
            usage_error("unknown option '%s'", a.c_str());
        }
    }
    for (; i < argc; ++i) o.cmd.emplace_back(argv[i]);
    if (!hostfile.empty() && !host_list.empty()) usage_error("give hosts with --host or --hostfile, not both");
    if (!hostfile.empty()) o.hosts = read_hostfile(hostfile);
    if (!host_list.empty()) o.hosts = parse_host_list(host_list, "--host");
    if (!o.hosts.empty()) {
        long long slots = 0;
        for (const auto &h : o.hosts) slots += h.slots;
        if (o.n == 0) o.n = static_cast<int>(std::min<long long>(slots, 65536));
        if (o.n > slots)
            usage_error("%d ranks do not fit the %lld slot(s) of the hosts; give more slots (name:N or "
                        "'name slots=N') or fewer ranks", o.n, slots);
        for (size_t h = 0; h < o.hosts.size() && static_cast<int>(o.host_of_rank.size()) < o.n; ++h)
            for (int s = 0; s < o.hosts[h].slots && static_cast<int>(o.host_of_rank.size()) < o.n; ++s)
                o.host_of_rank.push_back(static_cast<int>(h));
        for (auto &h : o.hosts) h.local = is_local_host(h.name);
        if (o.nodes > 0) usage_error("--nodes pretends one machine is several; it does not go with hosts");
        if (!rsh_given) {
            const char *e = std::getenv("HGAS_RSH");
            o.rsh = e && *e ? e : "ssh";
        }
        if (split_words(o.rsh).empty()) usage_error("--rsh/HGAS_RSH is empty; give a command such as ssh");
    } else if (rsh_given) {
        usage_error("--rsh starts ranks on other hosts: give them with --host or --hostfile");
    }
    if (o.n == 0) usage_error("say how many ranks to start with -n N (or give hosts with --host/--hostfile)");
    if (o.cmd.empty()) usage_error("no program to run given");
    if (o.threads > 1) {
        if (o.n % o.threads)
            usage_error("-n %d is not a multiple of --threads %d (every process runs %d ranks)", o.n, o.threads,
                        o.threads);
        if (!o.hosts.empty()) usage_error("--threads does not go with hosts yet: start the processes with srun or "
                                          "mpirun and set HGAS_THREADS (docs/threads.md)");
        o.n /= o.threads;  // from here on the launcher counts processes
    }
    if (o.nodes > o.n)
        usage_error("--nodes %d is more than the %d %s", o.nodes, o.n, o.threads > 1 ? "processes" : "ranks");
    return o;
}

}  // namespace hgasrun
