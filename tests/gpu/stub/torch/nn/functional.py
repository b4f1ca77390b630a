import torch
from torch import _driver as _d


def layer_norm(x, shape, weight=None, bias=None):
    return x._op(_d.NORM)


def gelu(x):
    return x._op(_d.GELU)
