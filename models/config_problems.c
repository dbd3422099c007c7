/* Problems of a configuration (see config_problems.h). */
#include "models/config_problems.h"

#include <stdarg.h>
#include <stdio.h>

void config_problem(config_problems *p, const char *format, ...)
{
    if (p->n < CONFIG_PROBLEMS_MAX) {
        va_list ap;
        va_start(ap, format);
        vsnprintf(p->text[p->n], sizeof p->text[p->n], format, ap);
        va_end(ap);
    }
    p->n++;
}

void config_problems_join(const config_problems *p, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    unsigned kept = p->n < CONFIG_PROBLEMS_MAX ? p->n : CONFIG_PROBLEMS_MAX;
    for (unsigned i = 0; i < kept && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? "; " : "", p->text[i]);
        used += n > 0 ? (size_t)n : 0;
    }
    if (p->n > kept && used < size)
        snprintf(buf + used, size - used, "; and %u more", p->n - kept);
}
