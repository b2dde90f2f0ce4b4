// seismic: 3-D elastic wave propagation (velocity-stress staggered grid with C-PML) on hgas
// messaging. README.md in this folder describes the model, the options and the output. This
// file runs the time loop, times its phases and gathers and writes the results on rank 0.
#include <hgas/hgas.h>

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "device.hpp"
#include "exchange.hpp"
#include "setup.hpp"

namespace seismic {
namespace {

enum { T_XV, T_STRESS, T_XS, T_VEL, T_OTHER, NT };
const char *const k_phase[NT] = {"exchange_v", "stress", "exchange_s", "velocity", "record"};
constexpr int k_tag_rec = 1 << 20, k_tag_energy = (1 << 20) + 1;

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void check(hgas_status_t st, const char *what) {
    if (st != HGAS_OK) {
        std::string m = std::string("seismic: ") + what + " failed";
        hgas_abort(1, m.c_str());
    }
}

std::string num(double v) {
    if (!std::isfinite(v)) return "null";
    char b[40];
    std::snprintf(b, sizeof b, "%.9g", v);
    return b;
}

uint64_t fnv(const std::vector<float> &v) {
    uint64_t h = 1469598103934665603ull;
    for (float f : v) {
        uint32_t b;
        std::memcpy(&b, &f, 4);
        for (int i = 0; i < 4; ++i) h = (h ^ ((b >> (8 * i)) & 0xff)) * 1099511628211ull;
    }
    return h;
}

int run(int argc, char **argv) {
    const int me = hgas_rank_me(), n = hgas_rank_n();
    options o;
    int code;
    if (!parse_options(argc, argv, o, &code, me == 0)) return code;
    setup s;
    std::string err = make_setup(o, me, n, s);
    if (!err.empty()) {
        if (me == 0) std::fprintf(stderr, "seismic: %s\n", err.c_str());
        return 2;
    }
    const options &op = s.opt;
    std::unique_ptr<device> dev;
    if (op.mem == kind::host) dev = make_host_device();
    else if (op.mem == kind::sim) dev = make_sim_device();
    else {
        dev = make_cuda_device(&err);
        if (!dev) {
            if (me == 0) std::fprintf(stderr, "seismic: --kind cuda: %s\n", err.c_str());
            return 2;
        }
    }
    err = dev->init(s);
    if (!err.empty()) {
        std::fprintf(stderr, "seismic: rank %d: %s\n", me, err.c_str());
        return 2;
    }
    const int steps = op.steps;
    std::vector<double> esum, evmax;  // per energy step, this rank's part
    std::vector<int> estep;
    double t[NT] = {0};
    double total = 0;
    {
        exchange ex(s, *dev);
        const double rho_src = s.layer_at(op.sk).rho;
        check(hgas_barrier(), "hgas_barrier");
        const double t_start = now();
        // Styles integrated and pipelined (unless --overlap 0) overlap each exchange with the
        // update that follows it: post the messages (pipelined: and the face copies), update
        // the interior cells (which read no halo), wait for the messages, update the rim
        // cells. Basic exchanges, then updates all.
        const bool overlap = op.sty != style::basic && op.overlap;
        const poll_fn poll = [&ex] { ex.poll(); };
        for (int it = 0; it < steps; ++it) {
            double t0 = now(), t1;
            auto lap = [&](int phase) { t1 = now(), t[phase] += t1 - t0, t0 = t1; };
            const double src_s = op.src == source_type::explosive ? s.ricker(it) : 0.0;
            const double src_v = op.src == source_type::force ? s.ricker(it) / rho_src : 0.0;
            if (overlap) {
                ex.start(exchange::velocities), lap(T_XV);
                dev->stress(src_s, part::interior, poll), lap(T_STRESS);
                ex.finish(), lap(T_XV);
                dev->stress(src_s, part::rim, nullptr), lap(T_STRESS);
                ex.start(exchange::stresses), lap(T_XS);
                dev->velocity(src_v, op.force_dir, part::interior, poll), lap(T_VEL);
                ex.finish(), lap(T_XS);
                dev->velocity(src_v, op.force_dir, part::rim, nullptr), lap(T_VEL);
            } else {
                ex.run(exchange::velocities), lap(T_XV);
                dev->stress(src_s, part::all, nullptr), lap(T_STRESS);
                ex.run(exchange::stresses), lap(T_XS);
                dev->velocity(src_v, op.force_dir, part::all, nullptr), lap(T_VEL);
            }
            dev->record();
            if (op.energy_every > 0 && (it + 1) % op.energy_every == 0) {
                energy_sum e = dev->energy();
                esum.push_back(e.energy), evmax.push_back(e.vmax), estep.push_back(it + 1);
            }
            t[T_OTHER] += now() - t0;
        }
        dev->finish();
        total = now() - t_start;
        check(hgas_barrier(), "hgas_barrier");
        // phase times: the mean over the ranks (a rank's exchange includes its wait for slower
        // neighbours); the run's time: the slowest rank's
        double tsum[NT], tmax = 0;
        check(hgas_allreduce(tsum, t, NT, HGAS_DOUBLE, HGAS_OP_SUM), "hgas_allreduce");
        check(hgas_allreduce(&tmax, &total, 1, HGAS_DOUBLE, HGAS_OP_MAX), "hgas_allreduce");
        for (int p = 0; p < NT; ++p) t[p] = tsum[p] / n;
        total = tmax;

        // seismograms and energies to rank 0
        std::vector<float> mine = dev->records();
        std::vector<double> eparts(esum);
        eparts.insert(eparts.end(), evmax.begin(), evmax.end());
        size_t nloc = 0;
        for (const receiver &r : s.recs) nloc += r.owner == me;
        std::vector<float> seis;      // [step][receiver][3], rank 0
        std::vector<double> etot(esum.size()), vmax(esum.size());
        if (me != 0) {
            if (nloc) check(hgas_send(mine.data(), mine.size() * sizeof(float), 0, k_tag_rec), "hgas_send of seismograms");
            check(hgas_send(eparts.data(), eparts.size() * sizeof(double), 0, k_tag_energy), "hgas_send of energies");
        } else {
            const size_t nr = s.recs.size();
            seis.assign(static_cast<size_t>(steps) * nr * 3, 0.0f);
            std::vector<double> part(eparts.size());
            for (int r = 0; r < n; ++r) {
                std::vector<size_t> idx;  // this rank's receivers' places in the output
                for (size_t q = 0; q < nr; ++q)
                    if (s.recs[q].owner == r) idx.push_back(q);
                std::vector<float> got;
                if (r == 0) got = mine;
                else if (!idx.empty()) {
                    got.resize(static_cast<size_t>(steps) * idx.size() * 3);
                    check(hgas_recv(got.data(), got.size() * sizeof(float), r, k_tag_rec, nullptr), "hgas_recv of seismograms");
                }
                for (int it = 0; it < steps; ++it)
                    for (size_t q = 0; q < idx.size(); ++q)
                        for (int c = 0; c < 3; ++c)
                            seis[(static_cast<size_t>(it) * nr + idx[q]) * 3 + c] = got[(it * idx.size() + q) * 3 + c];
                if (r == 0) part = eparts;
                else check(hgas_recv(part.data(), part.size() * sizeof(double), r, k_tag_energy, nullptr), "hgas_recv of energies");
                for (size_t e = 0; e < esum.size(); ++e) {
                    etot[e] += part[e];
                    vmax[e] = std::max(vmax[e], part[esum.size() + e]);
                }
            }
        }
        // the exchange's buffers and layouts go before the device
        if (me == 0) {
            double comm = t[T_XV] + t[T_XS];
            const size_t nr = s.recs.size();
            if (!op.seis_file.empty()) {
                FILE *f = std::fopen(op.seis_file.c_str(), "w");
                if (!f) { std::perror(op.seis_file.c_str()); return 1; }
                std::fprintf(f, "# seismic seismograms: %d steps, dt %.9g s; receivers (i,j,k):", steps, op.dt);
                for (const receiver &r : s.recs) std::fprintf(f, " %d,%d,%d", r.i, r.j, r.k);
                std::fprintf(f, "\n# columns: t, then vx vy vz (m/s) of each receiver\n");
                for (int it = 0; it < steps; ++it) {
                    std::fprintf(f, "%.9g", (it + 1) * op.dt);
                    for (size_t q = 0; q < nr * 3; ++q) std::fprintf(f, " %.9g", seis[static_cast<size_t>(it) * nr * 3 + q]);
                    std::fprintf(f, "\n");
                }
                std::fclose(f);
            }
            if (!op.energy_file.empty()) {
                FILE *f = std::fopen(op.energy_file.c_str(), "w");
                if (!f) { std::perror(op.energy_file.c_str()); return 1; }
                std::fprintf(f, "# step t energy(J, outside the PML) max|v|(m/s)\n");
                for (size_t e = 0; e < etot.size(); ++e)
                    std::fprintf(f, "%d %.9g %.9g %.9g\n", estep[e], estep[e] * op.dt, etot[e], vmax[e]);
                std::fclose(f);
            }
            double emax = 0, vm = 0;
            int emax_step = 0;
            for (size_t e = 0; e < etot.size(); ++e) {
                if (etot[e] > emax) emax = etot[e], emax_step = estep[e];
                vm = std::max(vm, vmax[e]);
            }
            const double efinal = etot.empty() ? 0 : etot.back();
            const uint64_t sum = fnv(seis);
            std::printf("seismic: grid %dx%dx%d, %d rank(s) (decomp %dx%d), kind %s, style %s, %d steps of %g s, "
                        "Courant %.3f, %zu receivers\n",
                        op.nx, op.ny, op.nz, n, op.py, op.pz, name(op.mem), name(op.sty), steps, op.dt, s.courant, nr);
            std::printf("time: %.6f s, %.4f ms per step\n", total, 1e3 * total / steps);
            std::printf("phases (s, mean over ranks):");
            for (int p = 0; p < NT; ++p) std::printf(" %s %.6f", k_phase[p], t[p]);
            std::printf("\ncommunication: %.1f%% of the time\n", total > 0 ? 100 * comm / total : 0.0);
            std::printf("halo: %zu bytes per step sent by rank 0, %zu bytes of host buffers (rank 0)\n",
                        ex.bytes_per_step(), dev->pinned_bytes);
            if (!etot.empty())
                std::printf("energy: max %.6e J at step %d, final %.6e J (%.3e of max); max |v| %.6e m/s\n", emax,
                            emax_step, efinal, emax > 0 ? efinal / emax : 0.0, vm);
            std::printf("seismograms: checksum %016" PRIx64 "\n", sum);
            if (!op.json_file.empty()) {
                FILE *f = std::fopen(op.json_file.c_str(), "a");
                if (!f) { std::perror(op.json_file.c_str()); return 1; }
                std::string j = "{\"app\":\"seismic\",\"grid\":[" + std::to_string(op.nx) + "," + std::to_string(op.ny) +
                                "," + std::to_string(op.nz) + "],\"ranks\":" + std::to_string(n) + ",\"decomp\":[" +
                                std::to_string(op.py) + "," + std::to_string(op.pz) + "],\"kind\":\"" + name(op.mem) +
                                "\",\"style\":\"" + name(op.sty) + "\",\"overlap\":" + (overlap ? "true" : "false") + ",\"model\":\"" + op.model + "\",\"steps\":" +
                                std::to_string(steps) + ",\"dt\":" + num(op.dt) + ",\"time_s\":" + num(total) +
                                ",\"step_ms\":" + num(1e3 * total / steps) + ",\"phases_s\":{";
                for (int p = 0; p < NT; ++p) j += std::string(p ? "," : "") + "\"" + k_phase[p] + "\":" + num(t[p]);
                char ck[24];
                std::snprintf(ck, sizeof ck, "%016" PRIx64, sum);
                j += "},\"comm_fraction\":" + num(total > 0 ? comm / total : 0) + ",\"halo_bytes_per_step\":" +
                     std::to_string(ex.bytes_per_step()) + ",\"host_buffer_bytes\":" + std::to_string(dev->pinned_bytes) +
                     ",\"energy_max\":" + num(emax) + ",\"energy_final\":" + num(efinal) + ",\"vmax\":" + num(vm) +
                     ",\"receivers\":" + std::to_string(nr) + ",\"checksum\":\"" + ck + "\"}\n";
                std::fputs(j.c_str(), f);
                std::fclose(f);
            }
        }
    }
    dev.reset();  // collective frees (sim, cuda)
    return 0;
}

}  // namespace
}  // namespace seismic

int main(int argc, char **argv) {
    if (hgas_init() != HGAS_OK) {
        std::fprintf(stderr, "seismic: hgas_init failed (start it with hgasrun -n N)\n");
        return 1;
    }
    int rc = seismic::run(argc, argv);
    if (rc == 2 || rc == 0) hgas_barrier();
    hgas_finalize();
    return rc;
}
