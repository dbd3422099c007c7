#!/usr/bin/python3
"""Measure a real engine's step times: a Llama-shaped decoder in PyTorch, random fp32
weights, on this machine's CPU (or a CUDA device torch sees), at a grid of shapes.

Writes the steps CSV that `fleetsim calibrate --steps` fits and `fleetsim validate
--steps` checks (docs/calibration.md, "Measured steps"): one row per step shape,

    model,device,precision,tp,batch,prefill_tokens,decode_tokens,mean_context,seconds,
    layers,hidden,heads,kv_heads,ffn,vocab,repeats,iqr_s

batch: sequences in the step; prefill_tokens: prompt tokens processed (all prefill
sequences together, batch - decode_tokens of them, no cached context); decode_tokens:
sequences generating one token; mean_context: their mean cached context; seconds: the
median step (embedding to the sampled token; with --best the fastest repeat).  The engine is plain eager PyTorch as a
simple serving loop runs it: a preallocated key-value cache written in place, grouped-
query attention by batched matrix products, RMSNorm, rotary embedding, SiLU-gated MLP,
an untied LM head on the last token of each sequence, softmax and greedy sampling.

Usage (Debian's python3-torch; `make deps-validate` installs it):
    /usr/bin/python3 tools/torch_steps.py --threads 1 -o steps.csv \
        --model tiny:layers=4,hidden=1024,heads=16,kv_heads=4,ffn=2816,vocab=16000 \
        --batch 1,4,16 --context 128,512,2048 --prefill 64,256,1024
"""
import argparse
import ctypes
import math
import os
import statistics
import sys
import time


def option_from_argv(argv, name, default):
    """--name VALUE from the command line, before argparse runs: what must be set before
    torch is imported (the BLAS reads its thread count from the environment when it is
    loaded; the allocator is chosen when the process starts)."""
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return default


# torch.set_num_threads sets OpenMP's threads (and MKL's), not OpenBLAS's: Debian's torch
# runs its fp32 products through OpenBLAS's pthreads build, which otherwise splits every
# product over all cores, so that "one thread" ran its GEMMs on two and this thread's CPU
# clock saw only its half (and its spinning while it waited for the other).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = option_from_argv(sys.argv[1:], "--threads", "1")

TCMALLOC = "libtcmalloc_minimal.so.4"
# The script the user ran (this one, or tools/torch_ops.py that imports it): messages
# printed while this module loads name it, not this file.
SCRIPT = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "torch_steps.py"


def malloc_loaded():
    """'tcmalloc' when this process runs on TCMalloc, else 'system' (glibc's malloc)."""
    try:
        with open("/proc/self/maps") as f:
            return "tcmalloc" if "tcmalloc" in f.read() else "system"
    except OSError:
        return "system"


# The engine's memory: a serving engine keeps the memory it allocated and reuses it
# (PyTorch's caching allocator on a GPU; on a CPU, vLLM's installation guide asks for
# TCMalloc through LD_PRELOAD).  glibc's malloc instead gives every block of more than
# 32 MiB back to the kernel when it is freed, and the next step touches fresh pages: on a
# virtual machine whose memory the hypervisor fills on first touch that costs about 10 us a
# 4 KiB page (0.7 GB/s against 32 GB/s for memory reused; measured here, docs/calibration.md),
# which is the host's paging, not the engine's work.  So the script re-executes itself on
# TCMalloc (Debian's libtcmalloc-minimal4, `make deps-validate`) before torch loads.
# On a GPU the tensors live in CUDA's memory, which PyTorch's caching allocator keeps: the
# host's allocator is then the system's unless --malloc says otherwise.
DEFAULT_MALLOC = "tcmalloc" if option_from_argv(sys.argv[1:], "--device", "cpu") == "cpu" \
    else "system"
if option_from_argv(sys.argv[1:], "--malloc", DEFAULT_MALLOC) == "tcmalloc" \
        and malloc_loaded() != "tcmalloc":
    if os.environ.get("FLEETSIM_TCMALLOC_TRIED"):
        sys.exit(f"{SCRIPT}: {TCMALLOC} did not load: run `make deps-validate` "
                 "(Debian's libtcmalloc-minimal4), or pass --malloc system")
    os.environ["FLEETSIM_TCMALLOC_TRIED"] = "1"
    os.environ["LD_PRELOAD"] = " ".join(filter(None, (TCMALLOC, os.environ.get("LD_PRELOAD"))))
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable] + sys.argv)

try:
    import torch
except ImportError:  # the optional dependency: say how to get it
    sys.exit(f"{SCRIPT}: PyTorch not found: run `make deps-validate` (Debian's "
             "python3-torch) and use /usr/bin/python3")


def blas_threads():
    """The thread count of the OpenBLAS torch loaded, or None where it is another BLAS."""
    try:
        return ctypes.CDLL("libopenblas.so.0").openblas_get_num_threads()
    except (OSError, AttributeError):
        return None

SHAPE_KEYS = ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab")


def parse_model(text):
    """'name:layers=4,hidden=1024,...' -> (name, dict)."""
    name, _, rest = text.partition(":")
    shape = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        if key not in SHAPE_KEYS:
            raise argparse.ArgumentTypeError(f"--model {text}: unknown key '{key}' "
                                             f"(expected {', '.join(SHAPE_KEYS)})")
        shape[key] = int(value)
    missing = [k for k in SHAPE_KEYS if k not in shape]
    if not name or missing:
        raise argparse.ArgumentTypeError(f"--model {text}: expected NAME:key=value,... "
                                         f"with {', '.join(missing or ['a name'])}")
    if shape["hidden"] % shape["heads"] or shape["heads"] % shape["kv_heads"]:
        raise argparse.ArgumentTypeError(f"--model {text}: heads must divide hidden and "
                                         "kv_heads divide heads")
    return name, shape


def numbers(text):
    return [int(x) for x in text.split(",") if x]


# The weights' and activations' type: fleetsim's precision names, torch's types, bytes.
DTYPES = {"fp32": (torch.float32, 4), "bf16": (torch.bfloat16, 2), "fp16": (torch.float16, 2)}


class Decoder:
    """The weights and the cache of one model: random (the times do not depend on the
    values), of type dtype (fp32 by default)."""

    def __init__(self, s, max_seqs, max_context, device, dtype=torch.float32):
        # drawn where they live: on a GPU, 4 GB of weights drawn by the host would take
        # longer than the measurement
        g = torch.Generator(device=device).manual_seed(1)
        h, hd = s["hidden"], s["hidden"] // s["heads"]
        self.s, self.hd, self.device, self.dtype = s, hd, device, dtype
        self.q, self.kv = s["heads"], s["kv_heads"]

        def w(*shape):
            return (torch.randn(*shape, generator=g, device=device) * 0.02).to(dtype)

        self.embed = w(s["vocab"], h)
        self.layers = []
        for _ in range(s["layers"]):
            self.layers.append(dict(
                norm1=torch.ones(h, device=device, dtype=dtype),
                norm2=torch.ones(h, device=device, dtype=dtype),
                qkv=w((self.q + 2 * self.kv) * hd, h), out=w(h, self.q * hd),
                gate_up=w(2 * s["ffn"], h), down=w(h, s["ffn"])))
        self.final_norm = torch.ones(h, device=device, dtype=dtype)
        self.lm_head = w(s["vocab"], h)
        shape = (s["layers"], max_seqs, self.kv, max_context, hd)
        self.k_cache = torch.randn(*shape, generator=g, device=device).to(dtype)
        self.v_cache = torch.randn(*shape, generator=g, device=device).to(dtype)
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
        angles = torch.outer(torch.arange(max_context, dtype=torch.float32), inv)
        self.cos, self.sin = angles.cos().to(device, dtype), angles.sin().to(device, dtype)

    @staticmethod
    def rmsnorm(x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * weight

    def rope(self, x, pos):  # x: (B, H, T, hd), pos: (T,)
        cos, sin = self.cos[pos], self.sin[pos]
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)

    def step(self, ids, start, tick=None):
        """One iteration over ids (B, T) whose first token sits at position `start` of
        each sequence (decode: T = 1 after `start` cached tokens; prefill: start = 0).
        tick(name), when given, is called after each operator (tools/torch_ops.py times
        them in the step, where the caches hold what a step leaves in them)."""
        tick = tick or (lambda name: None)
        B, T = ids.shape
        hd, q, kv = self.hd, self.q, self.kv
        group = q // kv
        pos = torch.arange(start, start + T, device=self.device)
        end = start + T
        x = self.embed[ids]
        mask = None
        if T > 1:
            mask = torch.full((T, end), float("-inf"), device=self.device,
                              dtype=self.dtype).triu(start + 1)
        tick("embed")
        for i, l in enumerate(self.layers):
            h = self.rmsnorm(x, l["norm1"])
            tick("norm")
            qkv = torch.nn.functional.linear(h, l["qkv"])
            tick("qkv")
            qs, ks, vs = qkv.split((q * hd, kv * hd, kv * hd), dim=-1)
            qs = self.rope(qs.view(B, T, q, hd).transpose(1, 2), pos)
            ks = self.rope(ks.view(B, T, kv, hd).transpose(1, 2), pos)
            tick("rope")
            self.k_cache[i, :B, :, start:end] = ks
            self.v_cache[i, :B, :, start:end] = vs.view(B, T, kv, hd).transpose(1, 2)
            tick("reshape")
            keys = self.k_cache[i, :B, :, :end]           # (B, kv, end, hd)
            values = self.v_cache[i, :B, :, :end]
            qg = qs.reshape(B, kv, group * T, hd)         # the heads sharing a kv head
            scores = torch.matmul(qg, keys.transpose(-1, -2)) * (1.0 / math.sqrt(hd))
            if mask is not None:
                scores = (scores.view(B, kv, group, T, end) + mask).view(B, kv, group * T, end)
            a = torch.matmul(torch.softmax(scores, dim=-1), values)
            tick("attention")
            a = a.view(B, q, T, hd).transpose(1, 2).reshape(B, T, q * hd)
            tick("reshape")
            o = torch.nn.functional.linear(a, l["out"])
            tick("out")
            x = x + o
            tick("add")
            h = self.rmsnorm(x, l["norm2"])
            tick("norm")
            gate, up = torch.nn.functional.linear(h, l["gate_up"]).chunk(2, dim=-1)
            tick("up")
            y = torch.nn.functional.silu(gate) * up
            tick("act")
            o = torch.nn.functional.linear(y, l["down"])
            tick("down")
            x = x + o
            tick("add")
        last = self.rmsnorm(x[:, -1], self.final_norm)
        tick("final_norm")
        logits = torch.nn.functional.linear(last, self.lm_head)
        tick("lm_head")
        picked = torch.softmax(logits, dim=-1).argmax(dim=-1)
        tick("sample")
        return picked


def cpu_name():
    """The CPU's model name, as /proc/cpuinfo gives it ("cpu" where it does not)."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        return "cpu"


def samples(fn, repeats, sync, clock):
    """repeats timings of fn, after one untimed call (allocations, oneDNN's primitives)."""
    fn()
    times = []
    for _ in range(repeats):
        sync()
        t = clock()
        fn()
        sync()
        times.append(clock() - t)
    return times


def summary(times, best):
    """(seconds, iqr): the fastest or the median of the samples, and their spread."""
    times = sorted(times)
    q1, q3 = times[len(times) // 4], times[(3 * len(times)) // 4]
    return (times[0] if best else statistics.median(times)), q3 - q1


def run_processes(count):
    """This script run count times one after the other, each measuring once into a file of
    its own (the last -o and --processes on a command line win); their lines, per run.
    A process places its tensors anew: the runs' spread is the placement's."""
    import subprocess
    import tempfile
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(count):
            path = os.path.join(tmp, f"run{i}.csv")
            subprocess.run([sys.executable, os.path.abspath(sys.argv[0])] + sys.argv[1:]
                           + ["--processes", "1", "-o", path], check=True)
            with open(path) as f:
                runs.append(f.read().splitlines())
    return runs


def over_processes(a):
    """--processes K: K runs of this script in turn, merged shape by shape."""
    runs = run_processes(a.processes)
    comment = runs[0][0]
    header = runs[0][1].split(",")
    key_cols = [header.index(k) for k in ("model", "batch", "prefill_tokens", "decode_tokens",
                                          "mean_context")]
    sec, rep, iqr = header.index("seconds"), header.index("repeats"), header.index("iqr_s")
    merged, order = {}, []
    for lines in runs:
        for line in lines[2:]:
            cells = line.split(",")
            key = tuple(cells[i] for i in key_cols)
            if key not in merged:
                merged[key] = []
                order.append(key)
            merged[key].append(cells)
    with open(a.output, "w") as f:
        f.write(f"{comment}; the median of {a.processes} processes run in turn (iqr_s: "
                "their spread)\n")
        f.write(",".join(header) + "\n")
        for key in order:
            rows = merged[key]
            values = sorted(float(r[sec]) for r in rows)
            cells = list(rows[0])
            cells[sec] = f"{statistics.median(values):.6e}"
            cells[rep] = str(sum(int(r[rep]) for r in rows))
            cells[iqr] = f"{values[-1] - values[0]:.3e}"
            f.write(",".join(cells) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", type=parse_model, required=True,
                    help="NAME:layers=L,hidden=H,heads=A,kv_heads=G,ffn=F,vocab=V (repeat)")
    ap.add_argument("--batch", type=numbers, default=[1, 4, 16], help="decode batches")
    ap.add_argument("--context", type=numbers, default=[128, 512, 2048],
                    help="decode contexts (cached tokens per sequence)")
    ap.add_argument("--prefill", type=numbers, default=[64, 256, 1024],
                    help="prompt lengths (one sequence per prefill step)")
    ap.add_argument("--prefill-batch", type=numbers, default=[1],
                    help="prompts per prefill step")
    ap.add_argument("--repeats", type=int, default=5,
                    help="timed steps of each shape in a round (prefill: half, at least 3)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="passes over the whole grid (every model, every shape), each "
                         "shape's samples pooled over them: a slow spell of a shared "
                         "machine then falls on one pass of a shape, not on all its repeats")
    ap.add_argument("--processes", type=int, default=1,
                    help="run the whole measurement in this many processes one after the "
                         "other and keep each shape's median of theirs (each process's value "
                         "its fastest with --best): a process places its tensors anew, and on "
                         "a shared virtual machine that moves a model's weight stream by "
                         "10-20%% either way, so the median, not the fastest, of the "
                         "processes (iqr_s is then their spread)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu", help="cpu, or cuda where torch sees one")
    ap.add_argument("--dtype", choices=tuple(DTYPES), default="fp32",
                    help="the weights', the cache's and the activations' type (the steps "
                         "CSV's precision)")
    ap.add_argument("--clock", choices=("auto", "thread", "wall"), default="auto",
                    help="thread: the CPU time of this thread (one CPU thread: what the step "
                         "costs, without the time other processes of a shared machine took "
                         "from it); wall: elapsed time; auto: thread for --threads 1 on a CPU")
    ap.add_argument("--best", action="store_true",
                    help="seconds: the fastest repeat, not the median (on a shared machine, "
                         "the step with the least interference from other processes: they "
                         "only ever add to a thread's CPU time, through the caches and the "
                         "memory bus)")
    ap.add_argument("--malloc", choices=("tcmalloc", "system"), default=DEFAULT_MALLOC,
                    help="the allocator the engine runs on (read before torch loads): "
                         "TCMalloc, as vLLM's CPU guide asks (the default on a CPU), or "
                         "glibc's malloc (the default on a GPU)")
    ap.add_argument("--device-name", default="",
                    help="the device column (default: the CPU's model name, or CUDA's)")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    if a.processes > 1:
        return over_processes(a)

    torch.set_num_threads(a.threads)
    blas = blas_threads()
    if blas is not None and blas != a.threads:
        sys.exit(f"torch_steps.py: OpenBLAS runs {blas} threads, not --threads {a.threads}")
    device = torch.device(a.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("torch_steps.py: --device cuda: torch sees no CUDA device")
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    thread = a.clock == "thread" or (a.clock == "auto" and device.type == "cpu" and a.threads == 1)
    clock = time.thread_time if thread else time.perf_counter
    name = a.device_name
    if not name and device.type == "cuda":
        name = torch.cuda.get_device_name(device)
    if not name:
        name = cpu_name()
    if a.repeats < 1 or a.rounds < 1:
        ap.error("--repeats and --rounds must be at least 1")
    # Every model's decoder is built first and the grid is walked round after round, so
    # that a shape's samples come from moments spread over the whole run; within a round
    # the models take turns shape by shape, so that a slow spell of the host (another
    # machine's work on the same memory: tens of seconds, 10-20% on a decode step here)
    # falls on every model alike rather than on one model's block of shapes.
    per_model = []  # (model, shape, decoder, batch, prefill tokens, decode tokens, context, ids)
    for model, s in a.model:
        max_seqs = max(a.batch + a.prefill_batch)
        max_context = max(max(a.context) + 1, max(a.prefill))
        dec = Decoder(s, max_seqs, max_context, device, DTYPES[a.dtype][0])
        mine = []
        for b in a.prefill_batch:
            for p in a.prefill:
                ids = torch.randint(0, s["vocab"], (b, p), device=device)
                mine.append((model, s, dec, b, b * p, 0, 0, ids))
        for b in a.batch:
            for c in a.context:
                ids = torch.randint(0, s["vocab"], (b, 1), device=device)
                mine.append((model, s, dec, b, 0, b, c, ids))
        per_model.append(mine)
    jobs = [job for turn in zip(*per_model) for job in turn]  # same grid: same lengths
    times = [[] for _ in jobs]
    with torch.inference_mode():
        for r in range(a.rounds):
            for j, (model, s, dec, b, pt, dt, c, ids) in enumerate(jobs):
                n = max(3, a.repeats // 2) if pt else a.repeats
                times[j] += samples(lambda: dec.step(ids, c), n, sync, clock)
                what = f"prefill {b} x {pt // b}" if pt else f"decode {b} at {c}"
                print(f"{model}: round {r + 1}: {what}: {min(times[j]) * 1e3:.2f} ms",
                      file=sys.stderr)
    rows = []
    for (model, s, dec, b, pt, dt, c, ids), ts in zip(jobs, times):
        t, iqr = summary(ts, a.best)
        rows.append((model, b, pt, dt, c, t, iqr, s, len(ts)))
    del jobs
    order = {model: i for i, (model, _) in enumerate(a.model)}
    rows.sort(key=lambda row: order[row[0]])  # by model, each in its grid's order (stable)
    with open(a.output, "w") as f:
        f.write(f"# engine: PyTorch {torch.__version__} eager, {a.threads} threads, "
                f"{'thread CPU' if thread else 'wall'} time, "
                f"{'fastest' if a.best else 'median'} of {a.repeats} a round x {a.rounds} "
                f"round{'s' if a.rounds > 1 else ''} (prefill: of "
                f"{max(3, a.repeats // 2)} x {a.rounds}), OpenBLAS threads "
                f"{blas if blas is not None else 'n/a'}, malloc {malloc_loaded()}\n")
        f.write("model,device,precision,tp,batch,prefill_tokens,decode_tokens,mean_context,"
                "seconds,layers,hidden,heads,kv_heads,ffn,vocab,repeats,iqr_s\n")
        for model, b, pt, dt, c, t, iqr, s, n in rows:
            shape = ",".join(str(s[k]) for k in SHAPE_KEYS)
            f.write(f"{model},{name},{a.dtype},1,{b},{pt},{dt},{c},{t:.6e},{shape},{n},"
                    f"{iqr:.3e}\n")


if __name__ == "__main__":
    main()
