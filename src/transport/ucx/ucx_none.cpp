// The UCX transport in a build without UCX: the factory says how to get one.
#include "transport/transport.hpp"

namespace hgas::transport {

result<std::unique_ptr<transport>> create_ucx(const settings &) {
    return fail(status::unsupported,
                "this hgas was built without UCX; rebuild with UCX (make deps) or -DHGAS_UCX_ROOT=<UCX prefix>, "
                "or leave 'ucx' out of HGAS_TRANSPORTS (one node only: self,shm)");
}

const char *ucx_version() { return ""; }

}  // namespace hgas::transport
