/*
 * The preload and the audit module are built with hidden visibility, so
 * what they export is exactly what they mark here: the interposed API for
 * the preload (a test holds it to that list), the la_* entry points for the
 * audit module.
 */
#ifndef CT_PRELOAD_EXPORT_H
#define CT_PRELOAD_EXPORT_H

#define CT_EXPORT __attribute__((visibility("default")))

#endif
