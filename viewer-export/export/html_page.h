/*
 * The report page's own parts of what `cudatrace export --format html`
 * writes, inside the shared frame (html_frame.h).
 */
#ifndef CT_EXPORT_HTML_PAGE_H
#define CT_EXPORT_HTML_PAGE_H

/* Its style, after the frame's, and its header lines (the trace's file and
 * what it holds). */
extern const char ct_html_page_style[];
extern const char ct_html_page_header[];
/* The script that draws the page from the data (ct_html_frame_script). */
extern const char ct_html_page_script[];

#endif
