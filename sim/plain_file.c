/* Opening an input that must be a plain file (see plain_file.h). */
#include "sim/plain_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *sim_open_plain(const char *path, const char *mode)
{
    /* non-blocking, so that the open of a pipe returns at once to be looked at */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    int err = fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR
                                         : !S_ISREG(st.st_mode) ? ENODEV : 0;
    int flags = err ? 0 : fcntl(fd, F_GETFL);
    if (!err && (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0))
        err = errno;
    FILE *f = err ? NULL : fdopen(fd, mode);
    if (!f) {
        err = err ? err : errno;
        close(fd);
        errno = err;
    }
    return f;
}

const char *sim_open_plain_why(int err)
{
    return err == EISDIR ? "a folder, not a file"
           : err == ENODEV ? "not a plain file (a pipe or a device)" : strerror(err);
}
