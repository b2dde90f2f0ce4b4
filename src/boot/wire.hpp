// Private to src/boot: the store's wire protocol and the socket helpers under it.
//
// A frame is   u32 length (big-endian, of what follows) | u8 type | field*
// and a field  u32 length (big-endian) | bytes.
// Integers travel as decimal text: messages are few and small, and text keeps a packet
// capture readable. See README.md for the message list and who sends what.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "base/status.hpp"

namespace hgas::boot::wire {

enum class msg : uint8_t {
    hello = 1,     // c->s  secret, rank, size           (first message, nothing else before it)
    welcome,       // s->c  (no fields)                  the hello was accepted
    reject,        // s->c  reason                       then the server closes the connection
    put,           // c->s  key, value
    get,           // c->s  key                          answered by value once the key exists
    value,         // s->c  key, value
    barrier,       // c->s  name
    barrier_done,  // s->c  name
    who,           // c->s  kind ("barrier"|"keys"), name   who is missing? (for timeout messages)
    missing,       // s->c  kind, name, missing, never_joined, lost   (rank lists as "1,4,5")
    abort,         // c->s  reason [, exit code]         with a code: a job exit (shmem_global_exit)
    aborted,       // s->c  reason [, exit code]         pushed at any time, also between replies
    bye,           // c->s  (no fields)                  a clean goodbye: closing is not a failure
    gather,        // c->s  prefix, count                answered by values once prefix0..prefix<count-1> exist
    values,        // s->c  prefix, value0 .. value<count-1>
};
const char *msg_name(msg m);

struct message {
    msg type = msg::bye;
    std::vector<std::string> fields;
};

// A frame larger than this is a protocol error (a confused or hostile peer), not a reason to
// allocate. Before the hello is accepted the server allows only hello_frame_limit.
constexpr size_t frame_limit = 64u << 20;
constexpr size_t hello_frame_limit = 4096;

std::string encode(const message &m);

// Accumulates bytes from a stream and cuts whole frames out of them, so that partial reads
// (a frame split across reads, several frames in one read) need no care at the call site.
class frame_reader {
public:
    void append(const char *data, size_t n);
    // 1: `out` holds the next message; 0: need more bytes; -1: malformed (reason in `err`).
    int next(message &out, std::string &err, size_t limit = frame_limit);
    size_t buffered() const { return buf_.size() - pos_; }

private:
    std::string buf_;
    size_t pos_ = 0;
};

// ---- sockets ----------------------------------------------------------------------------

struct address {
    bool is_unix = false;
    std::string path;  // unix
    std::string host;  // tcp
    std::string port;  // tcp; "0" = any
};
// "unix:/path", "tcp:host:port", "tcp:host" (port 0), "tcp:[v6addr]:port".
status parse_address(const std::string &text, address &out);

// Creates a listening, non-blocking, close-on-exec socket. For unix sockets the file is made
// mode 0600. `bound` is the address clients should use (the real port for port 0).
status listen_on(const address &a, int &fd, std::string &bound);

// One connection attempt. Returns ok with a connected non-blocking fd, or a failure whose
// errno is in `err` (ENOENT/ECONNREFUSED/... mean "not there yet": the caller may retry).
status connect_once(const address &a, const deadline &dl, int &fd, int &err);

// Sends all of `bytes`, waiting in poll() while the socket is full. Never raises SIGPIPE.
// Fails with peer_failed when the connection is gone, timeout when the deadline passes.
status write_all(int fd, const std::string &bytes, const deadline &dl);

// Reads what is available without blocking. Returns >0 bytes read, 0 on end of stream,
// -1 if nothing is available (EAGAIN), -2 on a connection error (errno kept).
long read_some(int fd, frame_reader &into);

// poll() for one fd, restarting after EINTR with the remaining time. Returns revents, or 0 on
// timeout. `seconds` < 0 waits forever (only for callers that have their own wake-up).
int poll_one(int fd, short events, double seconds);
int poll_ms(double seconds);  // seconds -> poll timeout, rounded up, capped

// ---- small helpers ----------------------------------------------------------------------

// Compares in time that depends only on the lengths, so that a client cannot find the secret
// byte by byte by timing rejections.
bool secret_equal(const std::string &a, const std::string &b);
std::string join_ranks(const std::vector<int> &ranks);            // "1,4,5"
std::vector<int> split_ranks(const std::string &text);             // inverse of join_ranks
std::string describe_ranks(const std::vector<int> &ranks);         // "rank 3", "ranks 1, 4-6"
bool parse_int(const std::string &text, long long &out);

}  // namespace hgas::boot::wire
