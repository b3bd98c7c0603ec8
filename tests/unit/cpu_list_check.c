/*
 * Checks of the sysfs CPU-list reader the collector places itself with
 * (collector/cpu_placement.c): ranges, single CPUs and a trailing newline
 * give exactly the CPUs named, lists add to what the set held, and text that
 * is not a list (a letter, a range that runs backwards, an empty item, a
 * number past the set's size) is refused.
 */
#include <stdio.h>
#include <string.h>

#include "collector/cpu_placement.h"
#include "tests/unit/check.h"

/* The CPUs of `set` as a list, for comparing in one check. */
static const char *as_list(const cpu_set_t *set)
{
    static char text[512];
    size_t used = 0;
    text[0] = '\0';
    for (int cpu = 0; cpu < CPU_SETSIZE && used < sizeof text - 8; cpu++)
        if (CPU_ISSET(cpu, set))
            used += (size_t)snprintf(text + used, sizeof text - used, "%s%d", used ? "," : "", cpu);
    return text;
}

static void reads(const char *text, const char *want)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    int got = ct_cpulist_add(text, &set);
    ct_check(got == 0, "'%s' is read", text);
    const char *list = as_list(&set);
    ct_check(strcmp(list, want) == 0, "'%s' names %s, not %s", text, want, list);
}

static void refuses(const char *text)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    ct_check(ct_cpulist_add(text, &set) == -1, "'%s' is refused", text);
}

int main(void)
{
    reads("0-3,8,10-11\n", "0,1,2,3,8,10,11");
    reads("5", "5");
    reads("1023", "1023");
    reads("\n", "");
    reads("", "");
    reads("2-2,7\n", "2,7");
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(9, &set);
    ct_check(ct_cpulist_add("0-1", &set) == 0 && CPU_COUNT(&set) == 3 && CPU_ISSET(9, &set),
             "a list adds to the CPUs the set held");
    refuses("a");
    refuses("3-1");
    refuses("1,,2");
    refuses("1-");
    refuses("-1");
    refuses("4 5");
    refuses("1024");
    refuses("0-99999");
    return ct_check_finish();
}
