/* Text into HTML for report.html: escaping, inlining an SVG file, and reading back a
 * <meta> value from a page fleetsim wrote. */
#ifndef FLEETSIM_OUTPUT_HTML_TEXT_H
#define FLEETSIM_OUTPUT_HTML_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Writes text with & < > " ' escaped (safe in content and in quoted attributes). */
void html_escape(FILE *out, const char *text);

/* Copies the <svg> element of the file at path into out, prefixing every id it defines
 * and every reference to one (href="#x", url(#x)) with id_prefix, so that several
 * charts on one page keep their ids apart.  The XML declaration and DOCTYPE before
 * <svg are dropped.  0, or -1 when the file cannot be read or holds no <svg. */
int html_inline_svg(FILE *out, const char *path, const char *id_prefix);

/* The content of <meta name="NAME" content="..."> in page, unescaped, into buf; NULL
 * when absent. */
const char *html_meta_content(const char *page, const char *name, char *buf, size_t size);

/* The whole file (malloc'd, NUL-ended), or NULL. */
char *html_read_file(const char *path);

#endif
