/*
 * Several threads loading and unloading CUDA libraries at once, each also
 * asking for one that is missing and reading dlerror(), for the test that
 * the loader view neither deadlocks nor loses its way when looks at the
 * link map overlap. Prints how many loads each name had; the same output
 * traced and untraced. Usage: dlopen_threads THREADS ROUNDS NAME...
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int rounds, name_count;
static char **names;
static int loaded[64];
static pthread_mutex_t counts = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    (void)arg;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < name_count; i++) {
            void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
            if (!lib) {
                dlerror();
                continue;
            }
            pthread_mutex_lock(&counts);
            loaded[i]++;
            pthread_mutex_unlock(&counts);
            dlclose(lib);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    int threads = atoi(argv[1]);
    rounds = atoi(argv[2]);
    names = argv + 3;
    name_count = argc - 3 < 64 ? argc - 3 : 64;
    pthread_t tid[64];
    for (int t = 0; t < threads && t < 64; t++)
        pthread_create(&tid[t], NULL, worker, NULL);
    for (int t = 0; t < threads && t < 64; t++)
        pthread_join(tid[t], NULL);
    for (int i = 0; i < name_count; i++)
        printf("dlopen_threads: %s loaded %d times\n", names[i], loaded[i]);
    return 0;
}
