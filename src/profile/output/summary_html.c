/* The summary as one self-contained HTML page (NVTXCORR_PROFILE=run.html; docs/profile.md,
 * "HTML"): the report's page (src/python/nvtxcorr/html, embedded at build time as
 * html_template.h) around the JSON writer's output, so the page the library writes at exit
 * and `nvtxcorr report --html` draw the same data with the same script. The JSON goes inside a
 * <script> element: the writer escapes every '<' of its strings (prof_out_t's html) so no
 * name can close the element. Same constraints as the JSON writer: static data, no malloc,
 * may run in a signal handler. */
#include "html_template.h"
#include "profile/base/out.h"
#include "summary_writer.h"

static void begin(prof_out_t *o, const prof_summary_t *s)
{
    nvtxcorr_out_mem(o, nvtxcorr_html_head, sizeof nvtxcorr_html_head);
    o->html = 1;
    nvtxcorr_prof_json_writer.begin(o, s);
}

static void section(prof_out_t *o, const prof_summary_t *s, int sec, int end)
{
    nvtxcorr_prof_json_writer.section(o, s, sec, end);
}

static void record(prof_out_t *o, const prof_summary_t *s, int sec, const prof_row_t *r)
{
    nvtxcorr_prof_json_writer.record(o, s, sec, r);
}

static void contexts(prof_out_t *o, const prof_summary_t *s)
{
    nvtxcorr_prof_json_writer.contexts(o, s);
}

static void end(prof_out_t *o, const prof_summary_t *s)
{
    nvtxcorr_prof_json_writer.end(o, s);
    o->html = 0;
    nvtxcorr_out_mem(o, nvtxcorr_html_tail, sizeof nvtxcorr_html_tail);
}

const prof_writer_t nvtxcorr_prof_html_writer = {NULL, begin, section, record, end, contexts};
