"""``logscan ladder``, ``explain`` and ``matrix``: planning questions over the shipped ladders (no log)."""
from __future__ import annotations

import json
import sys

import click

from .common import _check_version, _engine_releases


def _machine(platform: str, gpu: str | None, cuda: str | None, with_: str | None, builds: str | None,
             env: tuple[str, ...], torch: str | None, **ckpt):
    """Build a ``Machine`` from the shared description options; bad values are usage errors."""
    from ..analysis.gates import Machine
    from ..analysis.gpus import package_name, resolve_gpu, unknown_gpu_message

    _check_version(cuda, "--cuda", "12.8")
    _check_version(torch, "--torch", "2.8.0")
    m = Machine(platform=platform.upper(), cuda=cuda, torch=torch)
    if gpu is not None and not gpu.strip():
        raise click.BadParameter("empty: give a GPU name or compute capability (H100, sm90, 9.0), or leave --gpu out",
                                 param_hint="--gpu")
    if gpu:
        g = resolve_gpu(gpu)
        if g is None:
            raise click.BadParameter(unknown_gpu_message(gpu), param_hint="--gpu")
        m.cc, m.gpu, m.gfx = g.cc, g.name, g.gfx
        if platform.upper() == "CUDA" and g.platform != "CUDA":
            m.platform = g.platform
        elif platform.upper() != g.platform:
            raise click.BadParameter(f"{g.name} is a {g.platform} device, not {platform.upper()}: "
                                     f"drop --platform or give a {platform.upper()} device", param_hint="--gpu")
    if with_ is not None:
        items = [i.strip() for i in with_.split(",") if i.strip() and i.strip().lower() != "none"]
        m.packages = frozenset(package_name(i) for i in items)
    if builds is not None:
        m.builds = frozenset(b.strip() for b in builds.split(",") if b.strip() and b.strip().lower() != "none")
    for kv in env:
        if "=" not in kv:
            raise click.BadParameter(f"{kv!r} is not NAME=VALUE", param_hint="--env")
        k, v = kv.split("=", 1)
        m.env[k.strip()] = v.strip()
    _checkpoint(m, **ckpt)
    if m.cuda is None and m.platform == "CUDA":
        from ..analysis.gpus import min_cuda

        m.cuda_floor = min_cuda(m.cc)  # sm110 runs under CUDA 13.0+ (patterns/gpus.toml, sources there)
    return m


def _checkpoint(m, scales=None, act_scale=None, group_size=None, n=None, k=None, gfx=None, moe=None) -> None:
    """Checkpoint and layer facts of ``ladder`` / ``matrix`` (``--scales``, ``--group-size``, ``--n``/``--k``, ``--gfx``)."""
    from ..analysis.gpus import resolve_gpu

    if scales:
        m.checkpoint["scales"] = [scales]
    if act_scale:
        m.checkpoint["act_scale"] = [act_scale]
    if group_size is not None:
        m.checkpoint["group_size"] = [str(group_size)]
    if n is not None:
        m.checkpoint["out_features"] = [str(n)]
    if k is not None:
        m.checkpoint["in_features"] = [str(k)]
    if gfx:
        g = resolve_gpu(gfx)
        if g is None or not g.gfx:
            raise click.BadParameter(f"{gfx!r} is not a ROCm arch like gfx942 or gfx950", param_hint="--gfx")
        m.gfx, m.platform = g.gfx, "ROCM"
        if m.cc is None:
            m.cc, m.gpu = g.cc, m.gpu or g.name


def _scheme_for(scheme: str, scales: str | None, moe: bool | None) -> str:
    """The scheme a planning question names: ``FP8 --scales block`` is FP8-BLOCK, ``--moe`` the MoE variant."""
    from ..analysis.predict import SchemeError, find_scheme, load_schemes

    try:
        sid, _ = find_scheme(scheme, load_schemes())
    except SchemeError:
        return scheme
    known = load_schemes().scheme
    if scales == "block" and sid == "FP8":
        sid = "FP8-BLOCK"
    if moe and not sid.endswith("-MOE"):
        base = sid.replace("-BLOCK", "")
        if f"{base}-MOE" not in known:
            raise click.UsageError(f"no MoE scheme is recorded for {sid} (MoE schemes: "
                                   + ", ".join(x for x in sorted(known) if x.endswith("-MOE")) + ")")
        sid = f"{base}-MOE"
    if moe is False and sid.endswith("-MOE"):
        sid = sid[: -len("-MOE")]
    return sid



def _machine_options(f):
    opts = [
        click.option("--platform", default="cuda", show_default=True, type=click.Choice(["cuda", "rocm", "xpu", "cpu"], case_sensitive=False),
                     help="The platform the engine runs on. A --gpu of another platform (MI300X, Arc B580) "
                          "sets its own when --platform is left at the default."),
        click.option("--gpu", default=None, help="GPU name or compute capability: H100, B200, 'RTX 5090', sm90, 9.0."),
        click.option("--cuda", default=None, metavar="VERSION", help="CUDA runtime version, e.g. 12.8 (unknown if not given)."),
        click.option("--with", "with_", default=None, metavar="LIST",
                     help="Optional packages installed, e.g. flashinfer,cutedsl,b12x,deep_gemm. When given, "
                          "anything not listed counts as absent; 'none' for a bare install. Unknown if not given."),
        click.option("--builds", default=None, metavar="LIST",
                     help="Compile-time flags of the engine build, e.g. ENABLE_NVFP4_SM100 (unknown if not given)."),
        click.option("--env", multiple=True, metavar="NAME=VALUE", help="Environment variable or server option (repeatable)."),
        click.option("--torch", default=None, metavar="VERSION", help="PyTorch version (unknown if not given)."),
        click.option("--scales", default=None, type=click.Choice(["per-tensor", "per-channel", "block"]),
                     help="FP8 scale type (per-channel: per-channel weights or per-token activations). Unknown if not given."),
        click.option("--act-scale", default=None, type=click.Choice(["static", "dynamic"]),
                     help="FP8 activation scales: static (calibrated) or dynamic. Unknown if not given."),
        click.option("--group-size", default=None, type=int, help="Quantization group size (-1: per channel)."),
        click.option("--n", "n", default=None, type=click.IntRange(min=1), help="Layer output features N, when a shape is known."),
        click.option("--k", "k", default=None, type=click.IntRange(min=1), help="Layer input features K, when a shape is known."),
        click.option("--gfx", default=None, metavar="ARCH", help="ROCm arch, e.g. gfx942 (MI300X) or gfx950 (MI355X)."),
        click.option("--moe/--dense", "moe", default=None, help="MoE experts or a dense layer (default: the scheme as named)."),
        click.option("--gate-source", is_flag=True, help="Print each gate as its source expression, not in words."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


@click.command()
@click.argument("engine")
@click.argument("scheme")
@_machine_options
@click.option("--engine-version", default=None, metavar="V",
              help="Engine release whose ladder to walk (default newest); an unshipped one is refused (exit 2).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def ladder(engine, scheme, platform, gpu, cuda, with_, builds, env, torch, engine_version, fmt, gate_source, **ckpt):
    """Walk ENGINE's ladder for SCHEME on a described machine: each rung passes, fails or unknown.

    \b
    Examples:
      logscan ladder vllm NVFP4 --gpu H100
      logscan ladder vllm NVFP4 --gpu B200 --cuda 12.8 --with flashinfer,cutedsl
      logscan ladder vllm FP8-BLOCK --gpu 'RTX 5090' --format json
    """
    from ..analysis.predict import SchemeError, walk
    from ..formats.ladder import render_walk

    m = _machine(platform, gpu, cuda, with_, builds, env, torch, **ckpt)
    scheme = _scheme_for(scheme, ckpt.get("scales"), ckpt.get("moe"))
    from ..packs.loader import default_packs

    packs = default_packs()
    if engine_version and engine.lower() in packs.packs:
        engine_version = _engine_releases(packs, engine_version, engine.lower())[engine.lower()]
    try:
        w = walk(packs, engine.lower(), scheme, m, engine_version)
    except SchemeError as exc:
        if not str(exc).startswith("no shipped "):
            raise click.UsageError(str(exc))
        # a gap in logscan's data, not a mistake on the command line: one line, no usage block
        # (trial 36: 'ladder llamacpp Q4_K --platform rocm' printed click's usage text)
        click.echo(f"logscan: {exc}: logscan does not know this dispatch, so it predicts nothing "
                   f"(try 'logscan matrix {scheme}' for what is recorded)", err=True)
        sys.exit(2)
    click.echo(w.model_dump_json(indent=2) + "\n" if fmt == "json" else render_walk(w, gate_source), nl=False)


@click.command()
@click.argument("kernel")
@click.option("--engine-version", default=None, metavar="[ENGINE=]V",
              help="Only this shipped release (e.g. 0.31.0, vllm=0.31.0); an unshipped one is refused (exit 2).")
@click.option("--engine", "engine", default=None, metavar="ENGINE",
              help="Only this engine's ladders (vllm, sglang, trtllm, llamacpp, tgi, lmdeploy, mlc-llm); "
                   "an unknown one is refused (exit 2).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def explain(kernel, engine_version, engine, fmt):
    """Every shipped ladder holding KERNEL: engine, releases, registry, rung k/n, cost class, gate.

    KERNEL is a kernel class, a backend name or a scheme (MarlinNvFp4LinearKernel, turbomind,
    NVFP4), or a label exactly as a listing prints it ("TurboMind U4 (AWQ / GPTQ /
    compressed-tensors int4)"). Consecutive releases that agree are one row, named by their
    release range. To read a log, use 'logscan scan FILE'.

    Exit status: 0 when some shipped ladder holds KERNEL (of --engine, when given); 2 when none
    does, when KERNEL is empty or names a file (a log), --engine names no engine, or
    --engine-version names an unshipped release."""
    import os

    from ..analysis.predict import explain as _explain
    from ..formats.ladder import render_explain

    if not kernel.strip():
        raise click.BadParameter("give a kernel class or backend name, e.g. MarlinNvFp4LinearKernel",
                                 param_hint="KERNEL")
    pathlike = not any(c.isspace() for c in kernel) and (
        "/" in kernel or "\\" in kernel or kernel.lower().endswith((".log", ".json", ".txt", ".gz")))
    if os.path.isfile(kernel) or pathlike:
        raise click.BadParameter(f"{kernel} looks like a file: explain takes a kernel name or scheme "
                                 f"(e.g. MarlinNvFp4LinearKernel, turbomind, NVFP4); to read a log, run "
                                 f"'logscan scan {kernel}'", param_hint="KERNEL")
    from ..analysis.releases import group_rows

    from ..packs.loader import default_packs

    packs = default_packs()
    engine = engine.strip().lower() if engine is not None else None
    if engine is not None and engine not in packs.packs:
        raise click.BadParameter(f"{engine!r} is no engine logscan has ladders for; one of: "
                                 + ", ".join(sorted(packs.packs)), param_hint="--engine")
    rows = _explain(packs, kernel.strip())
    if not rows and " (" in kernel and kernel.rstrip().endswith(")"):
        # a label as a listing prints it, "<short name> (<what it covers>)" (a registry or rung
        # name, e.g. lmdeploy's "TurboMind U4 (AWQ / GPTQ / compressed-tensors int4)")
        full = kernel.strip().lower()
        rows = [r for r in _explain(packs, kernel.split(" (", 1)[0].strip())
                if full in (r["kernel"].lower(), r["registry"].lower())]
    alias_of = None
    if not rows:  # an op / function name of a kernel (gptq_marlin_gemm is Marlin's: lexicon aliases)
        from ..analysis.frames import kernel_alias

        alias_of = kernel_alias(packs.lexicon, kernel)
        rows = _explain(packs, alias_of) if alias_of else []
    if engine_version:
        pins = _engine_releases(packs, engine_version)
        rows = [r for r in rows if pins.get(r.get("engine")) == r.get("ladder_version")]
    others: list[str] = []
    if engine is not None:  # a name held by many engines' ladders (Marlin: 111) read for one of them
        others = sorted({r.get("engine") for r in rows} - {engine})
        rows = [r for r in rows if r.get("engine") == engine]
    rows = group_rows(rows, packs)
    if not rows and others:  # the name is known, on other engines' ladders: say which, not a near name
        if fmt == "json":
            click.echo(json.dumps({"kernel": kernel, "engine": engine, "ladders": [],
                                   "other_engines": others}, indent=2))
        else:
            click.echo(f"{kernel}: on no shipped {engine} ladder (on {', '.join(others)}'s)")
        click.echo(f"logscan: {kernel} is on ladders of {', '.join(others)}, none of {engine}", err=True)
        sys.exit(2)
    if fmt == "json":
        click.echo(json.dumps({"kernel": kernel, **({"alias_of": alias_of} if alias_of else {}), "ladders": rows},
                              indent=2) + "\n", nl=False)
    else:
        if alias_of:
            click.echo(f"{kernel}: an op of {alias_of} (patterns/lexicon.toml [[kernel]] aliases)")
        click.echo(render_explain(alias_of or kernel, [dict(r, ladder_version=r["releases"]) for r in rows]), nl=False)
    if not rows:  # an unknown name is not an answer: a script must not read it as one
        from ..analysis.explain import close_names

        near = close_names(packs, kernel)
        if near:
            click.echo("logscan: did you mean: " + ", ".join(near) + "?", err=True)
        sys.exit(2)


@click.command()
@click.argument("scheme")
@_machine_options
@click.option("--engine-version", "engine_versions", multiple=True, metavar="ENGINE=V",
              help="Use this shipped release of ENGINE (repeatable, e.g. vllm=0.31.0); unshipped: exit 2.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def matrix(scheme, platform, gpu, cuda, with_, builds, env, torch, engine_versions, fmt, gate_source, **ckpt):
    """One row per engine (vLLM, SGLang, TensorRT-LLM, llama.cpp, TGI, LMDeploy, MLC-LLM): what would execute SCHEME on the machine.

    \b
    Examples:
      logscan matrix NVFP4 --gpu H100
      logscan matrix NVFP4 --gpu B200 --cuda 12.8 --with flashinfer --format json
    """
    from ..analysis.predict import SchemeError
    from ..analysis.matrix import matrix as _matrix
    from ..formats.ladder import render_matrix

    from ..analysis.releases import pinned

    m = _machine(platform, gpu, cuda, with_, builds, env, torch, **ckpt)
    scheme = _scheme_for(scheme, ckpt.get("scales"), ckpt.get("moe"))
    from ..packs.loader import default_packs

    packs = default_packs()
    for ev in engine_versions:
        for eng, rel in _engine_releases(packs, ev).items():
            packs = pinned(packs, eng, rel)
    try:
        mx = _matrix(packs, scheme, m)
    except SchemeError as exc:
        raise click.UsageError(str(exc))
    if fmt == "json":
        click.echo(mx.model_dump_json(indent=2))
    else:
        click.echo(render_matrix([r.model_dump() for r in mx.rows], f"{mx.scheme} ({mx.scheme_title})", mx.machine), nl=False)
