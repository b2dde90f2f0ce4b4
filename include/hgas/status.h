/* hgas/status.h — status codes shared by the C and C++ APIs.
 *
 * Every public call returns one of these. HGAS_OK is 0 so `if (hgas_x(...))` reads as
 * "if it failed". hgas_error_string() names a code; hgas_last_error() holds the message of the
 * calling thread's last failure: what went wrong, where, and what to do about it. */
#ifndef HGAS_STATUS_H
#define HGAS_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hgas_status {
    HGAS_OK = 0,
    HGAS_ERR_NOT_INITIALIZED = 1,  /**< call made before hgas_init or after hgas_finalize */
    HGAS_ERR_INVALID_ARG = 2,      /**< null pointer, unknown rank, bad enum value, ... */
    HGAS_ERR_OUT_OF_BOUNDS = 3,    /**< a global pointer range leaves its segment */
    HGAS_ERR_NO_MEMORY = 4,        /**< a heap is full; the message says which setting raises it */
    HGAS_ERR_UNSUPPORTED = 5,      /**< the operation is not available on this path or build */
    HGAS_ERR_TIMEOUT = 6,          /**< a wait passed its deadline (HGAS_TIMEOUT, HGAS_BOOT_TIMEOUT) */
    HGAS_ERR_PEER_FAILED = 7,      /**< another rank died or aborted the job */
    HGAS_ERR_TRANSPORT = 8,        /**< the transport reported an error (UCX status in message) */
    HGAS_ERR_BOOTSTRAP = 9,        /**< the bootstrap store could not be reached or answered badly */
    HGAS_ERR_MISALIGNED = 10,      /**< an atomic or signal address is not aligned to its width */
    HGAS_ERR_ALREADY_INITIALIZED = 11, /**< hgas_init called twice on the same rank */
    HGAS_ERR_INVALID_SETTING = 12, /**< an HGAS_* environment variable holds a bad value */
    HGAS_ERR_INVALID_POINTER = 13, /**< a pointer is not symmetric / not hgas memory / freed */
    HGAS_ERR_INTERNAL = 14,        /**< a bug in hgas: please report with the message */
    HGAS_ERR_TRUNCATED = 15        /**< a message is longer than the receive buffer (hgas_recv) */
} hgas_status_t;

/** Short constant name of a status code ("HGAS_ERR_TIMEOUT"); never NULL. Thread safe. */
const char *hgas_error_string(hgas_status_t status);

/** Message of the calling thread's most recent failed hgas call ("" if none). The pointer stays
 *  valid until the next hgas call on this thread. Thread safe. */
const char *hgas_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* HGAS_STATUS_H */
