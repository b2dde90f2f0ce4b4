// A small byte codec for what ranks exchange through the bootstrap store at init (segment
// sizes and transport blobs). Hex on the wire keeps the store's values printable.
#pragma once
#include <cstdint>
#include <string>

namespace hgas::core {

class codec {
public:
    void u64(uint64_t v) { buf_.append(reinterpret_cast<const char *>(&v), sizeof v); }
    void str(const std::string &s) {
        u64(s.size());
        buf_ += s;
    }
    std::string hex() const {
        static const char d[] = "0123456789abcdef";
        std::string h;
        h.reserve(buf_.size() * 2);
        for (unsigned char c : buf_) {
            h += d[c >> 4];
            h += d[c & 15];
        }
        return h;
    }
    bool from_hex(const std::string &h) {
        if (h.size() % 2) return false;
        buf_.clear();
        pos_ = 0;
        for (size_t i = 0; i < h.size(); i += 2) {
            int hi = nib(h[i]), lo = nib(h[i + 1]);
            if (hi < 0 || lo < 0) return false;
            buf_ += static_cast<char>(hi << 4 | lo);
        }
        return true;
    }
    bool get_u64(uint64_t &v) {
        if (buf_.size() - pos_ < sizeof v) return false;
        __builtin_memcpy(&v, buf_.data() + pos_, sizeof v);
        pos_ += sizeof v;
        return true;
    }
    bool get_str(std::string &s) {
        uint64_t n = 0;
        if (!get_u64(n) || buf_.size() - pos_ < n) return false;
        s.assign(buf_.data() + pos_, n);
        pos_ += n;
        return true;
    }

private:
    static int nib(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    }
    std::string buf_;
    size_t pos_ = 0;
};

}  // namespace hgas::core
