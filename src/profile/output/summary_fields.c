/* The field tables every summary format is generated from (summary_writer.h), and the CSV line both
 * the CSV writer and the context section use: below every writer, so that none calls another
 * back. */
#include "profile/base/out.h"
#include "summary_writer.h"
#define PROF_FIELD(id, key, kind) {key, PROF_KIND_##kind},
const prof_field_t nvtxcorr_prof_row_fields[PROF_ROW_N] = {PROF_ROW_FIELDS(PROF_FIELD)};
const prof_field_t nvtxcorr_prof_graph_fields[PROF_GRAPH_N] = {PROF_GRAPH_FIELDS(PROF_FIELD)};
const prof_field_t nvtxcorr_prof_total_fields[PROF_TOTAL_N] = {PROF_TOTAL_FIELDS(PROF_FIELD)};
#undef PROF_FIELD
#define PROF_SECTION_JSON(id, json, csv) json,
#define PROF_SECTION_CSV(id, json, csv) csv,
const char *const nvtxcorr_prof_section_json[PROF_SECTION_N] = {PROF_SECTIONS(PROF_SECTION_JSON)};
const char *const nvtxcorr_prof_section_csv[PROF_SECTION_N] = {PROF_SECTIONS(PROF_SECTION_CSV)};
#undef PROF_SECTION_JSON
#undef PROF_SECTION_CSV

void nvtxcorr_prof_csv_line(prof_out_t *o, const char *section, const char *const *text,
                            const uint64_t *v, uint32_t have)
{
    nvtxcorr_out_str(o, section);
    for (int i = 0; i < PROF_TEXT_N; i++) {
        nvtxcorr_out_str(o, ",");
        nvtxcorr_out_csv(o, text[i]);
    }
    for (int i = 0; i < PROF_ROW_N; i++) {
        if (PROF_KIND_IS_HIST(nvtxcorr_prof_row_fields[i].kind)) continue;
        nvtxcorr_out_str(o, ",");
        if ((have >> i) & 1) nvtxcorr_out_u64(o, v[i]);
    }
    nvtxcorr_out_str(o, "\n");
}
