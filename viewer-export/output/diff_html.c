/*
 * A diff as one self-contained html page (`diff --html FILE`), in the frame
 * every page of cudatrace shares (export/html_frame.h): the page embeds the
 * diff's cudatrace.diff/1 JSON, made by the function that prints `--json`,
 * so the two never disagree, and its script draws from it the headline
 * first, then per pair of processes each part that moved as a table of
 * before, after and change, the rows that moved beyond noise marked.
 */
#include "viewer-export/output/diff_output.h"

#include <stdlib.h>

#include "viewer-export/export/html_frame.h"

static const char style[] =
    "#diff-sides { font-family: ui-monospace, 'DejaVu Sans Mono', monospace; }\n"
    "p.headline { font-size: 16px; font-weight: 600; margin: 18px 0 4px; }\n"
    "section.pair { border-bottom: 1px solid #e5e7eb; padding-bottom: 20px; }\n"
    "p.note { color: #92400e; }\n"
    "tr.moved td { background: #fef3c7; }\n";

static const char header[] = "<p id=\"diff-sides\"></p>\n";

static const char main_element[] = "<main id=\"diff\"></main>\n";

static const char script[] =
    "  const diff = data('diff-data');\n"
    "  const NONE = 'not measured';\n"
    "\n"
    "  const value = (v, units) =>\n"
    "    (v === null ? NONE : units ? human(v, units) : +v.toPrecision(4));\n"
    "  // after - before, signed, and as a share of before where before is not 0.\n"
    "  const change = (n, units) => {\n"
    "    if (n.before === null || n.after === null) return '';\n"
    "    const d = n.after - n.before;\n"
    "    const pct = n.before ? Math.round((d / n.before) * 100) : null;\n"
    "    const share = pct === null ? '' : ' (' + (d < 0 ? '' : '+') + pct + '%)';\n"
    "    return (d < 0 ? '-' : '+') + value(Math.abs(d), units) + share;\n"
    "  };\n"
    "  const columns = (first) =>\n"
    "    [[first, 'path'], ['Before', 'num'], ['After', 'num'], ['Change', 'num']];\n"
    "  const numberRow = (what, n, units) => ({\n"
    "    cells: [what, value(n.before, units), value(n.after, units), change(n, units)],\n"
    "    cls: n.moved ? 'moved' : null,\n"
    "  });\n"
    "  const section = (parent, title, node) => {\n"
    "    add(parent, el('h3', null, title));\n"
    "    add(parent, node);\n"
    "  };\n"
    "\n"
    "  const who = (p) => (p.rank !== null ? 'rank ' + p.rank + ', ' : '') + 'pid ' + p.pid +\n"
    "    (p.host ? ' on ' + p.host : '');\n"
    "\n"
    "  const PARTS = {\n"
    "    gpu_busy_ns: 'GPU busy',\n"
    "    sync_ns: 'synchronising',\n"
    "    other_cuda_ns: 'other CUDA calls',\n"
    "    outside_cuda_ns: 'outside CUDA calls',\n"
    "    outside_running_ns: 'outside CUDA calls, running',\n"
    "    outside_waiting_ns: 'outside CUDA calls, waiting',\n"
    "  };\n"
    "  const stepTable = (s) => table('steps', columns('Step time'), [\n"
    "    numberRow('median step', s.median_ns, TIME), numberRow('p99 step', s.p99_ns, TIME),\n"
    "    ...Object.entries(s.parts).filter(([, n]) => n.moved)\n"
    "      .map(([key, n]) => numberRow(PARTS[key] || key, n, TIME)),\n"
    "  ]);\n"
    "\n"
    "  const itemName = (it) => it.name + (it.was ? ' (was ' + it.was + ')' : '') +\n"
    "    (it.only ? ' (' + it.only + ' only)' : '');\n"
    "  const itemTable = (className, first, count, items) => table(className,\n"
    "    [...columns(first), [count + ' before', 'num'], [count + ' after', 'num']],\n"
    "    items.map((it) => {\n"
    "      const row = numberRow(itemName(it), it.ns, TIME);\n"
    "      row.cells.push(value(it.count.before), value(it.count.after));\n"
    "      return row;\n"
    "    }));\n"
    "\n"
    "  const memoryTable = (m) => table('memory', columns('Device memory'), [\n"
    "    ['peak', m.peak_bytes], ['live at a step\\'s end', m.step_end_bytes],\n"
    "  ].filter(([, n]) => n.moved).map(([what, n]) => numberRow(what, n, BYTES)));\n"
    "\n"
    "  const findingTable = (f) => table('findings',\n"
    "    [['Change', 'short'], ['Finding', 'short'], ['Severity', 'short'],\n"
    "      ['Message', 'path']],\n"
    "    [['appeared', f.appeared], ['went away', f.went_away]].flatMap(([how, list]) =>\n"
    "      list.map((x) => ({\n"
    "        cells: [how, x.finding.id, x.finding.severity, x.finding.message +\n"
    "          (x.counted ? '' : ' (not counted: it judges how long the host took)')],\n"
    "      }))));\n"
    "\n"
    "  const environmentTable = (env) => table('environment',\n"
    "    [['What', 'short'], ['Name', 'path'], ['Before', 'path'], ['After', 'path'],\n"
    "      ['How', 'path']],\n"
    "    env.map((e) => ({ cells: [e.kind, e.name, e.before || NONE, e.after || NONE,\n"
    "      e.how] })));\n"
    "\n"
    "  // Each part of a pair's diff that moved, in the text's order.\n"
    "  const pairBody = (box, pair) => {\n"
    "    const per = pair.basis === 'step' ? 'per step' : 'per second';\n"
    "    if (pair.basis !== 'step') {\n"
    "      add(box, el('p', 'note', 'No steps on one side or both: the figures below are ' +\n"
    "        'per second of the CUDA part of the run.'));\n"
    "    }\n"
    "    if (!pair.changed) add(box, el('p', 'none', 'No significant change.'));\n"
    "    if (pair.environment.length) {\n"
    "      section(box, 'Environment', environmentTable(pair.environment));\n"
    "    }\n"
    "    if (pair.steps && pair.changed) section(box, 'Step time', stepTable(pair.steps));\n"
    "    if (pair.kernels.length) {\n"
    "      section(box, 'Kernels: GPU time ' + per,\n"
    "        itemTable('kernels', 'Kernel', 'Launches', pair.kernels));\n"
    "    }\n"
    "    if (pair.copies.moved) {\n"
    "      section(box, 'Copies and sets ' + per,\n"
    "        table('copies', columns('What'), [numberRow('copies and sets', pair.copies)]));\n"
    "    }\n"
    "    if (pair.calls.length) {\n"
    "      section(box, 'Host calls: time ' + per,\n"
    "        itemTable('calls', 'CUDA function', 'Calls', pair.calls));\n"
    "    }\n"
    "    if (pair.blocking_sites.length) {\n"
    "      section(box, 'Lines that held the host up: time ' + per,\n"
    "        itemTable('blocking-sites', 'Line', 'Calls', pair.blocking_sites));\n"
    "    }\n"
    "    if (pair.memory.peak_bytes.moved || pair.memory.step_end_bytes.moved) {\n"
    "      section(box, 'Memory', memoryTable(pair.memory));\n"
    "    }\n"
    "    const f = pair.findings;\n"
    "    if (f.appeared.length || f.went_away.length) {\n"
    "      section(box, 'Findings', findingTable(f));\n"
    "    }\n"
    "  };\n"
    "\n"
    "  const pairSection = (pair) => {\n"
    "    const box = el('section', 'pair');\n"
    "    add(box, el('h2', null, who(pair.before) + ' → ' + who(pair.after)));\n"
    "    if (diff.pairs.length > 1) add(box, el('p', 'pair-headline', pair.headline));\n"
    "    pairBody(box, pair);\n"
    "    return box;\n"
    "  };\n"
    "\n"
    "  const unpaired = (main, title, list) => {\n"
    "    if (!list.length) return;\n"
    "    add(main, el('h2', null, title));\n"
    "    add(main, table('unpaired', [['Process', 'short'], ['Trace', 'path']],\n"
    "      list.map((p) => ({ cells: [who(p), p.path] }))));\n"
    "  };\n"
    "\n"
    "  document.title = 'cudatrace diff: ' + diff.before.input + ' → ' + diff.after.input;\n"
    "  document.getElementById('diff-sides').textContent = 'before ' + diff.before.input +\n"
    "    ' (' + diff.before.processes + ' process(es)), after ' + diff.after.input + ' (' +\n"
    "    diff.after.processes + ' process(es))';\n"
    "  const main = document.getElementById('diff');\n"
    "  add(main, el('p', 'headline', diff.headline)).id = 'headline';\n"
    "  diff.pairs.forEach((pair) => add(main, pairSection(pair)));\n"
    "  unpaired(main, 'Processes only before', diff.only_before);\n"
    "  unpaired(main, 'Processes only after', diff.only_after);\n"
    "  drawn('Drawn from the diff by cudatrace diff --html.');\n";

int ct_diff_write_html(const char *path, const struct ct_diff *d,
                       const struct ct_diff_operands *what, char *error, size_t error_size)
{
    char *json;
    size_t size;
    FILE *memory = open_memstream(&json, &size);
    if (!memory)
        abort();
    ct_diff_print_json(memory, d, what);
    if (fclose(memory))
        abort();
    struct ct_export_output *out = ct_export_output_create(path, 0, error, error_size);
    if (out) {
        ct_html_frame_head(out, "cudatrace diff", style, header);
        ct_export_output_write(out, main_element, sizeof main_element - 1);
        ct_html_frame_embed_json(out, "diff-data", json, size);
        ct_html_frame_script(out, script);
    }
    free(json);
    return out ? ct_export_output_finish(out, error, error_size) : -1;
}
