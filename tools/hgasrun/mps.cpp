// HGAS_GPU_SHARING (docs/sharing.md) as the launcher sees it, and the job's own MPS daemon for
// HGAS_GPU_SHARING=mps: `nvidia-cuda-mps-control -d` with its pipe and log directories in the
// job's directory, so that it serves this job's ranks only, never meets another user's or
// another job's daemon, and goes away with the job. The GPU's compute mode is left as it is
// (MPS works in the Default mode; EXCLUSIVE_PROCESS is an administrator's choice).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "base/clock.hpp"
#include "options.hpp"

extern char **environ;

namespace hgasrun {

namespace {

const char *const control_prog = "nvidia-cuda-mps-control";

std::string find_on_path(const char *prog) {
    const char *path = std::getenv("PATH");
    std::string p = path ? path : "";
    size_t at = 0;
    while (at <= p.size()) {
        size_t end = p.find(':', at);
        if (end == std::string::npos) end = p.size();
        const std::string dir = end > at ? p.substr(at, end - at) : ".";
        const std::string full = dir + "/" + prog;
        if (access(full.c_str(), X_OK) == 0) return full;
        at = end + 1;
    }
    return "";
}

// Runs the control program with the daemon's directories in its environment, `input` on its
// stdin; waits for it at most `limit` seconds (it is killed then). Its exit status, or -1.
int run_control(const std::string &prog, const std::vector<std::string> &args, const std::string &pipe_dir,
                const std::string &log_dir, const std::string &input, double limit) {
    int in[2];
    if (pipe2(in, O_CLOEXEC) != 0) return -1;
    const pid_t pid = fork();
    if (pid == 0) {
        // hgasrun blocks the signals it reads through a signalfd; the daemon must not inherit that.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        dup2(in[0], 0);
        setenv("CUDA_MPS_PIPE_DIRECTORY", pipe_dir.c_str(), 1);
        setenv("CUDA_MPS_LOG_DIRECTORY", log_dir.c_str(), 1);
        std::vector<char *> argv = {const_cast<char *>(prog.c_str())};
        for (const auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        execv(prog.c_str(), argv.data());
        _exit(127);
    }
    close(in[0]);
    if (pid < 0) {
        close(in[1]);
        return -1;
    }
    if (!input.empty()) (void)!write(in[1], input.data(), input.size());
    close(in[1]);
    const double t0 = hgas::now_seconds();
    int st = 0;
    for (;;) {
        const pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (w < 0 && errno != EINTR) return -1;
        if (hgas::now_seconds() - t0 > limit) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        usleep(10000);
    }
}

// The daemon writes its pid into the pipe directory.
pid_t daemon_pid(const std::string &pipe_dir) {
    std::ifstream f(pipe_dir + "/nvidia-cuda-mps-control.pid");
    long p = 0;
    return (f >> p) && p > 0 ? static_cast<pid_t>(p) : 0;
}

// Running, not a zombie that its new parent has yet to reap (the daemon is orphaned at start).
bool alive(pid_t pid) {
    if (pid <= 0 || kill(pid, 0) != 0) return false;
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    std::getline(f, stat);
    const size_t paren = stat.rfind(')');
    return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'Z';
}

}  // namespace

std::string gpu_sharing_check(const std::string &mode, int threads) {
    if ((mode == "threads" || mode == "funneled") && threads < 2)
        return "HGAS_GPU_SHARING=" + mode + " needs ranks as threads: start the job with hgasrun --threads T (T > 1), "
               "or use HGAS_GPU_SHARING=process or mps";
    if (mode == "mps" && find_on_path(control_prog).empty())
        return std::string("HGAS_GPU_SHARING=mps: ") + control_prog + " is not on the PATH (it comes with the NVIDIA "
               "driver's utilities); use HGAS_GPU_SHARING=process, or put it on the PATH";
    return "";
}

bool mps_daemon::start(const std::string &job_dir, std::string &why) {
    prog_ = find_on_path(control_prog);
    if (prog_.empty()) {
        why = gpu_sharing_check("mps", 1);
        return false;
    }
    pipe_dir = job_dir + "/mps-pipe";
    log_dir = job_dir + "/mps-log";
    for (const std::string &d : {pipe_dir, log_dir})
        if (mkdir(d.c_str(), 0700) != 0 && errno != EEXIST) {
            why = "cannot create the MPS directory " + d + ": " + std::strerror(errno);
            return false;
        }
    // -d daemonizes: the control program returns once the daemon runs.
    const int rc = run_control(prog_, {"-d"}, pipe_dir, log_dir, "", 30);
    if (rc != 0) {
        why = prog_ + " -d (the job's MPS daemon, pipe directory " + pipe_dir + ") failed" +
              (rc < 0 ? std::string(" or took over 30 s") : " with status " + std::to_string(rc)) +
              "; its log is in " + log_dir + " until the job ends";
        return false;
    }
    running_ = true;
    return true;
}

std::vector<std::string> mps_daemon::env() const {
    if (!running_) return {};
    return {"CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir, "CUDA_MPS_LOG_DIRECTORY=" + log_dir};
}

void mps_daemon::stop() {
    if (!running_) return;
    running_ = false;
    const pid_t pid = daemon_pid(pipe_dir);
    if (run_control(prog_, {}, pipe_dir, log_dir, "quit\n", 30) != 0)
        std::fprintf(stderr, "hgasrun: warning: asking the job's MPS daemon to quit failed (pipe directory %s)\n",
                     pipe_dir.c_str());
    // quit returns before the daemon is gone: wait for it (bounded), then make sure.
    const double t0 = hgas::now_seconds();
    while (alive(pid) && hgas::now_seconds() - t0 < 10) usleep(20000);
    if (alive(pid)) {
        std::fprintf(stderr, "hgasrun: warning: the job's MPS daemon (pid %ld) did not quit within 10 s; killing it\n",
                     static_cast<long>(pid));
        kill(pid, SIGKILL);
    }
}

void stop_stale_mps(const std::string &job_dir) {
    const std::string pipe_dir = job_dir + "/mps-pipe";
    struct stat st;
    if (stat(pipe_dir.c_str(), &st) != 0 || daemon_pid(pipe_dir) <= 0) return;
    const std::string prog = find_on_path(control_prog);
    if (!prog.empty()) (void)run_control(prog, {}, pipe_dir, job_dir + "/mps-log", "quit\n", 10);
}

}  // namespace hgasrun
