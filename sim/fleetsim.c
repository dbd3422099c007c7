/* The fleetsim command line.  Subcommands arrive with the issues that build them; this
 * file only dispatches. */
#include <stdio.h>
#include <string.h>

#include "kernels/cuda_probe.h"
#include "sim/version.h"

static const char usage[] =
    "usage: fleetsim <command> [options]\n"
    "\n"
    "commands:\n"
    "  version    print the version and what this build can use\n"
    "  help       print this message\n"
    "\n"
    "Exit status: 0 success, 1 run-time failure, 2 bad usage or input.\n";

static int cmd_version(void)
{
    char why[256] = "";
    printf("fleetsim %s\n", FLEETSIM_VERSION);
    if (!kernels_cuda_built()) {
        printf("cuda: not built\n");
        return 0;
    }
    int devices = kernels_cuda_device_count(why, sizeof why);
    printf("cuda: runtime %s, ", kernels_cuda_runtime_version());
    if (devices > 0)
        printf("%d device%s\n", devices, devices == 1 ? "" : "s");
    else
        printf("no device (%s)\n", why);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    const char *command = argv[1];
    if (!strcmp(command, "version") || !strcmp(command, "--version"))
        return cmd_version();
    if (!strcmp(command, "help") || !strcmp(command, "--help") || !strcmp(command, "-h")) {
        fputs(usage, stdout);
        return 0;
    }
    fprintf(stderr, "fleetsim: unknown command '%s'\n\n%s", command, usage);
    return 2;
}
