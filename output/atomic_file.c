#include "output/atomic_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct atomic_file {
    FILE *stream;
    char *temp_path;
    char *final_path;
};

static char *join(const char *dir, const char *prefix, const char *name, const char *suffix)
{
    size_t n = strlen(dir) + strlen(prefix) + strlen(name) + strlen(suffix) + 2;
    char *path = malloc(n);
    if (path)
        snprintf(path, n, "%s/%s%s%s", dir, prefix, name, suffix);
    return path;
}

atomic_file *atomic_file_open(const char *dir, const char *name, char *err, size_t err_size)
{
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".tmp-%ld", (long)getpid());
    atomic_file *f = calloc(1, sizeof *f);
    if (f) {
        f->temp_path = join(dir, ".", name, suffix);
        f->final_path = join(dir, "", name, "");
    }
    if (!f || !f->temp_path || !f->final_path) {
        snprintf(err, err_size, "out of memory opening %s/%s", dir, name);
        atomic_file_abort(f);
        return NULL;
    }
    f->stream = fopen(f->temp_path, "w");
    if (!f->stream) {
        snprintf(err, err_size, "cannot write %s: %s", f->final_path, strerror(errno));
        atomic_file_abort(f);
        return NULL;
    }
    return f;
}

FILE *atomic_file_stream(atomic_file *f) { return f->stream; }

static void release(atomic_file *f)
{
    free(f->temp_path);
    free(f->final_path);
    free(f);
}

int atomic_file_commit(atomic_file *f, char *err, size_t err_size)
{
    int failed = fflush(f->stream) != 0 || ferror(f->stream) || fsync(fileno(f->stream)) != 0;
    int saved = errno;
    failed |= fclose(f->stream) != 0;
    if (!failed)
        saved = errno;
    f->stream = NULL;
    if (!failed && rename(f->temp_path, f->final_path) != 0) {
        failed = 1;
        saved = errno;
    }
    if (failed) {
        snprintf(err, err_size, "cannot write %s: %s", f->final_path,
                 strerror(saved ? saved : EIO));
        unlink(f->temp_path);
    }
    release(f);
    return failed ? -1 : 0;
}

void atomic_file_abort(atomic_file *f)
{
    if (!f)
        return;
    if (f->stream)
        fclose(f->stream);
    if (f->temp_path)
        unlink(f->temp_path);
    release(f);
}

int output_make_dir(const char *path, char *err, size_t err_size)
{
    char *copy = strdup(path);
    if (!copy) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    for (char *p = copy + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            struct stat st;
            if (mkdir(copy, 0777) != 0 && errno != EEXIST) {
                snprintf(err, err_size, "cannot create folder %s: %s", copy, strerror(errno));
                free(copy);
                return -1;
            }
            if (stat(copy, &st) != 0 || !S_ISDIR(st.st_mode)) {
                snprintf(err, err_size, "cannot create folder %s: a file of that name exists",
                         copy);
                free(copy);
                return -1;
            }
            *p = saved;
            if (saved == '\0')
                break;
        }
    }
    free(copy);
    return 0;
}
