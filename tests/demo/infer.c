/* The built-in demo: an inference-shaped program on the fake driver. A prefill pass launches
 * the kernels a real LLM server launches (GEMMs, flash attention, norms, rotary embedding,
 * NCCL all-reduce, Triton and PyTorch elementwise kernels), then one decode step is captured
 * into a CUDA graph (with a memset node) and replayed, as vLLM does. No GPU is needed: kernels do
 * not compute. Like a framework, it says where it is with NVTX ranges (prefill, layers.N, attn,
 * mlp, sampler, serve/step): under `nvtxcorr stat` they are the program context of every
 * kernel, the decode graph's replayed ones included (docs/profile.md, Program context). */
#include <cuda.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>

static const char image[] =
    "FAKEIMAGE\n"
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas\n"
    "_ZN5flash16flash_fwd_kernelILi128EEEv16Flash_fwd_params\n"
    "_ZN5flash24flash_fwd_splitkv_kernelILi128EEEv16Flash_fwd_params\n"
    "_ZN4vllm15rms_norm_kernelIN3c104HalfEEEvPT_PKS3_S6_fii\n"
    "_ZN4vllm23rotary_embedding_kernelIN3c104HalfELb1EEEvPKlPT_S6_PKS5_iliiii\n"
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL\n"
    "triton_poi_fused_silu_mul_0\n"
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_"
    "T1_\n";

enum { GEMM, FLASH, SPLITKV, NORM, ROPE, ALLREDUCE, SILU, FILL, NKERNELS };
static const char *const names[NKERNELS] = {
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas",
    "_ZN5flash16flash_fwd_kernelILi128EEEv16Flash_fwd_params",
    "_ZN5flash24flash_fwd_splitkv_kernelILi128EEEv16Flash_fwd_params",
    "_ZN4vllm15rms_norm_kernelIN3c104HalfEEEvPT_PKS3_S6_fii",
    "_ZN4vllm23rotary_embedding_kernelIN3c104HalfELb1EEEvPKlPT_S6_PKS5_iliiii",
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
    "triton_poi_fused_silu_mul_0",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_"
    "T1_"};
static CUfunction k[NKERNELS];

static void launch(int which, CUstream s, unsigned grid)
{
    CUresult r = cuLaunchKernel(k[which], grid, 1, 1, 128, 1, 1, 0, s, NULL, NULL);
    if (r != CUDA_SUCCESS) fprintf(stderr, "launch failed: %d\n", r);
}

/* One transformer layer; `attention` is the prefill or the decode attention kernel. */
static void layer(CUstream s, int l, int attention, unsigned tokens)
{
    char name[16];
    snprintf(name, sizeof name, "layers.%d", l);
    nvtxRangePushA(name);
    nvtxRangePushA("attn");
    launch(NORM, s, tokens);
    launch(GEMM, s, tokens); /* qkv projection */
    launch(ROPE, s, tokens);
    launch(attention, s, tokens);
    launch(GEMM, s, tokens); /* output projection */
    launch(ALLREDUCE, s, 1);
    nvtxRangePop();
    nvtxRangePushA("mlp");
    launch(NORM, s, tokens);
    launch(GEMM, s, tokens); /* gate/up */
    launch(SILU, s, tokens);
    launch(GEMM, s, tokens); /* down */
    launch(ALLREDUCE, s, 1);
    nvtxRangePop();
    nvtxRangePop();
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUstream s;
    CUgraph g;
    CUgraphExec decode;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
        cuCtxSetCurrent(ctx) || cuModuleLoadData(&mod, image) || cuStreamCreate(&s, 0)) {
        fprintf(stderr, "demo: driver setup failed\n");
        return 1;
    }
    for (int i = 0; i < NKERNELS; i++)
        cuModuleGetFunction(&k[i], mod, names[i]);

    launch(FILL, s, 64); /* KV-cache init */
    nvtxRangePushA("prefill");
    for (int l = 0; l < 2; l++)
        layer(s, l, FLASH, 512); /* prefill of a 512-token prompt */
    nvtxRangePop();

    cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
    for (int l = 0; l < 2; l++)
        layer(s, l, SPLITKV, 8); /* one decode step, batch 8 */
    cuStreamEndCapture(s, &g);
    /* The sampler's buffer is cleared inside the graph too: a memset node. */
    CUdeviceptr logits;
    CUgraphNode clear;
    CUDA_MEMSET_NODE_PARAMS ms = {0};
    if (cuMemAlloc(&logits, 8 * 4096) == CUDA_SUCCESS) {
        ms.dst = logits, ms.elementSize = 1, ms.width = 8 * 4096, ms.height = 1;
        nvtxRangePushA("sampler");
        cuGraphAddMemsetNode(&clear, g, NULL, 0, &ms, ctx);
        nvtxRangePop();
    }
    cuGraphInstantiate(&decode, g, 0);
    for (int step = 0; step < 8; step++) {
        nvtxRangePushA("serve/step");
        cuGraphLaunch(decode, s);
        nvtxRangePop();
    }
    cuStreamSynchronize(s);
    printf("demo: prefill 23 kernels, decode graph of 22 kernels and a memset replayed 8 times\n");
    return 0;
}
