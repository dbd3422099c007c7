/* `fleetsim check`: a scenario loaded with every check of run, printed as resolved. */
#include <stdio.h>

#include "lua/cli.h"
#include "lua/cli_options.h"
#include "models/scenario.h"
#include "output/scenario_text.h"

const char cli_check_usage[] =
    "usage: fleetsim check FILE.lua [--set KEY=VALUE]... [--seed N] [--replications N]\n"
    "                      [--unsafe]\n"
    "\n"
    "Loads the scenario with the same checks as run, prints every value as the run would\n"
    "use it (base units: seconds, per second), and runs nothing.\n";

int cli_check(int argc, char **argv)
{
    cli_options o;
    if (cli_options_parse(argc, argv, "check", &o) != 0) {
        cli_options_release(&o);
        return CLI_EXIT_BAD_INPUT;
    }
    scenario sc;
    int status = cli_options_load(&o, &sc) == 0 ? 0 : CLI_EXIT_BAD_INPUT;
    if (status == 0)
        output_scenario_text(stdout, &sc);
    scenario_release(&sc);
    cli_options_release(&o);
    return status;
}
