#include "base/settings.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char **environ;

namespace hgas {
namespace {

const setting_info k_table[] = {
#define HGASI_SETTING(id, type, def, choices, help) \
    {"HGAS_" #id, setting_type::type, def, choices, help},
#include "base/settings.def"
#undef HGASI_SETTING
};

// "heap_size" -> "HGAS_HEAP_SIZE", built once.
struct env_names {
    std::array<std::string, setting_count> names;
    env_names() {
        for (int i = 0; i < setting_count; ++i) {
            std::string n = k_table[i].env;
            for (char &c : n) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            names[i] = n;
        }
    }
};
const env_names &names() {
    static const env_names n;
    return n;
}

std::string trim(const std::string &s) {
    size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

const setting_info &info(setting s) {
    static std::array<setting_info, setting_count> table = [] {
        std::array<setting_info, setting_count> t{};
        for (int i = 0; i < setting_count; ++i) {
            t[i] = k_table[i];
            t[i].env = names().names[i].c_str();
        }
        return t;
    }();
    return table[static_cast<int>(s)];
}

const char *setting_type_name(setting_type t) {
    switch (t) {
    case setting_type::flag: return "flag";
    case setting_type::integer: return "integer";
    case setting_type::bytes: return "bytes";
    case setting_type::seconds: return "seconds";
    case setting_type::choice: return "choice";
    case setting_type::list: return "list";
    case setting_type::text: return "text";
    }
    return "?";
}

std::vector<std::string> split(const std::string &text, char sep) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find(sep, start);
        if (end == std::string::npos) end = text.size();
        std::string item = trim(text.substr(start, end - start));
        if (!item.empty()) out.push_back(item);
        start = end + 1;
    }
    return out;
}

bool parse_bytes(const std::string &text, uint64_t &out) {
    std::string t = trim(text);
    if (t.empty()) return false;
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(t.c_str(), &end, 10);
    if (errno || end == t.c_str() || t[0] == '-') return false;
    uint64_t mul = 1;
    std::string suffix = trim(end);
    if (suffix == "" || suffix == "B") mul = 1;
    else if (suffix == "K" || suffix == "k" || suffix == "KiB") mul = 1ull << 10;
    else if (suffix == "M" || suffix == "m" || suffix == "MiB") mul = 1ull << 20;
    else if (suffix == "G" || suffix == "g" || suffix == "GiB") mul = 1ull << 30;
    else return false;
    if (v > UINT64_MAX / mul) return false;
    out = v * mul;
    return true;
}

status settings::parse(setting s, const std::string &raw, settings &into) {
    const setting_info &si = info(s);
    const int i = idx(s);
    const std::string text = trim(raw);
    switch (si.type) {
    case setting_type::flag:
        if (text == "1" || text == "yes" || text == "true" || text == "on") into.ints_[i] = 1;
        else if (text == "0" || text == "no" || text == "false" || text == "off") into.ints_[i] = 0;
        else
            return fail(status::invalid_setting, "%s='%s' is not a flag: use 1/0, yes/no, true/false or on/off",
                        si.env, raw.c_str());
        return status::ok;
    case setting_type::integer: {
        char *end = nullptr;
        errno = 0;
        long long v = std::strtoll(text.c_str(), &end, 10);
        long long lo = INT64_MIN, hi = INT64_MAX;
        if (*si.choices) std::sscanf(si.choices, "%lld:%lld", &lo, &hi);
        if (errno || text.empty() || *end || v < lo || v > hi)
            return fail(status::invalid_setting, "%s='%s' is not an integer in [%lld, %lld]", si.env,
                        raw.c_str(), lo, hi);
        into.ints_[i] = v;
        return status::ok;
    }
    case setting_type::bytes: {
        uint64_t v = 0;
        if (!parse_bytes(text, v) || v > (uint64_t)INT64_MAX)
            return fail(status::invalid_setting,
                        "%s='%s' is not a size: use a number of bytes with an optional K, M or G suffix (e.g. 256M)",
                        si.env, raw.c_str());
        into.ints_[i] = static_cast<int64_t>(v);
        return status::ok;
    }
    case setting_type::seconds: {
        char *end = nullptr;
        errno = 0;
        double v = std::strtod(text.c_str(), &end);
        if (errno || text.empty() || *end || !(v > 0))
            return fail(status::invalid_setting, "%s='%s' is not a positive number of seconds (e.g. 30 or 0.5)",
                        si.env, raw.c_str());
        into.secs_[i] = v;
        return status::ok;
    }
    case setting_type::choice: {
        for (const auto &c : split(si.choices, ','))
            if (c == text) {
                into.texts_[i] = text;
                return status::ok;
            }
        return fail(status::invalid_setting, "%s='%s' is not one of: %s", si.env, raw.c_str(), si.choices);
    }
    case setting_type::list: {
        std::vector<std::string> items = split(text, ',');
        const std::vector<std::string> allowed = split(si.choices, ',');
        for (const auto &it : items) {
            bool ok = false;
            for (const auto &a : allowed) ok = ok || a == it;
            if (!ok)
                return fail(status::invalid_setting, "%s='%s': '%s' is not one of: %s", si.env, raw.c_str(),
                            it.c_str(), si.choices);
        }
        into.lists_[i] = std::move(items);
        into.texts_[i] = text;
        return status::ok;
    }
    case setting_type::text:
        into.texts_[i] = text;
        return status::ok;
    }
    return fail(status::internal, "setting %s has an unknown type", si.env);
}

result<settings> settings::from_env() {
    settings out;
    for (int i = 0; i < setting_count; ++i) {
        const setting s = static_cast<setting>(i);
        const char *env = std::getenv(info(s).env);
        const bool set = env != nullptr;
        HGAS_TRY(parse(s, set ? env : info(s).def, out));
        out.from_env_[i] = set;
    }
    return out;
}

bool settings::list_has(setting s, const std::string &item) const {
    for (const auto &x : lists_[idx(s)])
        if (x == item) return true;
    return false;
}

std::string settings::value_text(setting s) const {
    const int i = idx(s);
    switch (info(s).type) {
    case setting_type::flag: return ints_[i] ? "1" : "0";
    case setting_type::integer: return std::to_string(ints_[i]);
    case setting_type::bytes: return std::to_string(ints_[i]);
    case setting_type::seconds: {
        char b[64];
        std::snprintf(b, sizeof b, "%g", secs_[i]);
        return b;
    }
    default: return texts_[i];
    }
}

}  // namespace hgas

namespace hgas {
namespace {
// Edit distance (insert, delete, substitute, swap of neighbours) between two short names.
size_t distance(const std::string &a, const std::string &b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
        for (size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}
std::string without_underscores(std::string s) {
    s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
    return s;
}
}  // namespace

std::vector<unused_variable> unused_env(char **envp) {
    std::vector<unused_variable> out;
    for (char **e = envp ? envp : environ; e && *e; ++e) {
        const char *eq = std::strchr(*e, '=');
        if (std::strncmp(*e, "HGAS_", 5) != 0 || !eq) continue;
        const std::string name(*e, static_cast<size_t>(eq - *e));
        if (name.rfind("HGAS_TEST_", 0) == 0) continue;
        std::string upper = name;
        for (char &c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        bool known = false;
        std::string best;
        size_t best_d = SIZE_MAX;
        for (int i = 0; i < setting_count && !known; ++i) {
            const std::string s = info(static_cast<setting>(i)).env;
            if (s == name) known = true;
            // Case and underscores are the commonest slips (HGAS_HEAPSIZE, hgas_heap_size).
            size_t d = without_underscores(s) == without_underscores(upper) ? 0 : distance(s, upper);
            if (d < best_d) best_d = d, best = s;
        }
        if (known) continue;
        // Close enough to be a slip: a few edits, fewer for short names.
        const size_t limit = std::max<size_t>(1, std::min<size_t>(3, (name.size() - 5) / 3));
        out.push_back({name, best_d <= limit ? best : std::string()});
    }
    return out;
}

std::string unused_env_text(const std::vector<unused_variable> &v) {
    std::string t;
    for (const auto &u : v) {
        t += "unused environment variable: " + u.name;
        if (!u.suggestion.empty()) t += " (maybe: " + u.suggestion + "?)";
        t += "\n";
    }
    return t;
}

}  // namespace hgas
