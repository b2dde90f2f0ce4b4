// The layout behind a public hgas_layout_t, for the C API files other than c_msg_api.cpp (which
// owns the type): the typed stream-ordered messages of c_device_api.cpp.
#pragma once
#include <hgas/hgas.h>

#include "msg/layout.hpp"

const hgas::msg::layout &hgasi_layout_of(hgas_layout_t l);
