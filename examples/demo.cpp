// `make run`: a small multi-rank demo of the foundation, printing what each part did.
#include <hgas/hgas.hpp>

#include <cstdio>
#include <vector>

int main() {
    try {
        hgas::runtime rt;
        const int me = hgas::rank_me(), n = hgas::rank_n();

        // 1. Ring exchange with put_signal: data visible before its signal.
        hgas::symmetric<uint64_t> box(2);
        uint64_t mine = 1000 + me;
        hgas::check(hgas::put_signal(box.on((me + 1) % n, 0), &mine, 1, box.on((me + 1) % n, 1), 1));
        hgas::check(hgas::signal_wait_until(&box[1], HGAS_CMP_EQ, 1));
        std::printf("ring:      rank %d received %llu from rank %d\n", me, (unsigned long long)box[0], (me + n - 1) % n);

        // 2. Every rank adds to one counter on rank 0 with remote atomics.
        hgas::symmetric<int64_t> counter(1);
        for (int i = 0; i < 1000; ++i) {
            int64_t old;
            hgas::check(hgas::fetch_add(counter.on(0), int64_t(me + 1), &old));
        }
        hgas::check(hgas::barrier());
        if (me == 0)
            std::printf("atomics:   counter on rank 0 = %lld (expected %lld)\n", (long long)counter[0],
                        (long long)1000 * n * (n + 1) / 2);

        // 3. A distributed array, block-cyclic: each rank writes the blocks it does not own.
        hgas_array_t arr;
        hgas::check(hgas_all_alloc(4 * n, sizeof(int), &arr));
        for (uint64_t b = me; b < 4 * (uint64_t)n; b += n) {
            hgas_gptr_t p;
            hgas::check(hgas_array_ptr(&arr, ((b + 1) % (4 * n)) * sizeof(int), &p));
            int v = static_cast<int>(b);
            hgas::check(hgas_put(p, &v, sizeof v));
        }
        hgas::check(hgas::barrier());
        const int *local = static_cast<const int *>(hgas_array_local(&arr));
        std::printf("array:     rank %d owns blocks", me);
        for (uint64_t i = 0, b = me; b < 4 * (uint64_t)n; b += n, ++i) std::printf(" [%llu]=%d", (unsigned long long)b, local[i]);
        std::printf("\n");
        hgas::check(hgas_all_free(&arr));

        // 4. Collectives: allreduce and fcollect.
        double x = me + 0.5, sum = 0;
        hgas::check(hgas::allreduce(&sum, &x, 1, HGAS_OP_SUM));
        hgas::symmetric<int> all(n);
        hgas::check(hgas::fcollect(all.data(), &me, 1));
        if (me == n - 1) {
            std::printf("allreduce: sum of (rank + 0.5) = %g (expected %g)\n", sum, n * n / 2.0);
            std::printf("fcollect:  ");
            for (int i = 0; i < n; ++i) std::printf("%d ", all[i]);
            std::printf("\n");
        }
        std::printf("rank %d of %d on node %d done\n", me, n, hgas::node_me());
    } catch (const hgas::error &e) {
        std::fprintf(stderr, "demo failed: %s\n", e.what());
        return 1;
    }
    return 0;
}
