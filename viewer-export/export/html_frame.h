/*
 * The frame every html page of cudatrace shares: `export --format html`'s
 * report page (html_page.c) and `diff --html`'s (output/diff_html.c).
 */
#ifndef CT_EXPORT_HTML_FRAME_H
#define CT_EXPORT_HTML_FRAME_H

#include <stddef.h>

#include "viewer-export/export/output.h"

/* Everything before the page's data: the head titled `title`, with the
 * shared style and then the page's own `style`; the header with `title`,
 * the page's own `header` lines and #render-status; the handler that turns
 * a script error into data-render="error". The page writes its <main> next. */
void ct_html_frame_head(struct ct_export_output *out, const char *title, const char *style,
                        const char *header);
/* `json` as <script type="application/json" id=ID>, every '<' written
 * \u003c so that nothing in it can close the element. */
void ct_html_frame_embed_json(struct ct_export_output *out, const char *id, const char *json,
                              size_t size);

/* The page's script, `script`, inside the function that draws the page,
 * after the helpers it draws with: data(id) (an embedded block, parsed),
 * el, add, human with the units TIME and BYTES, table, and drawn(how),
 * which sets #render-status to done; then the page's end. */
void ct_html_frame_script(struct ct_export_output *out, const char *script);

#endif
