#include "output/pictures.h"

#include "output/plot_render.h"
#include "output/plots.h"
#include "output/report.h"

int output_pictures(const char *dir, const char *scenario_name, const char *description,
                    bool rewrite_scripts, bool png, const plot_limit *limits, size_t nlimits,
                    FILE *messages)
{
    char err[8192];
    plot_options o = { .rewrite_scripts = rewrite_scripts, .png = png, .gnuplot = NULL,
                       .limits = limits, .nlimits = nlimits };
    int plotted = output_plots(dir, &o, err, sizeof err);
    if (plotted != 0)
        fprintf(messages, "fleetsim: %s\n", err);
    if (output_report(dir, scenario_name, description, err, sizeof err) != 0) {
        fprintf(messages, "fleetsim: %s\n", err);
        return -1;
    }
    return plotted < 0 ? -1 : 0;
}

void output_pictures_warm(void) { plot_render_warm(NULL); }
void output_pictures_cool(void) { plot_render_cool(); }
