/*
 * Fake CUDA runtime: graphs.  cudaGraphInstantiate and cudaGraphInstantiateWithFlags go to
 * cuGraphInstantiateWithFlags, cudaGraphInstantiateWithParams(_ptsz) to
 * cuGraphInstantiateWithParams(_ptsz), cudaGraphLaunch(_ptsz) to cuGraphLaunch(_ptsz) and
 * cudaGraphExecUpdate to cuGraphExecUpdate_v2, all through cuGetProcAddress pointers, so the
 * profiler sees graph work arrive at the driver the way the real runtime delivers it.
 */
#include "fake_cudart.h"

#include <string.h>

_Static_assert(sizeof(cudaGraphInstantiateParams) == sizeof(CUDA_GRAPH_INSTANTIATE_PARAMS),
               "instantiate parameter layouts differ");
_Static_assert(sizeof(cudaGraphExecUpdateResultInfo) == sizeof(CUgraphExecUpdateResultInfo),
               "update result layouts differ");

RT_API cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
    cudaError_t e = rt_init();
    return e != cudaSuccess ? e : RT_CALL(graphCreate, pGraph, flags);
}

RT_API cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    cudaError_t e = rt_init();
    return e != cudaSuccess ? e : RT_CALL(graphDestroy, graph);
}

RT_API cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                          const cudaGraphNode_t *pDependencies,
                                          size_t numDependencies,
                                          const struct cudaKernelNodeParams *pNodeParams)
{
    if (pNodeParams == NULL) return rt_ret(cudaErrorInvalidValue);
    CUfunction f;
    cudaError_t e = rt_init();
    if (e == cudaSuccess) e = rt_kernel_for(pNodeParams->func, &f);
    if (e != cudaSuccess) return e;
    CUDA_KERNEL_NODE_PARAMS p;
    memset(&p, 0, sizeof(p));
    p.func = f; /* the kernel handle, as for launches */
    p.gridDimX = pNodeParams->gridDim.x;
    p.gridDimY = pNodeParams->gridDim.y;
    p.gridDimZ = pNodeParams->gridDim.z;
    p.blockDimX = pNodeParams->blockDim.x;
    p.blockDimY = pNodeParams->blockDim.y;
    p.blockDimZ = pNodeParams->blockDim.z;
    p.sharedMemBytes = pNodeParams->sharedMemBytes;
    p.kernelParams = pNodeParams->kernelParams;
    p.extra = pNodeParams->extra;
    return RT_CALL(graphAddKernelNode, pGraphNode, graph, pDependencies, numDependencies, &p);
}

RT_API cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                        unsigned long long flags)
{
    cudaError_t e = rt_init();
    return e != cudaSuccess ? e : RT_CALL(graphInstantiateWithFlags, pGraphExec, graph, flags);
}

RT_API cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                 unsigned long long flags)
{
    cudaError_t e = rt_init();
    return e != cudaSuccess ? e : RT_CALL(graphInstantiateWithFlags, pGraphExec, graph, flags);
}

static cudaError_t rt_instantiate_params(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                         cudaGraphInstantiateParams *ip, int ptsz)
{
    if (ip == NULL) return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_init();
    if (e != cudaSuccess) return e;
    CUDA_GRAPH_INSTANTIATE_PARAMS p = {
        .flags = ip->flags,
        .hUploadStream = rt_stream(ip->uploadStream, ptsz),
    };
    e = ptsz ? RT_CALL(graphInstantiateWithParams_ptsz, pGraphExec, graph, &p)
             : RT_CALL(graphInstantiateWithParams, pGraphExec, graph, &p);
    ip->errNode_out = p.hErrNode_out;
    ip->result_out = (cudaGraphInstantiateResult)p.result_out; /* same values */
    return e;
}

RT_API cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                  cudaGraphInstantiateParams *instantiateParams)
{
    return rt_instantiate_params(pGraphExec, graph, instantiateParams, 0);
}

RT_API cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *pGraphExec,
                                                       cudaGraph_t graph,
                                                       cudaGraphInstantiateParams *params)
{
    return rt_instantiate_params(pGraphExec, graph, params, 1);
}

RT_API cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
    cudaError_t e = rt_init();
    return e != cudaSuccess ? e : RT_CALL(graphExecDestroy, graphExec);
}

RT_API cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                                       cudaGraphExecUpdateResultInfo *resultInfo)
{
    if (resultInfo == NULL) return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_init();
    if (e != cudaSuccess) return e;
    CUgraphExecUpdateResultInfo info;
    memset(&info, 0, sizeof(info));
    e = RT_CALL(graphExecUpdate, hGraphExec, hGraph, &info);
    resultInfo->result = (enum cudaGraphExecUpdateResult)info.result; /* same values */
    resultInfo->errorNode = info.errorNode;
    resultInfo->errorFromNode = info.errorFromNode;
    return e;
}

static cudaError_t rt_body_cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    cudaError_t e = rt_init();
    return e != cudaSuccess ? e : RT_CALL(graphLaunch, graphExec, rt_stream(stream, 0));
}

RT_API cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    return RT_FRAMED("cudaGraphLaunch", rt_body_cudaGraphLaunch(graphExec, stream));
}

static cudaError_t rt_body_cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    cudaError_t e = rt_init();
    return e != cudaSuccess ? e : RT_CALL(graphLaunch_ptsz, graphExec, rt_stream(stream, 1));
}

RT_API cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    return RT_FRAMED("cudaGraphLaunch_ptsz", rt_body_cudaGraphLaunch_ptsz(graphExec, stream));
}
