// hgas-bench: runs the hgas benchmark programs (bench/) per transport through hgasrun, runs
// the peers in the same run (OpenSHMEM from Open MPI for the shm path, ucx_perftest for the
// UCX path), prints one table with hgas/peer ratios and the project's performance targets (docs/bench.md), and writes every
// result as JSON. docs/bench.md describes the method and the numbers.
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <array>
#include <ctime>
#include <tuple>
#include <map>
#include <optional>
#include <string>
#include <vector>

#ifndef HGAS_BENCH_SOURCE_DIR
#define HGAS_BENCH_SOURCE_DIR ""
#endif
#ifndef HGAS_BENCH_UCX_PREFIX
#define HGAS_BENCH_UCX_PREFIX ""
#endif
#ifndef HGAS_BENCH_HAVE_UCX
#define HGAS_BENCH_HAVE_UCX 0
#endif

namespace {

// The benchmarks of hgas-bench-lat and hgas-bench-bw (and of the peers), for --only.
const char *const k_benches[] = {"put_lat", "put_signal_lat", "get_lat", "fadd_lat",
                                 "barrier_lat", "put_bw", "get_bw", "put_signal_bw"};
std::string bench_names() {
    std::string t;
    for (const char *b : k_benches) t += (t.empty() ? "" : ", ") + std::string(b);
    return t;
}

const char k_help[] = R"(usage: hgas-bench [options]

Measures latency and bandwidth of put, get, put-with-signal, atomics and barrier between two
ranks, per transport, and the peers in the same run: OpenSHMEM (Open MPI's oshcc/oshrun,
when on PATH) for the shm path, ucx_perftest (from the UCX hgas was built with) for the UCX
path. Prints a table with hgas/peer ratios and the targets; --json writes every result.

options:
  --all               every transport: shm, ucx, ucx-am (default: shm, and ucx if built)
  --transport T[,T]   shm (HGAS_TRANSPORTS=self,shm), ucx (HGAS_TRANSPORTS=ucx,
                      HGAS_UCX_MODE=rma) or ucx-am (HGAS_UCX_MODE=am); may repeat
  --sizes MIN:MAX[:F] message sizes, MIN to MAX, each F times the last (default 8:64M:2;
                      with --quick 8:64M:8)
  --quick             fewer sizes, batches and iterations (about a minute per transport)
  --json FILE         write all results, ratios and targets as one JSON document
  --no-peers          measure hgas only
  --only a,b          only these benchmarks (put_lat, put_signal_lat, get_lat, fadd_lat,
                      barrier_lat, put_bw, get_bw, put_signal_bw)
  --no-pin            do not pin rank 0 / rank 1 (and the peers) to CPUs 0 / 1
  --hgasrun PATH      the launcher (default: ../hgasrun/hgasrun next to this program)
  --bench-dir DIR     where hgas-bench-lat and hgas-bench-bw are (default: ../../bench)
  --ucx-perftest PATH ucx_perftest to run (default: from the UCX hgas was built with)
  --gpu               GPU mode: hgas's device paths (bench/hgas-bench-kinds: same process, two
                      ranks on one GPU, peer GPUs, forced staging; bench/gpu/hgas-device-bench:
                      the device API from kernels and streams) and, in the same run, the
                      GPU peers (bench/gpu: cudaMemcpy/cudaMemcpyPeer, NVSHMEM, NCCL, user-level
                      staging), then the hgas/best-peer ratio table (tools/bench-plot.py);
                      --json FILE gets every record, one JSON object per line
  --msg               tagged messages (bench/hgas-bench-msg: msg_lat, msg_bw, msg_bibw, msg_rate)
                      over each transport, one JSON record per line into --json FILE; with
                      --gpu also bench/gpu/hgas-bench-msg-gpu (GPU buffers, baselines, halo)
  --coll              collectives (bench/hgas-bench-coll: broadcast, reduce, allreduce, fcollect,
                      alltoall, barrier; host memory) under hgasrun -n N for each N of --ranks
                      (default 2,4) over each transport; with --gpu instead
                      bench/gpu/hgas-bench-coll-gpu (GPU memory, hgas against NCCL in the same
                      run, ranks default 2); one JSON record per line into --json FILE
  --budget S          --gpu: finish within about S seconds: each program gets an equal share
                      of what is left (bench/hgas-bench-kinds cuts its loops to fit and
                      leaves out sizes past it, saying so in "# skipped" lines), so that a
                      slow path cannot cost the whole table
  --init              start-up mode: hgas_init's time against the number of ranks
                      (bench/hgas-bench-init under hgasrun -n N for each N of --ranks,
                      oversubscribed on this machine), then tools/init-plot.py: a table with
                      the growth exponent between points and a PNG (--plot-dir)
  --ranks N,N,...     rank counts for --init (default 2,4,8,16,32,64,128,256; --quick
                      stops at 64)
  --repeat K          runs per rank count for --init, median kept (default 3; --quick 1)
  --plot-dir DIR      where --init puts init.png (default: the current folder)
  --busy              busy-target mode (bench/hgas-bench-busy): get and put latency, host and
                      device memory (cuda, or sim without a GPU), 8 B-4 MiB, against a target
                      that computes without calling hgas for --busy-ms and against an idle one,
                      with the helper thread (HGAS_PROGRESS_THREAD) off and on, over each
                      transport; a table with the goal (helper on, busy <= idle + 2 us) and
                      one JSON record per point into --json FILE
  --busy-ms D         how long the target computes in each --busy window (default 20)
  -v, --verbose       also print the benchmark programs' own tables as they run
  -h, --help          this text

exit status: 0 when every measurement ran and its data check passed (a missed target is
reported, not an error); 1 otherwise; 2 for bad options.
)";

// ---------------------------------------------------------------------------------------
// options

struct options {
    std::vector<std::string> transports;
    std::string sizes;
    bool quick = false;
    std::string json;
    bool peers = true;
    bool pin = true;
    bool verbose = false;
    bool gpu = false;
    bool msg = false;
    bool init = false;
    bool busy = false;
    double busy_ms = 20;
    bool coll = false;
    std::string ranks, plot_dir = ".";
    int repeat = 0;
    double budget = 0;
    std::string only;
    std::string hgasrun, bench_dir, perftest;
};

[[noreturn]] void usage_error(const std::string &msg) {
    std::fprintf(stderr, "hgas-bench: %s (hgas-bench --help)\n", msg.c_str());
    std::exit(2);
}

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> out;
    size_t p = 0;
    for (;;) {
        size_t e = s.find(sep, p);
        out.push_back(s.substr(p, e == std::string::npos ? std::string::npos : e - p));
        if (e == std::string::npos) break;
        p = e + 1;
    }
    return out;
}

std::string exe_dir() {
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return ".";
    buf[n] = 0;
    std::string s(buf);
    return s.substr(0, s.rfind('/'));
}

bool is_exec(const std::string &p) { return !p.empty() && access(p.c_str(), X_OK) == 0; }
bool is_file(const std::string &p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string which(const std::string &name) {
    const char *path = std::getenv("PATH");
    if (!path) return "";
    for (auto &d : split(path, ':'))
        if (is_exec(d + "/" + name)) return d + "/" + name;
    return "";
}

size_t parse_bytes(const std::string &s) {
    char *end = nullptr;
    unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (end == s.c_str()) return 0;
    switch (*end) {
    case 'k': case 'K': v <<= 10; ++end; break;
    case 'm': case 'M': v <<= 20; ++end; break;
    case 'g': case 'G': v <<= 30; ++end; break;
    default: break;
    }
    return *end ? 0 : static_cast<size_t>(v);
}

// The size of the sweep nearest to `x` (on a log scale); 0 for a sweep without sizes.
size_t nearest(const std::vector<size_t> &sizes, size_t x) {
    size_t best = 0;
    double bd = 1e300;
    for (size_t s : sizes) {
        double d = std::fabs(std::log((double)s) - std::log((double)x));
        if (d < bd) bd = d, best = s;
    }
    return best;
}

std::vector<size_t> expand_sizes(const std::string &spec) {
    auto parts = split(spec, ':');
    if (parts.size() < 2 || parts.size() > 3) usage_error("--sizes wants MIN:MAX[:FACTOR], not '" + spec + "'");
    size_t lo = parse_bytes(parts[0]), hi = parse_bytes(parts[1]);
    unsigned f = parts.size() == 3 ? static_cast<unsigned>(std::atoi(parts[2].c_str())) : 2;
    if (!lo || hi < lo || f < 2) usage_error("--sizes wants 0 < MIN <= MAX and FACTOR >= 2, not '" + spec + "'");
    std::vector<size_t> v;
    for (size_t s = lo;; s *= f) {
        if (s >= hi) {
            v.push_back(hi);
            break;
        }
        v.push_back(s);
    }
    return v;
}

options parse(int argc, char **argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&](const char *name) -> std::string {
            if (i + 1 >= argc) usage_error(std::string(name) + " needs a value");
            return argv[++i];
        };
        if (a == "-h" || a == "--help") {
            std::fputs(k_help, stdout);
            std::exit(0);
        } else if (a == "--all") {
            o.transports = {"shm", "ucx", "ucx-am"};
        } else if (a == "--transport") {
            for (auto &t : split(value("--transport"), ',')) {
                if (t != "shm" && t != "ucx" && t != "ucx-am") usage_error("--transport is shm, ucx or ucx-am, not '" + t + "'");
                if (std::find(o.transports.begin(), o.transports.end(), t) == o.transports.end()) o.transports.push_back(t);
            }
        } else if (a == "--sizes") {
            o.sizes = value("--sizes");
            (void)expand_sizes(o.sizes);
        } else if (a == "--quick") {
            o.quick = true;
        } else if (a == "--json") {
            o.json = value("--json");
        } else if (a == "--no-peers") {
            o.peers = false;
        } else if (a == "--no-pin") {
            o.pin = false;
        } else if (a == "--only") {
            o.only = value("--only");
            for (auto &b : split(o.only, ','))
                if (std::find(std::begin(k_benches), std::end(k_benches), b) == std::end(k_benches))
                    usage_error("--only: '" + b + "' is no benchmark; the benchmarks are " + bench_names());
        } else if (a == "--hgasrun") {
            o.hgasrun = value("--hgasrun");
        } else if (a == "--bench-dir") {
            o.bench_dir = value("--bench-dir");
        } else if (a == "--ucx-perftest") {
            o.perftest = value("--ucx-perftest");
        } else if (a == "--gpu") {
            o.gpu = true;
        } else if (a == "--msg") {
            o.msg = true;
        } else if (a == "--coll") {
            o.coll = true;
        } else if (a == "--init") {
            o.init = true;
        } else if (a == "--ranks") {
            o.ranks = value("--ranks");
            for (auto &n : split(o.ranks, ','))
                if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || std::stoi(n) < 1)
                    usage_error("--ranks: '" + n + "' is not a rank count (a list such as 2,4,8)");
        } else if (a == "--repeat") {
            const std::string v = value("--repeat");
            if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || std::stoi(v) < 1)
                usage_error("--repeat: '" + v + "' is not a positive count");
            o.repeat = std::stoi(v);
        } else if (a == "--budget") {
            const std::string v = value("--budget");
            char *end = nullptr;
            o.budget = std::strtod(v.c_str(), &end);
            if (end == v.c_str() || *end || o.budget <= 0) usage_error("--budget: '" + v + "' is not seconds > 0");
        } else if (a == "--busy") {
            o.busy = true;
        } else if (a == "--busy-ms") {
            const std::string v = value("--busy-ms");
            char *end = nullptr;
            o.busy_ms = std::strtod(v.c_str(), &end);
            if (end == v.c_str() || *end || o.busy_ms <= 0 || o.busy_ms > 10000)
                usage_error("--busy-ms: '" + v + "' is not milliseconds in (0, 10000]");
        } else if (a == "--plot-dir") {
            o.plot_dir = value("--plot-dir");
        } else if (a == "-v" || a == "--verbose") {
            o.verbose = true;
        } else {
            usage_error("unknown option '" + a + "'");
        }
    }
    if (o.transports.empty()) {
        o.transports = {"shm"};
        if (HGAS_BENCH_HAVE_UCX) o.transports.push_back("ucx");
    }
    if (o.sizes.empty() && o.busy) o.sizes = o.quick ? "8:4M:64" : "8:4M:8";
    if (o.sizes.empty() && o.coll && !o.gpu) o.sizes = o.quick ? "8:1M:8" : "8:1M:2";  // its heap holds n x the largest
    if (o.sizes.empty()) o.sizes = o.gpu ? (o.quick ? "8:256M:16" : "8:256M:4") : o.quick ? "8:64M:8" : "8:64M:2";
    const std::string dir = exe_dir();
    if (o.hgasrun.empty()) o.hgasrun = dir + "/../hgasrun/hgasrun";
    if (o.bench_dir.empty()) o.bench_dir = dir + "/../../bench";
    return o;
}

// ---------------------------------------------------------------------------------------
// child processes

struct child_result {
    int rc = -1;  // exit status, 128+N for signal N, -1 if it could not start, 124 timeout
    std::string out;
};

struct spawn_spec {
    std::vector<std::string> argv;
    std::vector<std::pair<std::string, std::string>> env;  // value "" with unset=true unsets
    std::vector<std::string> unset;
    int cpu = -1;
    std::string err_file;  // stderr goes there when set (else it passes through)
};

// The environment that selects one of hgas-bench's transports (shm, ucx, ucx-am) in a child.
std::vector<std::pair<std::string, std::string>> transport_env(const std::string &t) {
    if (t == "shm") return {{"HGAS_TRANSPORTS", "self,shm"}};
    return {{"HGAS_TRANSPORTS", "ucx"}, {"HGAS_UCX_MODE", t == "ucx-am" ? "am" : "rma"}};
}

// A child benchmark's output: its JSON records go to `out` (when given) and are counted, with
// those whose data check failed; its table lines ("# ...") are printed unless --verbose already
// showed everything.
void collect_records(const child_result &r, FILE *out, bool verbose, size_t &recs, size_t &bad) {
    for (auto &line : split(r.out, '\n')) {
        if (line.rfind("{", 0) == 0) {
            if (out) std::fprintf(out, "%s\n", line.c_str());
            ++recs;
            if (line.find("\"verified\":false") != std::string::npos) ++bad;
        } else if (!verbose && line.rfind("# ", 0) == 0) {
            std::printf("%s\n", line.c_str());
        }
    }
}

// The end of a failing child's output, for its FAILED line.
std::string output_tail(const child_result &r) { return r.out.substr(r.out.size() > 2000 ? r.out.size() - 2000 : 0); }

void child_setup(const spawn_spec &s) {
    setpgid(0, 0);
    if (!s.err_file.empty()) {
        int fd = open(s.err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) dup2(fd, 2);
    }
    for (auto &u : s.unset) unsetenv(u.c_str());
    for (auto &[k, v] : s.env) setenv(k.c_str(), v.c_str(), 1);
    if (s.cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(s.cpu, &set);
        sched_setaffinity(0, sizeof set, &set);
    }
    std::vector<char *> av;
    for (auto &a : s.argv) av.push_back(const_cast<char *>(a.c_str()));
    av.push_back(nullptr);
    execvp(av[0], av.data());
    std::fprintf(stderr, "hgas-bench: cannot run %s: %s\n", av[0], std::strerror(errno));
    _exit(127);
}

int decode_status(int st) {
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    return -1;
}

// Runs a child with its stdout captured (stderr passes through), up to `timeout_s`. Lines
// starting with "# " are echoed to stderr when `echo` is set.
child_result run_capture(const spawn_spec &s, double timeout_s, bool echo) {
    child_result r;
    int fd[2];
    if (pipe(fd) != 0) return r;
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid < 0) return r;
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 1);
        close(fd[1]);
        child_setup(s);
    }
    close(fd[1]);
    const double t_end = static_cast<double>(std::time(nullptr)) + timeout_s;
    std::string line;
    bool timed_out = false;
    for (;;) {
        pollfd p{fd[0], POLLIN, 0};
        int n = poll(&p, 1, 500);
        if (n > 0) {
            char buf[8192];
            ssize_t k = read(fd[0], buf, sizeof buf);
            if (k <= 0) break;
            r.out.append(buf, static_cast<size_t>(k));
            if (echo) {
                line.append(buf, static_cast<size_t>(k));
                size_t nl;
                while ((nl = line.find('\n')) != std::string::npos) {
                    if (line.compare(0, 2, "# ") == 0) std::fprintf(stderr, "%s\n", line.substr(0, nl).c_str());
                    line.erase(0, nl + 1);
                }
            }
        }
        if (static_cast<double>(std::time(nullptr)) > t_end) {
            timed_out = true;
            kill(-pid, SIGTERM);
            sleep(1);
            kill(-pid, SIGKILL);
            break;
        }
    }
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    r.rc = timed_out ? 124 : decode_status(st);
    return r;
}

pid_t spawn_background(const spawn_spec &s) {
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, 1);
            dup2(devnull, 2);
        }
        child_setup(s);
    }
    return pid;
}

void stop_background(pid_t pid) {
    if (pid <= 0) return;
    for (int i = 0; i < 20; ++i) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) return;
        usleep(50000);
    }
    kill(-pid, SIGTERM);
    usleep(200000);
    kill(-pid, SIGKILL);
    waitpid(pid, nullptr, 0);
}

// ---------------------------------------------------------------------------------------
// results

struct result {
    std::string bench, impl, transport, note, raw;
    size_t bytes = 0;
    bool bw = false;      // bandwidth (gbps) or latency (median_us)
    double value = NAN;   // GB/s for bandwidth, microseconds for latency
    bool verified = true;
};

// Reads the flat JSON objects the benchmark programs print (strings, numbers, booleans).
std::map<std::string, std::string> parse_flat_json(const std::string &line) {
    std::map<std::string, std::string> m;
    size_t i = 1;
    while (i < line.size()) {
        size_t k0 = line.find('"', i);
        if (k0 == std::string::npos) break;
        size_t k1 = line.find('"', k0 + 1);
        if (k1 == std::string::npos) break;
        std::string key = line.substr(k0 + 1, k1 - k0 - 1);
        size_t c = line.find(':', k1);
        if (c == std::string::npos) break;
        size_t v0 = c + 1;
        std::string val;
        if (line[v0] == '"') {
            size_t v1 = line.find('"', v0 + 1);
            val = line.substr(v0 + 1, v1 - v0 - 1);
            i = v1 + 1;
        } else {
            size_t v1 = line.find_first_of(",}", v0);
            val = line.substr(v0, v1 - v0);
            i = v1;
        }
        m[key] = val;
    }
    return m;
}

std::vector<result> parse_results(const std::string &out, const std::string &transport) {
    std::vector<result> v;
    for (auto &line : split(out, '\n')) {
        if (line.rfind("{\"bench\"", 0) != 0) continue;
        auto m = parse_flat_json(line);
        result r;
        r.raw = line;
        r.bench = m["bench"];
        r.impl = m["impl"];
        r.transport = transport;
        r.note = m["note"];
        r.bytes = std::strtoull(m["bytes"].c_str(), nullptr, 10);
        r.bw = m.count("gbps") > 0;
        r.value = std::atof((r.bw ? m["gbps"] : m["median_us"]).c_str());
        r.verified = m["verified"] == "true";
        v.push_back(r);
    }
    return v;
}

std::string size_str(size_t b) {
    char buf[32];
    if (b >= (1u << 20) && b % (1u << 20) == 0) std::snprintf(buf, sizeof buf, "%zuM", b >> 20);
    else if (b >= 1024 && b % 1024 == 0) std::snprintf(buf, sizeof buf, "%zuK", b >> 10);
    else std::snprintf(buf, sizeof buf, "%zu", b);
    return buf;
}

std::string json_escape(const std::string &s) {
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\', o += c;
        else if (c == '\n') o += "\\n";
        else if (static_cast<unsigned char>(c) < 0x20) o += ' ';
        else o += c;
    }
    return o;
}

// ---------------------------------------------------------------------------------------
// the runs

bool wants_bench(const options &o, const std::string &bench) {
    if (o.only.empty()) return true;
    for (auto &b : split(o.only, ','))
        if (b == bench) return true;
    return false;
}

struct peer_state {
    std::string name;    // "oshmem" or "ucx_perftest"
    std::string status;  // "ok" or why it is absent / failed
    std::vector<result> results;
};

struct bench_run {
    options o;
    std::vector<result> results;  // hgas, every transport
    std::map<std::string, peer_state> peers;  // by peer name
    std::vector<std::string> problems;
    std::string tmpdir;

    bool wants(const char *bench) const { return wants_bench(o, bench); }

    std::vector<std::string> program_args(const std::string &transport) const {
        std::vector<std::string> a = {"--sizes", o.sizes, "--transport", transport};
        if (o.quick) a.push_back("--quick");
        if (!o.pin) a.push_back("--no-pin");
        if (!o.only.empty()) a.insert(a.end(), {"--only", o.only});
        return a;
    }

    void run_hgas(const std::string &transport) {
        const std::vector<std::pair<std::string, std::string>> env = transport_env(transport);
        for (const char *prog : {"hgas-bench-lat", "hgas-bench-bw"}) {
            spawn_spec s;
            s.argv = {o.hgasrun, "-n", "2", "--timeout", "900", o.bench_dir + "/" + prog};
            auto args = program_args(transport);
            s.argv.insert(s.argv.end(), args.begin(), args.end());
            s.env = env;
            std::fprintf(stderr, "hgas-bench: %s: %s over %s ...\n", transport.c_str(), prog, transport.c_str());
            auto r = run_capture(s, 1000, o.verbose);
            auto v = parse_results(r.out, transport);
            for (auto &x : v)
                if (!x.verified) problems.push_back(x.impl + " " + x.bench + " " + size_str(x.bytes) + " over " + transport + ": data check failed");
            results.insert(results.end(), v.begin(), v.end());
            if (r.rc != 0)
                problems.push_back(std::string(prog) + " over " + transport + " exited with status " + std::to_string(r.rc) +
                                   " (" + std::to_string(v.size()) + " results)");
        }
    }

    // OpenSHMEM peer of the shm path: built now with oshcc into a temporary folder.
    void run_oshmem() {
        peer_state &p = peers["oshmem"];
        p.name = "oshmem";
        const std::string oshcc = which("oshcc"), oshrun = which("oshrun");
        if (oshcc.empty() || oshrun.empty()) {
            p.status = "absent: no oshcc/oshrun on PATH (bench/install-peers.sh installs Open MPI's)";
            return;
        }
        std::string src = HGAS_BENCH_SOURCE_DIR;
        if (!is_file(src + "/peer_shmem.c")) {
            p.status = "absent: bench/peer_shmem.c not found at '" + src + "'";
            return;
        }
        const std::string exe = tmpdir + "/peer_shmem";
        spawn_spec cc;
        cc.argv = {oshcc, "-O2", "-I" + src, "-o", exe, src + "/peer_shmem.c"};
        std::fprintf(stderr, "hgas-bench: building the OpenSHMEM peer with %s ...\n", oshcc.c_str());
        auto c = run_capture(cc, 300, false);
        if (c.rc != 0) {
            p.status = "failed: oshcc exited with status " + std::to_string(c.rc);
            return;
        }
        spawn_spec s;
        s.argv = {oshrun, "-np", "2"};
        if (geteuid() == 0) s.argv.push_back("--allow-run-as-root");
        // The peer pins itself like the hgas programs do; Open MPI's own binding is off.
        s.argv.insert(s.argv.end(), {"--oversubscribe", "--bind-to", "none", exe});
        auto args = program_args("shm");
        s.argv.insert(s.argv.end(), args.begin(), args.end());
        s.unset = {"LD_LIBRARY_PATH"};  // Open MPI uses the system UCX, not the one hgas was built with
        // Its stderr (Open MPI's notices, a crash's backtrace) goes to a file, not into our table.
        const std::string err = "/tmp/hgas-bench-oshmem-" + std::to_string(getpid()) + ".err";
        s.err_file = err;
        std::fprintf(stderr, "hgas-bench: shm peer: oshrun -np 2 peer_shmem ...\n");
        auto r = run_capture(s, 1200, o.verbose);
        struct stat st {};
        const bool said = stat(err.c_str(), &st) == 0 && st.st_size > 0;
        if (r.rc > 128 && r.rc < 128 + 65)
            std::fprintf(stderr, "hgas-bench: peer oshmem (oshrun -np 2 peer_shmem) crashed (signal %d); its output in %s\n",
                         r.rc - 128, err.c_str());
        else if (r.rc != 0)
            std::fprintf(stderr, "hgas-bench: peer oshmem (oshrun -np 2 peer_shmem) exited with status %d; its output in %s\n",
                         r.rc, err.c_str());
        else if (!said)
            unlink(err.c_str());
        else if (o.verbose)
            std::fprintf(stderr, "hgas-bench: peer oshmem's messages are in %s\n", err.c_str());
        p.results = parse_results(r.out, "shm");
        for (auto &x : p.results) x.impl = "oshmem";
        if (p.results.empty()) {
            p.status = "failed: oshrun exited with status " + std::to_string(r.rc) + " and no results";
        } else if (r.rc != 0) {
            // Open MPI 4.1.4's OSHMEM with UCX 1.13 (Debian 12) crashes in shmem_finalize
            // after every result is out; the results stand.
            p.status = "ok (exit status " + std::to_string(r.rc) + " at shmem_finalize after all results, a known Open MPI 4.1 + UCX 1.13 crash)";
        } else {
            p.status = "ok";
        }
    }

    std::string find_perftest() const {
        if (!o.perftest.empty()) return o.perftest;
        std::string pre = HGAS_BENCH_UCX_PREFIX;
        if (!pre.empty() && is_exec(pre + "/bin/ucx_perftest")) return pre + "/bin/ucx_perftest";
        // The wheel in the build's virtual environment (make deps).
        const std::string py = exe_dir() + "/../../venv/bin/python";
        if (is_exec(py)) {
            spawn_spec s;
            s.argv = {py, "-c", "import libucx,os;print(os.path.dirname(libucx.__file__))"};
            auto r = run_capture(s, 60, false);
            std::string d = r.out.substr(0, r.out.find('\n'));
            if (r.rc == 0 && is_exec(d + "/bin/ucx_perftest")) return d + "/bin/ucx_perftest";
        }
        return which("ucx_perftest");
    }

    // One ucx_perftest measurement: server on CPU 1, client on CPU 0, over localhost.
    std::optional<std::vector<double>> perftest(const std::string &exe, const std::string &test, size_t bytes,
                                                long iters, int port) {
        const std::string prefix = exe.substr(0, exe.rfind('/')) + "/..";
        std::vector<std::pair<std::string, std::string>> env;
        const char *old = std::getenv("LD_LIBRARY_PATH");
        env.push_back({"LD_LIBRARY_PATH", prefix + "/lib" + (old && *old ? std::string(":") + old : "")});
        for (int attempt = 0; attempt < 4; ++attempt, ++port) {
            spawn_spec srv;
            srv.argv = {exe, "-p", std::to_string(port)};
            srv.env = env;
            srv.cpu = o.pin ? 1 : -1;
            pid_t sp = spawn_background(srv);
            usleep(300000);
            spawn_spec cl;
            cl.argv = {exe, "127.0.0.1", "-p", std::to_string(port), "-t", test, "-s", std::to_string(bytes),
                       "-n", std::to_string(iters), "-w", std::to_string(std::max(10L, iters / 10)), "-f"};
            cl.env = env;
            cl.cpu = o.pin ? 0 : -1;
            auto r = run_capture(cl, 300, false);
            stop_background(sp);
            if (r.rc != 0) continue;
            // The last line: iterations, latency p50/avg/overall (us), bandwidth avg/overall
            // (MB/s, MB = 2^20 bytes), message rate avg/overall.
            std::vector<double> nums;
            for (auto &line : split(r.out, '\n')) {
                std::vector<double> v;
                char *p = line.data();
                bool all = true;
                for (auto &tok : split(line, ' ')) {
                    if (tok.empty() || tok == "Final:") continue;
                    char *end;
                    double d = std::strtod(tok.c_str(), &end);
                    if (*end) { all = false; break; }
                    v.push_back(d);
                }
                (void)p;
                if (all && v.size() == 8) nums = v;
            }
            if (nums.size() == 8) return nums;
        }
        return std::nullopt;
    }

    void run_perftest(const std::vector<size_t> &sizes) {
        peer_state &p = peers["ucx_perftest"];
        p.name = "ucx_perftest";
        const std::string exe = find_perftest();
        if (exe.empty() || !is_exec(exe)) {
            p.status = "absent: no ucx_perftest (make deps installs the UCX wheel that ships it)";
            return;
        }
        int port = 20000 + static_cast<int>(getpid() % 20000);
        auto add = [&](const char *bench, const char *test, size_t bytes, bool bw, long iters) {
            std::fprintf(stderr, "hgas-bench: ucx peer: ucx_perftest -t %s -s %zu ...\n", test, bytes);
            auto n = perftest(exe, test, bytes, iters, port);
            port += 5;
            if (!n) {
                problems.push_back(std::string("ucx_perftest -t ") + test + " -s " + std::to_string(bytes) + " failed");
                return;
            }
            result r;
            r.bench = bench;
            r.impl = "ucx_perftest";
            r.transport = "ucx";
            r.bytes = bytes;
            r.bw = bw;
            r.value = bw ? (*n)[4] * 1048576.0 / 1e9 : (*n)[1];  // avg MB/s -> GB/s; p50 latency
            r.note = std::string("ucx_perftest -t ") + test;
            char raw[512];
            std::snprintf(raw, sizeof raw,
                          "{\"bench\":\"%s\",\"impl\":\"ucx_perftest\",\"transport\":\"ucx\",\"bytes\":%zu,"
                          "\"%s\":%.4f,\"p50_us\":%.4f,\"avg_us\":%.4f,\"mbps_avg\":%.2f,\"iters\":%ld,"
                          "\"note\":\"%s\"}",
                          bench, bytes, bw ? "gbps" : "median_us", r.value, (*n)[1], (*n)[2], (*n)[4], iters,
                          r.note.c_str());
            r.raw = raw;
            if (o.verbose)
                std::fprintf(stderr, "# ucx_perftest %-14s %8s %10.3f %s\n", test, size_str(bytes).c_str(), r.value,
                             bw ? "GB/s" : "us");
            p.results.push_back(r);
        };
        if (wants("put_lat"))
            add("put_lat", "ucp_put_lat", 8, false, o.quick ? 20000 : 100000);
        if (wants("put_bw")) {
            // A few points of the sweep: small, cache-sized and large messages.
            const size_t k4 = nearest(sizes, 4096), k64 = nearest(sizes, 65536), m2 = nearest(sizes, 2u << 20);
            for (size_t s : sizes) {
                bool pick = s == sizes.front() || s == k4 || s == k64 || s == m2 || s == sizes.back();
                if (o.quick) pick = s == sizes.front() || s == k64 || s == m2;
                if (!pick) continue;
                const double budget = o.quick ? 2e9 : 8e9;
                long it = static_cast<long>(std::min(o.quick ? 50000.0 : 200000.0, std::max(50.0, budget / double(s))));
                add("put_bw", "ucp_put_bw", s, true, it);
            }
        }
        p.status = p.results.empty() ? "failed: no ucx_perftest result" : "ok (" + exe + ")";
    }
};

// ---------------------------------------------------------------------------------------
// the report

struct target {
    std::string transport, bench, peer;
    size_t bytes;
    bool bw;
    double limit;  // latency: ratio <= limit; bandwidth: ratio >= limit
    const char *text;
};

const std::vector<target> k_targets = {
    {"shm", "put_lat", "oshmem", 8, false, 1.5, "p + wait_until ping-pong <= 1.5x OpenSHMEM"},
    {"shm", "fadd_lat", "oshmem", 8, false, 1.5, "fetch_add <= 1.5x OpenSHMEM"},
    {"shm", "barrier_lat", "oshmem", 0, false, 1.5, "barrier <= 1.5x OpenSHMEM"},
    {"shm", "put_bw", "oshmem", 2u << 20, true, 0.9, "putmem_nbi + quiet 2 MiB >= 0.9x OpenSHMEM"},
    {"ucx", "put_lat", "ucx_perftest", 8, false, 1.2, "put 8 B latency <= 1.2x ucp_put_lat"},
    {"ucx", "put_bw", "ucx_perftest", 65536, true, 0.9, "put bandwidth 64 KiB >= 0.9x ucp_put_bw"},
    {"ucx", "put_bw", "ucx_perftest", 2u << 20, true, 0.9, "put bandwidth 2 MiB >= 0.9x ucp_put_bw"},
};

const char *peer_of(const std::string &transport) { return transport == "shm" ? "oshmem" : "ucx_perftest"; }

const result *find(const std::vector<result> &v, const std::string &bench, size_t bytes) {
    for (auto &r : v)
        if (r.bench == bench && r.bytes == bytes) return &r;
    return nullptr;
}

struct comparison {
    std::string transport, bench, peer;
    size_t bytes;
    bool bw;
    double hgas, peer_value, ratio;
};

}  // namespace

// GPU mode: every program prints JSON records and "# " table lines; all records go to one
// JSON-lines file and bench-plot.py prints the ratios.
int run_gpu(const options &o) {
    const std::string bench = o.bench_dir, gpu = o.bench_dir + "/gpu";
    std::vector<std::pair<std::string, spawn_spec>> runs;
    auto add = [&](const std::string &name, std::vector<std::string> argv,
                   std::vector<std::pair<std::string, std::string>> env = {}) {
        if (!is_exec(argv[0]) || (argv[0] == o.hgasrun && !is_exec(argv[3]))) {
            std::printf("hgas-bench: %s: not built, skipped\n", name.c_str());
            return;
        }
        argv.insert(argv.end(), {"--sizes", o.sizes});
        if (o.quick) argv.push_back("--quick");
        spawn_spec s;
        s.argv = std::move(argv);
        s.env = std::move(env);
        runs.push_back({name, std::move(s)});
    };
    const std::string kinds = bench + "/hgas-bench-kinds", run = o.hgasrun;
    int ngpu = 0;
    {
        spawn_spec q;
        q.argv = {"nvidia-smi", "-L"};
        child_result r = run_capture(q, 30, false);
        for (size_t p = 0; (p = r.out.find("GPU ", p)) != std::string::npos; ++p)
            if (p == 0 || r.out[p - 1] == '\n') ++ngpu;
    }
    std::printf("hgas-bench --gpu: %d GPU(s) visible, sizes %s\n", ngpu, o.sizes.c_str());
    if (ngpu == 0) {
        std::fprintf(stderr, "hgas-bench: --gpu needs a GPU (nvidia-smi -L lists none)\n");
        return 1;
    }
    add("hgas: same process", {run, "-n", "1", kinds, "--kind", "cuda", "--transport", "self"});
    add("hgas: same process, registration cache off (pageable user buffers)",
        {run, "-n", "1", kinds, "--kind", "cuda", "--dirs", "h2d,d2h", "--transport", "self-pageable"},
        {{"HGAS_REG_CACHE", "off"}});
    add("hgas: same process, registered host buffers",
        {run, "-n", "1", kinds, "--kind", "cuda", "--dirs", "h2d,d2h", "--register", "--transport", "self-registered"});
    add("hgas: one GPU, two ranks", {run, "-n", "2", kinds, "--kind", "cuda", "--transport", "same-gpu"},
        {{"CUDA_VISIBLE_DEVICES", "0"}});
    add("hgas: device API (kernels, stream operations)", {run, "-n", "2", gpu + "/hgas-device-bench"});
    add("hgas: tagged messages between GPU buffers, hand-written baselines, halo face",
        {run, "-n", "2", gpu + "/hgas-bench-msg-gpu"});
    if (ngpu >= 2) {
        add("hgas: peer GPUs", {run, "-n", "2", kinds, "--kind", "cuda", "--peer", "--transport", "ipc"});
        // Small peer copies by the copy agent instead of the copy engines (HGAS_GPU_AGENT_PEERS).
        add("hgas: peer GPUs, copy agent for small copies",
            {run, "-n", "2", kinds, "--kind", "cuda", "--peer", "--dirs", "d2d", "--only", "put_lat,get_lat",
             "--transport", "ipc-agent"},
            {{"HGAS_GPU_AGENT_PEERS", "1"}});
        add("hgas: staged", {run, "-n", "2", kinds, "--kind", "cuda", "--peer", "--transport", "staged"},
            {{"HGAS_PATH", "staged"}, {"HGAS_HEAP_SIZE", "768M"}, {"HGAS_STAGING_CHUNK", "4M"},
             {"HGAS_STAGING_SLOTS", "8"}});
    }
    if (o.peers) {
        add("peer: CUDA copies", {gpu + "/hgas-gpu-peers"});
        add("limits: host-GPU round trip, staging by hand", {gpu + "/hgas-gpu-limits"});
        add("peer: NVSHMEM", {gpu + "/hgas-nvshmem-peer"});
        add("peer: NCCL", {gpu + "/hgas-nccl-peer"});
        add("peer: user-level staging", {run, "-n", "2", gpu + "/hgas-gpu-staging"});
    }
    std::string jsonl = o.json.empty() ? "/tmp/hgas-bench-gpu-" + std::to_string(getpid()) + ".jsonl" : o.json;
    FILE *out = std::fopen(jsonl.c_str(), "w");
    if (!out) {
        std::fprintf(stderr, "hgas-bench: cannot write %s: %s\n", jsonl.c_str(), std::strerror(errno));
        return 1;
    }
    int failed = 0;
    const double t_start = static_cast<double>(std::time(nullptr));
    for (size_t i = 0; i < runs.size(); ++i) {
        auto &[name, spec] = runs[i];
        double limit = 300;
        if (o.budget > 0) {
            // An equal share of what is left; the kinds program fits its loops into 80% of it
            // (its start-up and checks take the rest), and a program that still overruns is
            // stopped at its share plus a grace, keeping what it printed.
            const double left = o.budget - (static_cast<double>(std::time(nullptr)) - t_start);
            if (left < 5) {
                std::printf("# skipped %s: the time budget (--budget %g s) is spent\n", name.c_str(), o.budget);
                continue;
            }
            const double share = left / static_cast<double>(runs.size() - i);
            if (spec.argv.size() > 3 && spec.argv[3] == kinds) {
                char b[32];
                std::snprintf(b, sizeof b, "%.1f", share * 0.8);
                spec.argv.insert(spec.argv.end(), {"--budget", b});
            }
            limit = share + 10;
        }
        std::printf("hgas-bench: %s ...\n", name.c_str());
        std::fflush(stdout);
        child_result r = run_capture(spec, limit, o.verbose);
        size_t recs = 0, bad = 0;
        collect_records(r, out, o.verbose, recs, bad);
        if (r.rc != 0 || bad) {
            ++failed;
            std::printf("hgas-bench: %s FAILED (status %d, %zu failed data checks)\n%s\n", name.c_str(), r.rc, bad,
                        output_tail(r).c_str());
        }
        std::printf("hgas-bench: %s: %zu records\n", name.c_str(), recs);
        std::fflush(out);  // a run stopped from outside keeps the records of the programs done
    }
    std::fclose(out);
    spawn_spec plot;
    plot.argv = {"python3", HGAS_BENCH_PLOT, "--no-plots", jsonl};
    child_result pr = run_capture(plot, 120, false);
    std::printf("%s", pr.out.c_str());
    if (o.json.empty()) unlink(jsonl.c_str());
    return failed ? 1 : 0;
}

// Message mode: hgas-bench-msg over each transport (two ranks), its table lines printed and its
// records written as JSON lines.
int run_msg(const options &o) {
    const std::string prog = o.bench_dir + "/hgas-bench-msg";
    if (!is_exec(prog) || !is_exec(o.hgasrun)) {
        std::fprintf(stderr, "hgas-bench: %s or %s is missing; build them (ninja hgas-bench-msg hgasrun)\n",
                     prog.c_str(), o.hgasrun.c_str());
        return 1;
    }
    FILE *out = o.json.empty() ? nullptr : std::fopen(o.json.c_str(), "w");
    if (!o.json.empty() && !out) {
        std::fprintf(stderr, "hgas-bench: cannot write %s: %s\n", o.json.c_str(), std::strerror(errno));
        return 1;
    }
    int failed = 0;
    for (const auto &t : o.transports) {
        spawn_spec s;
        s.argv = {o.hgasrun, "-n", "2", prog, "--sizes", o.sizes, "--transport", t};
        if (o.quick) s.argv.push_back("--quick");
        if (!o.pin) s.argv.push_back("--no-pin");
        s.env = transport_env(t);
        std::printf("hgas-bench --msg: %s ...\n", t.c_str());
        std::fflush(stdout);
        child_result r = run_capture(s, 600, o.verbose);
        size_t recs = 0, bad = 0;
        collect_records(r, out, o.verbose, recs, bad);
        if (r.rc != 0 || bad || !recs) {
            ++failed;
            std::printf("hgas-bench --msg: %s FAILED (status %d, %zu records, %zu failed data checks)\n%s\n", t.c_str(),
                        r.rc, recs, bad, output_tail(r).c_str());
        }
    }
    if (out) std::fclose(out);
    return failed ? 1 : 0;
}

// Collective mode: hgas-bench-coll (host memory, each transport) or, with --gpu,
// gpu/hgas-bench-coll-gpu (GPU memory, hgas against NCCL), under hgasrun -n N per N of --ranks.
int run_coll(const options &o) {
    const std::string prog = o.gpu ? o.bench_dir + "/gpu/hgas-bench-coll-gpu" : o.bench_dir + "/hgas-bench-coll";
    if (!is_exec(prog) || !is_exec(o.hgasrun)) {
        std::fprintf(stderr, "hgas-bench: %s or %s is missing; build them (ninja %s hgasrun)%s\n", prog.c_str(),
                     o.hgasrun.c_str(), o.gpu ? "hgas-bench-coll-gpu" : "hgas-bench-coll",
                     o.gpu ? "; hgas-bench-coll-gpu is built where CUDA and NCCL's headers are" : "");
        return 1;
    }
    FILE *out = o.json.empty() ? nullptr : std::fopen(o.json.c_str(), "w");
    if (!o.json.empty() && !out) {
        std::fprintf(stderr, "hgas-bench: cannot write %s: %s\n", o.json.c_str(), std::strerror(errno));
        return 1;
    }
    const std::string ranks = !o.ranks.empty() ? o.ranks : o.gpu ? "2" : "2,4";
    const std::vector<std::string> transports = o.gpu ? std::vector<std::string>{"shm"} : o.transports;
    int failed = 0;
    for (const auto &t : transports)
        for (const auto &n : split(ranks, ',')) {
            spawn_spec s;
            s.argv = {o.hgasrun, "-n", n, prog};
            if (o.gpu) {
                s.env = {{"HGAS_CUDA_HEAP_SIZE", "512M"}};
            } else {
                s.argv.insert(s.argv.end(), {"--sizes", o.sizes, "--transport", t});
                if (o.quick) s.argv.push_back("--quick");
                if (!o.pin) s.argv.push_back("--no-pin");
                s.env = transport_env(t);
            }
            std::printf("hgas-bench --coll%s: %s ranks%s ...\n", o.gpu ? " --gpu" : "", n.c_str(),
                        o.gpu ? "" : (", " + t).c_str());
            std::fflush(stdout);
            child_result r = run_capture(s, 600, o.verbose);
            size_t recs = 0, bad = 0;
            collect_records(r, out, o.verbose, recs, bad);
            if (r.rc != 0 || bad || !recs) {
                ++failed;
                std::printf("hgas-bench --coll: %s ranks FAILED (status %d, %zu records, %zu failed data checks)\n%s\n",
                            n.c_str(), r.rc, recs, bad, output_tail(r).c_str());
            }
        }
    if (out) std::fclose(out);
    return failed ? 1 : 0;
}

// Start-up mode: hgas-bench-init under hgasrun -n N for each N; the median of --repeat runs
// per N goes to the JSON lines, and tools/init-plot.py prints the table and draws the plot.
int run_init(const options &o) {
    const std::string prog = o.bench_dir + "/hgas-bench-init";
    if (!is_exec(o.hgasrun) || !is_exec(prog)) {
        std::fprintf(stderr, "hgas-bench: --init needs %s and %s; build them (ninja hgasrun hgas-bench-init)\n",
                     o.hgasrun.c_str(), prog.c_str());
        return 1;
    }
    const std::string ranks = !o.ranks.empty() ? o.ranks : o.quick ? "2,4,8,16,32,64" : "2,4,8,16,32,64,128,256";
    const int repeat = o.repeat ? o.repeat : o.quick ? 1 : 3;
    std::string jsonl = o.json.empty() ? "/tmp/hgas-bench-init-" + std::to_string(getpid()) + ".jsonl" : o.json;
    FILE *out = std::fopen(jsonl.c_str(), "w");
    if (!out) {
        std::fprintf(stderr, "hgas-bench: cannot write %s: %s\n", jsonl.c_str(), std::strerror(errno));
        return 1;
    }
    std::printf("hgas-bench --init: ranks %s, %d run(s) each (median kept), %ld CPUs\n", ranks.c_str(), repeat,
                sysconf(_SC_NPROCESSORS_ONLN));
    int failed = 0;
    for (auto &n : split(ranks, ',')) {
        std::vector<std::pair<double, std::string>> got;  // (init_s, record)
        for (int k = 0; k < repeat; ++k) {
            spawn_spec s;
            s.argv = {o.hgasrun, "-n", n, prog};
            child_result r = run_capture(s, 600, o.verbose);
            std::string rec;
            for (auto &line : split(r.out, '\n'))
                if (line.rfind("{", 0) == 0 && line.find("\"bench\":\"init\"") != std::string::npos) rec = line;
            if (r.rc != 0 || rec.empty()) {
                ++failed;
                std::printf("hgas-bench: init of %s ranks FAILED (status %d)\n%s\n", n.c_str(), r.rc,
                            output_tail(r).c_str());
                break;
            }
            got.push_back({std::stod(parse_flat_json(rec)["init_s"]), rec});
        }
        if (got.empty()) continue;
        std::sort(got.begin(), got.end());
        const std::string &median = got[got.size() / 2].second;
        std::fprintf(out, "%s\n", median.c_str());
        std::fflush(out);
        auto m = parse_flat_json(median);
        std::printf("hgas-bench: %5s ranks: init %s s (cpu %s s, ranks entered over %s s)\n", n.c_str(),
                    m["init_s"].c_str(), m["cpu_s"].c_str(), m["spawn_s"].c_str());
        std::fflush(stdout);
    }
    std::fclose(out);
    spawn_spec plot;
    plot.argv = {"python3", HGAS_BENCH_INIT_PLOT, "--out", o.plot_dir, jsonl};
    child_result pr = run_capture(plot, 120, false);
    std::printf("%s", pr.out.c_str());
    if (o.json.empty()) unlink(jsonl.c_str());
    return failed ? 1 : 0;
}

// Busy-target mode: hgas-bench-busy per transport with the helper thread off and on; the
// records go to --json, and the table sets each point's busy latency beside the idle one.
int run_busy(const options &o) {
    const std::string prog = o.bench_dir + "/hgas-bench-busy";
    if (!is_exec(prog) || !is_exec(o.hgasrun)) {
        std::fprintf(stderr, "hgas-bench: --busy needs %s and %s; build them (ninja hgas-bench-busy hgasrun)\n",
                     prog.c_str(), o.hgasrun.c_str());
        return 1;
    }
    FILE *out = o.json.empty() ? nullptr : std::fopen(o.json.c_str(), "w");
    if (!o.json.empty() && !out) {
        std::fprintf(stderr, "hgas-bench: cannot write %s: %s\n", o.json.c_str(), std::strerror(errno));
        return 1;
    }
    const auto sizes = expand_sizes(o.sizes);
    // Device memory without a GPU: sim memory, two buffers of the largest size per rank.
    const std::string sim_heap = std::to_string(2 * (sizes.back() >> 20) + 16) + "M";
    char busy_ms[32];
    std::snprintf(busy_ms, sizeof busy_ms, "%g", o.busy_ms);
    int failed = 0;
    // (transport, op, mem, bytes) -> {idle off, busy off, idle on, busy on}, microseconds; the
    // same for the peer rows (memcpy through the mapping, host memory over shm).
    using busy_key = std::tuple<std::string, std::string, std::string, size_t>;
    std::map<busy_key, std::array<double, 4>> table, peer;
    for (const auto &t : o.transports)
        for (int helper = 0; helper < 2; ++helper) {
            spawn_spec s;
            s.argv = {o.hgasrun, "-n", "2", prog, "--sizes", o.sizes, "--transport", t, "--busy-ms", busy_ms};
            if (o.quick) s.argv.push_back("--quick");
            if (!o.pin) s.argv.push_back("--no-pin");
            s.env = transport_env(t);
            s.env.push_back({"HGAS_PROGRESS_THREAD", helper ? "1" : "0"});
            if (!std::getenv("HGAS_SIM_HEAP_SIZE")) s.env.push_back({"HGAS_SIM_HEAP_SIZE", sim_heap});
            std::printf("hgas-bench --busy: %s, helper thread %s ...\n", t.c_str(), helper ? "on" : "off");
            std::fflush(stdout);
            child_result r = run_capture(s, 900, o.verbose);
            size_t recs = 0, bad = 0;
            for (auto &line : split(r.out, '\n')) {
                if (line.rfind("{", 0) != 0) continue;
                if (out) std::fprintf(out, "%s\n", line.c_str());
                ++recs;
                auto m = parse_flat_json(line);
                if (m["verified"] != "true") ++bad;
                const std::string op = m["bench"].substr(m["bench"].find('_') + 1);
                const auto key = std::make_tuple(t, op, m["mem"] + " (" + m["kind"] + ")",
                                                 static_cast<size_t>(std::strtoull(m["bytes"].c_str(), nullptr, 10)));
                auto &tab = m["impl"] == "memcpy" ? peer : table;
                auto it = tab.try_emplace(key, std::array<double, 4>{NAN, NAN, NAN, NAN}).first;
                it->second[helper * 2 + (m["target"] == "busy")] = std::atof(m["median_us"].c_str());
            }
            if (r.rc != 0 || bad || !recs) {
                ++failed;
                std::printf("hgas-bench --busy: %s FAILED (status %d, %zu records, %zu failed data checks)\n%s\n",
                            t.c_str(), r.rc, recs, bad, output_tail(r).c_str());
            }
        }
    if (out) std::fclose(out);
    std::printf("\nbusy target (computes %g ms without calling hgas) vs idle target: median latency in us.\n"
                "goal: helper on, busy <= idle + 2 us (the same runs, helper threads on: what a computing target "
                "costs). strict: helper on, busy <= idle with the helper threads off + 2 us (what the target "
                "costs plus what the helper threads cost the ranks' own calls).\nPeer (host memory over shm): "
                "memcpy through the mapping, no hgas call, under the strict column's conditions: idle target with "
                "the helper threads off, busy target with them on; 'bounded' where hgas loses no more than 2 us "
                "beyond what the memcpy loses between the two\n", o.busy_ms);
    std::printf("%-7s %-4s %-13s %8s | %10s %10s | %10s %10s | %10s %10s | %-6s %s\n", "transp", "op", "memory", "size",
                "idle", "busy", "idle+help", "busy+help", "cpy idle", "cpy b+help", "goal", "strict");
    size_t met = 0, met_strict = 0, bounded = 0, missed = 0;
    for (const auto &[k, v] : table) {
        met += v[3] <= v[2] + 2.0;
        const bool ok = v[3] <= v[0] + 2.0;
        auto pit = peer.find(k);
        const double ci = pit != peer.end() ? pit->second[0] : NAN, cb = pit != peer.end() ? pit->second[3] : NAN;
        // What the busy target and the helper threads cost the machine itself: what the memcpy
        // loses from the goal's baseline (idle, helpers off) to its condition (busy, helpers on).
        const bool bound = !ok && !std::isnan(ci) && v[3] - v[0] <= std::max(0.0, cb - ci) + 2.0;
        (ok ? met_strict : bound ? bounded : missed) += 1;
        std::printf("%-7s %-4s %-13s %8s | %10.2f %10.2f | %10.2f %10.2f | %10.2f %10.2f | %-6s %s\n",
                    std::get<0>(k).c_str(), std::get<1>(k).c_str(), std::get<2>(k).c_str(),
                    size_str(std::get<3>(k)).c_str(), v[0], v[1], v[2], v[3], ci, cb,
                    v[3] <= v[2] + 2.0 ? "met" : "missed", ok ? "met" : bound ? "bounded" : "missed");
    }
    std::printf("goal met at %zu of %zu points; strict: met at %zu, bounded by the memcpy peer at %zu, missed at %zu\n",
                met, table.size(), met_strict, bounded, missed);
    return failed ? 1 : 0;
}

int main(int argc, char **argv) {
    bench_run run;
    run.o = parse(argc, argv);
    options &o = run.o;
    if (o.coll) return run_coll(o);
    if (o.gpu) return run_gpu(o);
    if (o.msg) return run_msg(o);
    if (o.init) return run_init(o);
    if (o.busy) return run_busy(o);
    if (!is_exec(o.hgasrun)) {
        std::fprintf(stderr, "hgas-bench: the launcher %s is missing; build it (ninja hgasrun) or pass --hgasrun\n",
                     o.hgasrun.c_str());
        return 1;
    }
    for (const char *p : {"hgas-bench-lat", "hgas-bench-bw"})
        if (!is_exec(o.bench_dir + "/" + p)) {
            std::fprintf(stderr, "hgas-bench: %s/%s is missing; build the bench targets or pass --bench-dir\n",
                         o.bench_dir.c_str(), p);
            return 1;
        }
    char tmpl[] = "/tmp/hgas-bench-XXXXXX";
    if (!mkdtemp(tmpl)) {
        std::perror("hgas-bench: mkdtemp");
        return 1;
    }
    run.tmpdir = tmpl;
    const auto sizes = expand_sizes(o.sizes);

    for (auto &t : o.transports) run.run_hgas(t);
    bool need_ucx_peer = false;
    for (auto &t : o.transports) need_ucx_peer |= t != "shm";
    bool need_shm_peer = std::find(o.transports.begin(), o.transports.end(), "shm") != o.transports.end();
    if (o.peers) {
        if (need_shm_peer) run.run_oshmem();
        if (need_ucx_peer) run.run_perftest(sizes);
    }
    std::string rm = run.tmpdir + "/peer_shmem";
    unlink(rm.c_str());
    rmdir(run.tmpdir.c_str());

    // --- table -------------------------------------------------------------------------
    std::vector<comparison> comps;
    std::printf("\nhgas-bench: 2 ranks, rank 0 on CPU 0 and rank 1 on CPU 1%s; median of %s batches; sizes %s\n",
                o.pin ? "" : " (not pinned)", o.quick ? "5" : "11", o.sizes.c_str());
    std::printf("latency in us (hgas/peer: lower is better), bandwidth in GB/s = 1e9 B/s (hgas/peer: higher is better)\n");
    for (auto &t : o.transports) {
        const std::string pn = peer_of(t);
        const peer_state *ps = run.peers.count(pn) ? &run.peers[pn] : nullptr;
        std::string pstat = !o.peers ? "not run (--no-peers)" : ps ? ps->status : "not run";
        std::printf("\n== transport %s (%s) — peer %s: %s\n", t.c_str(),
                    t == "shm" ? "HGAS_TRANSPORTS=self,shm"
                               : (t == "ucx" ? "HGAS_TRANSPORTS=ucx HGAS_UCX_MODE=rma" : "HGAS_TRANSPORTS=ucx HGAS_UCX_MODE=am"),
                    pn == "oshmem" ? "OpenSHMEM (oshrun -np 2)" : "ucx_perftest (localhost)", pstat.c_str());
        std::printf("%-15s %7s %12s %12s %9s  %s\n", "bench", "bytes", "hgas", "peer", "hgas/peer", "target");
        for (auto &r : run.results) {
            if (r.transport != t) continue;
            const result *p = ps ? find(ps->results, r.bench, r.bytes) : nullptr;
            char hv[32], pv[32] = "-", ratio[32] = "-";
            std::snprintf(hv, sizeof hv, r.bw ? "%.3f GB/s" : "%.3f us", r.value);
            std::string tgt;
            if (p) {
                std::snprintf(pv, sizeof pv, p->bw ? "%.3f GB/s" : "%.3f us", p->value);
                double q = r.value / p->value;
                std::snprintf(ratio, sizeof ratio, "%.2f", q);
                comps.push_back({t, r.bench, pn, r.bytes, r.bw, r.value, p->value, q});
                for (auto &k : k_targets)
                    if (k.transport == t && k.bench == r.bench && k.bytes == r.bytes) {
                        bool met = k.bw ? q >= k.limit : q <= k.limit;
                        char b[64];
                        std::snprintf(b, sizeof b, "%s%.2f %s", k.bw ? ">=" : "<=", k.limit, met ? "met" : "MISSED");
                        tgt = b;
                    }
                if (!p->note.empty() && p->note.rfind("ucx_perftest", 0) != 0) tgt += tgt.empty() ? "(peer: 1.4 idiom)" : " (peer: 1.4 idiom)";
            }
            std::printf("%-15s %7s %12s %12s %9s  %s%s\n", r.bench.c_str(), size_str(r.bytes).c_str(), hv, pv, ratio,
                        tgt.c_str(), r.verified ? "" : " DATA CHECK FAILED");
        }
    }

    // --- targets -----------------------------------------------------------------------
    struct target_row {
        const target *k;
        std::string state;
        double ratio;
    };
    std::vector<target_row> trows;
    std::printf("\n== targets (the project's performance goals, docs/bench.md)\n");
    for (auto &k : k_targets) {
        if (std::find(o.transports.begin(), o.transports.end(), k.transport) == o.transports.end()) continue;
        const comparison *c = nullptr;
        for (auto &x : comps)
            if (x.transport == k.transport && x.bench == k.bench && x.bytes == k.bytes) c = &x;
        std::string state;
        double q = NAN;
        if (!c) {
            const peer_state *ps = run.peers.count(k.peer) ? &run.peers[k.peer] : nullptr;
            // A target names its size: only a measurement at that size can meet or miss it.
            const bool size_in = k.bytes == 0 || std::find(sizes.begin(), sizes.end(), k.bytes) != sizes.end();
            state = !o.peers ? "not measured (--no-peers)"
                    : !size_in ? "not measured: " + size_str(k.bytes) + " is not among the sizes (--sizes " + o.sizes + ")"
                    : !wants_bench(o, k.bench) ? "not measured: " + k.bench + " not in --only"
                    : ps && ps->status.rfind("ok", 0) != 0 ? "not measured: peer " + ps->status
                                                           : "not measured (no result of hgas or the peer at this size)";
        } else {
            q = c->ratio;
            state = (k.bw ? q >= k.limit : q <= k.limit) ? "met" : "MISSED";
        }
        trows.push_back({&k, state, q});
        char qs[32] = "-";
        if (!std::isnan(q)) std::snprintf(qs, sizeof qs, "%.2f", q);
        std::printf("  %-6s %-48s at %-5s ratio %-6s %s\n", k.transport.c_str(), k.text,
                    size_str(k.bytes).c_str(),
                    qs, state.c_str());
    }
    for (auto &pr : run.problems) std::printf("  problem: %s\n", pr.c_str());

    // --- JSON --------------------------------------------------------------------------
    if (!o.json.empty()) {
        FILE *f = std::fopen(o.json.c_str(), "w");
        if (!f) {
            std::fprintf(stderr, "hgas-bench: cannot write %s: %s\n", o.json.c_str(), std::strerror(errno));
            return 1;
        }
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        std::fprintf(f, "{\n  \"tool\": \"hgas-bench\",\n  \"host\": \"%s\",\n  \"cpus\": %ld,\n  \"time\": %lld,\n",
                     json_escape(host).c_str(), sysconf(_SC_NPROCESSORS_ONLN), static_cast<long long>(std::time(nullptr)));
        std::fprintf(f, "  \"options\": {\"sizes\": \"%s\", \"quick\": %s, \"pinned\": %s, \"peers\": %s},\n",
                     o.sizes.c_str(), o.quick ? "true" : "false", o.pin ? "true" : "false", o.peers ? "true" : "false");
        std::fprintf(f, "  \"peers\": {");
        bool first = true;
        for (auto &[name, ps] : run.peers) {
            std::fprintf(f, "%s\"%s\": \"%s\"", first ? "" : ", ", name.c_str(), json_escape(ps.status).c_str());
            first = false;
        }
        std::fprintf(f, "},\n  \"results\": [\n");
        first = true;
        auto emit = [&](const result &r) {
            std::string line = r.raw;
            // The programs label the transport they were told; make sure it is the run's.
            std::fprintf(f, "%s    %s", first ? "" : ",\n", line.c_str());
            first = false;
        };
        for (auto &r : run.results) emit(r);
        for (auto &[name, ps] : run.peers)
            for (auto &r : ps.results) emit(r);
        std::fprintf(f, "\n  ],\n  \"comparisons\": [\n");
        for (size_t i = 0; i < comps.size(); ++i) {
            auto &c = comps[i];
            std::fprintf(f,
                         "    {\"transport\":\"%s\",\"bench\":\"%s\",\"bytes\":%zu,\"peer\":\"%s\",\"unit\":\"%s\","
                         "\"hgas\":%.4f,\"peer_value\":%.4f,\"ratio\":%.4f,\"better\":\"%s\"}%s\n",
                         c.transport.c_str(), c.bench.c_str(), c.bytes, c.peer.c_str(), c.bw ? "GB/s" : "us", c.hgas,
                         c.peer_value, c.ratio, c.bw ? "higher" : "lower", i + 1 < comps.size() ? "," : "");
        }
        std::fprintf(f, "  ],\n  \"targets\": [\n");
        for (size_t i = 0; i < trows.size(); ++i) {
            auto &t = trows[i];
            std::fprintf(f,
                         "    {\"transport\":\"%s\",\"bench\":\"%s\",\"bytes\":%zu,\"peer\":\"%s\",\"limit\":%.2f,"
                         "\"measured_bytes\":%zu,\"kind\":\"%s\",\"ratio\":%s,\"state\":\"%s\",\"text\":\"%s\"}%s\n",
                         t.k->transport.c_str(), t.k->bench.c_str(), t.k->bytes, t.k->peer.c_str(), t.k->limit,
                         t.k->bytes, t.k->bw ? "min" : "max", std::isnan(t.ratio) ? "null" : std::to_string(t.ratio).c_str(),
                         json_escape(t.state).c_str(), t.k->text, i + 1 < trows.size() ? "," : "");
        }
        std::fprintf(f, "  ],\n  \"problems\": [");
        for (size_t i = 0; i < run.problems.size(); ++i)
            std::fprintf(f, "%s\"%s\"", i ? ", " : "", json_escape(run.problems[i]).c_str());
        std::fprintf(f, "]\n}\n");
        std::fclose(f);
        std::printf("\nresults written to %s\n", o.json.c_str());
    }
    return run.problems.empty() ? 0 : 1;
}
