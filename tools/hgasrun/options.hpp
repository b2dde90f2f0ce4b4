// hgasrun's command line (args.cpp) and the start of ranks on other hosts (remote.cpp);
// main.cpp runs the job.
#pragma once
#include <string>
#include <vector>

namespace hgasrun {

// A host of --host/--hostfile with its number of slots (ranks placed on it).
struct host {
    std::string name;
    int slots = 1;
    bool local = false;  // this machine: its ranks are forked, not started through rsh
};

struct options {
    int n = 0;                       // processes to start (ranks / threads)
    int threads = 1;                 // --threads: ranks per process, each a thread (HGAS_THREADS)
    double timeout = 0;
    bool prefix = false;
    int nodes = 0;
    std::string boot = "unix";       // unix, tcp, or tcp:<address the remote ranks connect to>
    bool bind = false;               // --bind core: local rank i runs on the i-th allowed CPU
    std::vector<std::string> export_names;  // -x: variables forwarded to remote ranks
    std::vector<host> hosts;         // empty: every rank on this machine
    std::vector<int> host_of_rank;   // with hosts: the index into hosts of each rank
    std::string rsh;                 // --rsh or HGAS_RSH (with hosts)
    std::vector<std::string> cmd;
};

[[noreturn]] void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// Parses argv; prints --help/--version and exits, or exits 2 with a message on bad options.
// Applies -x VAR=value to this process's environment (the ranks inherit it).
options parse_args(int argc, char **argv);
// HGAS_TRACE: merges the ranks' trace parts into one file after the job (trace_merge.cpp).
void merge_trace(int nranks);

// Hosts: "a,b:2" (--host) and a hostfile ("a slots=2", "b:2", "c", # comments).
std::vector<host> parse_host_list(const std::string &list, const char *what);
std::vector<host> read_hostfile(const std::string &path);
bool is_local_host(const std::string &name);
// The address of this machine on the route to `name` ("" when it cannot be found).
std::string local_address_toward(const std::string &name);

// The shell command line that rsh runs on a remote host to start one rank: it changes to the
// launcher's directory, reads the job secret from its standard input (not the command line,
// which other users can see), and runs the program with `env`; when its standard input
// closes (hgasrun ended or died, or rsh was killed) it sends the rank SIGTERM.
std::string remote_command(const std::string &cwd, const std::vector<std::string> &env,
                           const std::vector<std::string> &cmd);
// rsh's words: "ssh -p 2222" -> {"ssh", "-p", "2222"}.
std::vector<std::string> split_words(const std::string &text);
std::string shell_quote(const std::string &word);

// HGAS_GPU_SHARING as the launcher sees it (mps.cpp): "" when hgasrun can run the mode, else
// why not (threads and funneled need ranks as threads; mps needs nvidia-cuda-mps-control).
std::string gpu_sharing_check(const std::string &mode, int threads);

// The job's own MPS daemon (HGAS_GPU_SHARING=mps): started with its pipe and log directories in
// the job's directory, handed to the ranks through env(), stopped at the end of the job.
class mps_daemon {
public:
    bool start(const std::string &job_dir, std::string &why);
    std::vector<std::string> env() const;
    void stop();
    std::string pipe_dir, log_dir;

private:
    std::string prog_;
    bool running_ = false;
};
// A daemon that a killed hgasrun left behind in its job directory is asked to quit.
void stop_stale_mps(const std::string &job_dir);

}  // namespace hgasrun
