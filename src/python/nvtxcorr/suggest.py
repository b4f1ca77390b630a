"""--suggest: a starter label table, one rule per family of the kernels no rule matched."""
import re

from nvtxcorr.render import fmt_time, share, shown

# shipped tables (docs/labels/*.conf). "other" takes what is left.
FAMILIES = [
    ("communication", r"nccl|[Aa]ll[Rr]educe|all_reduce|allreduce|cross_device_reduce|"
     r"[Aa]ll[Gg]ather|all_gather|[Rr]educe[Ss]catter|reduce_scatter|[Aa]ll[Tt]o[Aa]ll|"
     r"all_to_all", "comm", "comm"),
    ("attention", r"flash|[Aa]ttention|attn|[Aa]ttn|fmha|sdpa|mha_|[Pp]refill[Ww]ith|"
     r"[Dd]ecode[Ww]ith", "attention", "attention"),
    ("Triton-generated", r"^triton_", "triton.{function}", "triton"),
    ("gemm", r"gemm|[Gg]emm|gemv|[Gg]emv|matmul|[Mm]at[Mm]ul|mul_mat|xmma|cutlass|cublas|nvjet|"
     r"[Mm]arlin", "matmul", "matmul"),
    ("norm", r"norm|[Nn]orm", "norm", "norm"),
    ("activation", r"silu|[Ss]ilu|gelu|[Gg]elu|relu|[Rr]elu|_glu|swiglu|act_and_mul",
     "activation", "elementwise"),
    ("elementwise", r"elementwise|[Ee]lementwise|pointwise|vectorized|unrolled|[Ff]ill|"
     r"copy|[Cc]opy|add|mul|bin_bcast|unary|scale|clamp", "elementwise", "elementwise"),
]


def classify(k):
    for fam in FAMILIES:
        if any(re.search(fam[1], k[n]) for n in ("function", "name")):
            return fam[0]
    return "other"


def suggest(summaries):
    # Kernels that got no rule: their label is the default, the base name. The pseudo-kernels
    # of graph copy and memset nodes ([memcpy], [memset]) are no kernel a rule could name.
    unruled = {}
    for _, d in summaries:
        for k in d["kernels"]:
            if k.get("label") == k["function"] and k.get("category") is None and \
                    not k["name"].startswith("["):
                e = unruled.setdefault(k["name"], dict(k, launches=0, cpu_ns=0))
                e["launches"] += k["launches"]
                e["cpu_ns"] += k["cpu_ns"]
    groups = {}
    for k in unruled.values():
        groups.setdefault(classify(k), []).append(k)
    total = sum(k["cpu_ns"] for k in unruled.values()) or 1
    out = ["# Starter label table from nvtxcorr report --suggest: one rule per family of",
           "# kernels that no rule matched, in the order a first match needs (the more",
           "# specific first), each with its share of the CPU time in launch calls. Check",
           "# with `nvtxcorr check FILE`, then edit labels and split families as you need."]
    for fam in FAMILIES + [("other", None, "{function}", "other")]:
        ks = sorted(groups.get(fam[0], []), key=lambda k: -k["cpu_ns"])
        if not ks:
            continue
        t = sum(k["cpu_ns"] for k in ks)
        funcs = list(dict.fromkeys(k["function"] for k in ks))
        names = ", ".join(funcs[:3]) + (", ..." if len(funcs) > 3 else "")
        out.append("")
        out.append(f"# {fam[0]}: {len(ks)} kernel(s), {sum(k['launches'] for k in ks)} launches, "
                   f"{fmt_time(t)} CPU ({share(t, total)}): {shown(names)}")
        pattern = f"re:{fam[1]}" if fam[1] else "*"
        out.append(f'{pattern}  "{fam[2]}"  category={fam[3]}')
    if not unruled:
        out.append("# (every kernel already matched a rule)")
    return "\n".join(out) + "\n"

