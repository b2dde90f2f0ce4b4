// Atomic and signal operations as the layers below the API see them (inc/fetch_inc become
// add/fetch_add by 1). Shared by transports and the gpu layer, so both execute the same list.
#pragma once
#include <cstdint>

namespace hgas {

enum class amo_op : uint8_t {
    fetch, set, add, fetch_add, swap, compare_swap, and_, or_, xor_, fetch_and, fetch_or, fetch_xor
};
inline bool amo_fetches(amo_op op) {
    return !(op == amo_op::set || op == amo_op::add || op == amo_op::and_ || op == amo_op::or_ ||
             op == amo_op::xor_);
}

enum class signal_op : uint8_t { set = 0, add = 1 };

}  // namespace hgas
