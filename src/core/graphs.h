/* CUDA graphs (graphs.c): labels of graph execs, derived at instantiation, and the event of an
 * instantiation for whoever listens. */
#ifndef NVTXCORR_GRAPHS_H
#define NVTXCORR_GRAPHS_H
#include "cuda_abi.h"
#include "fork.h"
#include "map.h"
extern nvtxcorr_map_t nvtxcorr_graph_labels;             /* CUgraphExec -> record */
const void *nvtxcorr_graph_label_slow(const void *exec); /* nvtxcorr_label_slow_fn */
void nvtxcorr_graph_instantiated(CUgraphExec exec, CUgraph graph);
void nvtxcorr_graph_updated(CUgraphExec exec, CUgraph graph);
void nvtxcorr_graph_destroyed(CUgraphExec exec);
void nvtxcorr_graphs_fork(nvtxcorr_fork_t phase); /* the graph-label free list */

/* A graph exec was instantiated or updated: the text of its summary (as the graph mark's).
 * Profile mode registers a listener while it initialises (nvtxcorr_profile_init); the pointer
 * is atomic, NULL meaning nobody listens, and the event is then not even made: graphs.c never
 * calls up into src/profile/ for it. */
typedef void (*nvtxcorr_graph_event_fn)(const char *text);
void nvtxcorr_on_graph_event(nvtxcorr_graph_event_fn fn);

#endif
