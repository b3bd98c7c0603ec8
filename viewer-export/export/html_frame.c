/*
 * The parts every html page of cudatrace shares, all inline so a page works
 * offline and wherever it is copied; its Content-Security-Policy forbids it
 * any fetch besides. A page is its JSON data embedded in the file and a
 * script that builds the DOM from it with textContent only, so no string
 * from a trace is ever parsed as markup. #render-status says how the
 * drawing went: data-render="done" once all was drawn, "error" with the
 * message after a script error, so a headless browser's DOM dump tells a
 * sound page from a broken one. Embedded JSON has every '<' written as
 * \u003c, which JSON allows inside strings, the only place it can be: no
 * path or command line can close its <script> element.
 */
#include "viewer-export/export/html_frame.h"

#include <string.h>

static const char head_start[] =
    "<!DOCTYPE html>\n"
    "<html lang=\"en\">\n"
    "<head>\n"
    "<meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"Content-Security-Policy\"\n"
    " content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";

static const char shared_style[] =
    "body { margin: 0; color: #1f2937; background: #fff;\n"
    "  font: 14px/1.45 system-ui, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif; }\n"
    "header.page { background: #111827; color: #f9fafb; padding: 14px 32px; }\n"
    "header.page h1 { margin: 0; font-size: 20px; }\n"
    "header.page p { margin: 2px 0 0; color: #d1d5db; overflow-wrap: anywhere; }\n"
    "#render-status { font-size: 12px; color: #9ca3af; }\n"
    "#render-status[data-render=error] { color: #fecaca; font-weight: 600; }\n"
    "main { max-width: 1100px; margin: 0 auto; padding: 4px 32px 40px; }\n"
    "h2 { font-size: 18px; margin: 22px 0 6px; }\n"
    "h3 { font-size: 15px; margin: 22px 0 8px; }\n"
    "table { border-collapse: collapse; width: 100%; font-size: 13px; }\n"
    "th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #e5e7eb;\n"
    "  vertical-align: top; }\n"
    "th { background: #f9fafb; font-weight: 600; }\n"
    "th, .short, .num { white-space: nowrap; }\n"
    ".path { overflow-wrap: anywhere; }\n"
    ".num { text-align: right; font-variant-numeric: tabular-nums; }\n"
    ".none, .placeholder { color: #6b7280; font-style: italic; }\n";

static const char header_end[] =
    "<p id=\"render-status\" data-render=\"pending\">\n"
    "This page needs JavaScript to draw.</p>\n"
    "</header>\n"
    "<script>\n"
    "window.onerror = (message) => {\n"
    "  const status = document.getElementById('render-status');\n"
    "  status.dataset.render = 'error';\n"
    "  status.textContent = 'The page could not be drawn: ' + message;\n"
    "};\n"
    "</script>\n";

static const char script_start[] =
    "<script>\n"
    "'use strict';\n"
    "(() => {\n"
    "  const data = (id) => JSON.parse(document.getElementById(id).textContent);\n"
    "  const BYTES = [[1, 'B'], [1024, 'KiB'], [1048576, 'MiB'], [1073741824, 'GiB']];\n"
    "  const TIME = [[1, 'ns'], [1e3, 'us'], [1e6, 'ms'], [1e9, 's']];\n"
    "\n"
    "  const el = (tag, className, text) => {\n"
    "    const node = document.createElement(tag);\n"
    "    if (className) node.className = className;\n"
    "    if (text !== undefined && text !== null) node.textContent = String(text);\n"
    "    return node;\n"
    "  };\n"
    "  const add = (parent, child) => parent.appendChild(child);\n"
    "  const unitFor = (value, units) =>\n"
    "    units.filter((u) => u[0] <= value).pop() || units[0];\n"
    "  const human = (value, units) => {\n"
    "    const u = unitFor(value, units);\n"
    "    return +(value / u[0]).toPrecision(4) + ' ' + u[1];\n"
    "  };\n"
    "\n"
    "  // columns: [[header, class]]; rows: [{cells, flagged, cls}], where flagged (finding ids)\n"
    "  // fills the last column and cls, if given, is the row's class.\n"
    "  const table = (className, columns, rows) => {\n"
    "    const t = el('table', className);\n"
    "    const head = add(add(t, el('thead')), el('tr'));\n"
    "    columns.forEach(([name, cls]) => add(head, el('th', cls, name)));\n"
    "    const body = add(t, el('tbody'));\n"
    "    rows.forEach((r) => {\n"
    "      const tr = add(body,\n"
    "        el('tr', r.cls || (r.flagged && r.flagged.length ? 'flagged' : null)));\n"
    "      r.cells.forEach((c, i) => add(tr, el('td', columns[i][1], c)));\n"
    "      if (r.flagged) add(tr, el('td', 'named-by short', r.flagged.join(', ')));\n"
    "    });\n"
    "    return t;\n"
    "  };\n"
    "\n"
    "  const drawn = (how) => {\n"
    "    const status = document.getElementById('render-status');\n"
    "    status.dataset.render = 'done';\n"
    "    status.textContent = how;\n"
    "  };\n"
    "\n";

static const char script_end[] = "})();\n"
                                 "</script>\n"
                                 "</body>\n"
                                 "</html>\n";

static void write_text(struct ct_export_output *out, const char *text)
{
    ct_export_output_write(out, text, strlen(text));
}

void ct_html_frame_head(struct ct_export_output *out, const char *title, const char *style,
                        const char *header)
{
    write_text(out, head_start);
    write_text(out, "<title>");
    write_text(out, title);
    write_text(out, "</title>\n<style>\n");
    write_text(out, shared_style);
    write_text(out, style);
    write_text(out, "</style>\n</head>\n<body>\n<header class=\"page\">\n<h1>");
    write_text(out, title);
    write_text(out, "</h1>\n");
    write_text(out, header);
    write_text(out, header_end);
}

void ct_html_frame_embed_json(struct ct_export_output *out, const char *id, const char *json,
                              size_t size)
{
    write_text(out, "<script type=\"application/json\" id=\"");
    write_text(out, id);
    write_text(out, "\">\n");
    const char *from = json, *end = json + size;
    for (const char *lt; (lt = memchr(from, '<', (size_t)(end - from))); from = lt + 1) {
        ct_export_output_write(out, from, (size_t)(lt - from));
        write_text(out, "\\u003c");
    }
    ct_export_output_write(out, from, (size_t)(end - from));
    write_text(out, "</script>\n");
}

void ct_html_frame_script(struct ct_export_output *out, const char *script)
{
    write_text(out, script_start);
    write_text(out, script);
    write_text(out, script_end);
}
