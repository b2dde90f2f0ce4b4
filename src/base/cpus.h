/* Where to place ranks on a machine's CPUs: plain C (inline, no library), shared by hgasrun's
 * --bind core, the benchmarks' pinning (bench/bench_common.h) and their tests.
 *
 * A CPU here is a hardware thread. Two hardware threads of one physical core (SMT siblings)
 * share its execution units and caches: a rank that computes slows the copy its sibling makes
 * by 15-20%. So ranks are placed on the first hardware thread of every core first, in CPU
 * order, and on second threads only when every core has one rank. The siblings come from
 * sysfs (cpuN/topology/thread_siblings_list); where it cannot be read a CPU counts as a core
 * of its own, which is the plain CPU order. */
#ifndef HGAS_BASE_CPUS_H
#define HGAS_BASE_CPUS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

/* How many CPUs listed in `path` (a sysfs list such as "0,8" or "0-1") are in `allowed` and
 * below `cpu`: its index among the siblings the process may use, 0 for the first of its core;
 * 0 where the file is absent. */
static inline int hgas_cpu_sibling_index(const char *path, int cpu, const cpu_set_t *allowed) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[256];
    int below = 0;
    if (fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p && *p != '\n') {
            char *end;
            long lo = strtol(p, &end, 10), hi = lo;
            if (end == p) break;
            p = end;
            if (*p == '-') {
                hi = strtol(p + 1, &end, 10);
                if (end == p + 1) break;
                p = end;
            }
            for (long c = lo; c <= hi && c < cpu; ++c) below += c >= 0 && c < CPU_SETSIZE && CPU_ISSET((int)c, allowed);
            if (*p == ',') ++p;
        }
    }
    fclose(f);
    return below;
}

/* The CPUs of `allowed` in placement order (above), written to out[0 .. return value);
 * `sysfs` is the directory that holds cpuN/ (NULL: /sys/devices/system/cpu). */
static inline int hgas_cpu_order(const cpu_set_t *allowed, const char *sysfs, int *out, int max) {
    if (!sysfs) sysfs = "/sys/devices/system/cpu";
    int n = 0;
    for (int level = 0; level < 8 && n < max; ++level) {
        int any = 0;
        for (int c = 0; c < CPU_SETSIZE && n < max; ++c) {
            if (!CPU_ISSET(c, allowed)) continue;
            char path[512];
            snprintf(path, sizeof path, "%s/cpu%d/topology/thread_siblings_list", sysfs, c);
            const int idx = hgas_cpu_sibling_index(path, c, allowed);
            if (idx == level) out[n++] = c;
            if (idx >= level) any = 1;
        }
        if (!any) break;
    }
    return n;
}

#endif /* HGAS_BASE_CPUS_H */
