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

/* Creates a folder and its parents (like mkdir -p); 0, or -1 with a message.  For the
 * folder a user names (-o): links on its path are the user's and are followed. */
int output_make_dir(const char *path, char *err, size_t err_size);

/* Creates the folders of rel ("plots", "points/3") inside dir, each one a folder of its
 * own: a component that is a link (planted to send the charts or a point's files
 * elsewhere) or a file is refused, never followed; 0, or -1 with a message. */
int output_make_inside(const char *dir, const char *rel, char *err, size_t err_size);

/* 0 when dir/rel is absent or a folder; -1 with a message when it is a link or a file
 * (nothing a run writes or clears may go through it). */
int output_check_inside(const char *dir, const char *rel, char *err, size_t err_size);

#endif
