// OpenSHMEM ordering, point-to-point synchronization and signals.
#include <type_traits>

#include "internal.hpp"

namespace hgas::shmem {
namespace {

// Ends the job unless ivars[0 .. nelems) is symmetric memory of this PE: a variable that no
// peer can update would be waited on until the deadline.
template <class T>
void check_ivars(const char *fn, const T *ivars, size_t nelems) {
    if (nelems == 0) return;
    if (!ivars) fatal(fn, "ivars is NULL");
    const int me = hgas_rank_me();
    hgas_gptr_t g;
    if (hgas_ptr(ivars, me, &g) != HGAS_OK || hgas_ptr(ivars + (nelems - 1), me, &g) != HGAS_OK)
        fatal(fn, "%p is not symmetric memory of this PE; wait/test variables must be global or static variables or "
              "come from shmem_malloc so that other PEs can update them (%s)", static_cast<const void *>(ivars),
              hgas_last_error());
    if (hgas_gptr_kind(g) != HGAS_KIND_HOST)
        fatal(fn, "%p is %s memory: the wait and test routines read their variables with the CPU; wait on a host "
              "variable (a put-with-signal can update it after the device data)", static_cast<const void *>(ivars),
              hgas_kind_name(hgas_gptr_kind(g)));
}

template <class T>
void wait_until(const char *fn, T *ivar, int cmp, T value) {
    check_cmp(fn, cmp);
    check_ivars(fn, ivar, 1);
    if constexpr (std::is_unsigned_v<T> && sizeof(T) == 8) {
        // A 64-bit unsigned variable is an hgas signal word: use the runtime's own wait.
        check(fn, hgas_signal_wait_until(reinterpret_cast<const uint64_t *>(ivar), static_cast<hgas_cmp_t>(cmp),
                                         static_cast<uint64_t>(value), nullptr));
    } else {
        spin_until(fn, [&] { return compare(fn, load(ivar), cmp, value); });
    }
}

// One check, then (if false) one progress pass and a second check, as hgas_signal_test does,
// so that a loop over test() advances transports that need the target's CPU.
template <class Pred>
bool test_once(const char *fn, Pred pred) {
    if (pred()) return true;
    check(fn, hgas_progress());
    return pred();
}

// The indices i < nelems with status[i] == 0 (status may be NULL) whose variable satisfies
// `cmp` with value(i): writes them to `indices` (may be NULL) and returns their count;
// *first gets the first one and *active the number not excluded.
template <class T, class Value>
size_t scan(const char *fn, T *ivars, size_t nelems, const int *status, int cmp, Value value, size_t *indices,
            size_t *first, size_t *active) {
    size_t count = 0, act = 0;
    *first = SIZE_MAX;
    for (size_t i = 0; i < nelems; ++i) {
        if (status && status[i]) continue;
        ++act;
        if (compare(fn, load(&ivars[i]), cmp, value(i))) {
            if (indices) indices[count] = i;
            if (count++ == 0) *first = i;
        }
    }
    if (active) *active = act;
    return count;
}

// Where the next *_any search starts on this PE: after the index it returned last time. The
// specification suggests this so that a program that serves whichever variable is ready, in
// a loop, serves all of them rather than the lowest ready one forever. Per PE, attached to the
// rank like the rest of the front end's state (created at first use).
const char k_any_key = 0;
size_t &any_start() {
    auto *next = static_cast<size_t *>(hgas_rank_data(&k_any_key));
    if (!next) {
        next = new size_t(0);
        check("shmem_test_any", hgas_rank_data_set(&k_any_key, next, [](void *p) { delete static_cast<size_t *>(p); }));
    }
    return *next;
}

// The first index, in the order start, start + 1, ..., wrapping around, whose variable is not
// excluded and satisfies `cmp` (SIZE_MAX if none); *active gets the number not excluded.
template <class T, class Value>
size_t scan_any(const char *fn, T *ivars, size_t nelems, const int *status, int cmp, Value value, size_t start,
                size_t *active) {
    size_t found = SIZE_MAX, act = 0;
    for (size_t k = 0; k < nelems; ++k) {
        const size_t i = (start + k) % nelems;
        if (status && status[i]) continue;
        ++act;
        if (found == SIZE_MAX && compare(fn, load(&ivars[i]), cmp, value(i))) found = i;
    }
    *active = act;
    return found;
}

template <class T, class Value>
void wait_all(const char *fn, T *ivars, size_t nelems, const int *status, int cmp, Value value) {
    check_cmp(fn, cmp);
    check_ivars(fn, ivars, nelems);
    for (size_t i = 0; i < nelems; ++i)
        if (!status || !status[i]) spin_until(fn, [&] { return compare(fn, load(&ivars[i]), cmp, value(i)); });
}

template <class T, class Value>
size_t wait_any(const char *fn, T *ivars, size_t nelems, const int *status, int cmp, Value value) {
    check_cmp(fn, cmp);
    check_ivars(fn, ivars, nelems);
    size_t &start = any_start(), found = SIZE_MAX, active = 0;
    spin_until(fn, [&] {
        found = scan_any(fn, ivars, nelems, status, cmp, value, nelems ? start % nelems : 0, &active);
        return found != SIZE_MAX || !active;
    });
    if (found != SIZE_MAX) start = found + 1;
    return found;
}

template <class T, class Value>
size_t wait_some(const char *fn, T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, Value value) {
    check_cmp(fn, cmp);
    check_ivars(fn, ivars, nelems);
    if (!indices && nelems) fatal(fn, "indices is NULL");
    size_t first = SIZE_MAX, active = 0, count = 0;
    spin_until(fn, [&] { return (count = scan(fn, ivars, nelems, status, cmp, value, indices, &first, &active)) ||
                                !active; });
    return count;
}

template <class T, class Value>
int test_all(const char *fn, T *ivars, size_t nelems, const int *status, int cmp, Value value) {
    check_cmp(fn, cmp);
    check_ivars(fn, ivars, nelems);
    return test_once(fn, [&] {
        size_t first, active;
        return scan(fn, ivars, nelems, status, cmp, value, nullptr, &first, &active) == active;
    }) ? 1 : 0;
}

template <class T, class Value>
size_t test_any(const char *fn, T *ivars, size_t nelems, const int *status, int cmp, Value value) {
    check_cmp(fn, cmp);
    check_ivars(fn, ivars, nelems);
    size_t &start = any_start(), found = SIZE_MAX, active = 0;
    test_once(fn, [&] {
        found = scan_any(fn, ivars, nelems, status, cmp, value, nelems ? start % nelems : 0, &active);
        return found != SIZE_MAX;
    });
    if (found != SIZE_MAX) start = found + 1;
    return found;
}

template <class T, class Value>
size_t test_some(const char *fn, T *ivars, size_t nelems, size_t *indices, const int *status, int cmp,
                 Value value) {
    check_cmp(fn, cmp);
    check_ivars(fn, ivars, nelems);
    if (!indices && nelems) fatal(fn, "indices is NULL");
    size_t first, count = 0;
    test_once(fn, [&] { return (count = scan(fn, ivars, nelems, status, cmp, value, indices, &first, nullptr)) > 0; });
    return count;
}

template <class T>
int test(const char *fn, T *ivar, int cmp, T value) {
    check_cmp(fn, cmp);
    check_ivars(fn, ivar, 1);
    return test_once(fn, [&] { return compare(fn, load(ivar), cmp, value); }) ? 1 : 0;
}

}  // namespace
}  // namespace hgas::shmem

using namespace hgas::shmem;

extern "C" {

void shmem_fence(void) { check("shmem_fence", hgas_fence()); }
void shmem_quiet(void) { check("shmem_quiet", hgas_quiet()); }

uint64_t shmem_signal_fetch(const uint64_t *sig_addr) {
    uint64_t v = 0;
    check("shmem_signal_fetch", hgas_signal_fetch(sig_addr, &v));
    return v;
}
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value) {
    check_cmp("shmem_signal_wait_until", cmp);
    uint64_t v = 0;
    check("shmem_signal_wait_until",
          hgas_signal_wait_until(sig_addr, static_cast<hgas_cmp_t>(cmp), cmp_value, &v));
    return v;
}

#define HGASI_SHMEM_FN(N, what) "shmem_" #N "_" what
#define HGASI_SHMEM_DEF_SYNC(T, N, G)                                                              \
    void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value) {                                    \
        wait_until(HGASI_SHMEM_FN(N, "wait_until"), ivar, cmp, cmp_value);                          \
    }                                                                                               \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp,            \
                                    T cmp_value) {                                                  \
        wait_all(HGASI_SHMEM_FN(N, "wait_until_all"), ivars, nelems, status, cmp,                   \
                 [=](size_t) { return cmp_value; });                                                \
    }                                                                                               \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp,          \
                                      T cmp_value) {                                                \
        return wait_any(HGASI_SHMEM_FN(N, "wait_until_any"), ivars, nelems, status, cmp,            \
                        [=](size_t) { return cmp_value; });                                         \
    }                                                                                               \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices,                    \
                                       const int *status, int cmp, T cmp_value) {                   \
        return wait_some(HGASI_SHMEM_FN(N, "wait_until_some"), ivars, nelems, indices, status, cmp, \
                         [=](size_t) { return cmp_value; });                                        \
    }                                                                                               \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp,     \
                                           T *cmp_values) {                                         \
        wait_all(HGASI_SHMEM_FN(N, "wait_until_all_vector"), ivars, nelems, status, cmp,            \
                 [=](size_t i) { return cmp_values[i]; });                                          \
    }                                                                                               \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, int cmp,   \
                                             T *cmp_values) {                                       \
        return wait_any(HGASI_SHMEM_FN(N, "wait_until_any_vector"), ivars, nelems, status, cmp,     \
                        [=](size_t i) { return cmp_values[i]; });                                   \
    }                                                                                               \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices,             \
                                              const int *status, int cmp, T *cmp_values) {          \
        return wait_some(HGASI_SHMEM_FN(N, "wait_until_some_vector"), ivars, nelems, indices,       \
                         status, cmp, [=](size_t i) { return cmp_values[i]; });                     \
    }                                                                                               \
    int shmem_##N##_test(T *ivar, int cmp, T cmp_value) {                                           \
        return test(HGASI_SHMEM_FN(N, "test"), ivar, cmp, cmp_value);                               \
    }                                                                                               \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value) {    \
        return test_all(HGASI_SHMEM_FN(N, "test_all"), ivars, nelems, status, cmp,                  \
                        [=](size_t) { return cmp_value; });                                         \
    }                                                                                               \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value) { \
        return test_any(HGASI_SHMEM_FN(N, "test_any"), ivars, nelems, status, cmp,                  \
                        [=](size_t) { return cmp_value; });                                         \
    }                                                                                               \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status,       \
                                 int cmp, T cmp_value) {                                            \
        return test_some(HGASI_SHMEM_FN(N, "test_some"), ivars, nelems, indices, status, cmp,       \
                         [=](size_t) { return cmp_value; });                                        \
    }                                                                                               \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp,            \
                                    T *cmp_values) {                                                \
        return test_all(HGASI_SHMEM_FN(N, "test_all_vector"), ivars, nelems, status, cmp,           \
                        [=](size_t i) { return cmp_values[i]; });                                   \
    }                                                                                               \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp,         \
                                       T *cmp_values) {                                             \
        return test_any(HGASI_SHMEM_FN(N, "test_any_vector"), ivars, nelems, status, cmp,           \
                        [=](size_t i) { return cmp_values[i]; });                                   \
    }                                                                                               \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices,                   \
                                        const int *status, int cmp, T *cmp_values) {                \
        return test_some(HGASI_SHMEM_FN(N, "test_some_vector"), ivars, nelems, indices, status,     \
                         cmp, [=](size_t i) { return cmp_values[i]; });                             \
    }
HGAS_SHMEM_TYPES_SYNC(HGASI_SHMEM_DEF_SYNC)

#define HGASI_SHMEM_DEF_OLD_WAIT(T, N, G)                                                          \
    void shmem_##N##_wait(T *ivar, T cmp_value) {                                                   \
        wait_until(HGASI_SHMEM_FN(N, "wait"), ivar, SHMEM_CMP_NE, cmp_value);                       \
    }
HGAS_SHMEM_TYPES_OLD_INT(HGASI_SHMEM_DEF_OLD_WAIT)
void shmem_wait(long *ivar, long cmp_value) { wait_until("shmem_wait", ivar, SHMEM_CMP_NE, cmp_value); }

void shmem_barrier_all(void) { check("shmem_barrier_all", hgas_barrier()); }
// hgas_barrier also quiets; completing operations early is allowed, so sync_all shares it.
void shmem_sync_all(void) { check("shmem_sync_all", hgas_barrier()); }

}  // extern "C"
