/* bin/nvtxcorr: the command line's front end (docs/design.md, Front end). A C program, so that
 * `nvtxcorr -- command` costs an exec and a few checks, not an interpreter's start-up
 * (docs/performance.md, Launcher start-up); the options come from the one declaration in
 * src/python/nvtxcorr/options.py (options.h). It finds its parts relative to its own path
 * (bin/ of the build tree, of an install prefix and of the wheel's package): lib/libnvtxcorr.so,
 * libexec/nvtxcorr/nvtxcorr-tool, share/nvtxcorr/labels and the Python package, which runs
 * stat and report. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "front.h"
#include "options.h"

#ifndef NVTXCORR_PYTHON
#define NVTXCORR_PYTHON ""
#endif

static int launch_fd = -1;

void nvtxcorr_front_launch_fd(int fd)
{
    launch_fd = fd;
}

static void vsay(const char *level, const char *fmt, va_list ap)
{
    fflush(stdout);
    fprintf(stderr, "nvtxcorr: %s: ", level);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void nvtxcorr_front_say(const char *level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsay(level, fmt, ap);
    va_end(ap);
}

void nvtxcorr_front_fail(int status, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsay("error", fmt, ap);
    va_end(ap);
    nvtxcorr_front_exit(status);
}

void nvtxcorr_front_exit(int status)
{
    if (launch_fd >= 0) {
        unsigned char byte = (unsigned char)status;
        ssize_t n = write(launch_fd, &byte, 1);
        (void)n;
    }
    exit(status);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Optimal string alignment distance (Levenshtein with transpositions), word lowercased. */
static int distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    int d[64][64];

    if (la >= 64 || lb >= 64) return 99;
    for (size_t i = 0; i <= la; i++)
        for (size_t j = 0; j <= lb; j++) {
            if (i == 0 || j == 0) {
                d[i][j] = (int)(i + j);
                continue;
            }
            int ca = a[i - 1] >= 'A' && a[i - 1] <= 'Z' ? a[i - 1] + 32 : a[i - 1];
            int cost = ca != b[j - 1], best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && ca == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *nvtxcorr_front_closest(const char *word, const char *const *candidates, int n)
{
    const char *best = NULL;
    int limit = strlen(word) <= 4 ? 1 : 2;

    for (int i = 0; i < n; i++) {
        int k = distance(word, candidates[i]);
        if (k <= limit) {
            best = candidates[i];
            limit = k - 1;
        }
    }
    return best;
}

/* path = base + "/" + rest when that exists (resolved), else "" */
static void find(char *out, const char *here, const char *rest)
{
    char path[PATH_MAX * 2];

    snprintf(path, sizeof path, "%s/%s", here, rest);
    if (!exists(path) || !realpath(path, out)) out[0] = '\0';
}

static int conf_file(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return n > 5 && strcmp(e->d_name + n - 5, ".conf") == 0;
}

/* The library: $NVTXCORR_LIBRARY, ../lib/libnvtxcorr.so, or the first of ../lib/<dir>/ (a
 * multiarch install's lib/x86_64-linux-gnu). Not resolved: library_path() does that. */
static void find_library(nvtxcorr_front_t *f)
{
    const char *env = getenv("NVTXCORR_LIBRARY");
    char lib[PATH_MAX + 16];
    struct dirent **dirs = NULL;
    int n;

    if (env && *env) {
        snprintf(f->library, sizeof f->library, "%s", env);
        return;
    }
    if (snprintf(f->library, sizeof f->library, "%s/../lib/libnvtxcorr.so", f->here) <
            (int)sizeof f->library &&
        exists(f->library))
        return;
    f->library[0] = '\0';
    snprintf(lib, sizeof lib, "%s/../lib", f->here);
    n = scandir(lib, &dirs, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX * 2];
        snprintf(path, sizeof path, "%s/%s/libnvtxcorr.so", lib, dirs[i]->d_name);
        if (!f->library[0] && dirs[i]->d_name[0] != '.' && exists(path) &&
            strlen(path) < sizeof f->library)
            memcpy(f->library, path, strlen(path) + 1);
        free(dirs[i]);
    }
    free(dirs);
}

/* The directory of the path this program was run by (argv[0], or what PATH gave the shell for
 * a bare name), resolved, and that path's last name; 0 when there is none. */
const char *nvtxcorr_front_which(const char *name, char *out)
{
    const char *p = getenv("PATH");

    for (p = p ? p : ""; p; p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL) {
        int len = (int)strcspn(p, ":");
        if (snprintf(out, PATH_MAX, "%.*s/%s", len ? len : 1, len ? p : ".", name) < PATH_MAX &&
            is_file(out) && access(out, X_OK) == 0)
            return out;
    }
    return NULL;
}

static int invoked(const char *argv0, char *dir, char *name)
{
    char path[PATH_MAX];

    path[0] = '\0';
    if (strchr(argv0, '/'))
        snprintf(path, sizeof path, "%s", argv0);
    else if (!nvtxcorr_front_which(argv0, path))
        return 0;
    char *slash = strrchr(path, '/');
    if (!slash || strlen(slash + 1) >= 256) return 0;
    snprintf(name, 256, "%s", slash + 1);
    *slash = '\0';
    return realpath(path[0] ? path : "/", dir) != NULL;
}

/* Where the parts are: next to the path the program was run by, its directory resolved but
 * not the program itself, so a mirror of the tree made of links (bin/nvtxcorr a link, lib/ a
 * real directory) is found as it is, as the tests' under a path LD_PRELOAD cannot hold; else
 * next to the program itself (/proc/self/exe: a lone link in /usr/local/bin). */
static void locate(nvtxcorr_front_t *f, const char *argv0)
{
    char pkg[PATH_MAX * 2], dir[PATH_MAX], name[256], part[PATH_MAX + 64];

    if (argv0 && invoked(argv0, dir, name)) {
        snprintf(part, sizeof part, "%s/../libexec/nvtxcorr/nvtxcorr-tool", dir);
        if (exists(part) && strlen(dir) + strlen(name) + 2 <= sizeof f->self) {
            snprintf(f->here, sizeof f->here, "%s", dir);
            snprintf(f->self, sizeof f->self, "%s/%s", dir, name);
        }
    }
    if (!f->here[0]) {
        if (!realpath("/proc/self/exe", f->self)) snprintf(f->self, sizeof f->self, "nvtxcorr");
        snprintf(f->here, sizeof f->here, "%s", f->self);
        char *slash = strrchr(f->here, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(f->here, sizeof f->here, ".");
    }
    find_library(f);
    find(f->tool, f->here, "../libexec/nvtxcorr/nvtxcorr-tool");
    find(f->tables, f->here, "../share/nvtxcorr/labels");
    /* the package: libexec/nvtxcorr/python of the build and install trees; in the wheel this
     * program is nvtxcorr/bin/nvtxcorr inside the package itself */
    f->python[0] = '\0';
    const char *homes[] = {"../libexec/nvtxcorr/python", "../.."};
    for (int i = 0; i < 2 && !f->python[0]; i++) {
        snprintf(pkg, sizeof pkg, "%s/%s/nvtxcorr/cli.py", f->here, homes[i]);
        if (is_file(pkg)) find(f->python, f->here, homes[i]);
    }
}

char *nvtxcorr_front_dir_resolved(const char *path, char *out)
{
    char dir[PATH_MAX], real[PATH_MAX], cwd[PATH_MAX];
    const char *slash = strrchr(path, '/');

    if (!slash) {
        if (!getcwd(cwd, sizeof cwd) || snprintf(out, PATH_MAX, "%s/%s", cwd, path) >= PATH_MAX)
            snprintf(out, PATH_MAX, "%s", path);
        return out;
    }
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    if (!realpath(dir[0] ? dir : "/", real) ||
        snprintf(out, PATH_MAX, "%s/%s", strcmp(real, "/") ? real : "", slash + 1) >= PATH_MAX)
        snprintf(out, PATH_MAX, "%s", path);
    return out;
}

const char *nvtxcorr_front_shipped(const nvtxcorr_front_t *f, const char *name, char *buf,
                                   size_t size)
{
    if (strchr(name, '/') || name[0] == '-' || !name[0] || exists(name) || !f->tables[0])
        return name;
    snprintf(buf, size, "%s/%s.conf", f->tables, name);
    if (is_file(buf)) return buf;
    snprintf(buf, size, "%s/%s", f->tables, name);
    if (is_file(buf)) return buf;
    return name;
}

void nvtxcorr_front_table_names(const nvtxcorr_front_t *f, char *buf, size_t size)
{
    struct dirent **names = NULL;
    int n = f->tables[0] ? scandir(f->tables, &names, conf_file, alphasort) : -1;
    size_t used = 0;

    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        int w = snprintf(buf + used, size - used, "%s%.*s", i ? ", " : "",
                         (int)strlen(names[i]->d_name) - 5, names[i]->d_name);
        if (w > 0 && (size_t)w < size - used) used += (size_t)w;
        free(names[i]);
    }
    free(names);
    if (n <= 0) snprintf(buf, size, "none here");
}

static int list_tables(const nvtxcorr_front_t *f)
{
    struct dirent **names = NULL;
    int n;

    if (!f->tables[0])
        nvtxcorr_front_fail(2, "no label tables found next to %s (share/nvtxcorr/labels)", f->self);
    printf("label tables shipped with nvtxcorr (--labels NAME), in %s:\n", f->tables);
    n = scandir(f->tables, &names, conf_file, alphasort);
    for (int i = 0; i < n; i++) {
        printf("  %-12.*s %s/%s\n", (int)strlen(names[i]->d_name) - 5, names[i]->d_name, f->tables,
               names[i]->d_name);
        free(names[i]);
    }
    free(names);
    return 0;
}

void nvtxcorr_front_exec_tool(const nvtxcorr_front_t *f, char **argv)
{
    if (!f->tool[0])
        nvtxcorr_front_fail(2, "nvtxcorr-tool not found next to %s (build or install first)",
                            f->self);
    fflush(stdout);
    argv[0] = (char *)f->tool;
    execv(f->tool, argv);
    nvtxcorr_front_fail(2, "%s: %s", f->tool, strerror(errno));
}

/* stat and report: the package's cli.main, given this program (stat runs its command through
 * it) and nvtxcorr-tool (report draws the text tables with it). -I -S: the user's PYTHONPATH,
 * site-packages and current directory are for their program, not for this one. */
void nvtxcorr_front_exec_python(const nvtxcorr_front_t *f, char **argv)
{
    static const char code[] = "import sys; sys.path.insert(0, sys.argv[1])\n"
                               "from nvtxcorr.cli import main\n"
                               "main(sys.argv[2], sys.argv[3], sys.argv[4:])";
    const char *py =
        NVTXCORR_PYTHON[0] && access(NVTXCORR_PYTHON, X_OK) == 0 ? NVTXCORR_PYTHON : "python3";
    int n = 0;

    if (!f->python[0])
        nvtxcorr_front_fail(2,
                            "the nvtxcorr Python package not found next to %s (build or "
                            "install first)",
                            f->self);
    while (argv[n])
        n++;
    char **args = calloc((size_t)n + 9, sizeof(*args));
    if (!args) nvtxcorr_front_fail(2, "out of memory");
    const char *head[] = {py, "-I", "-S", "-c", code, f->python, f->self, f->tool};
    for (int i = 0; i < 8; i++)
        args[i] = (char *)head[i];
    memcpy(args + 8, argv, (size_t)n * sizeof(*args));
    fflush(stdout);
    execvp(py, args);
    nvtxcorr_front_fail(2, "%s: %s (stat and report run in Python 3.8 or later)", py,
                        strerror(errno));
}

static int help_for(const nvtxcorr_front_t *f, const char *command)
{
    if (!command || !strcmp(command, "help") || !strcmp(command, "version"))
        fputs(nvtxcorr_usage_run, stdout);
    else if (!strcmp(command, "stat"))
        fputs(nvtxcorr_usage_stat, stdout);
    else if (!strcmp(command, "report"))
        fputs(nvtxcorr_usage_report, stdout);
    else if (!strcmp(command, "labels"))
        fputs(nvtxcorr_usage_labels, stdout);
    else if (!strcmp(command, "check") || !strcmp(command, "explain") || !strcmp(command, "doctor"))
        nvtxcorr_front_exec_tool(f, (char *[]){NULL, (char *)command, "--help", NULL});
    else
        nvtxcorr_front_fail(2, "no command '%s' (nvtxcorr help lists them)", command);
    return 0;
}

/* check, explain, doctor: nvtxcorr-tool, a shipped table's NAME made its path (check's
 * files, explain's first argument, doctor's --labels value); doctor is also told the library
 * and the tables' directory. */
int nvtxcorr_front_table_command(const nvtxcorr_front_t *f, int argc, char **argv)
{
    const char *command = argv[0];
    int doctor = !strcmp(command, "doctor"), positional = 0, n = 0;
    char **out = calloc((size_t)argc + 8, sizeof(*out)), *previous = "";
    char lib[PATH_MAX];

    if (!out) nvtxcorr_front_fail(2, "out of memory");
    out[n++] = NULL;
    out[n++] = (char *)command;
    if (doctor) {
        out[n++] = "--library";
        out[n++] = f->library[0] ? nvtxcorr_front_dir_resolved(f->library, lib) : "";
        if (f->tables[0]) {
            out[n++] = "--tables";
            out[n++] = (char *)f->tables;
        }
    }
    for (int i = 1; i < argc; i++) {
        char *arg = argv[i], *buf = malloc(PATH_MAX + 16);
        if (!buf) nvtxcorr_front_fail(2, "out of memory");
        if (!strcmp(previous, "--inline") || !strcmp(previous, "--labels-inline")) {
        } else if (!strcmp(previous, "--labels")) {
            if (doctor) arg = (char *)nvtxcorr_front_shipped(f, arg, buf, PATH_MAX + 16);
        } else if (!strncmp(arg, "--labels=", 9)) {
            if (doctor) {
                char name[PATH_MAX];
                snprintf(name, sizeof name, "%s",
                         nvtxcorr_front_shipped(f, arg + 9, name, sizeof name));
                snprintf(buf, PATH_MAX + 16, "--labels=%s", name);
                arg = buf;
            }
        } else if (!(arg[0] == '-' && arg[1])) {
            positional++;
            if (!strcmp(command, "check") || (!strcmp(command, "explain") && positional == 1))
                arg = (char *)nvtxcorr_front_shipped(f, arg, buf, PATH_MAX + 16);
        }
        previous = arg;
        out[n++] = arg;
    }
    nvtxcorr_front_exec_tool(f, out);
}

int main(int argc, char **argv)
{
    static nvtxcorr_front_t f;
    const char *first = argc > 1 ? argv[1] : "";

    locate(&f, argc > 0 ? argv[0] : NULL);
    if (!strcmp(first, "help")) return help_for(&f, argc > 2 ? argv[2] : NULL);
    if (!strcmp(first, "version") || !strcmp(first, "--version"))
        nvtxcorr_front_exec_tool(&f, (char *[]){NULL, "--version", NULL});
    if (!strcmp(first, "labels")) {
        if (argc > 2 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help")))
            return fputs(nvtxcorr_usage_labels, stdout) < 0;
        if (argc > 2)
            nvtxcorr_front_fail(2, "labels takes no arguments, not '%s' (nvtxcorr help labels)",
                                argv[2]);
        return list_tables(&f);
    }
    if (!strcmp(first, "report") || !strcmp(first, "stat"))
        nvtxcorr_front_exec_python(&f, argv + 1);
    if (!strcmp(first, "check") || !strcmp(first, "explain") || !strcmp(first, "doctor"))
        return nvtxcorr_front_table_command(&f, argc - 1, argv + 1);
    return nvtxcorr_front_run(&f, argc - 1, argv + 1);
}
