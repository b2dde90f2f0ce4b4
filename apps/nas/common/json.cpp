#include "json.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "util.hpp"

namespace nas {

std::string json_quote(const std::string &s) {
    std::string q = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') q += '\\';
        q += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
    }
    return q + "\"";
}

std::string json_num(double v) {
    if (!std::isfinite(v)) return "null";
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", v);
    return b;
}

void json_record::key(const std::string &k) {
    if (!body_.empty()) body_ += ",";
    body_ += json_quote(k) + ":";
}

json_record &json_record::add(const std::string &k, const std::string &v) {
    key(k);
    body_ += json_quote(v);
    return *this;
}
json_record &json_record::add(const std::string &k, const char *v) { return add(k, std::string(v ? v : "")); }
json_record &json_record::add(const std::string &k, double v) {
    key(k);
    body_ += json_num(v);
    return *this;
}
json_record &json_record::add(const std::string &k, int v) {
    key(k);
    body_ += std::to_string(v);
    return *this;
}
json_record &json_record::add(const std::string &k, int64_t v) {
    key(k);
    body_ += std::to_string(v);
    return *this;
}
json_record &json_record::add(const std::string &k, bool v) {
    key(k);
    body_ += v ? "true" : "false";
    return *this;
}
json_record &json_record::add(const std::string &k, const std::vector<double> &v) {
    key(k);
    body_ += "[";
    for (size_t i = 0; i < v.size(); ++i) body_ += (i ? "," : "") + json_num(v[i]);
    body_ += "]";
    return *this;
}
json_record &json_record::add_null(const std::string &k) {
    key(k);
    body_ += "null";
    return *this;
}
json_record &json_record::add_raw(const std::string &k, const std::string &json) {
    key(k);
    body_ += json;
    return *this;
}

bool json_record::emit(const std::string &path) const {
    const std::string line = str();
    std::printf("JSON %s\n", line.c_str());
    std::fflush(stdout);
    if (path.empty()) return true;
    FILE *f = std::fopen(path.c_str(), "a");
    if (!f || std::fprintf(f, "%s\n", line.c_str()) < 0 || std::fclose(f) != 0) {
        std::fprintf(stderr, "%s: cannot append the JSON record to %s: %s\n", program(), path.c_str(),
                     std::strerror(errno));
        return false;
    }
    return true;
}

}  // namespace nas
