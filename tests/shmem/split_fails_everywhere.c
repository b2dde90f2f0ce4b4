/* Regression: a team split that ran out of team slots failed on the PEs of the new team but
 * returned 0 on the parent's other PEs, so a program that checks the result (or reduces it
 * over the parent) saw the split succeed and fail at once. Splits that need a slot on PE 0
 * are made until one fails: every PE of the parent must see the same result of each split,
 * the failed split leaves no team anywhere, and after a team is destroyed splits work again.
 * split_2d is checked the same way. */
#include "check.h"

#define MAX_TEAMS 70

static int rc_src, rc_min, rc_max;

/* The same result on every PE: min and max over the world agree. */
static int same_everywhere(int rc) {
    rc_src = rc;
    shmem_barrier_all();
    shmem_int_min_reduce(SHMEM_TEAM_WORLD, &rc_min, &rc_src, 1);
    shmem_int_max_reduce(SHMEM_TEAM_WORLD, &rc_max, &rc_src, 1);
    return rc_min == rc_max;
}

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_team_t teams[MAX_TEAMS];
    int made = 0, failed_at = -1;
    for (int i = 0; i < MAX_TEAMS; ++i) {
        /* PE 0 is in every new team; the others only in some. */
        const int size = 1 + i % n;
        const int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, size, NULL, 0, &teams[i]);
        CHECK(same_everywhere(rc), "split %d: results differ between PEs (this PE: %d)", i, rc);
        if (rc != 0) {
            CHECK(teams[i] == SHMEM_TEAM_INVALID, "failed split %d left a team on PE %d", i, me);
            failed_at = i;
            break;
        }
        CHECK((me < size) == (teams[i] != SHMEM_TEAM_INVALID), "split %d: membership", i);
        ++made;
    }
    /* 64 slots: the world's, the shared team's, and 62 for splits. */
    CHECK(failed_at == 62 && made == 62, "splits made %d, the first failure at %d", made, failed_at);
    /* One slot freed: the next split works on every PE, and collectives on it are correct. */
    shmem_team_destroy(teams[0]);
    shmem_team_t again;
    const int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &again);
    CHECK(same_everywhere(rc) && rc == 0, "split after a destroy: %d", rc);
    if (rc == 0) CHECK(shmem_team_n_pes(again) == n && shmem_team_sync(again) == 0, "the new team works");
    /* No slot left again: split_2d fails on every PE too, leaving neither team. */
    shmem_team_t x = SHMEM_TEAM_WORLD, y = SHMEM_TEAM_WORLD;
    const int rc2 = shmem_team_split_2d(SHMEM_TEAM_WORLD, 1, NULL, 0, &x, NULL, 0, &y);
    CHECK(same_everywhere(rc2) && rc2 != 0, "split_2d without slots: %d", rc2);
    CHECK(x == SHMEM_TEAM_INVALID && y == SHMEM_TEAM_INVALID, "failed split_2d left a team");
    for (int i = 1; i < made; ++i) shmem_team_destroy(teams[i]);
    if (rc == 0) shmem_team_destroy(again);
    /* With slots back, split_2d works on every PE. */
    const int rc3 = shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &x, NULL, 0, &y);
    CHECK(same_everywhere(rc3) && rc3 == 0, "split_2d with free slots: %d", rc3);
    CHECK(shmem_team_n_pes(x) == (n >= 2 ? 2 - (n % 2 && me == n - 1) : 1), "x team size %d", shmem_team_n_pes(x));
    shmem_team_destroy(x);
    shmem_team_destroy(y);
    FINISH();
}
