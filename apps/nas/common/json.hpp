// One JSON record per run: built field by field, printed as a "JSON {...}" line and appended
// to a file (--json PATH), as the other apps of this repository do.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nas {

class json_record {
public:
    json_record &add(const std::string &key, const std::string &v);  // a string
    json_record &add(const std::string &key, const char *v);
    json_record &add(const std::string &key, double v);  // NaN / inf become null
    json_record &add(const std::string &key, int v);
    json_record &add(const std::string &key, int64_t v);
    json_record &add(const std::string &key, bool v);
    json_record &add(const std::string &key, const std::vector<double> &v);
    json_record &add_null(const std::string &key);
    json_record &add_raw(const std::string &key, const std::string &json);  // already JSON
    std::string str() const { return "{" + body_ + "}"; }

    /// Prints "JSON <record>" to stdout and, if path is not empty, appends the record as one
    /// line to it. Returns false (and says why on stderr) when the file cannot be written.
    bool emit(const std::string &path) const;

private:
    void key(const std::string &k);
    std::string body_;
};

std::string json_quote(const std::string &s);
std::string json_num(double v);

}  // namespace nas
