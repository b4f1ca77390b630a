/* Unit tests of the core's pure pieces, without preloading: `test_core AREA` runs one area
 * (map, procaddr, escape, histogram, path, context-tree, routes; driver FAKES_DIR) and exits
 * non-zero on any failed check. */
#include <string.h>

#include "test_core.h"

int test_failures;

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*run)(void);
    } areas[] = {
        {"map", test_map},       {"context-tree", test_context_tree}, {"procaddr", test_procaddr},
        {"escape", test_escape}, {"histogram", test_histogram},       {"path", test_path},
        {"routes", test_routes}};
    int ran = 0;
    if (argc == 3 && !strcmp(argv[1], "driver")) {
        test_driver(argv[2]);
        ran++;
    }
    for (size_t i = 0; i < sizeof areas / sizeof areas[0]; i++)
        if (argc < 2 || !strcmp(argv[1], areas[i].name)) {
            areas[i].run();
            ran++;
        }
    if (!ran) {
        fprintf(stderr,
                "usage: test_core [map|procaddr|escape|histogram|path|context-tree|routes | "
                "driver FAKES_DIR]\n");
        return 2;
    }
    if (test_failures) fprintf(stderr, "%d check(s) failed\n", test_failures);
    return test_failures != 0;
}
