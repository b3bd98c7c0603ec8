/*
 * Runs tests/nvtx/steps.c, built in (nvtx_steps) or from its library
 * (nvtx_steps_via_lib). Usage: nvtx_steps [steps=5] [open|outer]: with
 * "open", a range is pushed at the end and never popped; with "outer", the
 * steps run inside a "run" range.
 */
#include <stdlib.h>
#include <string.h>

void run_steps(int steps);
void run_steps_inside(int steps);
void leave_open(void);

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 5;
    if (argc > 2 && strcmp(argv[2], "outer") == 0) {
        run_steps_inside(steps);
        return 0;
    }
    run_steps(steps);
    if (argc > 2)
        leave_open();
    return 0;
}
