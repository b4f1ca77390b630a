"""Label tables through the preloaded library: rules, colours and categories reach NVTX, bad
tables are reported and fall back to default labels while the program runs on."""
import os
import tempfile

from harness import KERNELS6, check, scenario


def run_with(env, table=None, inline=None, args=("direct",)):
    extra = {}
    with tempfile.TemporaryDirectory() as tmp:
        if table is not None:
            path = os.path.join(tmp, "labels.conf")
            with open(path, "wb") as f:
                f.write(table.encode() if isinstance(table, str) else table)
            extra["NVTXCORR_LABELS"] = path
        if inline is not None:
            extra["NVTXCORR_LABELS_INLINE"] = inline
        run = env.run_ok([env.prog("scn_driver"), *args], env=extra)
        run.table_path = extra.get("NVTXCORR_LABELS")
    return run


@scenario
def test_labels_rules(env):
    table = """# attention and friends
flash_*            attention.prefill   color=#FF0000 category=attention
re:^_Z4add         "elementwise {function}" category=elementwise
triton_poi_*       -
"""
    run = run_with(env, table)
    check(run.labels() == ["elementwise add1", "attention.prefill"] * 2,
          f"labels {run.labels()}")
    cats = run.categories()
    for p in run.pushes():
        want = "attention" if p["text"] == "attention.prefill" else "elementwise"
        check(cats.get(p.get("category")) == want, f"category of {p}: {cats}")
    attn = [p for p in run.pushes() if p["text"] == "attention.prefill"]
    check(all(p.get("color") == "0xFFFF0000" for p in attn), f"colour {attn}")
    check(run.count("cuLaunchKernelEx") == 1, "a skipped kernel must still launch")


@scenario
def test_labels_inline_first(env):
    run = run_with(env, "add1 from_file\n*flash* from_file_flash\n",
                   inline="add1 inline_add;triton* \"t:{mangled}\"")
    check(run.labels() == ["inline_add", "from_file_flash", "t:triton_poi_fused_add_0"] * 2,
          f"labels {run.labels()}")


@scenario
def test_labels_demangled_match(env):
    run = run_with(env, inline="*flash::flash_fwd_kernel<128>* \"{demangled}\"")
    check(run.labels()[1] == "void flash::flash_fwd_kernel<128>(Flash_fwd_params)",
          f"labels {run.labels()}")


@scenario
def test_labels_bad_table_falls_back(env):
    run = run_with(env, "add1 ok\nflash_* attention color=#12345\n[ broken\n")
    lines = [line for line in run.err.splitlines() if line.startswith("nvtxcorr: error:")]
    check(f"nvtxcorr: error: {run.table_path}:2: " in run.err, run.err)
    check(len(lines) >= 2, f"every error reported: {run.err}")
    check(run.labels() == KERNELS6, f"default labels expected: {run.labels()}")
    missing = run_with(env, None, inline=None)
    check(missing.labels() == KERNELS6, "no table")
    env_missing = env.run_ok([env.prog("scn_driver"), "direct"],
                             env={"NVTXCORR_LABELS": "/nonexistent/labels.conf"})
    check(env_missing.labels() == KERNELS6, "missing file")
    check("nvtxcorr: error: /nonexistent/labels.conf: cannot open" in env_missing.err,
          env_missing.err)
    inline_bad = run_with(env, inline="add1 ok;flash* x {nope}")
    check("nvtxcorr: error: NVTXCORR_LABELS_INLINE:2: " in inline_bad.err, inline_bad.err)
    check(inline_bad.labels() == KERNELS6, "bad inline rules must fall back")


@scenario
def test_labels_large_table(env):
    rules = "".join(f"_Z{len(f'kernel{i}')}kernel{i}Pf k{i}\n" for i in range(2000))
    run = run_with(env, rules, args=("many", "3000"))
    labels = run.labels()
    check(len(labels) == 6000, f"{len(labels)} ranges")
    check(labels[0] == "k0" and labels[3998] == "k1999" and labels[4000] == "kernel2000",
          f"labels {labels[:2]} {labels[3998:4002]}")
