/* Files that appear whole or not at all: written under a temporary name in the target
 * folder, then renamed over the final name.  An interrupted or failed write leaves no
 * file under the final name (and removes the temporary one when it can). */
#ifndef FLEETSIM_OUTPUT_ATOMIC_FILE_H
#define FLEETSIM_OUTPUT_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct atomic_file atomic_file;

/* Opens a new "<dir>/.<name>.tmp-<pid>-<n>" for writing (created, never an existing
 * file or a link followed); NULL with a message in err on failure. */
atomic_file *atomic_file_open(const char *dir, const char *name, char *err, size_t err_size);

/* The stream to write to. */
FILE *atomic_file_stream(atomic_file *f);

/* Flushes, syncs, closes and renames to "<dir>/<name>"; frees f.  0, or -1 with a
 * message naming the file and the system's reason (the temporary file is removed). */
int atomic_file_commit(atomic_file *f, char *err, size_t err_size);

/* Closes and removes the temporary file; frees f.  NULL-safe. */
void atomic_file_abort(atomic_file *f);

/* Creates a folder and its parents (like mkdir -p); 0, or -1 with a message. */
int output_make_dir(const char *path, char *err, size_t err_size);

#endif
