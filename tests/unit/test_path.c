/* The output paths' expansion (src/profile/base/path.c): each of %p %h %q{VAR} %%, what is copied
 * as it is, and the patterns that do not fit, which expand to nothing (-1). */
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "profile/base/process.h"
#include "test_core.h"

static void expect(const char *pattern, size_t size, int want_rc, const char *want, int line)
{
    char out[512];
    memset(out, 'X', sizeof out);
    int rc = nvtxcorr_prof_expand(pattern, out, size);
    if (rc != want_rc || (want && strcmp(out, want))) {
        fprintf(stderr,
                "test_path.c:%d: expand(\"%s\", %zu) gave %d \"%.*s\", expected %d \"%s\"\n", line,
                pattern, size, rc, rc == 0 ? (int)strnlen(out, sizeof out) : 0, out, want_rc,
                want ? want : "");
        test_failures++;
    }
}

void test_path(void)
{
    char want[512];
    snprintf(want, sizeof want, "run.%d.json", (int)getpid());
    expect("run.%p.json", 512, 0, want, __LINE__);

    struct utsname u;
    CHECK(uname(&u) == 0);
    snprintf(want, sizeof want, "%s-%s", u.nodename, u.nodename);
    expect("%h-%h", 512, 0, want, __LINE__);

    setenv("NVTXCORR_TEST_RANK", "3", 1);
    unsetenv("NVTXCORR_TEST_UNSET");
    expect("r%q{NVTXCORR_TEST_RANK}.csv", 512, 0, "r3.csv", __LINE__);
    expect("r%q{NVTXCORR_TEST_UNSET}.csv", 512, 0, "r.csv", __LINE__); /* unset: empty */
    expect("%q{}x", 512, 0, "x", __LINE__);                            /* the empty name */
    expect("100%%.txt", 512, 0, "100%.txt", __LINE__);
    expect("%%p", 512, 0, "%p", __LINE__); /* %% first: a percent sign, then a plain p */

    /* Copied as they are: an unknown conversion, %q without its braces, a trailing %. */
    expect("a%xb", 512, 0, "a%xb", __LINE__);
    expect("%q{RANK", 512, 0, "%q{RANK", __LINE__);
    expect("%qRANK", 512, 0, "%qRANK", __LINE__);
    expect("end%", 512, 0, "end%", __LINE__);
    expect("", 512, 0, "", __LINE__);

    /* Too long: the result and its NUL must fit in size. */
    expect("abcd", 5, 0, "abcd", __LINE__);
    expect("abcde", 5, -1, NULL, __LINE__);
    expect("a%q{NVTXCORR_TEST_RANK}cd", 5, 0, "a3cd", __LINE__);
    expect("a%q{NVTXCORR_TEST_RANK}cde", 5, -1, NULL, __LINE__);
    snprintf(want, sizeof want, "%d", (int)getpid());
    expect("%p", strlen(want) + 1, 0, want, __LINE__);
    expect("%p", strlen(want), -1, NULL, __LINE__);
    expect("%h", strlen(u.nodename), -1, NULL, __LINE__);
    /* A variable name of 256 characters or more is refused whatever size is left. */
    char name[300] = "%q{";
    memset(name + 3, 'V', 255);
    strcpy(name + 3 + 255, "}");
    expect(name, 512, 0, "", __LINE__);
    name[3 + 255] = 'V';
    strcpy(name + 3 + 256, "}");
    expect(name, 512, -1, NULL, __LINE__);
    unsetenv("NVTXCORR_TEST_RANK");
}
