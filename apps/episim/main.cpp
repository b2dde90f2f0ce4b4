// episim: an agent-based epidemic (EpiSimdemics-style) on hgas messages. README.md has the
// model, the options, the output and the three communication styles.
#include <hgas/hgas.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "device.hpp"
#include "options.hpp"
#include "sim.hpp"

using namespace episim;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double max_over_ranks(double x) {
    double r = 0;
    check(hgas_allreduce(&r, &x, 1, HGAS_DOUBLE, HGAS_OP_MAX), "reducing the times");
    return r;
}
uint64_t reduce_u64(uint64_t x, hgas_op_t op) {
    uint64_t r = 0;
    check(hgas_allreduce(&r, &x, 1, HGAS_UINT64, op), "reducing the counts");
    return r;
}

std::string join(const std::vector<uint64_t> &v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s;
}

int run(const Options &o) {
    const int me = hgas_rank_me(), n = hgas_rank_n();
    std::string why;
    auto dev = make_device(o.k, &why);
    if (!dev) throw error(why);
    hgas_msg_ctx_t ctx;
    check(hgas_msg_ctx_create(&ctx), "creating episim's message scope");
    const Config &c = o.c;
    if (me == 0)
        std::printf("episim: scenario %s, persons %llu, locations %llu (%ux%u), sub-locations %u, ranks %d, kind %s, "
                    "style %s, seed %llu, days %u, runs %u, fragment %zu B x %d per peer\n",
                    c.scen == scenario::grid ? "grid" : "one-location", (unsigned long long)c.persons,
                    (unsigned long long)c.locations(), c.gx, c.gy, c.sublocs, n, kind_name(o.k), style_name(o.st),
                    (unsigned long long)c.p.seed, c.days, o.runs, o.fragment, o.per_peer);
    std::vector<std::vector<uint64_t>> curves;
    Phases ph;
    DayCounts last{};
    uint64_t visits = 0, infections = 0;
    size_t pinned_peak = 0, dev_frag = 0;
    std::string table;
    const double t0 = now();
    double days_wall = 0;  // the day loops alone, without building the population and the arrays
    for (unsigned run = 0; run < o.runs; ++run) {
        Options ro = o;
        ro.c.p.seed = c.p.seed + run;
        Sim sim(ro, *dev, ctx);
        std::vector<uint64_t> curve;
        DayCounts dc = sim.initial_counts();
        if (run == 0) {
            table += "day new S E I R\n";
            char line[160];
            std::snprintf(line, sizeof line, "init - %llu %llu %llu %llu\n", (unsigned long long)dc.s,
                          (unsigned long long)dc.e, (unsigned long long)dc.i, (unsigned long long)dc.r);
            table += line;
        }
        const double td = now();
        for (uint32_t d = 0; d < c.days; ++d) {
            dc = sim.day(d);
            curve.push_back(dc.new_inf);
            if (run == 0) {
                char line[160];
                std::snprintf(line, sizeof line, "%u %llu %llu %llu %llu %llu\n", d, (unsigned long long)dc.new_inf,
                              (unsigned long long)dc.s, (unsigned long long)dc.e, (unsigned long long)dc.i,
                              (unsigned long long)dc.r);
                table += line;
                if (me == 0 && !o.quiet) std::printf("day %s", line);
            }
        }
        days_wall += now() - td;
        sim.close();
        if (me == 0 && o.runs > 1) std::printf("run %u seed %llu curve: %s\n", run, (unsigned long long)ro.c.p.seed,
                                               join(curve).c_str());
        curves.push_back(curve);
        ph.visits += sim.phases.visits, ph.visit_comm += sim.phases.visit_comm, ph.interact += sim.phases.interact;
        ph.inf_comm += sim.phases.inf_comm, ph.update += sim.phases.update;
        visits += sim.visits_sent, infections += sim.infections_sent;
        pinned_peak = std::max(pinned_peak, dev->pinned_peak());
        dev_frag = sim.device_fragment_bytes();
        last = dc;
    }
    const double total = max_over_ranks(now() - t0), days_total = max_over_ranks(days_wall);
    const double pv = max_over_ranks(ph.visits), pvc = max_over_ranks(ph.visit_comm),
                 pi = max_over_ranks(ph.interact), pic = max_over_ranks(ph.inf_comm), pu = max_over_ranks(ph.update);
    visits = reduce_u64(visits, HGAS_OP_SUM);
    infections = reduce_u64(infections, HGAS_OP_SUM);
    const uint64_t pin_max = reduce_u64(pinned_peak, HGAS_OP_MAX), pin_sum = reduce_u64(pinned_peak, HGAS_OP_SUM);
    const uint64_t devfrag_max = reduce_u64(dev_frag, HGAS_OP_MAX);
    check(hgas_msg_ctx_destroy(ctx), "ending episim's message scope");
    if (me != 0) return 0;
    const double days = double(c.days) * o.runs;
    std::printf("curve: %s\n", join(curves[0]).c_str());
    std::printf("final: S %llu E %llu I %llu R %llu\n", (unsigned long long)last.s, (unsigned long long)last.e,
                (unsigned long long)last.i, (unsigned long long)last.r);
    std::printf(
        "phases (s, max over ranks): visits %.6f visit_comm %.6f interact %.6f inf_comm %.6f update %.6f "
        "total %.6f per day %.6f (the days alone %.6f)\n",
        pv, pvc, pi, pic, pu, total, total / days, days_total / days);
    std::printf("messages: %llu visits, %llu infections\n", (unsigned long long)visits,
                (unsigned long long)infections);
    std::printf("pinned: episim's own page-locked staging %llu B per rank (max), %llu B all ranks; device "
                "fragments %llu B per rank\n", (unsigned long long)pin_max, (unsigned long long)pin_sum,
                (unsigned long long)devfrag_max);
    if (!o.curve_file.empty()) {
        std::ofstream f(o.curve_file);
        f << table;
        if (!f) throw error("cannot write --curve " + o.curve_file);
    }
    std::ostringstream j;
    j.precision(9);
    j << "{\"app\": \"episim\", \"scenario\": \"" << (c.scen == scenario::grid ? "grid" : "one-location")
      << "\", \"ranks\": " << n << ", \"kind\": \"" << kind_name(o.k) << "\", \"style\": \"" << style_name(o.st)
      << "\", \"persons\": " << c.persons << ", \"locations\": " << c.locations() << ", \"grid\": [" << c.gx << ", "
      << c.gy << "], \"sublocs\": " << c.sublocs << ", \"visits_per_day\": " << c.visits << ", \"tau\": " << c.p.tau
      << ", \"contact_p\": " << c.p.contact_p << ", \"days\": " << c.days << ", \"seed\": " << c.p.seed
      << ", \"runs\": " << o.runs << ", \"fragment_bytes\": " << o.fragment << ", \"fragments_per_peer\": "
      << o.per_peer << ", \"sort_on_arrival\": " << (o.sort_on_arrival && o.st != style::basic ? "true" : "false") << ", \"curve\": ["
      << join(curves[0]) << "]";
    if (o.runs > 1) {
        j << ", \"curves\": [";
        for (size_t r = 0; r < curves.size(); ++r) j << (r ? ", [" : "[") << join(curves[r]) << "]";
        j << "]";
    }
    j << ", \"final\": {\"S\": " << last.s << ", \"E\": " << last.e << ", \"I\": " << last.i << ", \"R\": " << last.r
      << "}, \"phases_s\": {\"visits\": " << pv << ", \"visit_comm\": " << pvc << ", \"interact\": " << pi
      << ", \"inf_comm\": " << pic << ", \"update\": " << pu << "}, \"time_s\": " << total
      << ", \"time_per_day_s\": " << total / days << ", \"days_s\": " << days_total
      << ", \"days_per_day_s\": " << days_total / days << ", \"visit_messages\": " << visits
      << ", \"infection_messages\": " << infections << ", \"pinned_bytes_max\": " << pin_max
      << ", \"pinned_bytes_sum\": " << pin_sum << ", \"device_fragment_bytes\": " << devfrag_max << "}";
    std::printf("JSON %s\n", j.str().c_str());
    if (!o.json_file.empty()) {
        std::ofstream f(o.json_file, std::ios::app);
        f << j.str() << "\n";
        if (!f) throw error("cannot append to --json " + o.json_file);
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    Options o;
    std::string err;
    bool help = false;
    if (!parse_options(argc, argv, &o, &err, &help)) {
        std::fprintf(stderr, "episim: %s\n", err.c_str());
        return 2;
    }
    if (help) {
        std::fputs(USAGE, stdout);
        return 0;
    }
    if (hgas_init() != HGAS_OK) {
        std::fprintf(stderr, "episim: hgas_init failed: %s\n", hgas_last_error());
        return 1;
    }
    int rc = 0;
    try {
        rc = run(o);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "episim: rank %d: %s\n", hgas_rank_me(), e.what());
        std::fflush(stderr);
        std::_Exit(1);  // the launcher ends the job and names this rank
    }
    std::fflush(stdout);
    hgas_finalize();
    return rc;
}
