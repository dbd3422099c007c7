/* Opening an input that must be a plain file.  A named pipe (FIFO) given where a file is
 * read would block the open until something writes into it, and a device such as
 * /dev/zero would be read for ever: every input fleetsim reads by name (tables,
 * samples, profiles, a run folder's CSVs and chart scripts) is opened here, which checks
 * what the name is before anything waits on it. */
#ifndef FLEETSIM_SIM_PLAIN_FILE_H
#define FLEETSIM_SIM_PLAIN_FILE_H

#include <stdio.h>

/* path opened to read (mode "r" or "rb") when it is a plain file; else NULL with errno
 * set: EISDIR for a folder, ENODEV for a pipe, a socket or a device, or open's own. */
FILE *sim_open_plain(const char *path, const char *mode);

/* What errno (as sim_open_plain sets it) says of the file, for a message: "a folder,
 * not a file", "not a plain file (a pipe or a device)", or strerror's text. */
const char *sim_open_plain_why(int err);

#endif
