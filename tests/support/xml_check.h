/* Test helpers for SVG and XHTML: a small XML well-formedness check (enough for what
 * gnuplot and fleetsim write: tags that nest and close, quoted attributes, known or
 * numeric entities, comments, declarations, CDATA), and counting. */
#ifndef FLEETSIM_TESTS_XML_CHECK_H
#define FLEETSIM_TESTS_XML_CHECK_H

#include <stddef.h>

/* NULL when text is well-formed with one root element; else why, in buf. */
const char *xml_check(const char *text, char *buf, size_t size);

/* Elements named name (start and empty-element tags). */
size_t xml_count_elements(const char *text, const char *name);

/* Occurrences of needle in text. */
size_t xml_count(const char *text, const char *needle);

#endif
