// himeno: the Himeno benchmark (19-point Jacobi, himenoBMTxpa) on hgas, slabs along i, halo
// planes exchanged with put-with-signal. README.md in this folder describes it. This file
// checks the command line, dispatches to the mode (modes.hpp) and reports.
#include <hgas/hgas.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "modes.hpp"
#include "options.hpp"
#include "rank_launch.hpp"
#include "slab.hpp"

namespace himeno {
namespace {

std::string num(double v) {
    if (!std::isfinite(v)) return "null";
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", v);
    return b;
}

std::string hex(uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "\"%016llx\"", static_cast<unsigned long long>(v));
    return b;
}

uint64_t bits(double v) {
    uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

std::string nums(const std::vector<double> &v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + num(v[i]);
    return s + "]";
}

// JSON string contents: the device names and notes carry no quotes or controls, but be safe.
std::string quoted(const std::string &s) {
    std::string q = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') q += '\\';
        q += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
    }
    return q + "\"";
}

// The GPU lines of the report: devices, the roofline of the sweep kernel against the device
// copy measured in the same run, and the whole sweep's bandwidth.
void print_gpu(const gpu_report &g, int n, double per_iter) {
    std::printf("gpu:");
    for (int r = 0; r < n; ++r) std::printf("%s r%d %s", r ? "," : "", r, g.device[r].c_str());
    std::printf("\n");
    for (int r = 0; r < n; ++r) {
        std::printf("bandwidth r%d: sweep kernel %.1f GB/s (%.4f GB in %.4f ms)", r, g.kernel_gbps[r],
                    g.kernel_bytes[r] * 1e-9, g.kernel_s[r] * 1e3);
        if (std::isfinite(g.copy_gbps[r]))
            std::printf(" = %.1f%% of the device copy measured now (%.1f GB/s)",
                        100.0 * g.kernel_gbps[r] / g.copy_gbps[r], g.copy_gbps[r]);
        else
            std::printf(", no device copy to compare (no room for its 2 x 256 MiB beside the field)");
        if (r == 0 && g.peak_gbps > 0)
            std::printf(", %.1f%% of the memory's peak (%.0f GB/s)", 100.0 * g.kernel_gbps[r] / g.peak_gbps,
                        g.peak_gbps);
        std::printf("\n");
    }
    double bytes = 0;
    for (double b : g.kernel_bytes) bytes += b;
    std::printf("bandwidth: whole sweep %.1f GB/s over all ranks (the kernel's bytes / time per iteration)\n",
                bytes / per_iter * 1e-9);
}

int report(const options &o, const run_output &out) {
    const int me = hgas_rank_me(), n = hgas_rank_n();
    // CPU time per sweep of every rank, in rank order.
    double *cpu_all = nullptr;
    check(hgas_malloc(sizeof(double) * n, reinterpret_cast<void **>(&cpu_all)), "hgas_malloc");
    check(hgas_fcollect(cpu_all, &out.main.cpu_per_iter, sizeof(double)), "hgas_fcollect");

    const result &m = out.main;
    const double flop = 34.0 * (o.mimax - 3) * (o.mjmax - 3) * (o.mkmax - 3);  // per sweep, the reference formula
    const double per_iter = m.seconds / o.iters, mflops = flop * o.iters / m.seconds * 1e-6;
    // A counter that did not move measured nothing (NVML updates it every few ms): never 0 J.
    const bool have_energy = out.energy.have && m.energy_j > 0;
    const std::string energy_note =
        out.energy.have && !have_energy
            ? "unavailable (the NVML energy counter did not advance during the run: run longer)"
            : out.energy.note;
    const double energy_j = have_energy ? m.energy_j : NAN;
    const double mflop_per_j = have_energy ? flop * o.iters * 1e-6 / energy_j : NAN;
    const double overhead = o.overhead ? (m.seconds - out.bare.seconds) / o.iters : NAN;
    const std::optional<double> ref = reference_gosa(o.mimax, o.mjmax, o.mkmax, o.iters);
    const double rel = ref ? std::fabs(m.gosa - *ref) / std::fabs(*ref) : NAN;
    const bool verified = ref && rel <= 1e-5;
    const gpu_report &g = out.gpu;
    int code = 0;

    if (me == 0) {
        std::string planes;
        for (int r = 0; r < n; ++r) {
            int a, b;
            split_planes(o.mimax, n, r, &a, &b);
            planes += (r ? "," : "") + std::to_string(b - a);
        }
        std::printf("himeno: size %s (%dx%dx%d), %d iterations, %d rank(s) (planes %s), %d thread(s)/rank, mode %s, "
                    "kind %s%s%s\n",
                    o.size_name.c_str(), o.mimax, o.mjmax, o.mkmax, o.iters, n, planes.c_str(), out.threads,
                    mode_name(o.mode), kind_name(o.kind), o.weak ? ", weak scaling (size per rank)" : "",
                    o.exchange ? "" : ", no exchange");
        std::printf("gosa: %.10e (bits %016llx)\n", m.gosa, static_cast<unsigned long long>(bits(m.gosa)));
        if (o.checksum)
            std::printf("checksum: sum %.17g hash %016llx\n", out.sum, static_cast<unsigned long long>(out.hash));
        std::printf("time: %.6f s, %.6f ms per iteration\n", m.seconds, per_iter * 1e3);
        std::printf("MFLOPS: %.2f\n", mflops);
        if (g.present) print_gpu(g, n, per_iter);
        if (o.overhead)
            std::printf("comm overhead: %.6f ms per iteration (%.6f ms without exchange, %.1f%% of the time)\n",
                        overhead * 1e3, out.bare.seconds / o.iters * 1e3, 100.0 * overhead / per_iter);
        std::printf("cpu time per iteration (ms):");
        for (int r = 0; r < n; ++r) std::printf(" r%d %.4f", r, cpu_all[r] * 1e3);
        std::printf("\n");
        if (have_energy)
            std::printf("energy: %.3f J, %.6f J per iteration, %.2f MFLOP/J\n", energy_j, energy_j / o.iters,
                        mflop_per_j);
        else
            std::printf("energy: %s\n", energy_note.c_str());
        if (o.verify) {
            if (!ref)
                std::printf("verify: no reference value for %dx%dx%d with %d iterations (REFERENCE.md has XS 1,3,64,100 "
                            "and S 1,3,10,64,100)\n",
                            o.mimax, o.mjmax, o.mkmax, o.iters);
            else
                std::printf("verify: %s: expected %.9e, got %.9e, relative error %.2e (tolerance 1e-05)\n",
                            verified ? "ok" : "MISMATCH", *ref, m.gosa, rel);
        }

        std::vector<double> cpu(cpu_all, cpu_all + n);
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        const char *transports = std::getenv("HGAS_TRANSPORTS");
        std::string gpu_fields;
        if (g.present) {
            double bytes = 0;
            for (double b : g.kernel_bytes) bytes += b;
            std::string dev = "[";
            for (int r = 0; r < n; ++r) dev += (r ? "," : "") + quoted(g.device[r]);
            gpu_fields = ",\"gpu\":" + dev + "],\"copy_gbps\":" + nums(g.copy_gbps) + ",\"kernel_gbps\":" +
                         nums(g.kernel_gbps) + ",\"kernel_s\":" + nums(g.kernel_s) + ",\"kernel_bytes\":" +
                         nums(g.kernel_bytes) + ",\"peak_gbps\":" + num(g.peak_gbps > 0 ? g.peak_gbps : NAN) +
                         ",\"sweep_gbps\":" + num(bytes / per_iter * 1e-9);
        } else {
            gpu_fields = ",\"gpu\":null,\"copy_gbps\":null,\"kernel_gbps\":null,\"kernel_s\":null,"
                         "\"kernel_bytes\":null,\"peak_gbps\":null,\"sweep_gbps\":null";
        }
        std::string json = std::string("{\"app\":\"himeno\",\"size\":\"") + o.size_name + "\",\"mimax\":" +
                           std::to_string(o.mimax) + ",\"mjmax\":" + std::to_string(o.mjmax) +
                           ",\"mkmax\":" + std::to_string(o.mkmax) + ",\"iters\":" + std::to_string(o.iters) + ",\"weak\":" + (o.weak ? "true" : "false") +
                           ",\"mode\":\"" + mode_name(o.mode) + "\",\"kind\":\"" + kind_name(o.kind) +
                           "\",\"ranks\":" + std::to_string(n) + ",\"threads\":" + std::to_string(out.threads) +
                           ",\"planes\":[" + planes + "],\"exchange\":" + (o.exchange ? "true" : "false") +
                           ",\"poll_us\":" + std::to_string(o.poll_us) + ",\"gosa\":" + num(m.gosa) +
                           ",\"gosa_bits\":" + hex(bits(m.gosa)) + ",\"time_s\":" + num(m.seconds) +
                           ",\"time_per_iter_s\":" + num(per_iter) + ",\"flop_per_iter\":" + num(flop) +
                           ",\"mflops\":" + num(mflops) + ",\"time_per_iter_noexchange_s\":" +
                           (o.overhead ? num(out.bare.seconds / o.iters) : "null") +
                           ",\"comm_overhead_per_iter_s\":" + num(overhead) + ",\"cpu_time_per_iter_s\":" + nums(cpu) +
                           ",\"energy_j\":" + num(energy_j) + ",\"energy_per_iter_j\":" + num(energy_j / o.iters) +
                           ",\"mflop_per_j\":" + num(mflop_per_j) +
                           ",\"energy_note\":" + quoted(energy_note) + ",\"checksum_sum\":" +
                           (o.checksum ? num(out.sum) : "null") +
                           ",\"checksum_hash\":" + (o.checksum ? hex(out.hash) : "null") + gpu_fields +
                           ",\"reference_gosa\":" + (ref ? num(*ref) : "null") + ",\"verified\":" +
                           (o.verify && ref ? (verified ? "true" : "false") : "null") + ",\"transports\":\"" +
                           (transports ? transports : "") + "\",\"host\":" + quoted(host) + "}";
        std::printf("JSON %s\n", json.c_str());
        std::fflush(stdout);
        if (!o.json_path.empty()) {
            FILE *f = std::fopen(o.json_path.c_str(), "a");
            if (!f || std::fprintf(f, "%s\n", json.c_str()) < 0 || std::fclose(f) != 0) {
                std::fprintf(stderr, "himeno: cannot append to %s: %s\n", o.json_path.c_str(), std::strerror(errno));
                code = 1;
            }
        }
    }
    if (o.verify && !verified) code = 1;  // every rank knows gosa, so every rank agrees
    hgas_free(cpu_all);
    return code;
}

int main_ranked(options o) {
    const int me = hgas_rank_me(), n = hgas_rank_n();
    if (o.weak) {
        // Weak scaling: every rank gets the given size's mimax-2 interior planes, so the grid
        // along i grows with the rank count (its initial field and gosa are those of that grid).
        if (o.verify && n > 1) {
            if (me == 0)
                std::fprintf(stderr, "himeno: --verify compares with REFERENCE.md, whose values are for the named sizes; "
                                     "a --weak grid on %d ranks is %dx%dx%d: drop --verify or --weak\n",
                             n, n * (o.mimax - 2) + 2, o.mjmax, o.mkmax);
            return 2;
        }
        o.mimax = n * (o.mimax - 2) + 2;
    }
    if (n > o.mimax - 2) {
        if (me == 0)
            std::fprintf(stderr,
                         "himeno: size %s has %d interior planes along i but %d ranks: each rank needs at least one "
                         "plane; use at most %d ranks or a larger size\n",
                         o.size_name.c_str(), o.mimax - 2, n, o.mimax - 2);
        return 2;
    }
    if (o.mode == mode::cpu && !all_ranks_have(o.kind)) return 1;
    run_output out;
    const int rc = o.mode == mode::cpu ? run_cpu(o, out) : run_gpu(o, out);
    if (rc != 0) return rc;
    return report(o, out);
}

}  // namespace
}  // namespace himeno

int main(int argc, char **argv) {
    using namespace himeno;
    // Bad options are found before the job forms, on every rank alike: only rank 0 speaks.
    const char *rank_env = std::getenv("HGAS_RANK");
    const bool loud = !rank_env || !std::strcmp(rank_env, "0");
    int code = 0;
    const std::optional<options> o = parse_options(argc, argv, loud, &code);
    if (!o) return code;
    std::string why;
    if (!mode_built(o->mode, &why)) {
        if (loud) std::fprintf(stderr, "himeno: mode %s is not built yet: %s\n", mode_name(o->mode), why.c_str());
        return 2;
    }
    // GPU modes: fail clearly, before the job forms, where no GPU is visible.
    if (o->mode != mode::cpu && !gpu_visible(&why)) {
        if (loud) std::fprintf(stderr, "himeno: mode %s runs on a GPU, but %s\n", mode_name(o->mode), why.c_str());
        return 1;
    }
    // Ranks as threads (hgasrun --threads T): every thread runs the program as its own rank.
    // Everything a rank keeps is on its thread's stack or in hgas_malloc'd memory, so rank
    // threads share nothing but the options parsed above.
    return apps::run_ranks("himeno", [&o] { return main_ranked(*o); });
}
