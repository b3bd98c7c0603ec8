/*
 * Runs tests/nvtx/steps.c, built in (nvtx_steps) or from its library
 * (nvtx_steps_via_lib). Usage: nvtx_steps [steps=5] [open]: with "open", a
 * range is pushed at the end and never popped.
 */
#include <stdlib.h>

void run_steps(int steps);
void leave_open(void);

int main(int argc, char **argv)
{
    run_steps(argc > 1 ? atoi(argv[1]) : 5);
    if (argc > 2)
        leave_open();
    return 0;
}
