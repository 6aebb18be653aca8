/* Test-only Wine workaround (issue #18): Rust's standard library imports ProcessPrng from
 * bcryptprimitives.dll, which real Windows 10+ ships and Wine 8.0 does not. This stand-in,
 * placed beside the exe under Wine only, forwards to BCryptGenRandom. It is never shipped. */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0)
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
