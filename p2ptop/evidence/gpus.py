"""GPU models as people and tools write them -> product class and architecture.

Used by the nvidia-smi parsers (a product name) and the prose parser (a model in a sentence,
"两张4090", "8x A100"). The table holds the models that P2P reports name; a name it does not know
gives class and architecture None, never a guess.
"""

from __future__ import annotations

import re
from typing import Optional

# (regex on the lower-cased text, canonical name, product class, architecture)
_MODELS: list[tuple[str, str, str, str]] = [
    # (the chips behind the names: pci.ids, the PCI ID database, whose NVIDIA device names carry the chip, GK = Kepler,
    # GM = Maxwell, GP = Pascal, GV = Volta, TU = Turing, GA = Ampere, AD = Ada, GH = Hopper, GB = Blackwell; China's "D"
    # parts are the same chips)
    (r"rtx\s*pro\s*6000d?(\s*blackwell)?", "RTX PRO 6000 Blackwell", "workstation", "Blackwell"),
    (r"rtx\s*pro\s*\d{3,4}(\s*blackwell)?", "RTX PRO Blackwell", "workstation", "Blackwell"),
    (r"rtx\s*6000d", "RTX PRO 6000 Blackwell", "workstation", "Blackwell"),
    (r"rtx\s*(?:6000|5880|5000|4500|4000(?:\s*sff)?|3500|3000|2000e?)\s*ada", "RTX 6000 Ada", "workstation", "Ada"),
    (r"(?:rtx\s*)?a(?:6000|5500|5000|4500|4000h?)\b|rtx\s*a(?:2000|1000|500|400)", "RTX A6000", "workstation", "Ampere"),
    # Quadro by its series letter (K Kepler, but the K620, K1200 and K2200 are Maxwell's GM107/GM108; M Maxwell; P and
    # GP100 Pascal; GV100 Volta; RTX 4000-8000 and T Turing); a Quadro not of these stays of no known architecture
    (r"quadro\s*k(?:620|1200|2200)m?", "Quadro", "workstation", "Maxwell"),
    (r"quadro\s*k\d{3,4}[dm]?", "Quadro", "workstation", "Kepler"),
    (r"quadro\s*m\d{3,4}m?", "Quadro", "workstation", "Maxwell"),
    (r"quadro\s*(?:p\d{3,4}|gp100)", "Quadro", "workstation", "Pascal"),
    (r"quadro\s*gv100", "Quadro", "workstation", "Volta"),
    (r"quadro\s*(?:rtx\s*[4568]000|t\d{3,4})", "Quadro", "workstation", "Turing"),
    (r"nvidia\s+t(?:400|600|1000)", "NVIDIA T1000", "workstation", "Turing"),
    # a GeForce generation named as a series: "RTX 4000 series", "RTX 40-series", "40系显卡" (Chinese: the 40 series)
    (r"(?:rtx\s*)?50(?:00)?\s*-?\s*(?:series|系列?)", "GeForce RTX 50", "consumer", "Blackwell"),
    (r"(?:rtx\s*)?40(?:00)?\s*-?\s*(?:series|系列?)", "GeForce RTX 40", "consumer", "Ada"),
    (r"(?:rtx\s*)?30(?:00)?\s*-?\s*(?:series|系列?)", "GeForce RTX 30", "consumer", "Ampere"),
    (r"(?:rtx\s*)?50(?:90|80|70|60)(?:\s*ti)?", "GeForce RTX 50", "consumer", "Blackwell"),
    (r"(?:rtx\s*)?40(?:90|80|70|60)(?:\s*ti|\s*super)?d?", "GeForce RTX 40", "consumer", "Ada"),
    (r"(?:rtx\s*)?30(?:90|80|70|60)(?:\s*ti)?", "GeForce RTX 30", "consumer", "Ampere"),
    (r"rtx\s*5050", "GeForce RTX 50", "consumer", "Blackwell"),
    (r"rtx\s*4050", "GeForce RTX 40", "consumer", "Ada"),
    (r"rtx\s*[23]050", "GeForce RTX 30", "consumer", "Ampere"),  # the RTX 2050 is an Ampere part (GA107)
    (r"rtx\s*20(?:80|70|60)(?:\s*ti|\s*super)?", "GeForce RTX 20", "consumer", "Turing"),
    (r"titan\s*rtx", "TITAN RTX", "consumer", "Turing"),
    (r"titan\s*v\b", "TITAN V", "consumer", "Volta"),
    # NVIDIA's names: "GeForce GTX TITAN X" (2015, Maxwell), "TITAN X (Pascal)" and "TITAN Xp" (Pascal); "GeForce GTX
    # TITAN", "TITAN Black", "TITAN Z" (Kepler)
    (r"gtx\s*titan\s*x(?!p)(?!\s*\(pascal)", "GeForce GTX TITAN X", "consumer", "Maxwell"),
    (r"titan\s*xp?", "TITAN X", "consumer", "Pascal"),
    (r"gtx\s*titan(?:\s*(?:black|z))?|titan\s*(?:black|z)", "GeForce GTX TITAN", "consumer", "Kepler"),
    (r"gtx\s*1(?:080|070|060|050)(?:\s*ti)?", "GeForce GTX 10", "consumer", "Pascal"),
    (r"gtx\s*16[356]0(?:\s*ti|\s*super)?", "GeForce GTX 16", "consumer", "Turing"),
    (r"gtx\s*9[5-8]0(?:\s*ti)?", "GeForce GTX 900", "consumer", "Maxwell"),
    (r"gtx\s*7[45]0(?:\s*ti)?", "GeForce GTX 700", "consumer", "Maxwell"),  # the GTX 745/750/750 Ti: Maxwell's GM107
    (r"gtx\s*7[6-8]0(?:\s*ti)?", "GeForce GTX 700", "consumer", "Kepler"),
    (r"gtx\s*6[4-9]0(?:\s*ti)?", "GeForce GTX 600", "consumer", "Kepler"),
    (r"gb200|gb300", "GB200", "data-centre", "Blackwell"),
    (r"b200|b300|b100\b", "B200", "data-centre", "Blackwell"),
    (r"gh200", "GH200", "data-centre", "Hopper"),
    (r"h100|h800|h200|h20\b", "H100", "data-centre", "Hopper"),
    (r"a100x?|a[x]?800", "A100", "data-centre", "Ampere"),
    (r"a10[gm]?\b|a30x?\b|a40\b|a16\b|a2\b", "A10", "data-centre", "Ampere"),
    (r"l40s?\b|l4\b|l20\b", "L40", "data-centre", "Ada"),
    (r"v100s?", "V100", "data-centre", "Volta"),
    (r"p100|p40\b|p4\b|tesla\s*p(?:6|10)", "P100", "data-centre", "Pascal"),
    (r"\bt4\b|tesla\s*t(?:10|40)", "T4", "data-centre", "Turing"),
    # the Kepler Teslas as nvidia-smi names them, with their form's letter: K40m, K40c, K20Xm, K20c
    (r"k80|k40(?:m|c|t|d|st?)?|k20x?(?:m|c|s)?\b|k10\b", "K80", "data-centre", "Kepler"),
    # Tesla M-series (Maxwell): M40, M60, M10, M4, M6 (the last two only with "Tesla": an M4 alone is Apple's)
    (r"m40\b|m60\b|m10\b|tesla\s*m[46]", "M40", "data-centre", "Maxwell"),
    (r"quadro", "Quadro", "workstation", ""),
    # NVIDIA's CMP HX mining cards ("NVIDIA CMP 170HX" in nvidia-smi): GeForce-class boards without display, whose stock
    # driver gives no peer access, as on GeForce (170HX: GA100, 90HX/70HX: GA102/GA104; 50HX/40HX/30HX: Turing)
    (r"cmp\s*(?:170|90|70)\s*hx", "CMP HX", "consumer", "Ampere"),
    (r"cmp\s*(?:50|40|30)\s*hx", "CMP HX", "consumer", "Turing"),
]
#: any model of the table as one pattern (lower-case text), for readers that count GPUs by their model ("8xA100")
MODEL_NAMES = "(?:" + "|".join(rx for rx, *_ in _MODELS) + ")"
_COMPILED = [(re.compile(r"(?<![a-z0-9])(?:" + rx + r")(?![a-z0-9])"), name, cls, arch) for rx, name, cls, arch in _MODELS]
#: a model in free text: needs a GPU word around a bare number ("4090" alone is a year or a port)
MODEL_IN_PROSE = re.compile(
    # a GeForce generation as a series, before the models (its "RTX 4000" is no RTX 4000 card): "RTX 4000 series",
    # "rtx 30-series", "40系显卡", "30系列"
    r"(?<![a-z0-9.])(?P<series>(?:rtx\s*)?[345]0(?:00)?\s*-?\s*(?:series\b|系列?))|"
    # a count written against the name ("8xA100", "8xRTX4090", "4×H100", "2*A6000") is no part of a longer word
    # (not a hex number's "0x": "0xa100" is an address)
    r"(?:(?<![a-z0-9])|(?<=[1-9][x×\*])|(?<=\d0[x×\*])|(?<=\d\s[x×\*]))(?:(?:nvidia\s+|geforce\s+|tesla\s+|quadro\s+)?(?:rtx\s*pro\s*6000|rtx\s*\d{4}(?:\s*ti|\s*super|\s*ada|d)?|"
    r"gtx\s*\d{3,4}(?:\s*ti)?|titan\s*(?:rtx|v|xp?)|rtx\s*a\d{4}|a\d{4}\b|gb[23]00|b[123]00|gh200|h100|h800|h200|h20|a100|a800|"
    r"a10g?|a30|a40|l40s?|l20|l4(?=s?\s*(?:gpus?|cards?|显卡|卡))|v100|p100|p40|t4|k80|k40[mctd]?|k20x?[mc]?|"
    # (Teslas, Quadros and NVIDIA's T cards named only after their brand: "Tesla P4", "Quadro P5000", "NVIDIA T1000")
    r"(?<=tesla )(?:m[46]0?|p(?:4|6|10)|t(?:10|40))|(?<=quadro )(?:[kmp]\d{3,4}[dm]?|g[pv]100|t\d{3,4})|(?<=nvidia )t(?:400|600|1000)|"
    r"cmp\s*(?:170|90|70|50|40|30)\s*hx)s?|(?:50|40|30|20)(?:90|80|70|60)(?:\s*ti|\s*d)?s?(?=\s*(?:gpu|显卡|卡|x|×|\*|,|，|。|\)|[?.;:!](?!\d)|$|"
    # or its memory written after it ("3090 24g*2", "4090 24GB", "3090 24G"): a card's memory is how people name it
    r"(?:12|16|20|24|32|48|96)\s*(?:gb?|gib)(?![a-z]))|"
    r"\s+(?:and|with|和)))(?![a-z0-9])|"
    # a bare consumer number after a count ("2x4090", "4*4090 48G", "2 4090s", "two 3090s", "两张4090") or a
    # distinctive bare model ("1080ti", "Gefore 1080Ti"): a count of GPUs is how people write their cards
    r"(?:(?<![a-z0-9.])\d{1,2}\s*[x×\*]\s*|(?<![a-z0-9.,])(?:\d{1,2}|two|three|four|six|eight|dual|quad)\s+|[两二三四六八]\s*[张块个]?\s*|(?<![a-z0-9.])\d{1,2}\s*[张块个]\s*)"
    # (the count's "GPU" written against it: "4*5090GPU")
    r"(?P<counted>(?:50|40|30|20)(?:90|80|70|60)(?:\s*ti|\s*d)?)s?(?![a-z0-9](?<!g(?=pu)))|"
    r"(?<![a-z0-9])(?P<bare>10[78]0\s*ti)(?![a-z0-9])")


#: numbers of GPUs as people write them in words, English and Chinese ("two 3090s", "a single GPU", 两张卡, 单卡, 双卡)
COUNT_WORDS = {"one": 1, "single": 1, "a single": 1, "two": 2, "dual": 2, "three": 3, "four": 4, "quad": 4, "five": 5,
               "six": 6, "seven": 7, "eight": 8, "sixteen": 16,
               "一": 1, "单": 1, "两": 2, "二": 2, "双": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8}


def count_of(word: Optional[str]) -> Optional[int]:
    """A count written in figures or in words (COUNT_WORDS), None when it is neither."""
    word = (word or "").strip().lower()
    return int(word) if word.isdigit() else COUNT_WORDS.get(word)


#: models NVIDIA builds only into NVSwitch baseboards (HGX H20, HGX/DGX B200 and B300 8-GPU): where a text names one,
#: its GPUs sit on an NVSwitch fabric, with Fabric Manager's duties (GB200 is left out: its NVL4 board has no NVSwitch)
_ON_NVSWITCH_BOARD = re.compile(r"(?<![a-z0-9])(?:h20|b200|b300)(?![a-z0-9])")


#: the cloud machines built on the 8-GPU HGX baseboard, whose GPUs meet in NVSwitch chips (NVIDIA's HGX A100/H100/H200
#: data sheets; the providers' instance pages): AWS p4d/p4de/p5/p5e/p5en, GCP a2-highgpu-8g/a2-ultragpu-8g/a3-*-8g,
#: Azure ND96* (ND A100 v4, ND H100 v5). Eight SXM GPUs alone are not taken as NVSwitch: a model may be named for its
#: PCIe form too
EIGHT_GPU_BOARD_MACHINE = re.compile(r"\bp4de?\.24xlarge\b|\bp5e?n?\.48xlarge\b|\bp(?:4de?|5(?:en?)?)\s+instances?\b|"
                                     r"\ba2-(?:highgpu|ultragpu|megagpu)-8g\b|\ba3-(?:highgpu|megagpu|ultragpu)-8g\b|(?:\b|_)nd96\w*")


def nvswitch_board_note(name: Optional[str]) -> Optional[str]:
    """Why a model means an NVSwitch host (H20, B200, B300 exist only on NVSwitch baseboards), None for other models:
    the summary of host.nvswitch_present where a reader takes it from the model alone."""
    if name and _ON_NVSWITCH_BOARD.search(name.lower()):
        return f"{name} is built only into NVSwitch baseboards (HGX)"
    return None


#: the PCIe generation each architecture's boards are built with (NVIDIA's data sheets: Kepler K40/K80 to Turing T4
#: and RTX 20 Gen3; A100, RTX 30/A6000, L40, RTX 40 Gen4; H100 PCIe/SXM, B200, RTX 50 Gen5). With a width of x8, the
#: narrowest desktop or data-centre card of these families (RTX 4060, A2, RTX 3050), a floor for a link the paste does
#: not describe; laptop parts (x4, x8) are left out
PCIE_GEN_BY_ARCH = {"Kepler": 3, "Maxwell": 3, "Pascal": 3, "Volta": 3, "Turing": 3, "Ampere": 4, "Ada": 4, "Hopper": 5,
                    "Blackwell": 5}
BUILT_MIN_WIDTH = 8
#: parts whose PCIe link is their own, not their family's: laptop and embedded parts (x4, x8), NVIDIA's CMP HX mining
#: cards (cut down by design: the 170HX runs Gen1 x4); and Kepler boards built for PCIe Gen2 (the Tesla K20/K20X and most
#: Kepler Quadros; NVIDIA's board specifications), where their family's Gen3 would be no floor
_OWN_LINK = re.compile(r"laptop|mobile|max-?q|\bmx\s?\d|jetson|orin|xavier|cmp\s?\d+\s?hx|\bk20|quadro\s*k\d", re.I)


#: data-centre GPUs built only into boards that join every pair of them by NVLink, and the least GB/s one way such a pair
#: gets (NVIDIA's data sheets; "Introducing NVIDIA HGX A100": the 4-GPU boards join each pair directly, the 8-GPU ones
#: through NVSwitch): A100/A800 SXM4, HGX A100 4-GPU, 4 NVLink 3 links a pair (100 GB/s; A800 has 8 links in all);
#: H100/H200/H20 SXM5, HGX H100/H200 4-GPU, 6 NVLink 4 links a pair (150); H800 SXM, 8 links in all (100); B200/B300,
#: 8-GPU NVSwitch boards only (900; 150 kept). The names are NVML's, as CUDA and the tools print them: the PCIe forms
#: say so ("NVIDIA H100 PCIe", "NVIDIA H200 NVL", "NVIDIA A100 80GB PCIe", "NVIDIA H800 PCIe"), a bare "H200" in a
#: sentence may be either. SXM2 parts (P100, V100) are left out (DGX-1's hybrid cube mesh leaves pairs without a link),
#: as are GH200/GB200 (their GPUs meet other superchips' over NVLink Switch trays or the network).
_BUILT_NVLINK = (
    (re.compile(r"\bA[18]00-SXM", re.I), 100.0),
    (re.compile(r"\bH100\b.*\b(?:HBM3|SXM)", re.I), 150.0),
    (re.compile(r"^NVIDIA (?:H200|H20)\b", re.I), 150.0),
    (re.compile(r"^NVIDIA H800\b", re.I), 100.0),
    (re.compile(r"^NVIDIA B[23]00\b", re.I), 150.0),
)
_PCIE_FORM = re.compile(r"\b(?:PCIe|NVL)\b", re.I)


def built_nvlink(name: Optional[str]) -> Optional[float]:
    """The least GB/s one way that NVLink gives a pair of GPUs of this (NVML) name on any board they are built into
    (_BUILT_NVLINK), None where the model is no SXM part joined to every peer or the name does not say which form."""
    if not name or _PCIE_FORM.search(name):
        return None
    name = name.strip()
    return next((gbps for rx, gbps in _BUILT_NVLINK if rx.search(name)), None)


def built_pcie(name: Optional[str]) -> Optional[int]:
    """The PCIe generation a card of this name is built with (PCIE_GEN_BY_ARCH), None for unknown models and for parts
    whose link is their own (_OWN_LINK: laptop, embedded, mining cards)."""
    if not name or _OWN_LINK.search(name):
        return None
    cls, arch = classify(name)
    return PCIE_GEN_BY_ARCH.get(arch) if cls in ("consumer", "workstation", "data-centre") else None


def classify(name: Optional[str]) -> tuple[Optional[str], Optional[str]]:
    """(product class, architecture) of a GPU name, (None, None) when unknown."""
    if not name:
        return None, None
    low = name.lower()
    if "geforce" in low or "titan" in low:
        for rx, _n, cls, arch in _COMPILED:
            if rx.search(low):
                return "consumer", arch or None
        return "consumer", None
    for rx, _n, cls, arch in _COMPILED:
        if rx.search(low):
            return cls, arch or None
    return None, None


#: GPUs with no NVLink at all (NVIDIA's product specifications): every Ada part (GeForce RTX 40, RTX 6000 Ada, L40,
#: L4: Ada dropped the NVLink connector), GeForce RTX 50 and RTX PRO 6000 Blackwell, T4, A10/A16/A2
_NO_NVLINK = re.compile(r"\b(?:RTX\s*50\d0|RTX\s*PRO\s*\d000|T4|A10G?|A16|A2)\b", re.I)


#: GeForce and TITAN generations whose stock driver gives PCIe peer access (cudaDeviceCanAccessPeer 1 between cards under
#: one root complex): Kepler, Maxwell and Pascal. From Turing on GeForce has none over PCIe (a 2080 Ti reaches its peer only
#: over an NVLink bridge: NVIDIA's forum "2080 Ti cudaDeviceCanAccessPeer failure without NVLink bridge", cited in
#: tensorflow/tensorflow#24677; nccl-tests#117), while GTX 1080 Ti pairs under one PCIe switch report "CAN Access Peer"
#: (p2pBandwidthLatencyTest in NVIDIA/nccl#257) and fail only across sockets or in a VM (NVIDIA/nccl#175)
GEFORCE_PCIE_P2P_ARCHITECTURES = ("Kepler", "Maxwell", "Pascal")


def geforce_with_pcie_p2p(name: Optional[str]) -> bool:
    """Is this a GeForce/TITAN card of a generation whose stock driver still gives PCIe peer access (before Turing)?"""
    cls, arch = classify(name)
    return cls == "consumer" and arch in GEFORCE_PCIE_P2P_ARCHITECTURES


def no_nvlink_hardware(name: Optional[str]) -> bool:
    """Has this GPU model no NVLink at all (so no link of it is ever active, and no NVSwitch joins it)?"""
    if not name:
        return False
    _cls, arch = classify(name)
    return arch == "Ada" or bool(_NO_NVLINK.search(name))
