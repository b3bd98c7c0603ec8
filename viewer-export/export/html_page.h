/*
 * The fixed parts of the page `cudatrace export --format html` writes.
 */
#ifndef CT_EXPORT_HTML_PAGE_H
#define CT_EXPORT_HTML_PAGE_H

/* Everything before the data, ending with the empty <main> the script fills. */
extern const char ct_html_page_head[];
/* The script that draws the page from the data, and the page's end. */
extern const char ct_html_page_script[];

#endif
