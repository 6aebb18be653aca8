/* Lists the processes Wine runs, one "pid parent-pid exe-name" line each: the e2e test's view of
 * the process tree inside Wine (a stand-in for tasklist, whose output Wine does not fill in). */
#include <windows.h>
#include <tlhelp32.h>
#include <stdio.h>

int wmain(void)
{
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
    PROCESSENTRY32W e = { sizeof e };
    if (snap == INVALID_HANDLE_VALUE)
        return 1;
    for (BOOL ok = Process32FirstW(snap, &e); ok; ok = Process32NextW(snap, &e))
        wprintf(L"%lu %lu %ls\n", e.th32ProcessID, e.th32ParentProcessID, e.szExeFile);
    CloseHandle(snap);
    return 0;
}
