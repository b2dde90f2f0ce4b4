// The registry of HGAS_* settings (table in settings.def). A `settings` object is filled from
// the environment once per rank at init; code reads typed values through it.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.hpp"

namespace hgas {

enum class setting_type { flag, integer, bytes, seconds, choice, list, text };

enum class setting : int {
#define HGASI_SETTING(id, type, def, choices, help) id,
#include "base/settings.def"
#undef HGASI_SETTING
    count_
};

struct setting_info {
    const char *env;       // "HGAS_HEAP_SIZE"
    setting_type type;
    const char *def;       // default, as text
    const char *choices;   // choice/list: comma-separated; integer: "min:max"; else ""
    const char *help;
};

const setting_info &info(setting s);
constexpr int setting_count = static_cast<int>(setting::count_);
const char *setting_type_name(setting_type t);

class settings {
public:
    // Reads every setting from `getenv`-like source; the first bad value fails with
    // invalid_setting and a message naming the variable and the accepted values.
    static result<settings> from_env();
    // Parse one value (exposed for tests and for hgas-info).
    static status parse(setting s, const std::string &text, settings &into);

    bool flag(setting s) const { return ints_[idx(s)] != 0; }
    int64_t integer(setting s) const { return ints_[idx(s)]; }
    uint64_t bytes(setting s) const { return static_cast<uint64_t>(ints_[idx(s)]); }
    double seconds(setting s) const { return secs_[idx(s)]; }
    const std::string &text(setting s) const { return texts_[idx(s)]; }  // choice and text
    const std::vector<std::string> &list(setting s) const { return lists_[idx(s)]; }
    bool list_has(setting s, const std::string &item) const;
    // Where the value came from: "default" or "environment".
    const char *source(setting s) const { return from_env_[idx(s)] ? "environment" : "default"; }
    // The value as text, for printing.
    std::string value_text(setting s) const;

private:
    static int idx(setting s) { return static_cast<int>(s); }
    std::array<int64_t, setting_count> ints_{};
    std::array<double, setting_count> secs_{};
    std::array<std::string, setting_count> texts_{};
    std::array<std::vector<std::string>, setting_count> lists_{};
    std::array<bool, setting_count> from_env_{};
};

// An HGAS_* variable of the environment that is no setting (a typo, an old name), with the
// setting whose name is closest where one is close enough to be the one meant ("" otherwise).
struct unused_variable {
    std::string name, suggestion;
};
// Scans `envp` (environ when null). Names starting with HGAS_TEST_ belong to hgas's tests.
std::vector<unused_variable> unused_env(char **envp = nullptr);
// "unused environment variable: HGAS_HEAPSIZE (maybe: HGAS_HEAP_SIZE?)", one line each.
std::string unused_env_text(const std::vector<unused_variable> &v);

// Helpers shared with the launcher: "64M" -> 67108864.
bool parse_bytes(const std::string &text, uint64_t &out);
std::vector<std::string> split(const std::string &text, char sep);

}  // namespace hgas
