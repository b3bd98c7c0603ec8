/*
 * /etc/ld.so.cache, read from the file as the dynamic linker reads it
 * (ld_cache.c).
 */
#ifndef CT_COLLECTOR_LIBRARIES_LD_CACHE_H
#define CT_COLLECTOR_LIBRARIES_LD_CACHE_H

/* The path the cache gives for `name` on this CPU, or NULL: chosen as ld.so
 * 2.36 chooses among the entries of that name, the glibc-hwcaps ones by
 * priority, else the first plain one this CPU can use. Valid until the next
 * lookup. */
const char *ct_ld_cache_lookup(const char *name);

#endif
