#pragma once
// A rank that crashes (SIGSEGV, SIGBUS not claimed by mem/shm_guard, SIGILL, SIGFPE, SIGABRT)
// says so on stderr before it dies: the rank, the signal, the faulting address and a
// backtrace, so that a crash in a job or a CI log can be found without a core file. The
// process then dies of the same signal (the launcher still reports it, a core is still
// dumped where enabled). HGAS_CRASH_REPORT=0 leaves the signals alone; a handler the program
// installed before hgas_init is kept and not replaced.
namespace hgas {
void crash_report_install(int rank);
}
