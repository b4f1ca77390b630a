/* Where a summary goes (summary.h): a window's path, and the temporary file beside it that is
 * published under the path only once written whole. May run in a signal handler. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "profile/base/out.h"
#include "profile/base/process.h"
#include "summary.h"
/* The path of the window being written: %w is its index; without %w, ".<index>" goes before
 * the extension (run.json -> run.3.json), or at the end when there is none. */
const char *nvtxcorr_prof_window_path(const char *path, unsigned index)
{
    static char buf[sizeof nvtxcorr_prof_process.profile_path + 32];
    char num[24];
    size_t nl = nvtxcorr_fmt_u64(num, index), n = 0, len = strlen(path);
    const char *w = strstr(path, "%w");
    if (w == NULL) {
        const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
        if (dot == NULL || (slash && dot < slash) || dot == (slash ? slash + 1 : path))
            dot = path + len;
        w = dot;
        nl = nvtxcorr_fmt_u64(num + 1, index) + 1;
        num[0] = '.';
        if (len + nl + 1 > sizeof buf) return "";
        memcpy(buf, path, (size_t)(w - path));
        memcpy(buf + (w - path), num, nl);
        memcpy(buf + (w - path) + nl, w, len - (size_t)(w - path) + 1);
        return buf;
    }
    for (const char *p = path; *p; p++) {
        if (p[0] == '%' && p[1] == 'w') {
            if (n + nl + 1 > sizeof buf) return "";
            memcpy(buf + n, num, nl);
            n += nl, p++;
        } else {
            if (n + 2 > sizeof buf) return "";
            buf[n++] = *p;
        }
    }
    buf[n] = 0;
    return buf;
}

/* "dir/.base.<pid>.nvtxcorr-tmp" for path, created (O_EXCL) and open for writing: the
 * descriptor, or -1 with errno. The pid keeps processes that write the same path apart; one
 * left behind by a killed process of the same pid is this process's to replace. */
int nvtxcorr_prof_temp_beside(const char *path, char *tmp, size_t size)
{
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0, n = strlen(path);
    char pid[24];
    size_t np = nvtxcorr_fmt_u64(pid, (uint64_t)getpid());
    if (n + np +
            sizeof ".."
                   ".nvtxcorr-tmp" >
        size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(tmp, path, dir);
    tmp[dir] = '.';
    memcpy(tmp + dir + 1, path + dir, n - dir);
    tmp[n + 1] = '.';
    memcpy(tmp + n + 2, pid, np);
    memcpy(tmp + n + 2 + np, ".nvtxcorr-tmp", sizeof ".nvtxcorr-tmp");
    for (int tries = 0; tries < 2; tries++) {
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST || tries) return fd;
        unlink(tmp);
    }
    return -1;
}

/* The written summary given its name, unless a file of that name appeared meanwhile (EEXIST):
 * renameat2's RENAME_NOREPLACE (by system call: no newer glibc needed), else, on a file
 * system without it, a hard link then the temporary name's removal, else (no hard links
 * either, as on vfat) a rename after a last look. 0, or the errno. */
int nvtxcorr_prof_publish(const char *tmp, const char *path)
{
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#endif
#ifdef SYS_renameat2
    if (syscall(SYS_renameat2, AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return errno;
#endif
    if (link(tmp, path) == 0) {
        unlink(tmp);
        return 0;
    }
    if (errno != EPERM && errno != ENOTSUP && errno != EOPNOTSUPP) return errno;
    struct stat st;
    if (lstat(path, &st) == 0) return EEXIST;
    return rename(tmp, path) == 0 ? 0 : errno;
}
