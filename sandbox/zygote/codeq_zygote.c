/* codeq-zygote: the zygote binary (sandbox/sbx_zygote_serve.c), a program of its own so that
 * the worker starts it with posix_spawn — a fresh exec, never a fork of a threaded worker —
 * and so that it carries no Kafka client and no validator. Started only by the sandbox. */
#include "sandbox.h"

/* AddressSanitizer builds only (scripts/asan.sh): the zygote is spawned with the job's
 * environment, built from nothing, so ASAN_OPTIONS never reaches it; its options are compiled
 * in. In this process the job's own Python runs, and jobs may read any memory of their
 * process through ctypes (tests/unit/test_sandbox_zygote.c does so on purpose): ASan's range
 * checks in libc's memcpy/memset/memmove, called by the uninstrumented libpython on the job's
 * behalf, would report the job, not codeq (replace_intrin=0, intercept_intrin=0; codeq's own code keeps its
 * inline checks). The embedded interpreter's lifetime allocations are not leaks
 * (detect_leaks=0). */
#if defined(__SANITIZE_ADDRESS__)
#define CODEQ_ZYGOTE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CODEQ_ZYGOTE_ASAN 1
#endif
#endif
#ifdef CODEQ_ZYGOTE_ASAN
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "replace_intrin=0:intercept_intrin=0:detect_leaks=0:halt_on_error=1";
}
#endif

int main(int argc, char **argv)
{
    return sbx_zygote_serve(argc, argv);
}
