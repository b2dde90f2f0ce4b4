// main() for multi-rank GoogleTest programs started by hgasrun: every rank runs every test;
// ranks meet at barriers inside tests. Only rank 0 prints GoogleTest's progress unless
// HGAS_TEST_VERBOSE=1, but every rank's failures are printed and fail the job.
#include <gtest/gtest.h>
#include <hgas/hgas.h>

#include <cstdio>
#include <cstdlib>

#include "rank_test.hpp"

int &rank_test::thread_level() {
    static int level = HGAS_THREAD_SERIALIZED;  // what hgas_init gives
    return level;
}

namespace {
// Prints failures of ranks other than 0 (whose normal output is silenced).
class failure_printer : public testing::EmptyTestEventListener {
    void OnTestPartResult(const testing::TestPartResult &r) override {
        if (r.failed())
            std::fprintf(stderr, "[rank %d] FAILED at %s:%d\n%s\n", hgas_rank_me(), r.file_name() ? r.file_name() : "?",
                         r.line_number(), r.summary());
    }
};
}  // namespace

int main(int argc, char **argv) {
    testing::InitGoogleTest(&argc, argv);
    int provided = -1;
    if (hgas_init_thread(rank_test::thread_level(), &provided) != HGAS_OK || provided != rank_test::thread_level()) {
        std::fprintf(stderr, "hgas_init_thread(%d) failed (provided %d): %s\n", rank_test::thread_level(), provided,
                     hgas_last_error());
        return 1;
    }
    const char *verbose = std::getenv("HGAS_TEST_VERBOSE");
    if (hgas_rank_me() != 0 && !(verbose && *verbose == '1')) {
        auto &listeners = testing::UnitTest::GetInstance()->listeners();
        delete listeners.Release(listeners.default_result_printer());
        listeners.Append(new failure_printer);
    }
    int rc = RUN_ALL_TESTS();
    if (hgas_finalize() != HGAS_OK) {
        std::fprintf(stderr, "rank %d: hgas_finalize failed: %s\n", hgas_rank_me(), hgas_last_error());
        rc = 1;
    }
    return rc;
}
