#!/usr/bin/env python3
"""Maintainers' tool: turn ``shared/reference/vllm/ladders-<v>.json`` into ``patterns/vllm/ladders/<v>.toml``.

The reference JSON was extracted from the vLLM wheels with ``ast`` (see its README). This
tool keeps every registry's exact source order and adds what logscan needs on top: a
normalised role (what the registry serves), the scheme the checkpoint asks for, and a cost
class per rung *relative to that scheme* (Marlin is native in the WNA16 registry and for
gpt-oss MXFP4 MoE, weight-only in the FP8/NVFP4/MXFP8 ones).

Usage: python tools/ladders_from_reference.py ../shared/reference/vllm patterns/vllm/ladders
Needs ``tomli-w`` (``pip install tomli-w``); not a runtime dependency of logscan.
"""
from __future__ import annotations

import json
import re
import tomllib
import sys
from pathlib import Path

import tomli_w

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gate_terms import GateParser  # noqa: E402  (tools/ is not a package)

COMPUTE = {"native": "native", "weight_only": "weight_only", "emulation": "emulated",
           "dequant_at_load": "dequant_at_load", "portable": "portable"}

#: role prefix -> (role, scheme, weight-only by design)
LINEAR_ROLES = [
    (r"^int8 scaled-mm", "int8 linear", "INT8 W8A8", False),
    (r"^fp8 scaled-mm", "fp8 linear", "FP8 W8A8", False),
    (r"^fp8 block-scaled", "fp8 block linear", "FP8 W8A8 block-scaled", False),
    (r"^fp8 weight-only", "fp8 weight-only linear", "FP8 W8A16", True),
    (r"^mixed_precision", "wna16 linear", "WNA16 (W4A16 / W8A16, GPTQ / AWQ)", True),
    (r"^mxfp8 linear", "mxfp8 linear", "MXFP8 W8A8", False),
    (r"^nvfp4 linear", "nvfp4 linear", "NVFP4 W4A4", False),
    (r"^mxfp6 linear", "mxfp6 linear", "MXFP6", False),
    (r"^mxfp4 linear", "mxfp4 linear", "MXFP4 W4A4", False),
    # the reference calls 0.7.0 .. 0.14.1's kernels/scaled_mm registry "int8 and fp8", but its one
    # caller (choose_scaled_mm_linear_kernel) is reached from compressed_tensors_w8a8_int8.py and
    # quark_w8a8_int8.py only (0.7.3, 0.14.1): FP8 dense linears were chosen by code there
    # (patterns/vllm/dispatch.toml)
    (r"^scaled-mm \(int8 and fp8", "int8 linear", "INT8 W8A8", False),
]
MOE_SCHEMES = {
    "fp8": ("FP8 W8A8", False), "int8": ("INT8 W8A8", False), "int_wna16": ("WNA16", True),
    "mxfp8": ("MXFP8 W8A8", False), "nvfp4": ("NVFP4 W4A4", False), "w4a8": ("W4A8", False),
    "w4a8_int8": ("W4A8 INT8", False), "unquantized": ("BF16 / FP16", True),
    "flashinfer_utils": ("FlashInfer MoE", False),
}

#: oracle module -> the format word vLLM prints in "Using ... <Format> MoE backend" lines
MOE_ROLE_NAMES = {"int_wna16": "wna16"}


def name_cost(name: str) -> str:
    """Cost class of a backend enum member with no experts classes (if-chain era)."""
    n = name.upper()
    if "EMULAT" in n:
        return "emulated"
    if "MARLIN" in n or "BF16" in n and "MXFP4" in n:
        return "weight_only"
    if "TRITON" in n and "MXFP4" not in n:
        return "portable"
    return "native"


def activation_scaling(cls: str) -> str | None:
    """Activation scaling a scaled-mm kernel applies, read from its class name (vLLM naming)."""
    if "PerTensor" in cls:
        return "per-tensor"
    if "PerToken" in cls or "ChannelWise" in cls or "RowWise" in cls:
        return "per-token"
    if "BlockScaled" in cls or "BlockWise" in cls:
        return "block"
    return None


#: Hand-kept labels of if-chain selectors (see the file's header for the sources).
ALIASES_FILE = Path(__file__).with_name("ladder_aliases.toml")


def load_aliases(path: Path = ALIASES_FILE) -> dict[str, dict[str, str]]:
    """``{registry name: {printed label: enum member}}`` from ``ladder_aliases.toml`` (empty if absent)."""
    import tomllib

    if not path.is_file():
        return {}
    with path.open("rb") as fh:
        return {k: dict(v) for k, v in tomllib.load(fh).items()}


#: Which quantization method reaches a registry (``[[quantization]]`` role regex, pattern).
ROLES_FILE = Path(__file__).with_name("ladder_roles.toml")


def load_role_quantization(path: Path = ROLES_FILE) -> list[dict]:
    """The ``[[quantization]]`` entries of ``ladder_roles.toml`` (empty if absent)."""
    import tomllib

    if not path.is_file():
        return []
    with path.open("rb") as fh:
        return list(tomllib.load(fh).get("quantization", []))


#: Cost-class corrections with their sources (``[[override]]`` registry, rung, versions, cost_class, why).
COSTS_FILE = Path(__file__).with_name("ladder_costs.toml")


def load_cost_overrides(path: Path = COSTS_FILE) -> list[dict]:
    """The ``[[override]]`` entries of ``ladder_costs.toml`` (empty if absent)."""
    import tomllib

    if not path.is_file():
        return []
    with path.open("rb") as fh:
        return list(tomllib.load(fh).get("override", []))


def convert(data: dict, extra_aliases: dict[str, dict[str, str]] | None = None,
            predicates: list[dict] | None = None, overrides: list[dict] | None = None) -> dict:
    """One reference ladders JSON -> the TOML document of ``patterns/vllm/ladders/<v>.toml``.

    ``predicates`` are the pack's ``gates.toml`` entries used to structure each kernel's gate
    into ``gates`` terms (additive to the one-line ``gate`` string).
    """
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    extra_aliases = load_aliases() if extra_aliases is None else extra_aliases
    overrides = load_cost_overrides() if overrides is None else overrides
    parser = GateParser(predicates or [])
    kernels = {**data.get("kernels", {}), **data.get("moe_experts", {})}
    out_regs = []
    for name, reg in data["registries"].items():
        kind = reg["kind"]
        entry = {"name": name, "kind": kind, "file": reg.get("file", "")}
        wo_by_design = False
        if kind == "linear":
            for pat, role, scheme, wo in LINEAR_ROLES:
                if re.search(pat, reg["role"]):
                    entry["role"], entry["scheme"], wo_by_design = role, scheme, wo
                    break
            else:
                entry["role"], entry["scheme"] = reg["role"], ""
        elif kind in ("moe", "if_chain"):
            fam = name.split(":")[1] if ":" in name else "moe"
            if fam == "nvfp4_utils":
                entry["role"], entry["scheme"] = "nvfp4 linear (backend enum)", "NVFP4 W4A4"
                kind = "if_chain"
            else:
                gpt_oss = fam == "mxfp4" and ("gpt_oss" in name or kind == "if_chain")
                if fam == "mxfp4":
                    scheme, wo_by_design = ("MXFP4 W4A16 (gpt-oss)", True) if gpt_oss else ("MXFP4 W4A4", False)
                else:
                    scheme, wo_by_design = MOE_SCHEMES.get(fam, (fam, False))
                entry["role"] = f"{MOE_ROLE_NAMES.get(fam, fam)} moe" + (" (gpt-oss)" if gpt_oss else "")
                if "lora" in name.lower():  # the LoRA-only selector: never the default reading of a line
                    entry["role"] = entry["role"].replace(" (gpt-oss)", " (gpt-oss, LoRA)") if gpt_oss else entry["role"] + " (LoRA)"
                entry["scheme"] = scheme
        else:
            entry["role"] = "attention " + (reg.get("when") or "")[:80]
            entry["scheme"] = ""
        platforms = {p: list(v) for p, v in reg.get("platforms", {}).items()}
        if kind == "if_chain" and reg.get("steps"):
            order = []
            conds: dict[str, list[list[dict]]] = {}
            for step in reg["steps"]:
                b = step["backend"].split(".")[-1]
                if b not in order:
                    order.append(b)
                conds.setdefault(b, []).append(parser.condition(step.get("when") or "always"))
            platforms = {"ANY": order}
            # each outcome's gate is its step condition (the if/elif chain makes them exclusive)
            entry["gates"] = {b: (cs[0] if len(cs) == 1 else [{"kind": "any_of", "options": cs}])
                              for b, cs in conds.items()}
        entry["platforms"] = platforms
        cost = {}
        for rungs in platforms.values():
            for k in rungs:
                if kind == "attention":
                    continue
                if k in kernels:
                    c = COMPUTE.get(kernels[k].get("compute"), "unknown")
                elif reg.get("backend_classes", {}).get(k):
                    cs = [COMPUTE.get(kernels.get(x, {}).get("compute"), "unknown") for x in reg["backend_classes"][k]]
                    c = cs[0]
                else:
                    c = name_cost(k)
                if wo_by_design and c == "weight_only":
                    c = "native"
                for o in overrides:
                    if (o["registry"] == name and o["rung"] == k
                            and Version(data["version"]) in SpecifierSet(o.get("versions", ""))):
                        c = o["cost_class"]
                cost[k] = c
        if cost:
            entry["cost"] = cost
        aliases = {}
        enum = data.get("backend_enums", {}).get(reg.get("enum", ""))
        if enum:
            aliases = {str(v): n for n, v in enum["members"] if str(v) != n and isinstance(v, str)}
        rungs_all = {k for v in platforms.values() for k in v}
        # MoE experts classes stand for the backend that returns them (backend_to_kernel_cls)
        for member, classes in reg.get("backend_classes", {}).items():
            for cls in classes:
                if member in rungs_all and cls != member:
                    aliases.setdefault(cls, member)
        for label, member in extra_aliases.get(name, {}).items():
            if member in rungs_all:
                aliases.setdefault(label, member)
        if aliases:
            entry["aliases"] = aliases
        out_regs.append(entry)
    # environment defaults (envs.py values the reference records per kernel module) for the
    # env terms of if/elif step conditions, which carry none of their own
    env_defaults = {k: str(v) for info in kernels.values() for k, v in (info.get("env") or {}).items()}
    for entry in out_regs:
        for terms in entry.get("gates", {}).values():
            for t in _walk_terms(terms):
                if t.get("kind") in ("env", "option") and t.get("default") is None and t.get("name") in env_defaults:
                    t["default"] = env_defaults[t["name"]]
    out_kernels = {}
    for k, info in kernels.items():
        kk = {"cost_class": COMPUTE.get(info.get("compute"), "unknown")}
        if info.get("min_capability") is not None:
            kk["min_capability"] = int(info["min_capability"])
        if info.get("gate"):
            kk["gate"] = info["gate"][:400]
        terms = parser.parse(info.get("gate") or "", info.get("min_capability"))
        for name, default in sorted((info.get("env") or {}).items()):
            for t in _walk_terms(terms):
                if t.get("kind") == "env" and t.get("name") == name and t.get("default") is None:
                    t["default"] = str(default)
        if terms:
            kk["gates"] = terms
        scaling = activation_scaling(k)
        if scaling:
            kk["activation_scaling"] = scaling
        if info.get("log_name") and info["log_name"] != k:
            kk["aliases"] = [info["log_name"]]
        if info.get("env"):
            kk["env"] = {str(n): str(v) for n, v in sorted(info["env"].items())}
        out_kernels[k] = kk
    for q in load_role_quantization():
        for r in out_regs:
            if re.search(q["role"], r.get("role", "")):
                r["quantization"] = q["pattern"]
    # LoRA-only selectors after their default sibling: a role hint matching both reads the default
    out_regs.sort(key=lambda r: "LoRA" in r.get("role", ""))
    return {"engine": "vllm", "version": data["version"],
            "source": "shared/reference/vllm/ladders-%s.json (ast over the vLLM wheel)" % data["version"],
            "registry": out_regs, "kernel": out_kernels}


def _inline(value) -> str:
    """A TOML inline value (tables and arrays on one line): the gate terms stay compact to parse."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_inline(v)}" for k, v in value.items()) + " }"
    raise TypeError(type(value))


def dumps(doc: dict) -> str:
    """tomli_w output with each kernel's ``gates`` written as one inline array line under its table."""
    gates = {k: v.pop("gates") for k, v in doc["kernel"].items() if "gates" in v}
    reg_gates = [r.pop("gates", None) for r in doc["registry"]]
    text = tomli_w.dumps(doc)
    out = []
    n_reg = 0
    for line in text.splitlines():
        out.append(line)
        if line == "[[registry]]":
            for rung, terms in (reg_gates[n_reg] or {}).items():
                key = rung if re.fullmatch(r"[A-Za-z0-9_-]+", rung) else json.dumps(rung)
                out.append(f"gates.{key} = [\n" + "".join(f"    {_inline(t)},\n" for t in terms) + "]")
            n_reg += 1
        if line.startswith("[kernel.") and line.endswith("]") and not line.startswith("[["):
            key = line[len("[kernel."):-1]
            name = json.loads(key) if key.startswith('"') else key
            if name in gates:
                out.append("gates = [\n" + "".join(f"    {_inline(t)},\n" for t in gates[name]) + "]")
    missing = set(gates) - {n for n in gates if any(l == f"[kernel.{n}]" or l == f'[kernel.{json.dumps(n)}]' for l in out)}
    if missing:
        raise RuntimeError(f"kernel tables not found for gates: {sorted(missing)[:5]}")
    return "\n".join(out) + "\n"


def _walk_terms(terms: list[dict]):
    for t in terms:
        yield t
        for opt in t.get("options", []):
            yield from _walk_terms(opt)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    src, dst = Path(argv[1]), Path(argv[2])
    dst.mkdir(parents=True, exist_ok=True)
    gates_toml = dst.parent / "gates.toml"
    predicates = tomllib.loads(gates_toml.read_text())["predicate"] if gates_toml.is_file() else []
    for f in sorted(src.glob("ladders-*.json")):
        data = json.loads(f.read_text())
        out = dst / f"{data['version']}.toml"
        out.write_text("# Generated by tools/ladders_from_reference.py; edit the tool, not this file.\n"
                       + dumps(convert(data, predicates=predicates)))
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
