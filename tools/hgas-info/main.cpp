// hgas-info: what this build of hgas has and what it would do on this machine: version,
// every HGAS_* setting with its value and where the value came from, the transports, and the
// path chosen for each (memory kind, locality) pair.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <hgas/config.h>

#include "base/settings.hpp"
#include "gpu/gpu.hpp"
#include "gpu/reg_policy.hpp"
#include "proto/router.hpp"
#include "proto/staging.hpp"
#include "transport/transport.hpp"

using namespace hgas;

static void usage() {
    std::printf("usage: hgas-info [--settings-only] [--help]\n"
                "Prints the hgas version, every HGAS_* setting (value, source, help), the transports in\n"
                "this build, and the path chosen for each (kind, locality) pair under the current\n"
                "environment. Set HGAS_* variables to see their effect.\n");
}

int main(int argc, char **argv) {
    bool settings_only = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            usage();
            return 0;
        } else if (!std::strcmp(argv[i], "--settings-only")) {
            settings_only = true;
        } else {
            std::fprintf(stderr, "hgas-info: unknown option '%s' (see --help)\n", argv[i]);
            return 2;
        }
    }
    auto cfg = settings::from_env();
    if (!cfg.ok()) {
        std::fprintf(stderr, "hgas-info: %s\n", last_error().c_str());
        return 1;
    }
    if (!settings_only) {
        std::printf("hgas %s\n\n", HGAS_VERSION);
        std::printf("build:\n");
        std::printf("  UCX:  %s\n", HGAS_HAVE_UCX ? (std::string("yes, ") + transport::ucx_version()).c_str()
                                                 : "no (this build reaches only ranks of one machine: self and shm)");
        std::printf("  CUDA: %s\n\n", HGAS_HAVE_CUDA ? "yes (kind cuda where a GPU is visible)" : "no (kind cuda unavailable)");
    }
    std::printf("settings:\n");
    std::printf("  %-26s %-12s %-12s %s\n", "name", "value", "source", "help");
    for (int i = 0; i < setting_count; ++i) {
        const setting s = static_cast<setting>(i);
        const setting_info &si = info(s);
        std::string v = cfg->value_text(s);
        if (s == setting::boot_secret && !v.empty()) v = "(set)";  // never print the secret
        std::printf("  %-26s %-12s %-12s %s [%s%s%s]\n", si.env, v.empty() ? "\"\"" : v.c_str(), cfg->source(s),
                    si.help, setting_type_name(si.type), *si.choices ? ": " : "", si.choices);
    }
    // A typo (HGAS_HEAPSIZE) is the likeliest reason a setting above shows its default.
    for (const auto &u : unused_env())
        std::printf("  unused environment variable: %s%s%s\n", u.name.c_str(), u.suggestion.empty() ? "" : " (maybe: ",
                    u.suggestion.empty() ? "" : (u.suggestion + "?)").c_str());
    if (settings_only) return 0;

    std::printf("\ntransports (in HGAS_TRANSPORTS order):\n");
    for (const auto &t : cfg->list(setting::transports)) {
        if (t == "self") std::printf("  self  the rank's own memory: memcpy and CPU atomics\n");
        if (t == "shm") std::printf("  shm   ranks of the same node: shared mappings, memcpy and CPU atomics\n");
        if (t == "ucx") {
            if (HGAS_HAVE_UCX)
                std::printf("  ucx   every rank: UCX %s, mode %s (%s)\n", transport::ucx_version(),
                            cfg->text(setting::ucx_mode).c_str(),
                            cfg->text(setting::ucx_mode) == "am" ? "active messages executed by the target"
                                                                : "UCX put/get; atomics via UCX to same-node peers, "
                                                                  "via active messages to other nodes");
            else
                std::printf("  ucx   not in this build (rebuild with UCX: make deps, or -DHGAS_UCX_ROOT=...)\n");
        }
    }
    std::printf("\npaths (source kind -> target kind, locality: transport):\n");
    const proto::locality locs[] = {proto::locality::same_process, proto::locality::same_node,
                                    proto::locality::other_node};
    for (auto l : locs) {
        std::string p = proto::planned_path(cfg->list(setting::transports), l, HGAS_HAVE_UCX);
        std::printf("  host -> host, %-13s %s\n", proto::locality_name(l),
                    p.empty() ? "unreachable with these transports" : p.c_str());
    }
    // Device memory: what this machine has and the path each (kinds, locality) pair takes.
    std::printf("\ndevice memory:\n");
    for (const auto &l : gpu::cuda_machine()) std::printf("  cuda  %s\n", l.c_str());
    // How the cuda heaps are exported to same-node peers (HGAS_CUDA_IPC).
    for (const auto &l : gpu::cuda_ipc_plan(cfg->text(setting::cuda_ipc))) std::printf("  cuda  IPC: %s\n", l.c_str());
    const bool sim = cfg->bytes(setting::sim_heap_size) > 0;
    std::printf("  sim   %s\n", sim ? (std::string("on, ") + cfg->value_text(setting::sim_heap_size) + " per rank, latency " +
                                       cfg->value_text(setting::sim_latency_us) + " us, bandwidth " +
                                       cfg->value_text(setting::sim_bandwidth) + " B/s, peer access " +
                                       (cfg->flag(setting::sim_peer_access) ? "on" : "off")).c_str()
                                    : "off (HGAS_SIM_HEAP_SIZE=0)");
    // Ranks as threads (HGAS_THREADS, docs/threads.md): how a process's rank threads use its GPU.
    const long long per_process = static_cast<long long>(cfg->integer(setting::threads));
    std::printf("  ranks per process: %lld (HGAS_THREADS)%s\n", per_process,
                per_process == 1 ? "; with more, HGAS_GPU_SHARING=threads or funneled picks how they share the GPU"
                : cfg->text(setting::gpu_sharing) == "funneled"
                    ? "; HGAS_GPU_SHARING=funneled: one thread of the process issues every rank's GPU work in order (mode d)"
                    : "; each rank its own streams in the process's CUDA context (mode c, HGAS_GPU_SHARING=threads)");
    const std::string forced = cfg->text(setting::path);
    const std::string chunk = cfg->value_text(setting::staging_chunk), slots = cfg->value_text(setting::staging_slots);
    const std::string staged = "staged: ring of " + slots + " x " + chunk + " B per pair, credits, pipelined chunks";
    // The copy agent (src/gpu/cuda_agent.hpp) takes small copies whose ends the GPU reaches;
    // where ranks share a GPU only those within its memory.
    const std::string amax = cfg->value_text(setting::gpu_agent_max);
    const bool ag = cfg->flag(setting::gpu_agent);
    const std::string agent = ag ? "copy agent up to " + amax + " B, " : std::string();
    const std::string agent_own =
        ag ? "copy agent up to " + amax + " B within one GPU" +
                 (cfg->flag(setting::gpu_agent_peers) ? " and to peer GPUs where the rank has its GPU alone" : "") +
                 ", "
           : std::string();
    std::printf("\npaths with device memory (HGAS_PATH=%s; docs/paths.md):\n", forced.c_str());
    std::printf("  device <-> device, same process  %scopy engine above\n", agent.c_str());
    std::printf("  device <-> device, same node     %s\n",
                forced == "staged" ? staged.c_str()
                                   : (agent_own + "copy engine into the peer's memory mapped by CUDA IPC (HGAS_CUDA_IPC=" +
                                      cfg->text(setting::cuda_ipc) + ", 'cuda IPC' above) where the GPUs have peer "
                                      "access (same GPU or a 'yes' above); otherwise " +
                                      (forced == "direct" ? std::string("refused (HGAS_PATH=direct)") : staged))
                                         .c_str());
    std::printf("  device <-> device, other node    %s\n",
                forced == "direct" ? "refused (HGAS_PATH=direct)" : (staged + ", over the transport").c_str());
    std::printf("  device <-> host heap, same node  %scopy engine into the shm mapping (registered with the GPU)\n",
                (ag ? "copy agent up to " + amax + " B where the rank has its GPU alone, " : std::string()).c_str());
    std::printf("  device <-> host heap, other node bounce: chunks of %s B through the pinned pool, then the transport\n",
                chunk.c_str());
    // User host buffers as one end of a device copy (HGAS_REG_CACHE).
    std::printf("  device <-> user host buffer      %scopy engine (pinned where hgas_register'ed or cached)\n",
                (ag ? "copy agent up to " + amax + " B for page-locked ones where the rank has its GPU alone, else "
                    : std::string())
                    .c_str());
    // The staging rings' share of the symmetric host heap, which would grow with every peer
    // (proto::staging::plan): what a job of n ranks gets.
    {
        const uint64_t budget = std::min<uint64_t>(cfg->bytes(setting::staging_area_max), cfg->bytes(setting::heap_size) / 2);
        const bool cf = std::string(cfg->source(setting::staging_chunk)) == "environment";
        const bool sf = std::string(cfg->source(setting::staging_slots)) == "environment";
        std::printf("  staging rings: in every rank's host heap (jobs with a device kind), at most %llu KiB "
                    "(HGAS_STAGING_AREA_MAX, half of HGAS_HEAP_SIZE)%s\n", (unsigned long long)(budget >> 10),
                    cf || sf ? "; HGAS_STAGING_CHUNK/SLOTS as set are kept" : "");
        for (int n : {2, 8, 32, 64, 256}) {
            const proto::staging_plan p = proto::staging::plan(n, cfg->bytes(setting::staging_chunk),
                                                               static_cast<int>(cfg->integer(setting::staging_slots)),
                                                               budget, cf, sf);
            std::printf("    %3d ranks: %d slots x %llu KiB per peer = %llu KiB%s\n", n, p.slots,
                        (unsigned long long)(p.chunk >> 10), (unsigned long long)(p.bytes >> 10),
                        p.bytes > budget ? " (over the budget: hgas_init fails unless the heap has room)" : "");
        }
    }
    // Tagged messages (src/msg, docs/messaging.md): the rings and the protocol per size.
    {
        const uint64_t slot = cfg->bytes(setting::msg_slot), slots = static_cast<uint64_t>(cfg->integer(setting::msg_slots));
        std::printf("\ntagged messages (hgas_send/hgas_recv; docs/messaging.md):\n");
        std::printf("  rings: %llu slots x %s B per pair of ranks in the receiver's host heap = %llu KiB per peer\n",
                    (unsigned long long)slots, cfg->value_text(setting::msg_slot).c_str(),
                    (unsigned long long)(slots * slot / 1024));
        std::printf("  eager up to %llu B: one slot (device data copied straight into a mapped slot, else "
                    "assembled and put with a signal)\n", (unsigned long long)(slot > 64 ? slot - 64 : 0));
        std::printf("  larger: rendezvous, one-sided get/put into the posted buffer when either buffer is in an hgas "
                    "heap the other side reaches, else chunks of %llu B through the ring (host memory at both ends) or through the pinned pool (device memory at either end)\n",
                    (unsigned long long)(slot > 64 ? slot - 64 : 0));
        const uint64_t ipc = cfg->bytes(setting::msg_ipc_threshold);
        if (ipc && cfg->text(setting::path) != "staged")
            std::printf("  from %s B, a user device buffer (cudaMalloc'd) to a rank of this node: by IPC (the receiver "
                        "maps the sender's allocation once, cached by buffer id, and copies with one device copy)\n",
                        cfg->value_text(setting::msg_ipc_threshold).c_str());
        else
            std::printf("  IPC of user device buffers: off (%s): they go through the pinned pool\n",
                        ipc ? "HGAS_PATH=staged" : "HGAS_MSG_IPC_THRESHOLD=0");
        const std::string utag = cfg->text(setting::msg_ucx_tag);
        if (utag == "off")
            std::printf(
                "  UCX tag matching: off (HGAS_MSG_UCX_TAG=nodes: messages to other nodes by ucp_tag_send_nbx)\n");
        else
            std::printf(
                "  UCX tag matching (HGAS_MSG_UCX_TAG=%s): messages to %s by UCX's tag API; hgas matches "
                "(scopes 0..4095, ranks < 2^20)\n",
                utag.c_str(),
                utag == "on"      ? "every peer UCX reaches"
                : utag == "nodes" ? "peers on other nodes"
                                  : "peers on other nodes where neither rank has a device kind (GPU or sim "
                                    "memory: rings and the pinned pool)");
        std::printf("  unexpected messages held up to %s B, then senders wait (flow control)\n",
                    cfg->value_text(setting::msg_unexpected_max).c_str());
        const uint64_t pchunk = cfg->bytes(setting::msg_pool_chunk);
        const uint64_t depth = static_cast<uint64_t>(cfg->integer(setting::msg_pool_depth));
        if (depth)
            std::printf(
                "  pinned pool: %llu send + %llu receive chunks of %s B = %llu KiB per rank (beyond HGAS_HEAP_SIZE; "
                "page-locked where a GPU is used), whatever the number of peers (device -> chunk, transport, "
                "chunk -> device, overlapped on internal streams; pieces of bytes / depth rounded up to 4 KiB, at "
                "least a quarter chunk)\n",
                (unsigned long long)depth, (unsigned long long)depth, cfg->value_text(setting::msg_pool_chunk).c_str(),
                (unsigned long long)(2 * depth * pchunk / 1024));
        else
            std::printf("  pinned pool: off (HGAS_MSG_POOL_DEPTH=0): device messages without a one-sided path use ring slots\n");
        std::printf(
            "  typed messages of device memory: packed/unpacked by a GPU kernel (cuda) or the copy engine (sim) "
            "into scratch from the local heap of the buffer's kind\n");
        std::printf("  stream-ordered (hgas_send_on_stream/hgas_recv_on_stream): started by the rank's CPU when the stream "
                    "reaches them; wait with hgas_stream_sync\n");
        std::printf("  footprint per rank: rings %llu KiB x ranks (grows with peers) + pool %llu KiB (fixed)\n",
                    (unsigned long long)(slots * slot / 1024), (unsigned long long)(2 * depth * pchunk / 1024));
    }
    std::printf("\nregistration cache: %s\n", gpu::reg_cache_plan(*cfg).c_str());
    std::printf("\nprogress: %s\n", cfg->flag(setting::progress_thread)
                                        ? "helper thread per rank serves remote requests while the rank computes"
                                        : "made inside hgas calls that wait and hgas_progress() (HGAS_PROGRESS_THREAD=1 "
                                          "adds a helper thread)");
    // Several ranks on one GPU (HGAS_GPU_SHARING, docs/sharing.md).
    {
        const std::string m = cfg->text(setting::gpu_sharing);
        const char *pipe = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
        std::string what =
            m == "process"  ? "processes, each with its own CUDA context (the GPU time-slices between them)"
            : m == "mps"    ? "processes under the job's own MPS daemon, which hgasrun starts and stops (kernels of "
                              "the processes run side by side)"
            : m == "threads" ? "ranks as threads sharing the process's CUDA context, each on its own streams (needs "
                               "hgasrun --threads)"
            : m == "funneled" ? "ranks as threads, one thread issuing every rank's GPU work in order (needs hgasrun "
                                "--threads)"
            : per_process > 1 ? "auto with ranks as threads: threads (each rank its own streams in the process's "
                                "CUDA context)"
            : pipe && *pipe ? std::string("auto: processes under the MPS daemon at CUDA_MPS_PIPE_DIRECTORY=") + pipe
                            : "auto: processes, each with its own CUDA context (HGAS_GPU_SHARING=mps for MPS)";
        std::printf("\nGPU sharing (HGAS_GPU_SHARING=%s): %s\n", m.c_str(), what.c_str());
    }
    return 0;
}
