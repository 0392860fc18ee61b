/*
 * version.c — the library's version, fixed when it is built: RF_VERSION of
 * the header it was compiled with, which the Makefile also uses to name
 * libroformer.so.MAJOR and to write roformer.pc.
 */
#include "roformer.h"

const char *rf_version(void)
{
    return RF_VERSION;
}

bool rf_version_matches(int32_t major, int32_t minor)
{
    return major == RF_VERSION_MAJOR && minor <= RF_VERSION_MINOR;
}
