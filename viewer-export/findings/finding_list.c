/*
 * What finding_list.h declares, as the rest of the command asks for it: a
 * finding's id, family, severities and whether the diff counts it, the id
 * read back into the finding it names (the one place an id is compared as
 * text), the severities' names, and the lists of findings and thresholds
 * that `cudatrace report --help` prints.
 */
#include "viewer-export/findings/finding_list.h"

#include <string.h>

#define HELP_WIDTH 79
#define HELP_TEXT_COLUMN 29
/* The `other` of a finding whose severity never varies. */
#define CT_SEVERITY_NONE (-1)

static const struct {
    const char *id;
    enum ct_finding_family family;
    enum ct_severity severity;
    int other;
    int host_timing;
    const char *about;
} findings[CT_FINDING_COUNT] = {
#define FINDING(NAME, id, family, severity, other, host_timing, about)                             \
    [CT_FINDING_##NAME] = {id,                                                                     \
                           CT_FINDING_FAMILY_##family,                                             \
                           CT_SEVERITY_##severity,                                                 \
                           CT_SEVERITY_##other,                                                    \
                           host_timing,                                                            \
                           about},
    CT_FOR_EACH_FINDING(FINDING)
#undef FINDING
};

static const char *const family_names[CT_FINDING_FAMILIES] = {
#define FAMILY(NAME, text) [CT_FINDING_FAMILY_##NAME] = text,
    CT_FOR_EACH_FINDING_FAMILY(FAMILY)
#undef FAMILY
};

const char *ct_finding_name(enum ct_finding_id id)
{
    return findings[id].id;
}

int ct_finding_parse(const char *name)
{
    for (int id = 0; name && id < CT_FINDING_COUNT; id++)
        if (strcmp(name, findings[id].id) == 0)
            return id;
    return -1;
}

enum ct_finding_family ct_finding_family(enum ct_finding_id id)
{
    return findings[id].family;
}

enum ct_severity ct_finding_severity(enum ct_finding_id id)
{
    return findings[id].severity;
}

int ct_finding_may_be(enum ct_finding_id id, enum ct_severity severity)
{
    return severity == findings[id].severity || (int)severity == findings[id].other;
}

int ct_finding_host_timing(enum ct_finding_id id)
{
    return findings[id].host_timing;
}

const char *ct_severity_name(enum ct_severity severity)
{
    static const char *const names[] = {"error", "warning", "info"};
    return names[severity];
}

int ct_severity_parse(const char *name)
{
    for (int s = CT_SEVERITY_ERROR; s <= CT_SEVERITY_INFO; s++)
        if (name && strcmp(name, ct_severity_name(s)) == 0)
            return s;
    return -1;
}

/* `label` in the first columns, then `text` wrapped at word ends under the
 * text column, as the options are. */
static void help_item(FILE *out, const char *label, const char *text)
{
    int column = fprintf(out, "%s", label);
    if (column >= HELP_TEXT_COLUMN) {
        fputc('\n', out);
        column = 0;
    }
    fprintf(out, "%*s", HELP_TEXT_COLUMN - column, "");
    for (int used = HELP_TEXT_COLUMN; *text;) {
        int word = (int)strcspn(text, " ");
        if (used > HELP_TEXT_COLUMN && used + 1 + word > HELP_WIDTH) {
            fprintf(out, "\n%*s", HELP_TEXT_COLUMN, "");
            used = HELP_TEXT_COLUMN;
        } else if (used > HELP_TEXT_COLUMN) {
            fputc(' ', out);
            used++;
        }
        used += fprintf(out, "%.*s", word, text);
        text += word + (text[word] == ' ');
    }
    fputc('\n', out);
}

static void finding_help(FILE *out, enum ct_finding_id id)
{
    char label[64], text[512];
    snprintf(label, sizeof label, "    %s", findings[id].id);
    snprintf(text, sizeof text, "%s%s%s: %s", ct_severity_name(findings[id].severity),
             findings[id].other == CT_SEVERITY_NONE ? "" : " or ",
             findings[id].other == CT_SEVERITY_NONE ? "" : ct_severity_name(findings[id].other),
             findings[id].about);
    help_item(out, label, text);
}

static void threshold_help(FILE *out, const char *name, double value, enum ct_finding_id id,
                           const char *meaning)
{
    char label[64], text[512];
    snprintf(label, sizeof label, "  %s=%.15g", name, value);
    snprintf(text, sizeof text, "%s: %s", findings[id].id, meaning);
    help_item(out, label, text);
}

void ct_findings_help(FILE *out)
{
    fputs("\nfindings, by family (docs/findings.md#ID says how each is decided):\n", out);
    for (int family = 0; family < CT_FINDING_FAMILIES; family++) {
        fprintf(out, "  %s\n", family_names[family]);
        for (int id = 0; id < CT_FINDING_COUNT; id++)
            if ((int)findings[id].family == family)
                finding_help(out, (enum ct_finding_id)id);
    }
    fputs("\nthresholds (--threshold NAME=VALUE), at their defaults:\n", out);
#define THRESHOLD(name, finding, value, meaning)                                                   \
    threshold_help(out, #name, value, CT_FINDING_##finding, meaning);
    CT_FOR_EACH_THRESHOLD(THRESHOLD)
#undef THRESHOLD
}
