// gpu_field.cu compiled as C++ against the emulator's cuda_runtime.h (HIMENO_EMULATE).
#include "../../gpu_field.cu"
