#include "tests/fuzz/fuzz_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

const char *fuzz_work_dir(void)
{
    static char dir[256];
    if (!dir[0]) {
        mkdir("build", 0777);
        mkdir("build/fuzz", 0777);
        mkdir("build/fuzz/work", 0777);
        snprintf(dir, sizeof dir, "build/fuzz/work/%ld", (long)getpid());
        if (mkdir(dir, 0777) != 0) {
            perror(dir);
            abort();
        }
    }
    return dir;
}

const char *fuzz_write(const char *name, const uint8_t *data, size_t n)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", fuzz_work_dir(), name);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0) {
        perror(path);
        abort();
    }
    return path;
}
