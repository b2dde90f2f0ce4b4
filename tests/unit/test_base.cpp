// base: status names, last-error messages, the settings table and its validation.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <unistd.h>

#include "base/cpus.h"
#include "base/log.hpp"
#include "base/settings.hpp"
#include "base/status.hpp"

using namespace hgas;

TEST(Status, NamesAndLastError) {
    EXPECT_STREQ(status_name(status::timeout), "HGAS_ERR_TIMEOUT");
    EXPECT_STREQ(status_name(status::ok), "HGAS_OK");
    status s = fail(status::invalid_arg, "rank %d is %s", 3, "bad");
    EXPECT_EQ(s, status::invalid_arg);
    EXPECT_EQ(last_error(), "rank 3 is bad");
    clear_last_error();
    EXPECT_EQ(last_error(), "");
}

TEST(Settings, EveryEntryHasAValidDefaultAndHelp) {
    std::set<std::string> names;
    for (int i = 0; i < setting_count; ++i) {
        const setting_info &si = info(static_cast<setting>(i));
        EXPECT_EQ(std::string(si.env).rfind("HGAS_", 0), 0u) << si.env;
        EXPECT_TRUE(names.insert(si.env).second) << "duplicate " << si.env;
        EXPECT_GT(std::string(si.help).size(), 10u) << si.env << " needs a help text";
        settings tmp;
        EXPECT_EQ(settings::parse(static_cast<setting>(i), si.def, tmp), status::ok) << si.env << ": " << last_error();
    }
    EXPECT_TRUE(names.count("HGAS_HEAP_SIZE"));
    EXPECT_TRUE(names.count("HGAS_TRANSPORTS"));
}

TEST(Settings, BytesSuffixes) {
    uint64_t v = 0;
    EXPECT_TRUE(parse_bytes("64M", v));
    EXPECT_EQ(v, 64ull << 20);
    EXPECT_TRUE(parse_bytes("2G", v));
    EXPECT_EQ(v, 2ull << 30);
    EXPECT_TRUE(parse_bytes("4096", v));
    EXPECT_EQ(v, 4096u);
    EXPECT_TRUE(parse_bytes("8KiB", v));
    EXPECT_EQ(v, 8192u);
    EXPECT_FALSE(parse_bytes("-1", v));
    EXPECT_FALSE(parse_bytes("12X", v));
    EXPECT_FALSE(parse_bytes("", v));
    EXPECT_FALSE(parse_bytes("99999999999999999999G", v));
}

TEST(Settings, BadValuesNameTheVariableAndTheChoices) {
    settings s;
    EXPECT_EQ(settings::parse(setting::heap_size, "lots", s), status::invalid_setting);
    EXPECT_NE(last_error().find("HGAS_HEAP_SIZE"), std::string::npos) << last_error();
    EXPECT_EQ(settings::parse(setting::transports, "shm,rdma", s), status::invalid_setting);
    EXPECT_NE(last_error().find("'rdma'"), std::string::npos) << last_error();
    EXPECT_NE(last_error().find("self,shm,ucx"), std::string::npos) << last_error();
    EXPECT_EQ(settings::parse(setting::ucx_mode, "fast", s), status::invalid_setting);
    EXPECT_EQ(settings::parse(setting::reg_cache, "on", s), status::invalid_setting);
    EXPECT_NE(last_error().find("HGAS_REG_CACHE"), std::string::npos) << last_error();
    EXPECT_NE(last_error().find("auto,off"), std::string::npos) << last_error();
    EXPECT_EQ(settings::parse(setting::reg_cache_max, "4X", s), status::invalid_setting);
    EXPECT_NE(last_error().find("HGAS_REG_CACHE_MAX"), std::string::npos) << last_error();
    EXPECT_EQ(settings::parse(setting::progress_thread, "maybe", s), status::invalid_setting);
    EXPECT_EQ(settings::parse(setting::progress_interval_us, "-5", s), status::invalid_setting);
    EXPECT_EQ(settings::parse(setting::timeout, "0", s), status::invalid_setting);
    EXPECT_EQ(settings::parse(setting::timeout, "2.5", s), status::ok);
    EXPECT_DOUBLE_EQ(s.seconds(setting::timeout), 2.5);
    EXPECT_EQ(settings::parse(setting::transports, " ucx , shm ", s), status::ok);
    ASSERT_EQ(s.list(setting::transports).size(), 2u);
    EXPECT_EQ(s.list(setting::transports)[0], "ucx");
    EXPECT_TRUE(s.list_has(setting::transports, "shm"));
}

TEST(Settings, FromEnvironmentRecordsTheSource) {
    setenv("HGAS_HEAP_SIZE", "1M", 1);
    unsetenv("HGAS_TIMEOUT");
    auto r = settings::from_env();
    ASSERT_TRUE(r.ok()) << last_error();
    EXPECT_EQ(r->bytes(setting::heap_size), 1u << 20);
    EXPECT_STREQ(r->source(setting::heap_size), "environment");
    EXPECT_STREQ(r->source(setting::timeout), "default");
    setenv("HGAS_HEAP_SIZE", "oops", 1);
    auto bad = settings::from_env();
    EXPECT_EQ(bad.error(), status::invalid_setting);
    unsetenv("HGAS_HEAP_SIZE");
}

// unused_env_warned_with_suggestion: a typo of a setting is named with the setting meant.
TEST(Settings, UnusedVariablesNameTheSettingMeant) {
    char a[] = "HGAS_HEAPSIZE=1G", b[] = "HGAS_HEAP_SIZE=1G", c[] = "HGAS_TEST_KIND=sim", d[] = "HGAS_FROBNICATE=1",
         e[] = "PATH=/bin", f[] = "HGAS_TIMEUOT=3", g[] = "hgas_heap_size=1", h[] = "HGAS_RSH=ssh";
    char *envp[] = {a, b, c, d, e, f, g, h, nullptr};
    auto v = unused_env(envp);
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0].name, "HGAS_HEAPSIZE");
    EXPECT_EQ(v[0].suggestion, "HGAS_HEAP_SIZE");
    EXPECT_EQ(v[1].name, "HGAS_FROBNICATE");
    EXPECT_EQ(v[1].suggestion, "");
    EXPECT_EQ(v[2].name, "HGAS_TIMEUOT");
    EXPECT_EQ(v[2].suggestion, "HGAS_TIMEOUT");
    EXPECT_EQ(unused_env_text({v[0]}), "unused environment variable: HGAS_HEAPSIZE (maybe: HGAS_HEAP_SIZE?)\n");
}

// debug_all_does_nothing: HGAS_DEBUG=all is accepted and enables every subsystem.
TEST(Log, DebugAllAndInfoLevel) {
    settings s;
    EXPECT_EQ(settings::parse(setting::debug, "all", s), status::ok);
    log_configure(log_level::warn, "all");
    EXPECT_TRUE(log_enabled(log_level::debug, "ucx"));
    EXPECT_TRUE(log_enabled(log_level::debug, "core"));
    log_configure(log_level::warn, "boot, mem");
    EXPECT_TRUE(log_enabled(log_level::debug, "mem"));
    EXPECT_FALSE(log_enabled(log_level::debug, "ucx"));
    EXPECT_FALSE(log_enabled(log_level::info, "core"));
    log_configure(log_level::info, "");
    EXPECT_TRUE(log_enabled(log_level::info, "core"));
    EXPECT_FALSE(log_enabled(log_level::debug, "core"));
    // Before a rank is known a line names the host and pid, not "rank -1".
    testing::internal::CaptureStderr();
    log_set_rank(-1);
    log_write(log_level::info, "core", "hello");
    const std::string line = testing::internal::GetCapturedStderr();
    EXPECT_NE(line.find(" pid " + std::to_string(getpid()) + "] core info: hello"), std::string::npos) << line;
    EXPECT_EQ(line.find("rank -1"), std::string::npos) << line;
    log_configure(log_level::warn, "");
}

// Rank placement (hgasrun --bind core, the benchmarks' pinning): one rank on every physical
// core before a core gets its second, read from a sysfs tree; a tree that says nothing is
// the plain CPU order.
namespace {
std::vector<int> order_of(const std::string &root, std::vector<std::string> siblings, std::vector<int> allowed) {
    for (size_t c = 0; c < siblings.size(); ++c) {
        const std::string dir = root + "/cpu" + std::to_string(c) + "/topology";
        std::filesystem::create_directories(dir);
        std::ofstream(dir + "/thread_siblings_list") << siblings[c] << "\n";
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : allowed) CPU_SET(c, &set);
    std::vector<int> out(64);
    out.resize(static_cast<size_t>(hgas_cpu_order(&set, root.c_str(), out.data(), 64)));
    return out;
}
}  // namespace

TEST(CpuOrder, FirstHardwareThreadOfEveryCoreFirst) {
    const std::string root = testing::TempDir() + "cpus-" + std::to_string(getpid());
    // Siblings numbered apart (Intel's usual numbering): 0,4 1,5 2,6 3,7.
    EXPECT_EQ(order_of(root + "/a", {"0,4", "1,5", "2,6", "3,7", "0,4", "1,5", "2,6", "3,7"}, {0, 1, 2, 3, 4, 5, 6, 7}),
              (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    // Siblings numbered together (many VMs): 0-1 2-3 4-5.
    EXPECT_EQ(order_of(root + "/b", {"0-1", "0-1", "2-3", "2-3", "4-5", "4-5"}, {0, 1, 2, 3, 4, 5}),
              (std::vector<int>{0, 2, 4, 1, 3, 5}));
    // Only part of the machine allowed (a cgroup): a core of which only one thread is allowed
    // counts as free (1 and 5 here), then the second threads.
    EXPECT_EQ(order_of(root + "/b", {}, {1, 2, 3, 5}), (std::vector<int>{1, 2, 5, 3}));
    // Four-way SMT.
    EXPECT_EQ(order_of(root + "/c", {"0-3", "0-3", "0-3", "0-3", "4-7", "4-7", "4-7", "4-7"}, {0, 1, 2, 3, 4, 5, 6, 7}),
              (std::vector<int>{0, 4, 1, 5, 2, 6, 3, 7}));
    // No topology files: CPU order.
    EXPECT_EQ(order_of(root + "/none", {}, {0, 3, 7}), (std::vector<int>{0, 3, 7}));
    std::filesystem::remove_all(root);
}
