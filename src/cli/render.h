/* nvtxcorr-tool render (render.c). */
#ifndef NVTXCORR_CLI_RENDER_H
#define NVTXCORR_CLI_RENDER_H
int nvtxcorr_render(int argc, char **argv);
#endif
