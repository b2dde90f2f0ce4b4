// A shared library that uses libstdc++'s own code (iostream formatting of a double, whose
// instantiation lives in libstdc++, not in the header): linked with -static-libstdc++, that code
// is copied into it, as a statically linked runtime is into libhgas by some toolchains.
#include <cstdio>
#include <sstream>

extern "C" int hgas_runtime_probe(double v, char *out, int n) {
    std::ostringstream s;
    s << v;
    return std::snprintf(out, static_cast<size_t>(n), "%s", s.str().c_str());
}
