/* codeq-zygote: the zygote binary (sandbox/sbx_zygote_serve.c), a program of its own so that
 * the worker starts it with posix_spawn — a fresh exec, never a fork of a threaded worker —
 * and so that it carries no Kafka client and no validator. Started only by the sandbox. */
#include "sandbox.h"

int main(int argc, char **argv)
{
    return sbx_zygote_serve(argc, argv);
}
