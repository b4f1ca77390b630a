/* The GPUs (devices.c). */
#ifndef NVTXCORR_PROF_DEVICES_H
#define NVTXCORR_PROF_DEVICES_H

/* The GPUs' names, asked once (at the first site); the summary's "gpus". */
void nvtxcorr_prof_devices_ask(void);
const char *nvtxcorr_prof_devices_json(void);

#endif
