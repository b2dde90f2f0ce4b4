// POSIX shared-memory names that no other user of the machine can predict or block.
//
// /dev/shm is one directory for every user. A name derived only from the job id (which is
// visible, e.g. in $TMPDIR/hgas-<id>) lets another local user pre-create it and make every job
// fail with "File exists". So each name gets a random part (from getrandom) and is created
// with O_EXCL; on a clash a new random part is drawn. Peers learn the name through the
// bootstrap store (only the job's ranks can read it), never by computing it.
#pragma once
#include <string>

#include "base/status.hpp"

namespace hgas {

// 16 hex digits (64 bits) from the kernel's generator.
std::string random_tag();

// Creates `prefix-<random_tag()>` with O_CREAT | O_EXCL | O_RDWR and mode 0600 (set again with
// fchmod, whatever the umask), retrying with new random parts while the name exists. Returns
// the open descriptor and sets `name`; `what` names the memory in the error message.
result<int> shm_create_unique(const std::string &prefix, std::string &name, const char *what);

}  // namespace hgas
