// hgasrun: starts N ranks of a program on this machine (or on hosts, through rsh: remote.cpp),
// serves their bootstrap store, forwards their output line by line, and ends the whole job
// when any rank fails. docs/launcher.md describes the behaviour; args.cpp the command line.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "base/cpus.h"
#include "base/settings.hpp"
#include "boot/boot.hpp"
#include "options.hpp"

extern char **environ;

namespace {

using hgas::now_seconds;
using hgasrun::options;

// ---- files: the job directory and shared-memory leftovers -----------------------------

std::string tmp_dir() {
    const char *t = std::getenv("TMPDIR");
    std::string d = t && *t ? t : "/tmp";
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    return d;
}

std::string host_name() {
    char h[HOST_NAME_MAX + 1] = {};
    gethostname(h, sizeof h - 1);
    return h;
}

void remove_shm(const std::string &job_id) {
    const std::string prefix = "hgas-" + job_id + "-";
    if (DIR *d = opendir("/dev/shm")) {
        while (dirent *e = readdir(d))
            if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0)
                unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
}

void remove_job_dir(const std::string &dir) {
    if (DIR *d = opendir(dir.c_str())) {
        while (dirent *e = readdir(d))
            if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..") && unlinkat(dirfd(d), e->d_name, 0) != 0 &&
                errno == EISDIR)
                remove_job_dir(dir + "/" + e->d_name);  // the MPS daemon's pipe and log directories
        closedir(d);
    }
    rmdir(dir.c_str());
}

// A killed hgasrun cannot clean up after itself; the next one on this machine does, for job
// directories of this user whose launcher (named in launcher.pid with its host) is gone.
void sweep_stale_jobs(const std::string &tmp) {
    DIR *d = opendir(tmp.c_str());
    if (!d) return;
    const std::string me = host_name();
    while (dirent *e = readdir(d)) {
        if (std::strncmp(e->d_name, "hgas-", 5) != 0) continue;
        const std::string dir = tmp + "/" + e->d_name;
        struct stat st;
        if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) continue;
        FILE *f = std::fopen((dir + "/launcher.pid").c_str(), "r");
        if (!f) continue;  // being created, or not ours
        long pid = 0;
        char host[256] = {};
        int got = std::fscanf(f, "%ld %255s", &pid, host);
        std::fclose(f);
        if (got != 2 || me != host || pid <= 0 || kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
        remove_shm(e->d_name + 5);
        hgasrun::stop_stale_mps(dir);
        remove_job_dir(dir);
    }
    closedir(d);
}

// ---- output forwarding ------------------------------------------------------------------

void write_fd(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w > 0) {
            p += w;
            n -= static_cast<size_t>(w);
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && errno == EAGAIN) {
            pollfd pf{fd, POLLOUT, 0};
            poll(&pf, 1, 100);
        } else {
            return;  // our stdout is gone (EPIPE): nothing better to do with the output
        }
    }
}

struct stream {
    int fd = -1;  // read end of the rank's pipe; -1 once at end of file
    int to = 1;   // where its lines go
    std::string buf;
};

// Writes the complete lines of `s.buf` (all of it when `all`), each in one write() so that
// lines of different ranks never interleave.
void emit(stream &s, int rank, bool prefix, bool all) {
    const std::string pre = prefix ? "[" + std::to_string(rank) + "] " : "";
    size_t start = 0;
    for (;;) {
        size_t nl = s.buf.find('\n', start);
        const bool too_long = nl == std::string::npos && s.buf.size() - start >= 65536;
        if (nl == std::string::npos && !too_long && !(all && start < s.buf.size())) break;
        size_t end = nl == std::string::npos ? s.buf.size() : nl;
        std::string line = pre + s.buf.substr(start, end - start) + "\n";
        write_fd(s.to, line.data(), line.size());
        start = nl == std::string::npos ? s.buf.size() : nl + 1;
    }
    s.buf.erase(0, start);
}

// ---- the job ----------------------------------------------------------------------------

struct rank_proc {
    pid_t pid = -1;
    bool running = false;
    bool lost_without_bye = false;  // its store connection closed without a goodbye
    int code = 0;                   // exit status, or 128+signal
    stream out, err;
};

std::string signal_text(int sig) {
    const char *abbr = sigabbrev_np(sig);
    return std::to_string(sig) + " (" + (abbr ? std::string("SIG") + abbr : "unknown") + ")";
}

class launcher {
public:
    explicit launcher(options o) : o_(std::move(o)), ranks_(o_.n) {}
    int run();

private:
    bool start();
    void spawn(int r, const std::vector<std::string> &env, int devnull);
    std::vector<std::string> rank_env(int r) const;
    bool remote(int r) const;
    // "rank r", or with --threads "process r (ranks a-b)": the launcher's unit is a process.
    std::string who(int r) const {
        if (o_.threads == 1) return "rank " + std::to_string(r);
        return "process " + std::to_string(r) + " (ranks " + std::to_string(r * o_.threads) + "-" +
               std::to_string(r * o_.threads + o_.threads - 1) + ")";
    }
    void reap();
    void on_exit(int r, int wstatus);
    void note_quit(int r);
    void check_exit_request();
    void check_store_abort();
    void check_hung(double now);
    void end_job(const std::string &why);
    void signal_all(int sig);
    void read_output(stream &s, int rank);
    int running() const {
        int n = 0;
        for (const auto &r : ranks_) n += r.running;
        return n;
    }

    options o_;
    std::vector<rank_proc> ranks_;
    std::string job_id_, dir_, secret_;
    std::unique_ptr<hgas::boot::store_server> store_;
    hgasrun::mps_daemon mps_;              // HGAS_GPU_SHARING=mps
    std::vector<std::string> boot_addr_;   // HGAS_BOOT_ADDR of each rank
    std::vector<std::string> remote_env_;  // what remote ranks get on the command line
    std::vector<int> rsh_stdin_;           // write ends of the remote ranks' stdin
    int lost_pipe_[2] = {-1, -1};
    pid_t pgid_ = 0;
    // ending
    bool ending_ = false, termed_ = false, killed_ = false, timed_out_ = false;
    double t_term_ = 0, t_kill_ = 0;
    int got_signal_ = 0, first_fail_ = 0;
    bool exit_requested_ = false;  // a rank ended the job with hgas_global_exit
    int exit_code_ = 0;
    // A rank that hangs while the others are done: HGAS_TIMEOUT after the first rank exited 0,
    // the ranks still running are named and the job ends (check_hung).
    double hgas_timeout_ = 300;
    double t_first_done_ = 0;
    int first_done_ = -1;
    bool store_failed_ = false;  // the job ended on a rank's report through the store
};

void launcher::signal_all(int sig) {
    bool any = false;
    for (const auto &r : ranks_)
        if (r.running) {
            kill(r.pid, sig);
            any = true;
        }
    // The group reaches what the ranks started themselves; only while one of them is unreaped,
    // so the group id cannot have been reused.
    if (any && pgid_ > 0) kill(-pgid_, sig);
}

void launcher::end_job(const std::string &why) {
    if (ending_) return;
    ending_ = true;
    t_term_ = now_seconds() + 2.0;
    t_kill_ = t_term_ + 2.0;
    if (store_) store_->broadcast_abort(why);
}

// A rank's hgas_global_exit: the job ends with its status, and what the other ranks do from
// now on (exit with the same status, fail in a wait, get SIGTERM) is a consequence, not news.
void launcher::check_exit_request() {
    int r = -1, code = 0;
    if (exit_requested_ || !store_ || !store_->exit_requested(&r, &code)) return;
    if (first_fail_ != 0) return;  // the job had failed already: that stays its status
    exit_requested_ = true;
    exit_code_ = code;
    end_job("rank " + std::to_string(r) + " ended the job with exit status " + std::to_string(code));
}

// A rank that reported a failure through the store (hgas_abort, or a wait that timed out on a
// rank that never arrived: hgas_finalize names the ranks that did not reach it). Its reason
// names the culprit; the rank that sent it may well exit 0 (a program that does not check
// hgas_finalize), so this, not its exit status, is what ends the job.
void launcher::check_store_abort() {
    std::string why;
    int r = -1;
    if (ending_ || !store_ || !store_->aborted(&why, &r) || r < 0) return;
    if (store_->exit_requested(nullptr, nullptr)) return;  // a job exit: check_exit_request
    const std::string text = "hgasrun: " + why + "; ending the job";
    std::fprintf(stderr, "%s\n", text.c_str());
    store_failed_ = true;
    end_job(text);
}

// Every wait of a rank has the HGAS_TIMEOUT deadline, so once one rank is done, one that has
// not finished within HGAS_TIMEOUT more (plus a margin for the others' own timeouts to speak
// first) is hung outside hgas, or its program never ends: name it rather than wait forever.
void launcher::check_hung(double now) {
    if (ending_ || first_done_ < 0 || running() == 0) return;
    if (now < t_first_done_ + hgas_timeout_ + 5.0) return;
    std::string who;
    int n = 0;
    for (int r = 0; r < o_.n; ++r)
        if (ranks_[r].running) {
            if (n++ < 16)
                who += (who.empty() ? "" : ", ") + std::to_string(r) + " (pid " + std::to_string(ranks_[r].pid) + ")";
            else if (n == 17) who += ", ...";
        }
    char text[512];
    std::snprintf(text, sizeof text,
                  "hgasrun: rank%s %s still running %g s after rank %d finished (HGAS_TIMEOUT=%g s plus 5 s): hung, "
                  "or not calling hgas_finalize?; ending the job",
                  n == 1 ? "" : "s", who.c_str(), now - t_first_done_, first_done_, hgas_timeout_);
    std::fprintf(stderr, "%s\n", text);
    store_failed_ = true;
    end_job(text);
}

// Not a failure by itself (the exit status is what counts), but the likely cause of a hang.
void launcher::note_quit(int r) {
    check_exit_request();
    if (running() == 0 || ending_) return;
    std::fprintf(stderr,
                 "hgasrun: note: %s exited with status 0 without finalizing its bootstrap connection while "
                 "%d other process(es) still run; ranks waiting for it will time out\n",
                 who(r).c_str(), running());
}

void launcher::on_exit(int r, int wstatus) {
    check_exit_request();  // recorded by the store before the requesting rank could exit
    rank_proc &p = ranks_[r];
    p.running = false;
    std::string how;
    if (WIFEXITED(wstatus)) {
        p.code = WEXITSTATUS(wstatus);
        how = "exited with status " + std::to_string(p.code);
    } else {
        p.code = 128 + WTERMSIG(wstatus);
        how = "was killed by signal " + signal_text(WTERMSIG(wstatus));
    }
    const int others = running();
    if (p.code == 0) {
        if (first_done_ < 0) {
            first_done_ = r;
            t_first_done_ = now_seconds();
        }
        if (p.lost_without_bye) note_quit(r);
        return;
    }
    if (exit_requested_) return;
    // A rank that dies of the SIGTERM or SIGKILL sent to end the job did not fail by itself.
    const bool ours = termed_ && WIFSIGNALED(wstatus) &&
                      (WTERMSIG(wstatus) == SIGTERM || WTERMSIG(wstatus) == SIGKILL);
    if (first_fail_ == 0 && !ours) first_fail_ = p.code;
    // A consequence of the ending, not news; except a death that a rank's report through the
    // store (a peer found dead) announced before the launcher saw it: still say which it was.
    if (ending_ && !(store_failed_ && !ours && WIFSIGNALED(wstatus))) return;
    std::string text = "hgasrun: " + who(r) +
                       (remote(r) ? " (on host " + o_.hosts[o_.host_of_rank[r]].name + ", through rsh pid "
                                  : " (pid ") + std::to_string(p.pid) + ") " + how;
    if (remote(r) && p.code == 255) text += " (ssh's status when it cannot reach or log in to the host)";
    if (others > 0 && !ending_) text += "; ending the job";
    std::fprintf(stderr, "%s\n", text.c_str());
    if (others > 0) end_job(text);
}

void launcher::reap() {
    for (;;) {
        int ws = 0;
        pid_t pid = waitpid(-1, &ws, WNOHANG);
        if (pid <= 0) return;
        for (int r = 0; r < o_.n; ++r)
            if (ranks_[r].pid == pid && ranks_[r].running) on_exit(r, ws);
    }
}

void launcher::read_output(stream &s, int rank) {
    char buf[65536];
    for (;;) {
        ssize_t n = read(s.fd, buf, sizeof buf);
        if (n > 0) {
            s.buf.append(buf, static_cast<size_t>(n));
            emit(s, rank, o_.prefix, false);
            if (static_cast<size_t>(n) < sizeof buf) return;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        emit(s, rank, o_.prefix, true);  // end of stream: the last line may lack its newline
        close(s.fd);
        s.fd = -1;
        return;
    }
}

// The variables a rank gets beyond hgasrun's environment: its rank, where the store is, its
// node name. A remote rank gets them on the rsh command line, with the HGAS_* and -x ones.
std::vector<std::string> launcher::rank_env(int r) const {
    std::vector<std::string> env = {"HGAS_RANK=" + std::to_string(r), "HGAS_BOOT_ADDR=" + boot_addr_[r]};
    if (o_.nodes > 0)
        env.push_back("HGAS_NODE_NAME=node" + std::to_string(static_cast<long long>(r) * o_.nodes / o_.n));
    if (!o_.hosts.empty()) env.push_back("HGAS_NODE_NAME=" + o_.hosts[o_.host_of_rank[r]].name);
    return env;
}

bool launcher::remote(int r) const { return !o_.hosts.empty() && !o_.hosts[o_.host_of_rank[r]].local; }

void launcher::spawn(int r, const std::vector<std::string> &base_env, int devnull) {
    std::vector<std::string> env = base_env, cmd = o_.cmd;
    const std::vector<std::string> mine = rank_env(r);
    int in[2] = {devnull, -1};
    if (remote(r)) {
        // rsh <host> '<command>': the ranks' variables travel in the command, the secret on
        // stdin, which stays open (its write end is ours) so the rank ends when we do.
        std::vector<std::string> renv = remote_env_;
        renv.insert(renv.end(), mine.begin(), mine.end());
        char cwd[PATH_MAX] = "/";
        if (!getcwd(cwd, sizeof cwd)) std::strcpy(cwd, "/");
        cmd = hgasrun::split_words(o_.rsh);
        cmd.push_back(o_.hosts[o_.host_of_rank[r]].name);
        cmd.push_back(hgasrun::remote_command(cwd, renv, o_.cmd));
        if (pipe2(in, O_CLOEXEC) != 0) {
            std::fprintf(stderr, "hgasrun: cannot create pipes for rank %d: %s\n", r, std::strerror(errno));
            return;
        }
        const std::string line = secret_ + "\n";
        write_fd(in[1], line.data(), line.size());
    } else {
        env.insert(env.end(), mine.begin(), mine.end());
    }
    // Everything the child needs is built here: after fork() only async-signal-safe calls
    // are allowed, since the store thread may hold locks (malloc's among them).
    std::vector<char *> envp, argv;
    for (auto &e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    for (auto &a : cmd) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string exec_fail = "hgasrun: rank " + std::to_string(r) + ": cannot run '" + cmd[0] + "': ";
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
        std::fprintf(stderr, "hgasrun: cannot create pipes for rank %d: %s\n", r, std::strerror(errno));
        if (in[1] >= 0) close(in[0]), close(in[1]);
        return;
    }
    // --bind core: the CPU of this rank, chosen before fork (the child only makes the call).
    // The order puts one rank on every physical core before any core gets a second (base/cpus.h).
    int cpu = -1;
    if (o_.bind && !remote(r)) {
        cpu_set_t allowed;
        std::vector<int> order(CPU_SETSIZE);
        if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) > 0) {
            const int n = hgas_cpu_order(&allowed, nullptr, order.data(), CPU_SETSIZE);
            int local = 0;  // this rank's index among the ranks on this machine
            for (int q = 0; q < r; ++q) local += !remote(q);
            if (n > 0) cpu = order[local % n];
        }
    }
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        if (cpu >= 0) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            (void)sched_setaffinity(0, sizeof one, &one);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        sigaction(SIGPIPE, &dfl, nullptr);  // ignored dispositions survive exec
        setpgid(0, pgid_);
        // If the launcher dies the kernel kills the rank. It fires on the death of the forking
        // thread, which is the launcher's main thread and lives to the end. The getppid()
        // check closes the window in which the launcher died before prctl().
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(137);
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        execvpe(argv[0], argv.data(), envp.data());
        const char *why = strerror(errno);
        (void)!write(2, exec_fail.data(), exec_fail.size());
        (void)!write(2, why, std::strlen(why));
        (void)!write(2, "\n", 1);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    if (in[1] >= 0) {
        close(in[0]);
        rsh_stdin_.push_back(in[1]);  // closed when hgasrun exits (or dies)
    }
    if (pid < 0) {
        std::fprintf(stderr, "hgasrun: cannot start rank %d: fork failed: %s\n", r, std::strerror(errno));
        close(out[0]);
        close(err[0]);
        return;
    }
    setpgid(pid, pgid_ ? pgid_ : pid);  // also in the parent, so that no kill races the child's call
    if (pgid_ == 0) pgid_ = pid;
    rank_proc &p = ranks_[r];
    p.pid = pid;
    p.running = true;
    p.out.fd = out[0];
    p.out.to = 1;
    p.err.fd = err[0];
    p.err.to = 2;
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
}

bool launcher::start() {
    const std::string tmp = tmp_dir();
    sweep_stale_jobs(tmp);
    job_id_ = hgas::boot::random_secret(4);
    secret_ = hgas::boot::random_secret(16);
    dir_ = tmp + "/hgas-" + job_id_;
    if (mkdir(dir_.c_str(), 0700) != 0) {
        std::fprintf(stderr, "hgasrun: cannot create the job directory %s: %s (set TMPDIR to a writable directory)\n",
                     dir_.c_str(), std::strerror(errno));
        dir_.clear();
        return false;
    }
    chmod(dir_.c_str(), 0700);  // whatever the umask: only this user may reach the store socket
    if (FILE *f = std::fopen((dir_ + "/launcher.pid").c_str(), "w")) {
        std::fprintf(f, "%ld %s\n", static_cast<long>(getpid()), host_name().c_str());
        std::fclose(f);
    }
    // With hosts the store listens on every address; each rank is told the one that reaches
    // it: loopback for ranks of this machine, the route's source address (or --boot tcp:ADDR)
    // for the others.
    const bool hosts = !o_.hosts.empty();
    const std::string addr = hosts ? "tcp:0.0.0.0:0" : o_.boot == "tcp" ? "tcp:127.0.0.1:0"
                           : o_.boot.rfind("tcp:", 0) == 0 ? o_.boot + ":0" : "unix:" + dir_ + "/store.sock";
    auto srv = hgas::boot::store_server::start(addr, secret_, o_.n * o_.threads);  // members are ranks
    if (!srv.ok()) {
        std::fprintf(stderr, "hgasrun: cannot start the bootstrap store: %s\n", hgas::last_error().c_str());
        return false;
    }
    store_ = std::move(srv.value());
    if (pipe2(lost_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) return false;
    const int wfd = lost_pipe_[1];
    // Runs on the store thread: hand the rank to the main loop, which owns all job state.
    const int per = o_.threads;
    store_->on_rank_lost([wfd, per](int r) {
        const int proc = r / per;  // the main loop counts processes
        (void)!write(wfd, &proc, sizeof proc);
    });
    boot_addr_.assign(o_.n, store_->address());
    if (hosts) {
        const std::string bound = store_->address();
        const std::string port = bound.substr(bound.rfind(':') + 1);
        std::vector<std::string> toward(o_.hosts.size());
        for (size_t h = 0; h < o_.hosts.size(); ++h) {
            if (o_.hosts[h].local) toward[h] = "127.0.0.1";
            else if (o_.boot.rfind("tcp:", 0) == 0) toward[h] = o_.boot.substr(4);
            else toward[h] = hgasrun::local_address_toward(o_.hosts[h].name);
            if (toward[h].empty()) {
                std::fprintf(stderr, "hgasrun: cannot find this machine's address on the route to host '%s' (does the "
                             "name resolve here?); give the address its ranks should connect to with --boot tcp:ADDR\n",
                             o_.hosts[h].name.c_str());
                return false;
            }
        }
        for (int r = 0; r < o_.n; ++r) boot_addr_[r] = "tcp:" + toward[o_.host_of_rank[r]] + ":" + port;
    }

    std::vector<std::string> env;
    const char *ours[] = {"HGAS_RANK=", "HGAS_SIZE=", "HGAS_BOOT_ADDR=", "HGAS_BOOT_SECRET=", "HGAS_JOB_ID=",
                          "HGASRUN_PID=", "HGAS_NODE_NAME=", "HGAS_THREADS="};
    for (char **e = environ; *e; ++e) {
        bool skip = false;
        for (const char *p : ours)
            if (std::strncmp(*e, p, std::strlen(p)) == 0 &&
                (o_.nodes > 0 || hosts || std::strcmp(p, "HGAS_NODE_NAME=") != 0) &&
                (o_.threads > 1 || std::strcmp(p, "HGAS_THREADS=") != 0))
                skip = true;
        if (skip) continue;
        env.emplace_back(*e);
        // Remote ranks: the HGAS_* settings (hgasrun --help lists them) and the -x variables.
        const std::string name(*e, std::strchr(*e, '=') ? std::strchr(*e, '=') - *e : std::strlen(*e));
        bool exported = name.rfind("HGAS_", 0) == 0 && name != "HGAS_RSH";
        for (const auto &x : o_.export_names) exported = exported || x == name;
        if (exported) remote_env_.emplace_back(*e);
    }
    std::vector<std::string> job = {"HGAS_SIZE=" + std::to_string(o_.n), "HGAS_BOOT_SECRET=" + secret_,
                                    "HGAS_JOB_ID=" + job_id_, "HGASRUN_PID=" + std::to_string(getpid())};
    // Ranks as threads: HGAS_RANK/HGAS_SIZE number processes, each of HGAS_THREADS ranks.
    if (o_.threads > 1) job.push_back("HGAS_THREADS=" + std::to_string(o_.threads));
    // Kernels that wait on hgas (device API, stream operations through the proxy) must not
    // meet CUDA's lazy loading: a kernel's first launch may wait for the running kernels, one
    // of which waits for the proxy the launch now blocks (docs/device.md). The user's choice
    // stands where the variable is set.
    if (!std::getenv("CUDA_MODULE_LOADING")) job.push_back("CUDA_MODULE_LOADING=EAGER");
    else remote_env_.push_back(std::string("CUDA_MODULE_LOADING=") + std::getenv("CUDA_MODULE_LOADING"));
    env.insert(env.end(), job.begin(), job.end());
    for (const auto &j : job)
        if (j.rfind("HGAS_BOOT_SECRET=", 0) != 0) remote_env_.push_back(j);  // the secret goes on stdin
    // HGAS_GPU_SHARING=mps: the job's own daemon, before any rank creates a CUDA context.
    const char *sharing = std::getenv("HGAS_GPU_SHARING");
    if (sharing && !std::strcmp(sharing, "mps")) {
        if (hosts) {
            std::fprintf(stderr, "hgasrun: HGAS_GPU_SHARING=mps starts the MPS daemon on this machine only; with "
                         "--host/--hostfile start one on each host yourself and point the ranks at it "
                         "(CUDA_MPS_PIPE_DIRECTORY) with HGAS_GPU_SHARING=auto\n");
            return false;
        }
        std::string why;
        if (!mps_.start(dir_, why)) {
            std::fprintf(stderr, "hgasrun: %s\n", why.c_str());
            return false;
        }
        for (const auto &e : mps_.env()) env.push_back(e);
    }
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    for (int r = 0; r < o_.n && !ending_; ++r) {
        spawn(r, env, devnull);
        if (ranks_[r].pid < 0) {
            if (first_fail_ == 0) first_fail_ = 1;
            end_job("hgasrun: could not start rank " + std::to_string(r) + "; ending the job");
        }
    }
    if (devnull >= 0) close(devnull);
    return true;
}

int launcher::run() {
    // Signals arrive through a signalfd so that the main loop handles them like any other
    // event. They are blocked before the store thread starts, so that it never receives them.
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, s);
    sigprocmask(SIG_BLOCK, &set, nullptr);
    signal(SIGPIPE, SIG_IGN);  // a closed stdout must not kill the launcher and orphan the job
    const int sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);

    // The ranks' HGAS_TIMEOUT (as they read it: hgasrun passes its environment on) bounds how
    // long one may outlive the others; a malformed value fails the ranks' init anyway.
    if (auto cfg = hgas::settings::from_env(); cfg.ok()) hgas_timeout_ = cfg->seconds(hgas::setting::timeout);
    const bool started = start();
    const double t0 = now_seconds();
    double drain_until = 0;
    while (started) {
        check_exit_request();
        check_store_abort();
        reap();
        const double now = now_seconds();
        check_hung(now);
        const int live = running();
        bool open_pipes = false;
        for (auto &r : ranks_) open_pipes = open_pipes || r.out.fd >= 0 || r.err.fd >= 0;
        if (live == 0) {
            // Output written just before exit is still in the pipes: drain it, but do not wait
            // forever for a grandchild that inherited them.
            if (drain_until == 0) drain_until = now + 1.0;
            if (!open_pipes || now >= drain_until) break;
        }
        if (o_.timeout > 0 && !ending_ && now - t0 >= o_.timeout) {
            timed_out_ = true;
            char text[128];
            std::snprintf(text, sizeof text, "hgasrun: job exceeded --timeout of %g s; ending it", o_.timeout);
            std::fprintf(stderr, "%s\n", text);
            end_job(text);
        }
        if (ending_ && !termed_ && now >= t_term_) {
            termed_ = true;
            signal_all(SIGTERM);
        }
        if (ending_ && !killed_ && now >= t_kill_) {
            killed_ = true;
            signal_all(SIGKILL);
        }
        // Sleep until the next event or timer.
        double next = now + 1.0;
        if (o_.timeout > 0 && !ending_) next = std::min(next, t0 + o_.timeout);
        if (ending_ && !termed_) next = std::min(next, t_term_);
        if (ending_ && !killed_) next = std::min(next, t_kill_);
        if (drain_until > 0) next = std::min(next, drain_until);
        if (first_done_ >= 0 && !ending_) next = std::min(next, t_first_done_ + hgas_timeout_ + 5.0);
        std::vector<pollfd> fds = {{sigfd, POLLIN, 0}, {lost_pipe_[0], POLLIN, 0}};
        std::vector<stream *> streams;
        std::vector<int> owner;
        for (int r = 0; r < o_.n; ++r)
            for (stream *s : {&ranks_[r].out, &ranks_[r].err})
                if (s->fd >= 0) {
                    fds.push_back({s->fd, POLLIN, 0});
                    streams.push_back(s);
                    owner.push_back(r);
                }
        int ms = static_cast<int>(std::max(0.0, next - now) * 1000.0) + 1;
        if (poll(fds.data(), fds.size(), ms) < 0 && errno != EINTR) break;
        if (fds[0].revents) {
            signalfd_siginfo si;
            while (read(sigfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
                const int sig = static_cast<int>(si.ssi_signo);
                if (sig == SIGCHLD) continue;  // reaped at the top of the loop
                if (got_signal_) {
                    std::fprintf(stderr, "hgasrun: received %s again; killing the ranks\n", sigabbrev_np(sig));
                    killed_ = termed_ = true;
                    signal_all(SIGKILL);
                    continue;
                }
                got_signal_ = sig;
                const std::string text = "hgasrun: received signal " + signal_text(sig) +
                                         "; forwarding it to the ranks and ending the job";
                std::fprintf(stderr, "%s\n", text.c_str());
                signal_all(sig);
                end_job(text);
            }
        }
        if (fds[1].revents) {
            int r;
            while (read(lost_pipe_[0], &r, sizeof r) == static_cast<ssize_t>(sizeof r))
                if (r >= 0 && r < o_.n) {
                    ranks_[r].lost_without_bye = true;
                    // Exit and lost connection race: if the exit was seen first, note it now.
                    if (!ranks_[r].running && ranks_[r].code == 0) note_quit(r);
                }
        }
        for (size_t i = 2; i < fds.size(); ++i)
            if (fds[i].revents) read_output(*streams[i - 2], owner[i - 2]);
    }
    for (int r = 0; r < o_.n; ++r)
        for (stream *s : {&ranks_[r].out, &ranks_[r].err}) {
            emit(*s, r, o_.prefix, true);
            if (s->fd >= 0) close(s->fd);
        }
    if (store_) store_->stop();
    mps_.stop();  // after every rank has exited, failed or not
    if (!job_id_.empty()) remove_shm(job_id_);
    if (!dir_.empty()) remove_job_dir(dir_);
    if (!started) return 1;
    hgasrun::merge_trace(o_.n);
    if (timed_out_) return 124;
    if (got_signal_) return 128 + got_signal_;
    if (exit_requested_) return exit_code_;
    if (first_fail_ == 0 && store_failed_) return 1;  // the job failed although its ranks exited 0
    return first_fail_;
}

}  // namespace

// The ranks would each fail in hgas_init on a bad setting and each print the same message:
// check once here, before anything starts. Unknown HGAS_* variables: one warning for the job.
void check_settings(int threads) {
    auto cfg = hgas::settings::from_env();
    if (!cfg.ok()) {
        std::fprintf(stderr, "hgasrun: %s\n", hgas::last_error().c_str());
        std::exit(2);
    }
    const std::string why = hgasrun::gpu_sharing_check(cfg->text(hgas::setting::gpu_sharing), threads);
    if (!why.empty()) {
        std::fprintf(stderr, "hgasrun: %s\n", why.c_str());
        std::exit(2);
    }
    if (cfg->flag(hgas::setting::warn_unused_env))
        for (const auto &u : hgas::unused_env())
            std::fprintf(stderr, "hgasrun: warning: unused environment variable: %s%s%s (HGAS_WARN_UNUSED_ENV=0 "
                         "silences this)\n", u.name.c_str(), u.suggestion.empty() ? "" : " (maybe: ",
                         u.suggestion.empty() ? "" : (u.suggestion + "?)").c_str());
}

int main(int argc, char **argv) {
    options o = hgasrun::parse_args(argc, argv);  // applies -x VAR=value first
    check_settings(o.threads);
    launcher l(std::move(o));
    return l.run();
}
