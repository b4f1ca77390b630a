/* nvtxcorr [options] command: the program run with the library preloaded (docs/usage.md).
 * Every check first: the options (parsed from the one declaration, options.h), the program,
 * the label table (loaded by the library's own parser), the output paths, the window spec
 * (the library's own parser). Only once all passed are the old outputs -f replaces removed and
 * the program exec'd, with the library prepended to LD_PRELOAD and NVTXCORR=1: the same
 * process, so it keeps its pid and works as the program given to nsys and ncu.
 *
 * nvtxcorr stat runs its command through this front end with NVTXCORR_LAUNCH_FD=N: a run that
 * fails here writes its exit status as one byte to fd N; a program that starts closes it (it
 * is close-on-exec), so stat tells the two apart without guessing from the status. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/window_spec.h"
#include "front.h"
#include "labels.h"
#include "names.h"
#include "options.h"

enum { MAX_OPTIONS = 64 };

typedef struct {
    const char *value[MAX_OPTIONS]; /* per nvtxcorr_options row: its value, "" for a flag */
    int forced;                     /* `--` came before the program */
    int end;                        /* argv index where the options ended */
} values_t;

typedef struct {
    const char *option;
    char path[PATH_MAX];
} removal_t;

static const char *const commands[] = {"stat",   "report", "check", "explain",
                                       "labels", "doctor", "help",  "version"};

static const char *get(const values_t *v, const char *dest)
{
    for (int i = 0; i < nvtxcorr_option_count; i++)
        if (!strcmp(nvtxcorr_options[i].dest, dest)) return v->value[i];
    return NULL;
}

static void unknown(const char *arg)
{
    const char *names[2 * MAX_OPTIONS];
    char word[256];
    int n = 0;

    for (int i = 0; i < nvtxcorr_option_count; i++)
        for (int k = 0; k < 2; k++) {
            const char *name = nvtxcorr_options[i].names[k];
            if (name && (nvtxcorr_options[i].commands & NVTXCORR_CMD_RUN) && name[1] == '-')
                names[n++] = name;
        }
    snprintf(word, sizeof word, "%.*s", (int)strcspn(arg, "="), arg);
    const char *near = nvtxcorr_front_closest(word, names, n);
    if (near)
        nvtxcorr_front_fail(2, "unknown option %s; did you mean %s? (nvtxcorr help)", arg, near);
    nvtxcorr_front_fail(2, "unknown option %s (nvtxcorr help)", arg);
}

static int folded_equal(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if ((*a >= 'A' && *a <= 'Z' ? *a + 32 : *a) != *b) return 0;
    return *a == *b;
}

static void check_choice(const struct nvtxcorr_option *o, const char *name, const char *value)
{
    char list[256] = "";

    if (!o->choices[0] || (o->fold && !value[0])) return;
    for (int c = 0; o->choices[c]; c++) {
        if (o->fold ? folded_equal(value, o->choices[c]) : !strcmp(value, o->choices[c])) return;
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", c ? ", " : "",
                 o->choices[c]);
    }
    nvtxcorr_front_fail(2, "%s %s: must be one of %s, not '%s'", name, value, list, value);
}

/* options.parse for RUN: the options until the first word that is not one (the program) or
 * `--`; an option of another command is an error naming that command. */
static void parse(int argc, char **argv, values_t *v)
{
    int i = 0;

    while (i < argc) {
        const char *arg = argv[i++];
        if (!strcmp(arg, "--")) {
            v->forced = 1;
            v->end = i;
            return;
        }
        if (arg[0] != '-' || !strcmp(arg, "-")) {
            v->end = i - 1;
            return;
        }
        size_t len = arg[1] == '-' ? strcspn(arg, "=") : strlen(arg);
        const char *eq = arg[len] == '=' ? arg + len + 1 : NULL;
        int row = -1, which = 0;
        for (int r = 0; r < nvtxcorr_option_count && row < 0; r++)
            for (int k = 0; k < 2; k++) {
                const char *name = nvtxcorr_options[r].names[k];
                if (name && strlen(name) == len && !strncmp(name, arg, len)) {
                    row = r;
                    which = k;
                    break;
                }
            }
        if (row < 0) unknown(arg);
        const struct nvtxcorr_option *o = &nvtxcorr_options[row];
        const char *name = o->names[which];
        if (!(o->commands & NVTXCORR_CMD_RUN)) nvtxcorr_front_fail(2, "%s", o->wrong_run[which]);
        const char *value = "";
        if (!o->metavar) {
            if (eq) nvtxcorr_front_fail(2, "%s takes no value", name);
        } else if (eq) {
            value = eq;
        } else {
            if (i >= argc) nvtxcorr_front_fail(2, "%s needs a value", name);
            value = argv[i++];
        }
        if (o->metavar) check_choice(o, name, value);
        v->value[row] = value;
    }
    v->end = argc;
}

static void absolute(char *out, const char *path)
{
    char cwd[PATH_MAX];

    if (path[0] == '/' || !getcwd(cwd, sizeof cwd) ||
        snprintf(out, PATH_MAX, "%s/%s", cwd, path) >= PATH_MAX)
        snprintf(out, PATH_MAX, "%s", path);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A script whose #! interpreter is missing: exec would say the script itself is not there. */
static void interpreter_problem(const char *path)
{
    char head[257], interp[257];
    FILE *file = fopen(path, "rb");
    size_t n;

    if (!file) return;
    n = fread(head, 1, 256, file);
    fclose(file);
    head[n] = '\0';
    if (n < 2 || head[0] != '#' || head[1] != '!') return;
    const char *s = head + 2 + strspn(head + 2, " \t");
    size_t len = strcspn(s, " \t\r\n");
    if (!len) return;
    snprintf(interp, sizeof interp, "%.*s", (int)len, s);
    if (access(interp, F_OK) != 0)
        nvtxcorr_front_fail(127, "%s: its interpreter %s (#! line) does not exist", path, interp);
}

/* A program the launcher cannot run, said before anything starts; else the path to exec
 * (PATH searched here once, as execvp would). */
static const char *check_program(const char *name, int forced, char *found)
{
    if (strchr(name, '/')) {
        if (access(name, F_OK) != 0)
            nvtxcorr_front_fail(127, "%s: No such file or directory", name);
        if (is_dir(name)) nvtxcorr_front_fail(126, "%s: Is a directory", name);
        if (access(name, X_OK) != 0) nvtxcorr_front_fail(126, "%s: Permission denied", name);
        interpreter_problem(name);
        return name;
    }
    const char *path = nvtxcorr_front_which(name, found);
    int n = (int)(sizeof commands / sizeof *commands), command = 0;
    for (int i = 0; i < n; i++)
        command |= !strcmp(name, commands[i]);
    if (command && !forced && !path)
        nvtxcorr_front_fail(2,
                            "'%s' is a command of nvtxcorr: give it first (nvtxcorr %s ...), "
                            "or -- %s for a program of that name",
                            name, name, name);
    if (!path) {
        const char *near = forced ? NULL : nvtxcorr_front_closest(name, commands, n);
        if (near)
            nvtxcorr_front_fail(2,
                                "'%s' is neither a command of nvtxcorr nor a program on "
                                "PATH; did you mean 'nvtxcorr %s'? (nvtxcorr help)",
                                name, near);
        nvtxcorr_front_fail(127, "%s: command not found", name);
    }
    interpreter_problem(path);
    return path;
}

/* An output path the library will create: a %-expanded name is only known in the process,
 * but its directory still is. An existing file -f replaces is only noted here: removed once
 * every check has passed. access() says yes to root for /proc, so a file is tried. */
static void check_output(const char *option, const char *path, int force, removal_t *removals,
                         int *nremovals)
{
    char dir[PATH_MAX], probe[PATH_MAX + 64];
    struct stat st;

    if (!strchr(path, '%')) {
        if (is_dir(path))
            nvtxcorr_front_fail(2, "%s %s: is a directory; the command was not run", option, path);
        if (lstat(path, &st) == 0) {
            if (!force)
                nvtxcorr_front_fail(2, "%s %s: exists (-f overwrites it); the command was not run",
                                    option, path);
            removals[*nremovals].option = option;
            snprintf(removals[(*nremovals)++].path, PATH_MAX, "%s", path);
        }
    }
    snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(path, '/') - path), path);
    if (!dir[0]) snprintf(dir, sizeof dir, "/");
    if (strchr(dir, '%')) return;
    if (access(dir, F_OK) != 0)
        nvtxcorr_front_fail(2, "%s %s: no such directory; the command was not run", option, path);
    if (!is_dir(dir))
        nvtxcorr_front_fail(2,
                            "%s %s: a component of the path is not a directory; the command "
                            "was not run",
                            option, path);
    if (access(dir, W_OK | X_OK) != 0)
        nvtxcorr_front_fail(2,
                            "%s %s: cannot write in %s: Permission denied; the command was "
                            "not run",
                            option, path, dir);
    snprintf(probe, sizeof probe, "%s/.nvtxcorr-probe-%ld", dir, (long)getpid());
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        nvtxcorr_front_fail(2, "%s %s: cannot create a file in %s: %s; the command was not run",
                            option, path, dir, strerror(errno));
    close(fd);
    unlink(probe);
}

static void print_label_error(void *ctx, const nvtxcorr_label_error_t *error)
{
    char text[8192], shown[4 * 8192 + 1];
    (void)ctx;
    nvtxcorr_escape_controls(shown, sizeof shown,
                             nvtxcorr_label_error_text(error, text, sizeof text));
    fprintf(stderr, "nvtxcorr: error: %s\n", shown);
}

static int blank(const char *s)
{
    return !s || !s[strspn(s, " \t\r\n")];
}

/* The label table the program will load, loaded here first by the library's own parser, both
 * sources together as the library does. With --keep-going a table with errors is taken out of
 * the program's environment: the library would load none of it, and say every error again. */
static void check_labels(const values_t *v)
{
    const char *path = getenv("NVTXCORR_LABELS"), *rules = getenv("NVTXCORR_LABELS_INLINE");

    if (blank(path) && blank(rules)) return;
    nvtxcorr_label_table_t *t = nvtxcorr_labels_load(
        blank(rules) ? NULL : rules, path && path[0] ? path : NULL, print_label_error, NULL);
    if (t) {
        nvtxcorr_labels_free(t);
        return;
    }
    if (!get(v, "keep_going"))
        nvtxcorr_front_fail(2, "the label table has errors (above); the command was not run "
                               "(--keep-going runs it, with default labels)");
    nvtxcorr_front_say("warn", "the label table has errors (above); running with default "
                               "labels (--keep-going)");
    unsetenv("NVTXCORR_LABELS");
    unsetenv("NVTXCORR_LABELS_INLINE");
}

static void label_settings(const nvtxcorr_front_t *f, const values_t *v)
{
    const char *labels = get(v, "labels"), *rules = get(v, "labels_inline");
    char buf[PATH_MAX + 16], path[PATH_MAX], names[4096];

    if (labels) {
        const char *shipped = nvtxcorr_front_shipped(f, labels, buf, sizeof buf);
        if (labels[0] && !strchr(labels, '/') && access(labels, F_OK) != 0 && shipped == labels) {
            nvtxcorr_front_table_names(f, names, sizeof names);
            nvtxcorr_front_fail(2,
                                "--labels %s: no such file, nor a table shipped with nvtxcorr "
                                "(%s; nvtxcorr labels lists them); the command was not run",
                                labels, names);
        }
        absolute(path, shipped);
        setenv("NVTXCORR_LABELS", labels[0] ? path : "", 1);
    }
    if (rules) setenv("NVTXCORR_LABELS_INLINE", rules, 1);
}

/* The library as LD_PRELOAD will name it: its directory resolved. ld.so splits LD_PRELOAD at
 * spaces and colons and cannot quote them: such a path would load nothing and the program
 * would run uninstrumented, so it is refused. */
static void library_path(const nvtxcorr_front_t *f, char *out)
{
    if (!f->library[0] || access(f->library, F_OK) != 0)
        nvtxcorr_front_fail(2, "libnvtxcorr.so not found next to %s (build or install first)",
                            f->self);
    nvtxcorr_front_dir_resolved(f->library, out);
    if (strpbrk(out, " \t\n\r\f\v:"))
        nvtxcorr_front_fail(2,
                            "cannot preload '%s': LD_PRELOAD cannot hold a path with a space "
                            "or a colon; install nvtxcorr elsewhere or pass --library PATH",
                            out);
}

static void check_window(const char *spec)
{
    nvtxcorr_window_spec_t parsed;
    char why[320];
    const char *sig = getenv("NVTXCORR_WINDOW_SIGNAL");

    if (nvtxcorr_window_spec(spec, &parsed, why, sizeof why) != 0)
        nvtxcorr_front_fail(2, "--window %s: %s; the command was not run", spec, why);
    /* the signal a `signal` window toggles on, from the environment the run will have */
    if (parsed.kind == NVTXCORR_WINDOW_SIGNAL && sig && *sig &&
        nvtxcorr_window_signal(sig, why, sizeof why) < 0)
        nvtxcorr_front_fail(2,
                            "--window %s: NVTXCORR_WINDOW_SIGNAL=%s: %s; the command was not "
                            "run",
                            spec, sig, why);
}

/* A launcher inside another one's command finds the outer one's settings in its environment:
 * its own win for its command, but never silently (docs/usage.md). */
static void set_replacing(const char *option, const char *value, const char *variable)
{
    const char *outer = getenv(variable);

    if (outer && outer[0] && strcmp(outer, value))
        nvtxcorr_front_say("warn",
                           "%s %s replaces %s=%s, set outside this nvtxcorr (by an "
                           "nvtxcorr or nvtxcorr stat around it?), for this command "
                           "and its children",
                           option, value, variable, outer);
    setenv(variable, value, 1);
}

static void remove_old(const removal_t *removals, int n)
{
    for (int i = 0; i < n; i++)
        if (unlink(removals[i].path) != 0 && errno != ENOENT)
            nvtxcorr_front_fail(2, "%s %s: cannot replace it: %s; the command was not run",
                                removals[i].option, removals[i].path, strerror(errno));
}

/* stat's NVTXCORR_LAUNCH_FD, taken out of the environment the program gets: 1 when stat runs
 * this front end (its command is then a program, whatever its name). */
static int take_launch_fd(void)
{
    const char *s = getenv("NVTXCORR_LAUNCH_FD");
    char *end = NULL;

    if (!s) return 0;
    long fd = strtol(s, &end, 10);
    if (end != s && !*end && fd >= 0 && fcntl((int)fd, F_SETFD, FD_CLOEXEC) == 0)
        nvtxcorr_front_launch_fd((int)fd);
    unsetenv("NVTXCORR_LAUNCH_FD");
    return 1;
}

static void set_output(const values_t *v, const char *dest, const char *option,
                       const char *variable)
{
    char path[PATH_MAX];

    if (!get(v, dest) || !get(v, dest)[0]) return;
    absolute(path, get(v, dest));
    set_replacing(option, path, variable);
}

int nvtxcorr_front_run(nvtxcorr_front_t *f, int argc, char **argv)
{
    static values_t v;
    static removal_t removals[2];
    char found[PATH_MAX], library[PATH_MAX], trace[PATH_MAX], profile[PATH_MAX];
    int nremovals = 0;

    int from_stat = take_launch_fd();
    parse(argc, argv, &v);
    char **cmd = argv + v.end;
    int ncmd = argc - v.end;
    if (ncmd > 0 && !v.forced && !from_stat && !strcmp(cmd[0], "stat")) {
        /* `nvtxcorr --labels vllm stat ./app`: options may come before the word too */
        char **args = calloc((size_t)argc + 2, sizeof(*args));
        if (!args) nvtxcorr_front_fail(2, "out of memory");
        args[0] = "stat";
        memcpy(args + 1, argv, (size_t)v.end * sizeof(*args));
        memcpy(args + 1 + v.end, cmd + 1, (size_t)(ncmd - 1) * sizeof(*args));
        nvtxcorr_front_exec_python(f, args);
    }
    if (get(&v, "help")) return fputs(nvtxcorr_usage_run, stdout) < 0;
    if (ncmd == 0) {
        fputs(nvtxcorr_usage_run, stderr);
        nvtxcorr_front_exit(2);
    }
    if (!v.forced && !from_stat && !strcmp(cmd[0], "doctor")) {
        /* `nvtxcorr --labels FILE doctor`: the table given before the word */
        char **args = calloc((size_t)ncmd + 4, sizeof(*args));
        if (!args) nvtxcorr_front_fail(2, "out of memory");
        args[0] = "doctor";
        int n = 1;
        if (get(&v, "labels")) {
            args[n++] = "--labels";
            args[n++] = (char *)get(&v, "labels");
        }
        memcpy(args + n, cmd + 1, (size_t)(ncmd - 1) * sizeof(*args));
        return nvtxcorr_front_table_command(f, n + ncmd - 1, args);
    }
    if (get(&v, "library")) snprintf(f->library, sizeof f->library, "%s", get(&v, "library"));

    label_settings(f, &v);
    if (get(&v, "log")) setenv("NVTXCORR_LOG", get(&v, "log"), 1);
    if (get(&v, "capture")) setenv("NVTXCORR_CAPTURE", get(&v, "capture"), 1);
    if (get(&v, "no_graph_marks")) setenv("NVTXCORR_GRAPH_MARKS", "0", 1);
    library_path(f, library);
    const char *program = check_program(cmd[0], v.forced, found);
    check_labels(&v);
    int force = get(&v, "force") != NULL;
    const char *t = get(&v, "trace"), *p = get(&v, "profile"), *window = get(&v, "window");
    if (t && t[0]) {
        absolute(trace, t);
        check_output("--trace", trace, force, removals, &nremovals);
    }
    if (p && p[0]) {
        absolute(profile, p);
        check_output("--profile", profile, force, removals, &nremovals);
    }
    if (window) {
        check_window(window);
        if (!p || !p[0])
            nvtxcorr_front_fail(2, "--window needs --profile FILE (one summary per window); the "
                                   "command was not run");
    }
    if (get(&v, "metrics") && get(&v, "metrics")[0] && (!p || !p[0]))
        nvtxcorr_front_fail(2, "--metrics needs --profile FILE (its counts are profile mode's); "
                               "the command was not run");
    set_output(&v, "trace", "--trace", "NVTXCORR_TRACE");
    set_output(&v, "profile", "--profile", "NVTXCORR_PROFILE");
    set_output(&v, "metrics", "--metrics", "NVTXCORR_METRICS");
    if (window) set_replacing("--window", window, "NVTXCORR_WINDOW");
    remove_old(removals, nremovals);

    const char *old = getenv("LD_PRELOAD");
    size_t size = strlen(library) + (old ? strlen(old) : 0) + 2;
    char *preload = malloc(size);
    if (!preload) nvtxcorr_front_fail(2, "out of memory");
    snprintf(preload, size, "%s%s%s", library, old && old[0] ? ":" : "", old ? old : "");
    setenv("LD_PRELOAD", preload, 1);
    setenv("NVTXCORR", "1", 1);
    fflush(stdout);
    execv(program, cmd);
    nvtxcorr_front_fail(errno == ENOENT ? 127 : 126, "%s: %s", cmd[0], strerror(errno));
}
