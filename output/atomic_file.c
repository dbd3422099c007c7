/* Atomic files (see atomic_file.h).  The temporary file is created in the folder's own
 * descriptor with O_CREAT | O_EXCL | O_NOFOLLOW, so nothing planted under its name (a
 * link to another file) is ever followed or written through, and renamed with renameat
 * in the same folder, which replaces whatever has the final name (a link too) without
 * following it. */
#define _GNU_SOURCE /* O_DIRECTORY, O_NOFOLLOW, O_CLOEXEC, openat, renameat, unlinkat */
#include "output/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct atomic_file {
    FILE *stream;
    int dir_fd;            /* the folder, opened once: every name below is inside it */
    char *temp_name;       /* ".<name>.tmp-<pid>-<n>" */
    char *final_name;
    char *final_path;      /* "<dir>/<name>", for messages */
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
    static unsigned long opened; /* names differ within a process as well */
    atomic_file *f = calloc(1, sizeof *f);
    if (f) {
        f->dir_fd = -1;
        f->final_name = strdup(name);
        f->final_path = join(dir, "", name, "");
    }
    if (!f || !f->final_name || !f->final_path) {
        snprintf(err, err_size, "out of memory opening %s/%s", dir, name);
        atomic_file_abort(f);
        return NULL;
    }
    f->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (f->dir_fd < 0) {
        snprintf(err, err_size, "cannot write %s: %s", f->final_path, strerror(errno));
        atomic_file_abort(f);
        return NULL;
    }
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        size_t n = strlen(name) + 64;
        free(f->temp_name);
        if (!(f->temp_name = malloc(n))) {
            snprintf(err, err_size, "out of memory opening %s/%s", dir, name);
            atomic_file_abort(f);
            return NULL;
        }
        snprintf(f->temp_name, n, ".%s.tmp-%ld-%lu", name, (long)getpid(), opened++);
        fd = openat(f->dir_fd, f->temp_name,
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break; /* taken names are skipped; anything else is final */
    }
    if (fd < 0 || !(f->stream = fdopen(fd, "w"))) {
        snprintf(err, err_size, "cannot write %s: %s", f->final_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        else {
            free(f->temp_name); /* nothing of ours to remove */
            f->temp_name = NULL;
        }
        atomic_file_abort(f);
        return NULL;
    }
    return f;
}

FILE *atomic_file_stream(atomic_file *f) { return f->stream; }

static void release(atomic_file *f)
{
    if (f->dir_fd >= 0)
        close(f->dir_fd);
    free(f->temp_name);
    free(f->final_name);
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
    if (!failed && renameat(f->dir_fd, f->temp_name, f->dir_fd, f->final_name) != 0) {
        failed = 1;
        saved = errno;
    }
    if (failed) {
        snprintf(err, err_size, "cannot write %s: %s", f->final_path,
                 strerror(saved ? saved : EIO));
        unlinkat(f->dir_fd, f->temp_name, 0);
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
    if (f->temp_name && f->dir_fd >= 0)
        unlinkat(f->dir_fd, f->temp_name, 0);
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

int output_check_inside(const char *dir, const char *rel, char *err, size_t err_size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : (snprintf(err, err_size, "cannot read %s: %s", path,
                                               strerror(errno)), -1);
    if (S_ISDIR(st.st_mode))
        return 0;
    snprintf(err, err_size, "%s is %s, not a folder of fleetsim's: a run writes its charts "
             "and points only into folders it makes (remove it, or write to another "
             "folder)", path, S_ISLNK(st.st_mode) ? "a link" : "a file");
    return -1;
}

int output_make_inside(const char *dir, const char *rel, char *err, size_t err_size)
{
    char part[4096];
    size_t n = strlen(rel);
    if (n >= sizeof part) {
        snprintf(err, err_size, "cannot create folder %s/%s: the name is too long", dir, rel);
        return -1;
    }
    for (size_t i = 1; i <= n; i++) {
        if (rel[i] != '/' && rel[i] != '\0')
            continue;
        memcpy(part, rel, i);
        part[i] = '\0';
        char path[8200];
        snprintf(path, sizeof path, "%s/%s", dir, part);
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            snprintf(err, err_size, "cannot create folder %s: %s", path, strerror(errno));
            return -1;
        }
        if (output_check_inside(dir, part, err, err_size) != 0)
            return -1;
    }
    return 0;
}
