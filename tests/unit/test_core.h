/* The unit tests' shared check macro and the areas, one function each (test_core.c runs the
 * one named on the command line). */
#ifndef NVTXCORR_TEST_CORE_H
#define NVTXCORR_TEST_CORE_H

#include <stdio.h>

extern int test_failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            test_failures++;                                                                       \
        }                                                                                          \
    } while (0)

#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);             \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "%s:%d: %s == %llu, expected %s == %llu\n", __FILE__, __LINE__, #a,    \
                    a_, #b, b_);                                                                   \
            test_failures++;                                                                       \
        }                                                                                          \
    } while (0)

void test_map(void);
void test_procaddr(void);
void test_escape(void);
void test_histogram(void);
void test_path(void);
void test_context_tree(void);
void test_driver(const char *fakes_dir);
void test_routes(void);

#endif
