// Bootstrap: who am I (rank, size, node, local rank), and an out-of-band key-value store with
// barrier and allgather that the ranks use before (and beside) any transport exists.
//
// Where the store lives:
//   - under hgasrun: in the launcher; HGAS_BOOT_ADDR / HGAS_BOOT_SECRET are set for each rank.
//   - under srun/mpirun: rank 0 serves it in a thread at HGAS_BOOT_ADDR (tcp:host:port or
//     unix:/path), and every client presents HGAS_BOOT_SECRET.
//   - no launcher at all: a singleton job (rank 0 of 1) with no store.
// Every wait has a deadline; a client whose peer died or that was told to abort returns
// status::peer_failed with the store's reason.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/settings.hpp"
#include "base/status.hpp"

namespace hgas::boot {

struct job_info {
    int rank = 0;
    int size = 1;
    std::string node_name;  // HGAS_NODE_NAME or the host name
    std::string job_id;     // short id used in shared-memory names
    std::string addr;       // "" for a singleton job
    std::string secret;
    std::string launcher;   // "hgasrun", "slurm", "mpirun", "pmi", "env", "singleton"
};

// Reads HGAS_RANK/HGAS_SIZE (then SLURM_PROCID/SLURM_NTASKS, OMPI_COMM_WORLD_RANK/SIZE,
// PMI_RANK/PMI_SIZE) and the store address and secret. A job of size > 1 without
// HGAS_BOOT_ADDR fails with a message that says how to start it.
result<job_info> detect(const settings &cfg);

// Node layout computed from every rank's node name (allgather at init).
struct topology {
    int node_me = 0, node_n = 1;
    int local_rank = 0, local_n = 1;
    std::vector<int> node_of;  // node index of each rank
    std::vector<int> local_of; // local rank of each rank
    static topology from_node_names(const std::vector<std::string> &names, int me);
};

// A rank's connection to the store. Not thread safe; one per rank.
class client {
public:
    virtual ~client() = default;
    // Connects (rank 0 under srun/mpirun first starts the server) and presents the secret.
    static result<std::unique_ptr<client>> connect(const job_info &job, double timeout_s);

    virtual status put(const std::string &key, const std::string &value) = 0;
    // Blocks until `key` exists or the deadline passes.
    virtual status get(const std::string &key, std::string &value, double timeout_s) = 0;
    // All ranks of the job; `name` must be the same on every rank and unique per use.
    virtual status barrier(const std::string &name, double timeout_s) = 0;
    virtual status allgather(const std::string &name, const std::string &mine,
                             std::vector<std::string> &all, double timeout_s) = 0;
    // Tells the store the job failed; the store tells every other rank.
    virtual status abort(const std::string &reason) = 0;
    // Tells the store that the whole job is to end with exit status `code` (a normal end
    // requested by one rank: OpenSHMEM's shmem_global_exit). The store tells every rank, as
    // for abort, and remembers the code for the launcher. Waits (up to a few seconds) until
    // the store has announced it, so that the caller may exit at once afterwards.
    virtual status exit_job(int code, const std::string &reason) = 0;
    // Non-blocking: has the store announced that the job is aborting, or has the store gone
    // away (its host died) before this rank's goodbye? Fills `why`.
    virtual bool aborted(std::string *why) = 0;
    // Non-blocking: has the store announced that some rank ended the job with exit_job? Fills
    // `code` with the status the job exits with.
    virtual bool exit_requested(int *code) = 0;
    // Clean goodbye; after it, losing the connection is not a failure.
    virtual status finalize() = 0;
};

// The store itself, run by hgasrun (and by rank 0 under srun/mpirun).
class store_server {
public:
    virtual ~store_server() = default;
    // addr: "unix:/path", "tcp:host:port" (port 0 = any), or "tcp:host" (any port).
    static result<std::unique_ptr<store_server>> start(const std::string &addr, const std::string &secret,
                                                       int nranks);
    // The address clients should use (port filled in).
    virtual std::string address() const = 0;
    // Called from the server thread when a rank's connection closes without a goodbye.
    virtual void on_rank_lost(std::function<void(int rank)> cb) = 0;
    // Tell every connected rank that the job is aborting.
    virtual void broadcast_abort(const std::string &reason) = 0;
    // True once a rank has ended the job with exit_job (and the job was not aborted by a
    // failure before): `rank` asked for exit status `code`. Thread safe.
    virtual bool exit_requested(int *rank, int *code) const = 0;
    // True once the job was aborted through the store (a rank's ABORT, a job exit, or
    // broadcast_abort): the first reason, and the rank that sent it (-1: broadcast_abort).
    // Thread safe.
    virtual bool aborted(std::string *reason, int *rank) const = 0;
    // True once every rank has connected (used to unlink the socket file early).
    virtual bool all_joined() const = 0;
    // Frames the store has sent so far (its cost: an allgather of n ranks is n replies). Thread safe.
    virtual uint64_t frames_sent() const = 0;
    virtual void stop() = 0;
};

// A random hex secret of `bytes` bytes from the kernel's generator.
std::string random_secret(size_t bytes = 16);

}  // namespace hgas::boot
