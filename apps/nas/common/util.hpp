// What the NAS programs share: error checks that end the job, clocks, a wait deadline.
#pragma once

#include <hgas/hgas.h>

#include <string>

namespace nas {

/// Ends the job with "<prog>: what: hgas's last error" unless s is HGAS_OK.
void check(hgas_status_t s, const char *what);
/// Ends the job (every rank) with a message: for failures that one rank alone finds.
[[noreturn]] void die(const std::string &msg);
/// The program name used in messages ("nas-ft"); set once in main.
void set_program(const char *name);
const char *program();

double now();          // wall clock (steady), seconds
double cpu_seconds();  // user + system time of this process, all its threads (with rank threads: all its ranks')

/// Deadline for the programs' own waits: HGAS_TIMEOUT as hgas's waits use it (default 300 s).
double wait_timeout_s();

/// Accumulates wall time into a phase counter while in scope.
class phase_timer {
public:
    explicit phase_timer(double *acc) : acc_(acc), t0_(now()) {}
    ~phase_timer() { *acc_ += now() - t0_; }
    phase_timer(const phase_timer &) = delete;
    phase_timer &operator=(const phase_timer &) = delete;

private:
    double *acc_;
    double t0_;
};

}  // namespace nas
