// The modes of himeno behind one entry point each: mode cpu (cpu_mode.cpp) and the GPU modes
// (gpu_run.cpp, which dispatches to one driver per mode: gpu_mode.hpp; gpu_none.cpp where
// CUDA is not built). main.cpp checks, dispatches and reports.
#pragma once

#include <string>

#include "common.hpp"
#include "options.hpp"

namespace himeno {

/// Whether mode `m` is built into this himeno; `*why` says why not. Needs no hgas and no GPU.
bool mode_built(mode m, std::string *why);

/// Before hgas_init, for GPU modes: true when the process sees a CUDA device (*why otherwise).
bool gpu_visible(std::string *why);

/// Runs mode cpu (slabs on the CPU with a thread team). Collective. Returns the exit status.
int run_cpu(const options &o, run_output &out);

/// Runs a GPU mode on the rank's GPU (local rank modulo the GPUs visible). Collective.
int run_gpu(const options &o, run_output &out);

}  // namespace himeno
