/* Shared by the OpenSHMEM tests: CHECK(cond, fmt, ...) reports a wrong value with the PE and
 * line and counts it; FINISH() finalizes and makes the exit status nonzero on any failure. */
#ifndef HGAS_SHMEM_TEST_CHECK_H
#define HGAS_SHMEM_TEST_CHECK_H
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

static int check_failures = 0;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "PE %d: %s:%d: check failed: %s: ", shmem_my_pe(), __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            ++check_failures;                                                                      \
        }                                                                                          \
    } while (0)

#define FINISH()                                                                                   \
    do {                                                                                           \
        int me_ = shmem_my_pe();                                                                   \
        shmem_finalize();                                                                          \
        if (check_failures) fprintf(stderr, "PE %d: %d check(s) failed\n", me_, check_failures);  \
        else if (me_ == 0) printf("%s: all checks passed\n", __FILE__);                           \
        return check_failures ? 1 : 0;                                                             \
    } while (0)

#endif
