/* `nvtxcorr doctor` (src/cli/doctor.c), called by nvtxcorr-tool with argv[0] = "doctor". */
#ifndef NVTXCORR_DOCTOR_H
#define NVTXCORR_DOCTOR_H

int nvtxcorr_doctor(int argc, char **argv);

#endif
