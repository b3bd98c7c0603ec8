/*
 * What reading one Python stack from outside costs the collector
 * (collector/host_sampling/python_stacks.c): this program starts a Python
 * (PYTHON, /usr/bin/python3 unless given) spinning DEPTH frames deep, lets
 * it start, then reads its main thread's stack READS times, timing the reads
 * on its own CPU clock (the system calls included), after one read that
 * fills the code-object cache; past CT_PY_STACK_MAX frames only the
 * innermost are kept. Prints the CPU time per stack read and per
 * frame, and how many reads were dropped as changed under the read.
 * Usage: python_stack_cost DEPTH READS [PYTHON].
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collector/host_sampling/python_stacks.h"

static uint64_t thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static pid_t start_python(const char *python, int depth)
{
    char script[256];
    snprintf(script, sizeof script,
             "def f(n):\n    if n:\n        return f(n - 1)\n    while True:\n        pass\n"
             "f(%d)\n",
             depth - 2); /* the module's frame and the spinning one */
    pid_t pid = fork();
    if (pid == 0) {
        execl(python, python, "-c", script, (char *)NULL);
        _exit(127);
    }
    return pid;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return fprintf(stderr, "usage: python_stack_cost DEPTH READS [PYTHON]\n"), 2;
    int depth = atoi(argv[1]), reads = atoi(argv[2]);
    const char *python = argc > 3 ? argv[3] : "/usr/bin/python3";
    pid_t pid = start_python(python, depth);
    struct ct_py_stack stack;
    int ok = -1, kept = depth < CT_PY_STACK_MAX ? depth : CT_PY_STACK_MAX;
    usleep(300000); /* past its start-up, whose imports are stacks too */
    for (int tries = 0; tries < 50 && ok; tries++) { /* until it is up and deep enough */
        usleep(20000);
        ct_py_stacks_round(pid);
        ok = ct_py_stacks_read(pid, pid, &stack) || (int)stack.depth < kept;
    }
    struct ct_py_stacks_status before, after;
    ct_py_stacks_status(&before);
    uint64_t start = thread_cpu_ns();
    for (int i = 0; i < reads && !ok; i++)
        ct_py_stacks_read(pid, pid, &stack);
    double ns = (double)(thread_cpu_ns() - start);
    ct_py_stacks_status(&after);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    if (ok) {
        fprintf(stderr, "python_stack_cost: no stack of %d frames read from %s: %s\n", depth,
                python, *after.reason ? after.reason : "not seen");
        return 1;
    }
    printf("python_stack_cost: %.1f us per stack read of %u frames (%.2f us a frame), %llu "
           "reads, %llu dropped\n",
           ns / reads / 1000, stack.depth, ns / reads / 1000 / stack.depth,
           (unsigned long long)(after.stacks - before.stacks),
           (unsigned long long)(after.raced - before.raced));
    ct_py_stacks_free();
    return 0;
}
