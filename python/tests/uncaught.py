# Rank 1 raises after init while rank 0 waits in a barrier: the job must end at once with the
# exception's message, not when rank 0's wait times out.
import hgas

hgas.init()
if hgas.rank() == 1:
    raise RuntimeError("rank one gives up")
hgas.barrier()
