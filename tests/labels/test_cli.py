#!/usr/bin/env python3
"""Drives `nvtxcorr-tool check` and `explain` as a user does: files, --inline, environment.

Checks exit codes, stdout, and every error line exactly as docs/labels.md specifies them.
Byte-level inputs (CRLF, NUL, bad UTF-8, binary data, long lines) are generated here into a
temporary directory; readable fixtures live next to this script (*.conf).
Usage: test_cli.py NVTXCORR_TOOL FIXTURE_DIR. Prints "N passed, N failed".
"""
import os
import resource
import subprocess
import sys
import tempfile

TOOL = os.path.abspath(sys.argv[1])
FIX = os.path.abspath(sys.argv[2])
passed = 0
failed = 0


def run(*args, env=None, cwd=None):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("NVTXCORR_")}
    full_env.update(env or {})
    p = subprocess.run([TOOL, *args], capture_output=True, env=full_env, cwd=cwd)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def expect(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}" + (f"\n{detail}" if detail else ""))


def expect_run(name, args, rc, stdout=None, stderr=None, env=None, cwd=None,
               stdout_has=(), stderr_has=()):
    got_rc, out, err = run(*args, env=env, cwd=cwd)
    detail = f"  rc={got_rc}\n  stdout:\n{out}  stderr:\n{err}"
    expect(f"{name}: exit {rc}", got_rc == rc, detail)
    if stdout is not None:
        expect(f"{name}: stdout", out == stdout, detail + f"  want stdout:\n{stdout}")
    if stderr is not None:
        expect(f"{name}: stderr", err == stderr, detail + f"  want stderr:\n{stderr}")
    for s in stdout_has:
        expect(f"{name}: stdout has {s!r}", s in out, detail)
    for s in stderr_has:
        expect(f"{name}: stderr has {s!r}", s in err, detail)
    return out, err


def errors(prefix, items):
    return "".join(f"nvtxcorr: error: {prefix}{item}\n" for item in items)


def test_check_fixtures():
    expect_run("good", ["check", "good.conf"], 0, stdout="good.conf: 13 rules OK\n", stderr="",
               cwd=FIX)

    expect_run("syntax errors", ["check", "errors_syntax.conf"], 1, stdout="", cwd=FIX,
               stderr=errors("errors_syntax.conf:", [
                   "2: syntax error: missing label",
                   "3: syntax error: unterminated quote",
                   "4: unknown option 'foo'",
                   "5: bad color '#12345': expected #RRGGBB",
                   "6: bad color 'red': expected #RRGGBB",
                   "7: bad category 'has/slash': expected 1 to 63 of A-Z a-z 0-9 _ . : -",
                   "8: syntax error: unexpected 'prefill' after label (quote labels that "
                   "contain spaces)",
                   "9: duplicate option 'color'",
                   "10: empty label",
                   "11: syntax error: unexpected '\"' inside a word (quote the whole pattern "
                   "or label)",
                   "12: syntax error: text after closing quote",
                   "13: syntax error: missing label",
               ]))

    # regerror's wording belongs to the C library: check our part exactly, theirs exists.
    rc, out, err = run("check", "errors_patterns.conf", cwd=FIX)
    lines = err.splitlines()
    expect("pattern errors: exit 1", rc == 1, err)
    expect("pattern errors: no stdout", out == "", out)
    p = "nvtxcorr: error: errors_patterns.conf:"
    want_prefix = [
        p + "2: bad regex 'flash(': ",
        p + "3: empty pattern",
        p + "4: empty pattern",
        p + "5: empty pattern",
        p + "6: empty pattern",
        p + "7: unknown graph key 'foo' (keys: ordinal, nodes, kernels, sig, top)",
        p + "8: unknown placeholder {nosuch}",
        p + "9: placeholder {top} is only for graph rules, not kernel rules",
        p + "10: placeholder {function} is only for kernel rules, not graph rules",
        p + "11: unterminated '{' in label (write {{ for a literal brace)",
        p + "12: bad regex '(a{100}){100}': repetition too large (limit 1000)",
        p + "13: bad regex '(a)\\1': back-references are not supported",
        p + "14: bad regex '[': ",
        p + "15: bad regex 'b?++': a quantifier cannot follow a quantifier",
    ]
    expect("pattern errors: count", len(lines) == len(want_prefix), err)
    for i, want in enumerate(want_prefix):
        got = lines[i] if i < len(lines) else ""
        if want.endswith(": "):
            ok = got.startswith(want) and len(got) > len(want)
        else:
            ok = got == want
        expect(f"pattern errors: line {i + 1}", ok, f"  got:  {got}\n  want: {want}")

    expect_run("comments only", ["check", "comments_only.conf"], 1, stdout="", cwd=FIX,
               stderr="nvtxcorr: error: comments_only.conf: no rules\n")
    expect_run("empty", ["check", "empty.conf"], 1, stdout="", cwd=FIX,
               stderr="nvtxcorr: error: empty.conf: no rules\n")


def test_check_files(tmp):
    def write(name, data):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        return name

    expect_run("missing file", ["check", "no-such.conf"], 1, stdout="", cwd=tmp,
               stderr="nvtxcorr: error: no-such.conf: cannot open: No such file or directory\n")
    os.mkdir(os.path.join(tmp, "adir"))
    expect_run("directory", ["check", "adir"], 1, stdout="", cwd=tmp,
               stderr="nvtxcorr: error: adir: cannot open: Is a directory\n")
    expect_run("device", ["check", "/dev/null"], 1, stdout="",
               stderr="nvtxcorr: error: /dev/null: not a regular file\n")
    if os.geteuid() != 0:  # root reads anything
        write("noperm.conf", b"a b\n")
        os.chmod(os.path.join(tmp, "noperm.conf"), 0)
        expect_run("unreadable", ["check", "noperm.conf"], 1, stdout="", cwd=tmp,
                   stderr="nvtxcorr: error: noperm.conf: cannot open: Permission denied\n")

    write("crlf.conf", b"# crlf\r\nflash_fwd* \"attn\" color=#010203\r\n\r\nnccl* comm\r\n")
    expect_run("crlf", ["check", "crlf.conf"], 0, stdout="crlf.conf: 2 rules OK\n", stderr="",
               cwd=tmp)
    expect_run("crlf explain", ["explain", "crlf.conf", "nccl_x"], 0, cwd=tmp,
               stdout_has=["  rule:       crlf.conf:4: nccl* comm\n", "  label:      comm\n"])

    write("binary.conf", b"a b\n" + bytes(range(256)) * 4)
    expect_run("binary", ["check", "binary.conf"], 1, stdout="", cwd=tmp,
               stderr="nvtxcorr: error: binary.conf: binary file\n")

    # A NUL after the first 4 KiB is reported on its line.
    body = b"# padding\n" * 500 + b"a\0b x\n" + b"c d\n"
    write("nul.conf", body)
    expect_run("nul", ["check", "nul.conf"], 1, stdout="", cwd=tmp,
               stderr="nvtxcorr: error: nul.conf:501: NUL byte in line\n")

    write("utf8.conf", "\n".join([
        "ok \"caf\u00e9 \u2603 \U0001F600\"",          # valid: 2, 3, 4-byte sequences
    ]).encode() + b"\n"
        + b"a \xc0\x80\n"          # overlong NUL
        + b"a \xed\xa0\x80\n"      # UTF-16 surrogate
        + b"a \xf4\x90\x80\x80\n"  # above U+10FFFF
        + b"ab \xe2\x98\n"         # truncated sequence
        + b"a \xff\n"              # never valid
        + b"a b \x80\n")           # stray continuation byte
    expect_run("utf8", ["check", "utf8.conf"], 1, stdout="", cwd=tmp,
               stderr=errors("utf8.conf:", [
                   "2: invalid UTF-8 at byte 3",
                   "3: invalid UTF-8 at byte 3",
                   "4: invalid UTF-8 at byte 3",
                   "5: invalid UTF-8 at byte 4",
                   "6: invalid UTF-8 at byte 3",
                   "7: invalid UTF-8 at byte 5",
               ]))

    write("long.conf", b"a b\n" + b"x" * 4097 + b" y\n")
    expect_run("long line", ["check", "long.conf"], 1, stdout="", cwd=tmp,
               stderr="nvtxcorr: error: long.conf:2: line longer than 4096 bytes\n")
    write("long_ok.conf", b"c " + b"d" * 254 + b" category=x\n" + b"#" * 4096 + b"\n")
    expect_run("long line at the limit", ["check", "long_ok.conf"], 0, cwd=tmp,
               stdout="long_ok.conf: 1 rules OK\n")
    write("long_label.conf", b"c " + b"d" * 256 + b"\nc \"{mangled}" + b"e" * 246 + b"\"\n")
    expect_run("long label", ["check", "long_label.conf"], 1, stdout="", cwd=tmp,
               stderr="nvtxcorr: error: long_label.conf:1: label longer than 255 bytes\n")

    write("many.conf", b"".join(b"bad%d\n" % i for i in range(27)))
    expect_run("error cap", ["check", "many.conf"], 1, stdout="", cwd=tmp,
               stderr=errors("many.conf", [f":{i}: syntax error: missing label"
                                           for i in range(1, 21)]
                             + [": too many errors, 7 more not shown"]))

    # 2,000 generated rules: every one loads, and explain finds the right line.
    lines = []
    for i in range(2000):
        kind = i % 4
        if kind == 0:
            lines.append(f"kernel_{i}_exact \"label {i}\" category=c{i % 7}")
        elif kind == 1:
            lines.append(f"*glob_{i}_* g{i} color=#{i:06x}")
        elif kind == 2:
            lines.append(f"re:^regex_{i}$ r{i}")
        else:
            lines.append(f"graph:kernels={i} graph{i}")
    write("big.conf", ("\n".join(lines) + "\n").encode())
    expect_run("2000 rules", ["check", "big.conf"], 0, stdout="big.conf: 2000 rules OK\n",
               stderr="", cwd=tmp)
    out, _ = expect_run("2000 rules explain",
                        ["explain", "big.conf", "kernel_1996_exact", "x_glob_1001_y",
                         "regex_1998", "regex_19980", "graph:graph#1 kernels=1999"], 0, cwd=tmp,
                        stdout_has=["  label:      label 1996\n", "  category:   c1\n",
                                    "  rule:       big.conf:1002: *glob_1001_* g1001 "
                                    "color=#0003e9\n",
                                    "  color:      #0003E9\n",
                                    "  label:      r1998\n", "  label:      regex_19980\n",
                                    "  label:      graph1999\n"])


def test_inline():
    expect_run("inline ok", ["check", "--inline", "flash* attn; ;graph:top=x \"a;b\""], 0,
               stdout="NVTXCORR_LABELS_INLINE: 2 rules OK\n", stderr="")
    expect_run("inline errors", ["check", "--inline", "ok x;bad;;a b c;re:( x"], 1, stdout="",
               stderr_has=[
                   "nvtxcorr: error: NVTXCORR_LABELS_INLINE:2: syntax error: missing label\n",
                   "nvtxcorr: error: NVTXCORR_LABELS_INLINE:4: syntax error: unexpected 'c' "
                   "after label (quote labels that contain spaces)\n",
                   "nvtxcorr: error: NVTXCORR_LABELS_INLINE:5: bad regex '(': ",
               ])
    expect_run("inline no rules", ["check", "--inline", "# nothing ; ;"], 1, stdout="",
               stderr="nvtxcorr: error: NVTXCORR_LABELS_INLINE: no rules\n")
    expect_run("inline empty", ["check", "--inline="], 1, stdout="",
               stderr="nvtxcorr: error: NVTXCORR_LABELS_INLINE: no rules\n")
    # A comment runs to the end of its rule, quotes in it included.
    expect_run("inline comment", ["check", "--inline", "a b # it's \"odd; c d"], 0,
               stdout="NVTXCORR_LABELS_INLINE: 2 rules OK\n")

    # Inline rules and a file together: both checked, each counted; inline is tried first.
    expect_run("inline and file", ["check", "--inline", "flash* inl", "good.conf"], 0, cwd=FIX,
               stdout="NVTXCORR_LABELS_INLINE: 1 rules OK\ngood.conf: 13 rules OK\n")
    expect_run("inline first", ["explain", "--inline", "x y; flash_fwd_* \"inline {function}\"",
                                "good.conf", "flash_fwd_kernel", "nccl_none"], 0, cwd=FIX,
               stdout_has=["  rule:       NVTXCORR_LABELS_INLINE:2: flash_fwd_* "
                           "\"inline {function}\"\n",
                           "  label:      inline flash_fwd_kernel\n",
                           "  label:      nccl_none\n"])
    expect_run("inline only explain", ["explain", "--inline", "a* A", "-", "abc"], 0,
               stdout_has=["  label:      A\n"])
    # Errors in both: all are reported, inline first.
    expect_run("errors in both", ["check", "--inline", "bad", "errors_syntax.conf"], 1, cwd=FIX,
               stderr_has=["nvtxcorr: error: NVTXCORR_LABELS_INLINE:1: syntax error: missing "
                           "label\n",
                           "nvtxcorr: error: errors_syntax.conf:13: syntax error: missing "
                           "label\n"])


def test_env():
    expect_run("env file", ["check"], 0, cwd=FIX, env={"NVTXCORR_LABELS": "good.conf"},
               stdout="good.conf: 13 rules OK\n")
    expect_run("env inline", ["check"], 0, env={"NVTXCORR_LABELS_INLINE": "a b;c d"},
               stdout="NVTXCORR_LABELS_INLINE: 2 rules OK\n")
    expect_run("env bad", ["check"], 1, cwd=FIX, env={"NVTXCORR_LABELS": "empty.conf"},
               stderr="nvtxcorr: error: empty.conf: no rules\n")
    expect_run("env none", ["check"], 2, stdout="", stderr_has=["nothing to check"])


def test_explain():
    out, _ = expect_run("explain kernels", [
        "explain", "good.conf",
        "_ZN5flash16flash_fwd_kernelILi128EEEv16Flash_fwd_params",
        "flash_fwd_splitkv_kernel",
        "_ZN7cutlass7Kernel2I50cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4EEv6Params",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
        "triton_poi_fused_add_0",
        "memcpy_kernel",
        "_Z4add1Pii",
    ], 0, cwd=FIX)
    want = """\
_ZN5flash16flash_fwd_kernelILi128EEEv16Flash_fwd_params
  mangled:    _ZN5flash16flash_fwd_kernelILi128EEEv16Flash_fwd_params
  demangled:  void flash::flash_fwd_kernel<128>(Flash_fwd_params)
  function:   flash_fwd_kernel
  rule:       good.conf:5: flash_fwd_*                attention.prefill    category=attention color=#F58518
  label:      attention.prefill
  color:      #F58518
  category:   attention

flash_fwd_splitkv_kernel
  mangled:    flash_fwd_splitkv_kernel
  demangled:  flash_fwd_splitkv_kernel
  function:   flash_fwd_splitkv_kernel
  rule:       good.conf:4: flash_fwd_splitkv_kernel   "attention.decode"   category=attention color=#E45756
  label:      attention.decode
  color:      #E45756
  category:   attention

_ZN7cutlass7Kernel2I50cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4EEv6Params
  mangled:    _ZN7cutlass7Kernel2I50cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4EEv6Params
  demangled:  void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>(Params)
  function:   Kernel2
  rule:       good.conf:6: *cutlass::Kernel2<*        "gemm {function}"    category=matmul
  label:      gemm Kernel2
  color:      none
  category:   matmul

ncclDevKernel_AllReduce_Sum_f32_RING_LL
  mangled:    ncclDevKernel_AllReduce_Sum_f32_RING_LL
  demangled:  ncclDevKernel_AllReduce_Sum_f32_RING_LL
  function:   ncclDevKernel_AllReduce_Sum_f32_RING_LL
  rule:       good.conf:10: re:^ncclDevKernel_(AllReduce|ReduceScatter)_    "nccl {function}"   category=comm
  label:      nccl ncclDevKernel_AllReduce_Sum_f32_RING_LL
  color:      none
  category:   comm

triton_poi_fused_add_0
  mangled:    triton_poi_fused_add_0
  demangled:  triton_poi_fused_add_0
  function:   triton_poi_fused_add_0
  rule:       good.conf:11: re:^triton_(poi|red|per)_                       "triton {function}" category=triton
  label:      triton triton_poi_fused_add_0
  color:      none
  category:   triton

memcpy_kernel
  mangled:    memcpy_kernel
  demangled:  memcpy_kernel
  function:   memcpy_kernel
  rule:       good.conf:14: memcpy*   -
  label:      skip (no range)
  color:      none
  category:   none

_Z4add1Pii
  mangled:    _Z4add1Pii
  demangled:  add1(int*, int)
  function:   add1
  rule:       no rule (default label)
  label:      add1
  color:      none
  category:   none
"""
    expect("explain kernels: exact output", out == want, f"got:\n{out}\nwant:\n{want}")

    graphs = [
        ("graph:graph#5 nodes=40 kernels=36 sig=9f2c01ab top=gemm_x", "good.conf:17:",
         "decode bs=8"),
        ("graph:graph#6 nodes=40 kernels=36 sig=00000001 top=flash_fwd_splitkv_kernel",
         "good.conf:18:", "decode 36k"),
        ("graph:graph#7 nodes=420 kernels=412 sig=00000002 top=x", "good.conf:19:",
         "decode 412"),
        ("graph:graph#1", "good.conf:20:", "warmup graph"),
        ("graph:graph#8 nodes=150 kernels=3 sig=00000003 top=x", "good.conf:21:",
         "mid-size graph graph#8"),
        ("graph:graph#9 nodes=50 kernels=3 sig=00000003 top=gemm_a", "good.conf:22:",
         "gemm graph 9"),
        ("graph:graph#10 nodes=5 kernels=3 sig=00000004 top=y", "no rule (default label)",
         "graph#10 (3 kernels)"),
    ]
    for arg, rule, label in graphs:
        expect_run(f"explain {arg}", ["explain", "good.conf", arg], 0, cwd=FIX,
                   stdout_has=[f"  rule:       {rule}", f"  label:      {label}\n"])
    expect_run("explain graph descriptor", ["explain", "good.conf", "graph:graph#2 kernels=4"],
               0, cwd=FIX, stdout_has=["  graph:      graph#2\n",
                                       "  descriptor: graph#2 nodes=0 kernels=4 sig= top=\n"])
    expect_run("explain bad graph", ["explain", "good.conf", "graph:graph#x"], 2, cwd=FIX,
               stderr_has=["cannot parse 'graph:graph#x'"])
    # A demangled name typed by hand is matched as given, its base name worked out.
    expect_run("explain demangled", ["explain", "good.conf",
                                     "void at::native::reduce_kernel<512, 1>(int)"], 0,
               cwd=FIX, stdout_has=["  function:   reduce_kernel\n"])
    expect_run("explain bad table", ["explain", "errors_syntax.conf", "x"], 1, cwd=FIX,
               stdout="", stderr_has=["errors_syntax.conf:2: syntax error: missing label\n"])


def test_usage():
    expect_run("no args", [], 2, stdout="", stderr_has=["nvtxcorr check", "nvtxcorr explain"])
    expect_run("help", ["--help"], 0, stderr="",
               stdout_has=["usage: nvtxcorr check", "nvtxcorr explain"])
    expect_run("unknown command", ["frob"], 2, stderr_has=["unknown command"])
    expect_run("unknown option", ["check", "--frob", "x"], 2, stderr_has=["unknown option"])
    expect_run("check two missing files", ["check", "a", "b"], 1, stdout="",
               stderr="nvtxcorr: error: a: cannot open: No such file or directory\n"
                      "nvtxcorr: error: b: cannot open: No such file or directory\n")
    expect_run("check several files", ["check", "good.conf", "empty.conf", "good.conf"], 1,
               cwd=FIX, stdout="good.conf: 13 rules OK\ngood.conf: 13 rules OK\n",
               stderr="nvtxcorr: error: empty.conf: no rules\n")
    for command in ("check", "explain", "doctor"):
        expect_run(f"{command} --help", [command, "--help"], 0, stderr="",
                   stdout_has=["usage: nvtxcorr check"])
    expect_run("explain no names", ["explain", "good.conf"], 2, cwd=FIX, stderr_has=["usage:"])
    expect_run("explain - without inline", ["explain", "-", "x"], 2, stderr_has=["usage:"])
    expect_run("inline without rules", ["check", "--inline"], 2, stderr_has=["usage:"])


def limited(args, cwd):
    """Runs the tool under a 2 GiB address-space and 60 s CPU limit, as the budgets promise to
    fit well inside: without them glibc's regcomp aborted (heap corruption) under such a limit.
    An ASan build of the tool gets the CPU limit only."""
    with open(TOOL, "rb") as f:
        asan = b"__asan_init" in f.read()  # its shadow memory needs terabytes of address space

    def limits():
        if not asan:
            resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        resource.setrlimit(resource.RLIMIT_CPU, (60, 60))
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("NVTXCORR_")}
    p = subprocess.run([TOOL, *args], capture_output=True, env=full_env, cwd=cwd,
                       preexec_fn=limits)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def test_regex_budgets(tmp):
    """docs/labels.md, Cost: the regexes of one table share a budget; each regex near the
    weight limit costs ~1,000,000 of 4,000,000, so the fifth one is refused."""
    budget = ("regex budget exceeded: the table's regexes cost more than 4000000 "
              "(this one 986177, the ones before it 3944708; see docs/labels.md, Cost)")
    for n in (1000, 10000):
        name = f"near{n}.conf"
        with open(os.path.join(tmp, name), "w") as f:
            f.writelines(f"re:k{i}_[a-z]{{990}} lab{i}\n" for i in range(n))
        rc, out, err = limited(["check", name], tmp)
        detail = f"  rc={rc}\n  stdout:\n{out}  stderr:\n{err[:2000]}"
        expect(f"{n} near-limit regexes: exit 1", rc == 1, detail)
        expect(f"{n} near-limit regexes: one error, at the fifth rule",
               err == f"nvtxcorr: error: {name}:5: {budget}\n", detail)
        expect(f"{n} near-limit regexes: no stdout", out == "", detail)

    # Within budget: 1000 regexes of a realistic size (weight 32), and four at the limit.
    with open(os.path.join(tmp, "realistic.conf"), "w") as f:
        f.writelines(f"re:^ncclDevKernel_AllReduce_.*_f{i}_ lab{i}\n" for i in range(1000))
    rc, out, err = limited(["check", "realistic.conf"], tmp)
    expect("1000 realistic regexes load", rc == 0 and out == "realistic.conf: 1000 rules OK\n",
           f"  rc={rc}\n{out}{err[:2000]}")
    with open(os.path.join(tmp, "four.conf"), "w") as f:
        f.writelines(f"re:k{i}_[a-z]{{990}} lab{i}\n" for i in range(4))
    expect_run("four near-limit regexes load", ["check", "four.conf"], 0, cwd=tmp,
               stdout="four.conf: 4 rules OK\n", stderr="")

    # The work of matching one name is bounded too, not only the compiled size: four regexes
    # with long literals that must fail after many optional atoms (3.4 s of glibc regexec
    # each on a name holding the literal) fit the budgets above but not this one. The first
    # is refused on its own; smaller ones add up until one is over.
    with open(os.path.join(tmp, "slow.conf"), "w") as f:
        f.writelines(f"re:flash_attention_forward_kernel_(.?){{950}}Z lab{i}\n" for i in range(4))
    expect_run("slow regexes refused", ["check", "slow.conf"], 1, cwd=tmp, stdout="",
               stderr="nvtxcorr: error: slow.conf:1: regex budget exceeded: matching one kernel "
               "name against every kernel regex could cost more than 8000000 (this one "
               "'flash_attention_forward_kernel_(.?){950}Z' 917072124, the ones before it 0; "
               "see docs/labels.md, Cost)\n")
    with open(os.path.join(tmp, "adds.conf"), "w") as f:
        f.writelines(f"re:k{i}_(.?){{150}}Z lab{i}\n" for i in range(4))
    expect_run("slow regexes add up", ["check", "adds.conf"], 1, cwd=tmp, stdout="",
               stderr="nvtxcorr: error: adds.conf:3: regex budget exceeded: matching one kernel "
               "name against every kernel regex could cost more than 8000000 (this one "
               "'k2_(.?){150}Z' 3581116, the ones before it 7162232; see docs/labels.md, "
               "Cost)\n")
    # Graph regexes have a budget of their own: a graph never meets a kernel regex.
    expect_run("graph regexes apart", ["check", "--inline", "re:k0_(.?){150}Z a; "
               "re:k1_(.?){150}Z b; graph:re:g0_(.?){150}Z c; graph:re:g1_(.?){150}Z d"], 0,
               stdout="NVTXCORR_LABELS_INLINE: 4 rules OK\n", stderr="")
    # Optional atoms in every form count: `?`, `*`, a bound from 0, an empty branch.
    for shape in ("(.*){200}", "(.{0,1}){200}", "(.|){200}", "(|.){200}", "(a?b?){100}"):
        expect_run(f"optional shape {shape}", ["check", "--inline", f"re:kx_{shape}Z a"], 1,
                   stdout="", stderr_has=["matching one kernel name against every kernel regex"])

    # Regexes without a 3-byte literal are tried on every name: a smaller budget.
    with open(os.path.join(tmp, "scanned.conf"), "w") as f:
        f.writelines(f"re:[ab]{i % 7}x lab{i}\n" for i in range(1000))
    expect_run("scanned regexes", ["check", "scanned.conf"], 1, cwd=tmp, stdout="",
               stderr="nvtxcorr: error: scanned.conf:365: regex budget exceeded: regexes "
               "tried on every name (graph regexes and those without a 3-byte literal) cost "
               "more than 50000 (this one 137, the ones before it 49868; see docs/labels.md, "
               "Cost)\n")
    # Inline rules and the file share the budget; the error names the rule where it ran out.
    expect_run("budget shared with inline rules",
               ["check", "--inline", "re:aaa_[a-z]{990} x; re:bbb_[a-z]{990} y", "four.conf"], 1,
               cwd=tmp, stdout="",
               stderr_has=["nvtxcorr: error: four.conf:3: regex budget exceeded"])
    # Regexes see at most the first 4096 bytes of a name.
    long_name = "a" * 5000 + "z"
    out, _ = expect_run("regex name bound", ["explain", "--inline", "re:z$ tail; re:^a head", "-",
                                             long_name], 0, cwd=tmp)
    expect("regex name bound: label", "  label:      head\n" in out, out[-400:])


def test_control_bytes(tmp):
    """Control bytes in names, rules, labels and paths are shown as \\xNN, never raw."""
    name = "_Z6ev\x1bil\x7fPf"  # demangles to ev<ESC>il<DEL>(float*)
    out, err = expect_run("explain control bytes",
                          ["explain", "--inline", '_Z* "d={demangled}\t{mangled}"', "-",
                           name, "red\x1b[31mkernel"], 0)
    want = ("_Z6ev\\x1bil\\x7fPf\n"
            "  mangled:    _Z6ev\\x1bil\\x7fPf\n"
            "  demangled:  ev\\x1bil\\x7f(float*)\n"
            "  function:   ev\\x1bil\\x7f\n"
            '  rule:       NVTXCORR_LABELS_INLINE:1: _Z* "d={demangled}\\x09{mangled}"\n'
            "  label:      d=ev\\x1bil\\x7f(float*)\\x09_Z6ev\\x1bil\\x7fPf\n")
    expect("explain control bytes: escaped", out.startswith(want), f"{out!r}\nwant {want!r}")
    expect("explain control bytes: default label", "  label:      red\\x1b[31mkernel\n" in out,
           repr(out))
    expect("explain control bytes: nothing raw",
           not any(ord(c) < 0x20 and c != "\n" or ord(c) == 0x7F for c in out + err),
           repr(out + err))
    path = os.path.join(tmp, "a\x1b[2Jb.conf")
    with open(path, "w") as f:
        f.write('x "l\x1b[2J" colour=#FFFFFF\n')
    expect_run("check control bytes", ["check", os.path.basename(path)], 1, cwd=tmp, stdout="",
               stderr="nvtxcorr: error: a\\x1b[2Jb.conf:1: unknown option 'colour'\n")


def main():
    test_check_fixtures()
    with tempfile.TemporaryDirectory() as tmp:
        test_check_files(tmp)
    with tempfile.TemporaryDirectory() as tmp:
        test_regex_budgets(tmp)
    with tempfile.TemporaryDirectory() as tmp:
        test_control_bytes(tmp)
    test_inline()
    test_env()
    test_explain()
    test_usage()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
