// The integer a C caller passed for an enum parameter of the C API. C lets any int through an
// enum parameter; in C++ loading an enum object that holds a value outside the enum's range is
// undefined behaviour, so the API reads its bytes as an int and the layer below validates that
// before it becomes the enum.
#pragma once
#include <cstring>

namespace hgas::api {

template <class E>
int enum_arg(const E &e) {
    static_assert(sizeof(E) == sizeof(int), "hgas enums are int-sized");
    int v;
    std::memcpy(&v, &e, sizeof v);
    return v;
}

}  // namespace hgas::api
