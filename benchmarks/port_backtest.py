"""Benchmark for issue 30: ``gpuport port`` judged against real ROCm ports from public history.

The ports (repository, base commit, port commit, split) are listed in ``PORTS`` and in
docs/port.md. Three steps:

    # 1. trees: the base and the port of each, from bare git dirs (`fetch` snapshots)
    python benchmarks/port_backtest.py extract --mirrors /work/.mirror --trees TREES
    # 2. run: port --apply (safe, then --unsafe-fixes) on a copy of each base; the diff, the
    #    second run (idempotence), the scan again, and the changed native files compiled with
    #    hipcc (gfx90a) and nvcc, before and after (and the real port's files with hipcc)
    python benchmarks/port_backtest.py run --trees TREES --out results.json [--split dev]
    # 3. report: recall and precision from the judgments in benchmarks/port_backtest.toml
    python benchmarks/port_backtest.py report results.json

**Recall**: ``port_backtest.toml`` lists, per port, the real port's mechanical changes (what a
tool could make: build branches, header branches, routes, wave64 sites...; bug workarounds,
tuning, documentation and tests are listed apart, as not mechanical) and which of gpuport's
fixes, if any, makes each in an equivalent way. An item counts in a run when one of its fixes
was applied in that run. **Precision**: every fix gpuport made is judged acceptable or not
(as the project's reviewer would see it), with the reason; each of its hunks takes the
judgement. A fix without a judgement is reported as unjudged. **Build**: a changed unit
breaks the CUDA build when nvcc compiled it before and not after.

Nothing here runs code of a project: gpuport reads it, and the compilers compile it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuport.models import GpuportError
from gpuport.port import PortOptions, port_path
from gpuport.port.check import _compile_all, _units
from gpuport.subproc import which

HERE = Path(__file__).resolve().parent
MAX_UNITS = 3


@dataclass(frozen=True)
class Port:
    id: str
    name: str
    repo: str
    base: str
    port: str
    split: str


PORTS = (
    Port(
        "D1",
        "mamba",
        "state-spaces/mamba",
        "c2568f59df787e6dca09ce3b7d1c67c5a0a058c0",
        "3c77dcf7cae77022f74f48ebfe3dd121b1764f99",
        "dev",
    ),
    Port(
        "D2",
        "causal-conv1d",
        "Dao-AILab/causal-conv1d",
        "de688f7650aafee4804ffa0875c9c92054d737c4",
        "822c47c6faf57c00ebb31f7cea90f627eb7d413c",
        "dev",
    ),
    Port(
        "D3",
        "exllama",
        "turboderp/exllama",
        "45de2b53d3c657b8f306291a1b9862a9cf2d679b",
        "43e30596c79a4ee770081879ae80f39186dba3fa",
        "dev",
    ),
    Port(
        "D4",
        "voicebox",
        "jamiepine/voicebox",
        "3835b63bd8dbb67e362ef029a81c02e73b0639f5",
        "cabef1bfe091a8e280ae5acc356869b3bcf041a8",
        "dev",
    ),
    Port(
        "D5",
        "onetrainer",
        "Nerogar/OneTrainer",
        "3c18a9113dd7eeceaa34adaca780112a31ef6bae",
        "db6c6c8836f4a9c61f8a52dbcf80ea35ae4eed81",
        "dev",
    ),
    Port(
        "D6",
        "ggml",
        "ggml-org/ggml",
        "9d058105607788ecd4cecc619f96ca345bf86991",
        "1e87fb9c4cb0c232b32f2c5ce9db405626a84711",
        "dev",
    ),
    Port(
        "H1",
        "whisper.cpp",
        "ggml-org/whisper.cpp",
        "30f73109b8a321da828d13f568c4f679ec32de9b",
        "2ced6f07422ccdce4340bd28966d530b31d245a4",
        "held-out",
    ),
    Port(
        "H2",
        "hot-step-cpp",
        "scragnog/HOT-Step-CPP",
        "7fea5ff263a34bd78a8019bc332250d5d60d11c9",
        "17ed3b9264a4ba003d4e3ceb1be3bc9011e46454",
        "held-out",
    ),
    Port(
        "H3",
        "ods",
        "Osmantic/ODS",
        "1b8ff372afd0c069167c57f06dc1764d1f61d91b",
        "ab2fd108cfb8ea39314e6569984edfc1235003ab",
        "held-out",
    ),
    Port(
        "H4",
        "so101-nexus",
        "johnsutor/so101-nexus",
        "307bbf3c103d60c89509561ae9b237b88fa87042",
        "35d82f1892a2020060b1fd11dbb3b9e34ef37a99",
        "held-out",
    ),
    Port(
        "H5",
        "ao",
        "pytorch/ao",
        "1ff859221d8496e268dd2201a4be34a01447a031",
        "d4be9e422e1f4e213903cb48319050a689a4d1d7",
        "held-out",
    ),
    Port(
        "F1",
        "fused-ssim",
        "rahul-goel/fused-ssim",
        "b4fd8324e81c48c9b2b9f62e1b9c6431fece6ab3",
        "188dab6d23d97011d686489dc794f4bda1528b0c",
        "fresh",
    ),
    Port(
        "F2",
        "autoawq-kernels",
        "casper-hansen/AutoAWQ_kernels",
        "4bb0c022e953e28ee0f27688f62467594682437e",
        "3aed4bfed5b8343ff51430f11970a6601b5c7d19",
        "fresh",
    ),
    Port(
        "F3",
        "autogptq",
        "AutoGPTQ/AutoGPTQ",
        "a7167b108c438f570938f0ced46a52fe515f4a59",
        "63da0cd00a799d509e21dd8940e95ea5a1b6185e",
        "fresh",
    ),
    Port(
        "F4",
        "text-embeddings-inference",
        "huggingface/text-embeddings-inference",
        "cc7ca3139f4d706b889cf933c0a89b4d5adc9fa0",
        "ba265a3d108f1298c1eb74ff0870659f75c6c224",
        "fresh",
    ),
    Port(
        "F5",
        "genesis",
        "Genesis-Embodied-AI/Genesis",
        "a48384662b1314bd8efce559fff9f52bd5980d60",
        "543b13ac5e2f6e92a95607169f41a36612119e5f",
        "fresh",
    ),
    Port(
        "G1",
        "hypre",
        "hypre-space/hypre",
        "7859aeee348290635a279ccad2110b2dec3186a6",
        "f97751c9cc283ac1581df4bdbbb87bfc29107f20",
        "fresh2",
    ),
    Port(
        "G2",
        "rwkv-lm-v7",
        "RWKV-Vibe/RWKV-LM-V7",
        "a01d590eee66e58f4fb8d4e9f6f156315ca17ab4",
        "8b1f4efd5bf23103e6cd05ea6b95d424e86ba287",
        "fresh2",
    ),
    Port(
        "G3",
        "bevfusion",
        "mit-han-lab/bevfusion",
        "5b08cc8ceef9c3792253c4d3b7431ca599d3d882",
        "326653dc06e0938edf1aae7d01efcd158ba83de5",
        "fresh2",
    ),
    Port(
        "G4",
        "opensplat",
        "WebODM/OpenSplat",
        "1d59c7d3363cb482041cd85246c4523b6458ec5c",
        "9597d605825c9181eb49a4560c2d6d616174b4e5",
        "fresh2",
    ),
    Port(
        "G5",
        "pytorch-sparse",
        "rusty1s/pytorch_sparse",
        "d1aee184a1fb241731940508fc73c91de25de21a",
        "3138857327b9fadea4f8576f2f5716c2fb5d9f16",
        "fresh2",
    ),
    Port(
        "I1",
        "verl",
        "verl-project/verl",
        "75dedb570bd3f3a43e7aa2b0654ce1fc1dc8a649",
        "4a291fa7604afacc81b902234dd58d1fbb1fc936",
        "fresh3",
    ),
    Port(
        "I2",
        "tch-rs",
        "LaurentMazare/tch-rs",
        "a4148792c573a153673a32002c4bdd51fd957182",
        "1f717bed12a997feac97836d6f90af6c0a8069a2",
        "fresh3",
    ),
    Port(
        "I3",
        "sphexa",
        "sphexa-org/sphexa",
        "d3fbe6b385dcc9cf6ee181e5532095d8b79a7453",
        "ed61d870e9f464b779b67c14e192e68ea2971f0e",
        "fresh3",
    ),
    Port(
        "I4",
        "icebreaker",
        "hecrj/icebreaker",
        "7a506bf4d7ec537b19795947b6cf2d49bab77a82",
        "5579458797b9ff6e3756dd2e526fb16d89790992",
        "fresh3",
    ),
    Port(
        "I5",
        "lbann",
        "LBANN/lbann",
        "b6eb918da33c7e5aefa8c9997dac6c761aaaab22",
        "9c94701e30b83a76c252e1a0b4df97b2b7d11021",
        "fresh3",
    ),
    Port(
        "J1",
        "tasmanian",
        "ORNL/TASMANIAN",
        "17d9cdc75073ba382f26425570635d83a1ca8a48",
        "5d211793e787ddbcc40473747c079f6fd62c6dd4",
        "fresh4",
    ),
    Port(
        "J2",
        "juliagpu-gitlab-ci",
        "JuliaGPU/gitlab-ci",
        "549a25833272a20bd9e41ed71261f05d3aad1e46",
        "ef6129524952ab45e231b64364228f56edbec797",
        "fresh4",
    ),
    Port(
        "J3",
        "kokoro-fastapi",
        "remsky/Kokoro-FastAPI",
        "5c8a51e6c76999a3990c9b5cefb68918ff0e14f1",
        "59265d3bc980a948b7b4c1f46701628af9867ed2",
        "fresh4",
    ),
    Port(
        "J4",
        "kernel-builder",
        "huggingface/kernel-builder",
        "a4672cb33a8263304668a2683b03df210d66c5b4",
        "af2bbd9e064d5a8209ea45aad1911123fff58d20",
        "fresh4",
    ),
    Port(
        "J5",
        "mlir-wheels",
        "makslevental/mlir-wheels",
        "152932451ee37e5e35c331f46fafe101be648f0a",
        "d612d94cf3ea501ad9c01f8be92effc84ee8046e",
        "fresh4",
    ),
    Port(
        "J6",
        "swaptube",
        "2swap/swaptube",
        "6cf15fb007dbe2444cb9a37b9f90b9646cf494b6",
        "40675ccadfe25fc6e4935954e81847f224c362ea",
        "fresh5",
    ),
    Port(
        "J7",
        "odh-notebooks",
        "opendatahub-io/notebooks",
        "661caeae33f495714c7f5e851c5d27788d373933",
        "6991629a02d35d8012172676085364a39eadbddd",
        "fresh5",
    ),
    Port(
        "J8",
        "model-runner",
        "docker/model-runner",
        "752a484d7e80bb6ab0fec98a2c0c37676da4d390",
        "1b8cdb43da7cf185671b4c68935488753d250c88",
        "fresh5",
    ),
    Port(
        "J9",
        "ops",
        "OP-DSL/OPS",
        "14707c52614c97ba9ef6325d54deb0cfc9839f31",
        "3da7e0ad52b7d9409c06cf8443698a510619335a",
        "fresh5",
    ),
    Port(
        "J10",
        "horde-worker-regen",
        "Haidra-Org/horde-worker-reGen",
        "33b993bb0f059b0306dc53451d50df160cc70c0e",
        "cf4aaac880e8320cd2dd66f6379ab05bda9474b0",
        "fresh5",
    ),
    Port(
        "J11",
        "llamafactory",
        "hiyouga/LlamaFactory",
        "573bf03a6f46a522def9410aaf05bcb72c915153",
        "0636519ba3e385e94f2a84b2dcf7339947370475",
        "fresh6",
    ),
    Port(
        "J12",
        "stable-point-aware-3d",
        "Stability-AI/stable-point-aware-3d",
        "30cc2fea8e647bd5f6c313e0816029981338899e",
        "0f4a39ab345088bf22263a212f5dbf511dcf134a",
        "fresh6",
    ),
    Port(
        "J13",
        "kohya-ss",
        "bmaltais/kohya_ss",
        "d74361ed30095681c1b07c237ef4b1fe9bd3076e",
        "5d4c4486f990c3847a643e1de09dc378206307ae",
        "fresh6",
    ),
    Port(
        "J14",
        "hyprstream",
        "hyprstream/hyprstream",
        "ea23c5c8523a5f7f8ca3ad102724779d4b71363b",
        "8f0933a05ca74c954e5d5a19d86d99abbe46b227",
        "fresh6",
    ),
    Port(
        "J15",
        "eckit",
        "ecmwf/eckit",
        "3d7f4fe7f4804ecd24aa30e5a6159a6c0d0233e5",
        "f1591f45ab3900513008ace88da3e33fceaa8981",
        "fresh6",
    ),
    Port(
        "J16",
        "orpheus-fastapi",
        "Lex-au/Orpheus-FastAPI",
        "08cb92b6d513d3532804992f74ccf231f4641c11",
        "03916965522c1886b99b7b5713614a54a3371b85",
        "fresh7",
    ),
    Port(
        "J17",
        "kernel-tuner",
        "KernelTuner/kernel_tuner",
        "b3ff4cdecb12655009b356e3b1840e25b1dd1421",
        "4f0aa8fc3bcd3b685fb01726d80f9f810ce8e24d",
        "fresh7",
    ),
    Port(
        "J18",
        "vs-playground",
        "EutropicAI/vs-playground",
        "8b18d40cd174a5c35eed25946f8160f9da3c8124",
        "4c4ae9577a5876511d5363b328421304bd38a2a5",
        "fresh7",
    ),
    Port(
        "J19",
        "fftx",
        "spiral-software/fftx",
        "a022a89c02c6f59f379fc41372e3eea301ca333e",
        "c4f6b8fbde142db312019c2cc357f14c7db68b0c",
        "fresh7",
    ),
    Port(
        "J20",
        "qmcpack",
        "QMCPACK/qmcpack",
        "653f923ceb5d44259352065f2becb240c3fe5e15",
        "776f569805e7250bf12f8dcea9984654729bf11a",
        "fresh7",
    ),
    Port(
        "J21",
        "cuda-memtest",
        "ComputationalRadiationPhysics/cuda_memtest",
        "79688caed4de690ec6b232b157acf13d5c0989d7",
        "a3518a92face099e2783dd4f6df55249cfa5e4d4",
        "fresh8",
    ),
    Port(
        "J22",
        "one-click-installers",
        "oobabooga/one-click-installers",
        "52e3b91f5e8092f7a49b21544acac52f35ec5387",
        "1e3c950c7d8137e4e87e5399cb9cdebc688e709f",
        "fresh8",
    ),
    Port(
        "J23",
        "podly",
        "podly-pure-podcasts/podly_pure_podcasts",
        "bcc5645858ad9afd37123a3d7dee27c62bab6ee4",
        "32056ceda3ecc47a56e7243ef791817c4027fa34",
        "fresh8",
    ),
    Port(
        "J24",
        "comfyui-nix",
        "utensils/comfyui-nix",
        "be15424ac4773f8e153677a036a98f38036754bb",
        "82914911ea9346cb64c132b1be73c77a74f570b0",
        "fresh8",
    ),
    Port(
        "J25",
        "quest",
        "QuEST-Kit/QuEST",
        "dfdba1b39d9f90cc02e6f76efec836bfdb6b9731",
        "e8cd12d8e58e976ce88d89c15da27988d46bd7fc",
        "fresh8",
    ),
    Port(
        "J26",
        "knowledge-graph-system",
        "aaronsb/knowledge-graph-system",
        "00dab14b732d18c0fe0172fccab57f848aea5045",
        "63f752834c2258c4e671879afd86e039a359c232",
        "fresh9",
    ),
    Port(
        "J27",
        "light-the-torch",
        "Slicer/light-the-torch",
        "7525e1b5eeacebdc14a3dc836f32bc81e36f6c21",
        "453b02bac0279fb975ee4061a0a5404d22c156a3",
        "fresh9",
    ),
    Port(
        "J28",
        "transformerlab-api",
        "transformerlab/transformerlab-api",
        "507d8ab37dbe0b82b0255f628ac39cbfcdcac806",
        "ec199421a9e7f43df424f29855ef64263f0122cb",
        "fresh9",
    ),
    Port(
        "J29",
        "cbang",
        "CauldronDevelopmentLLC/cbang",
        "d5b878e7ae5ff228256d15bd169b4eae2c7c1362",
        "21daf706c1efa5a2c62a2199f753bd202b943cee",
        "fresh9",
    ),
    Port(
        "J30",
        "candi",
        "dealii/candi",
        "ed760ba14d99a8c45245681582fcf9395666cec2",
        "4225983efaa9975b4ae07d56aefe4bd569e07186",
        "fresh9",
    ),
    Port(
        "J31",
        "vptq",
        "microsoft/VPTQ",
        "abdc473988066e37472bd5a504104d6773522579",
        "f169d8d68c12ffe493bd30fcecc04c8ef64842a7",
        "fresh10",
    ),
    Port(
        "J32",
        "geniex",
        "qualcomm/GenieX",
        "da1f69b55f0e165aed62fc9be27b079c1be709c6",
        "06c491959b16d2ebc8f08f8862e87ace02c30823",
        "fresh10",
    ),
    Port(
        "J33",
        "lc0",
        "LeelaChessZero/lc0",
        "4e314e5318cf99a3541728563481e2cbe6a2804b",
        "4e2baee10e476e29ee4ae2e36468a39caab44fa1",
        "fresh10",
    ),
    Port(
        "J34",
        "ftorch",
        "Cambridge-ICCS/FTorch",
        "5227997e538b0043771ca9df7d9f9e23fe65c417",
        "83ddb2bf2dcc70d2db6bffcd4782337992f50ff9",
        "fresh10",
    ),
    Port(
        "J35",
        "llama-cpp-python",
        "abetlen/llama-cpp-python",
        "ab7a9b0c864cc82bdcfb7cae911c0bfc606883ba",
        "3754c04a168ce35a3e5bbe8f600014fc70970415",
        "fresh10",
    ),
    Port(
        "J36",
        "simple-gemm",
        "williamfgc/simple-gemm",
        "be24a262605acc7df089ccad184287f678fbc4f7",
        "de25e10e15f8ac451819971617eb97fc5fbb1d05",
        "fresh11",
    ),
    Port(
        "J37",
        "llm-perf-bench",
        "mlc-ai/llm-perf-bench",
        "c266707402223ae4ec2f67efba30c4a9472c9e39",
        "7eb1a00d709b915f7a0b1bffbf68f276c324be14",
        "fresh11",
    ),
    Port(
        "J38",
        "isaac",
        "ComputationalRadiationPhysics/isaac",
        "a39629ca7f6ee9f0a6d293981d1f21509c56705a",
        "804129b9aae998cf6af783f1f950f0324c2cba35",
        "fresh11",
    ),
    Port(
        "J39",
        "amgcl",
        "ddemidov/amgcl",
        "f572228a2f1f79aa38c0010bd03586ed240e01ec",
        "28296c2a95894b3732a89b2f75f257a957b09857",
        "fresh11",
    ),
    Port(
        "J40",
        "roll",
        "alibaba/ROLL",
        "fadc52aa6db0d30604857e17cbb834a3ea8a559f",
        "89204bb3ffe561dfa565782751f04a0f11364116",
        "fresh11",
    ),
    Port(
        "J41",
        "ollama-helm",
        "otwld/ollama-helm",
        "dc4e7a782ce2f5fd226e6c267faacce2612e62af",
        "65c4af757aedb2c09577f71a10e2dac22f529271",
        "fresh12",
    ),
    Port(
        "J42",
        "nwchem",
        "nwchemgit/nwchem",
        "b959e5ee075f415224898c56c8d2f72c13b98bb5",
        "b6f69c90a5344de1d6afdf2cd93e2f740ec9f2a4",
        "fresh12",
    ),
    Port(
        "J43",
        "crystools",
        "crystian/ComfyUI-Crystools",
        "2783fe71cf5575b515fe4b0e72dd11e36370e36b",
        "e7962c38fed15c2b49540c9e5e216ba38c79b3d4",
        "fresh12",
    ),
    Port(
        "J44",
        "alpaka-llama",
        "alpaka-group/llama",
        "f4c17b9348a45ca192f9c2bbd76ba1656b183813",
        "3ec39978ce8ab8eb5a2e22a53ed223e76bd35f12",
        "fresh12",
    ),
    Port(
        "J45",
        "kernelbench",
        "ScalingIntelligence/KernelBench",
        "b6c52595fbb7980b6082e75cb5b208a15a5d8eca",
        "7a0fae93624b60b8e9b67a862acabb5dbf8f0951",
        "fresh12",
    ),
    Port(
        "J46",
        "mcx",
        "fangq/mcx",
        "6d7a81a24d5ef388ef721a7c3eaec5b47b93a1d9",
        "7826eb9172848ff6e94e233599ab5f2ff10e8b65",
        "fresh13",
    ),
    Port(
        "J47",
        "hops-util-py",
        "logicalclocks/hops-util-py",
        "7a052deac1c2035e35222b643bf9208bf8e30e79",
        "c67a1b093e3478e1e39dc4c3f078c1b76cae474e",
        "fresh13",
    ),
    Port(
        "J48",
        "tclb",
        "CFD-GO/TCLB",
        "926273206c1fb82a9d7a4633255aa6031133d7ac",
        "ff3c85302b9e5e1bc6464efc4ece5e36a9c64acc",
        "fresh13",
    ),
    Port(
        "J49",
        "tf-benchmarks",
        "tensorflow/benchmarks",
        "eff144652a8065871c729f189d8ef4d353300fed",
        "5bb83a14718980c556105709e7c5f0a89d79083f",
        "fresh13",
    ),
    Port(
        "J50",
        "torchchat",
        "pytorch/torchchat",
        "2739023967513ef96857eed840237502928bb9fa",
        "7a674295edb105e23361caa95228624fb5f1f3ac",
        "fresh13",
    ),
    Port(
        "J51",
        "vision-pilot",
        "autowarefoundation/vision_pilot",
        "9350e7cf2bef0b68d06ed0cc7124cb48a2e20d8c",
        "d2234c8837128a942e8cef65c5cfa66e6b633add",
        "fresh14",
    ),
    Port(
        "J52",
        "openmm-torch",
        "openmm/openmm-torch",
        "681adc2329943b9d75d7171826ce35ae185da6e3",
        "b659e3638a6ba86655229599fd9b39590be5f070",
        "fresh14",
    ),
    Port(
        "J53",
        "sparta",
        "sparta/sparta",
        "1d62956275e1cfa0e9b78bb08815cd41c45ee7af",
        "878245b7c331fb9a0990630498013c2676ead24c",
        "fresh14",
    ),
    Port(
        "J54",
        "instructlab",
        "instructlab/instructlab",
        "9ed29712555f21ccd4cf8ec548a25939f936e2bf",
        "374abafc85d50b5c006de880521cd1f17dee2b5f",
        "fresh14",
    ),
    Port(
        "J55",
        "md-bench",
        "HPC-Dwarfs/MD-Bench",
        "56c890ff1cfdf1bdb1f89bff6fb68890bd115d76",
        "2e6e887b1057c4d6d5bcdbd929a38100058c9b2f",
        "fresh14",
    ),
    Port(
        "J56",
        "cp2k",
        "cp2k/cp2k",
        "dbd2db90d7191427d91c2724d21a85b8d158aeb6",
        "d62620d3af19fd1923dacf5bd7c16971c96dff56",
        "fresh15",
    ),
    Port(
        "J57",
        "aks-rdma-infiniband",
        "Azure/aks-rdma-infiniband",
        "a6f968d480a2963a93624595042f27d1be05f8a9",
        "6517b207b2b6de4f61d6fbd9594fb479a61c73e1",
        "fresh15",
    ),
    Port(
        "J58",
        "mpich",
        "pmodels/mpich",
        "2009bc6c2f7a1856ec55ecbd18d277700e225c58",
        "8ba79f1f32c2f3536f950272449772df858c39b5",
        "fresh15",
    ),
    Port(
        "J59",
        "stable-fast-3d",
        "Stability-AI/stable-fast-3d",
        "b21d14b546b6c7d1e1b22edd3d820b47e65deca8",
        "ff21fc491b4dc5314bf6734c7c0dabd86b5f5bb2",
        "fresh15",
    ),
    Port(
        "J60",
        "perun",
        "Helmholtz-AI-Energy/perun",
        "73cd82a829c4ad19201be48b8b06f1db1f0971cf",
        "229f1e2e6c019a2d4e6100610102b4be4b4b9a16",
        "fresh15",
    ),
    Port(
        "J61",
        "cyclecloud-slurm",
        "Azure/cyclecloud-slurm",
        "7e4834efdf71996d8b495b6aba38bcbb4c76033f",
        "9e1797097dd0a6367b8fc9698b5917fb019a1f94",
        "fresh16",
    ),
    Port(
        "J62",
        "perftest",
        "linux-rdma/perftest",
        "e0d1e179d3b481d985fe214ec082fbbd852f4fea",
        "5fb4f10a7e7827ed15e53c25810a10be279d6e23",
        "fresh16",
    ),
    Port(
        "J63",
        "image-builder",
        "kubernetes-sigs/image-builder",
        "e03fb5a0de2b36bf201f417b55f5c7468304cae2",
        "63cd7cc8105a5758f0533cb1ce9c997405b936e5",
        "fresh16",
    ),
    Port(
        "J64",
        "kubeai",
        "kubeai-project/kubeai",
        "063dfff677551bc2add73d8c22e55d21b8c450f9",
        "26737469f9f580e922ad675cbbffe1ec94b46178",
        "fresh16",
    ),
    Port(
        "J65",
        "cb-tumblebug",
        "cloud-barista/cb-tumblebug",
        "4298516954eed7d5989796702a4d3d45962765ed",
        "31cc77b54973fa331278d90914ee9c0ddcdb2158",
        "fresh16",
    ),
)


def _git(gitdir: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={gitdir}", *args], capture_output=True, check=True, timeout=600
    ).stdout


def extract_tree(gitdir: Path, commit: str, out: Path) -> tuple[int, int]:
    """Write ``commit``'s files under ``out`` (links and blobs the snapshot lacks skipped)."""
    out.mkdir(parents=True, exist_ok=True)
    listing = _git(gitdir, "ls-tree", "-r", "-z", commit)
    entries: list[tuple[str, str]] = []
    for rec in listing.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode != b"120000":
            entries.append((path.decode("utf-8", "surrogateescape"), sha.decode()))
    missing = 0
    with subprocess.Popen(
        ["git", f"--git-dir={gitdir}", "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        for path, sha in entries:
            proc.stdin.write(sha.encode() + b"\n")
            proc.stdin.flush()
            head = proc.stdout.readline().split()
            if len(head) < 3 or head[1] == b"missing":
                missing += 1
                continue
            data = proc.stdout.read(int(head[2]))
            proc.stdout.read(1)
            dest = out / path
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        proc.stdin.close()
    return len(entries), missing


def cmd_extract(args: argparse.Namespace) -> None:
    for p in _chosen(args.split):
        gitdir = Path(args.mirrors) / p.repo.replace("/", "+") / "repo"
        for which_, commit in (("base", p.base), ("port", p.port)):
            out = Path(args.trees) / p.name / which_
            if out.exists():
                continue
            n, missing = extract_tree(gitdir, commit, out)
            print(f"{p.id} {p.name} {which_}: {n} files ({missing} not in the snapshot)")


def _chosen(split: str, only: str = "") -> list[Port]:
    """The ports of a split; "all" is the original backtest (dev and held-out): the fresh
    held-out sets are run only by name (``--split fresh``, ``fresh2`` ... ``fresh16``)."""
    ids = {x for x in only.split(",") if x}
    if split == "all":
        return [p for p in PORTS if not p.split.startswith("fresh") and (not ids or p.id in ids)]
    return [p for p in PORTS if p.split == split and (not ids or p.id in ids)]


def _fixes(report: Any) -> list[dict[str, Any]]:
    hunks: dict[str, list[dict[str, Any]]] = {}
    for f in report.files:
        for h in f.hunks:
            for fix in h.fixes:
                hunks.setdefault(fix, []).append({"path": f.path, "header": h.header()})
    return [
        {
            "id": f.id,
            "safe": f.safe,
            "applied": f.applied,
            "findings": len(f.findings),
            "hunks": hunks.get(f.id, []),
        }
        for f in report.fixes
    ]


def _build(base: Path, after: Path, real: Path, report: Any) -> list[dict[str, Any]]:
    """Compile the changed units: nvcc and hipcc on the base and after gpuport, hipcc on the
    real port's version of the same files."""
    hipcc, nvcc = which("hipcc"), which("nvcc")
    changed = [f for f in report.files if f.action == "modify"]
    direct = [f.path for f in changed if f.path.endswith((".cu", ".cpp", ".cc", ".hip"))]
    # every changed unit, plus one unit per changed header, at most MAX_UNITS (time)
    units = direct + [u for u in _units(after, changed, per_header=1) if u not in direct]
    units = units[:MAX_UNITS]
    out: list[dict[str, Any]] = []
    if not units:
        return out
    with tempfile.TemporaryDirectory(prefix="port-backtest-stub-") as stub:
        # a CPU wheel of torch ships its CUDA headers but not this generated one (build
        # options only): an empty one lets nvcc compile extension kernels against them
        gen = Path(stub) / "c10" / "cuda" / "impl" / "cuda_cmake_macros.h"
        gen.parent.mkdir(parents=True)
        gen.write_text("#pragma once\n", encoding="utf-8")
        # and the two flags every CUDAExtension here passes nvcc (its own flags are not read:
        # project values never reach a compiler)
        extra = (f"-I{stub}", "--expt-relaxed-constexpr", "--expt-extended-lambda")
        arch = ("gfx90a",)
        before = {
            (r.path, r.compiler): r
            for r in _compile_all(base, base, units, hipcc, nvcc, arch, extra)
        }
        now = {
            (r.path, r.compiler): r
            for r in _compile_all(after, after, units, hipcc, nvcc, arch, extra)
        }
    real_units = [u for u in units if (real / u).is_file()]
    theirs = {
        (r.path, r.compiler): r
        for r in _compile_all(real, real, real_units, hipcc, None, ("gfx90a",))
    }
    for unit in units:
        row: dict[str, Any] = {"unit": unit}
        for comp in ("nvcc", "hipcc"):
            b, a = before.get((unit, comp)), now.get((unit, comp))
            row[f"{comp}_before"] = b.status if b else None
            row[f"{comp}_after"] = a.status if a else None
            row[f"{comp}_error"] = a.error if a and a.status != "ok" else None
        r = theirs.get((unit, "hipcc"))
        row["hipcc_real_port"] = r.status if r else "absent"
        out.append(row)
    return out


def _run_one(p: Port, trees: Path, unsafe: bool, build: bool) -> dict[str, Any]:
    base = trees / p.name / "base"
    with tempfile.TemporaryDirectory(prefix="port-backtest-") as tmp:
        work = Path(tmp) / p.name
        shutil.copytree(base, work, symlinks=True)
        try:
            report = port_path(work, PortOptions(apply=True, unsafe_fixes=unsafe, jobs=1))
        except GpuportError as exc:  # nothing gpuport reads (a Rust project): no fix at all
            return {
                "port": p.id,
                "name": p.name,
                "split": p.split,
                "mode": "unsafe" if unsafe else "safe",
                "fixes": [],
                "files": [],
                "findings_total": 0,
                "findings_with_safe_fix": 0,
                "verification": None,
                "second_run_files": [],
                "diff": "",
                "error": str(exc),
            }
        again = port_path(work, PortOptions(unsafe_fixes=unsafe, jobs=1))
        row: dict[str, Any] = {
            "port": p.id,
            "name": p.name,
            "split": p.split,
            "mode": "unsafe" if unsafe else "safe",
            "fixes": _fixes(report),
            "files": [f.path for f in report.files],
            "findings_total": report.findings_total,
            "findings_with_safe_fix": report.findings_with_safe_fix,
            "verification": report.verification.model_dump() if report.verification else None,
            "second_run_files": [f.path for f in again.files],
            "diff": report.diff(),
        }
        if build:
            row["build"] = _build(base, work, trees / p.name / "port", report)
        return row


def cmd_run(args: argparse.Namespace) -> None:
    rows = []
    for p in _chosen(args.split, args.only):
        for unsafe in (False, True):
            row = _run_one(p, Path(args.trees), unsafe, build=not args.no_build)
            print(
                f"{p.id} {p.name} {row['mode']}: {len(row['files'])} file(s), "
                f"{sum(len(f['hunks']) for f in row['fixes'] if f['applied'])} hunk(s), "
                f"second run {len(row['second_run_files'])} file(s)",
                file=sys.stderr,
            )
            rows.append(row)
    Path(args.out).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


def _judgments(run: str = "") -> dict[str, dict[str, Any]]:
    """Items and judgments per port; a judgment or item with ``run = "before"`` (or
    "after") applies only to the results of that run (held-out ports, judged before and
    after changes made once their results were seen)."""
    data = tomllib.loads((HERE / "port_backtest.toml").read_text(encoding="utf-8"))
    out: dict[str, dict[str, Any]] = {}
    for p in data.get("port", []):
        keep = dict(p)
        for key in ("judgment", "item"):
            keep[key] = [x for x in p.get(key, []) if x.get("run", run) == run]
        out[p["id"]] = keep
    return out


def _unique_hunks(row: dict[str, Any], verdict: dict[str, Any]) -> list[tuple[bool, bool | None]]:
    """(safe, acceptable) per distinct applied hunk of a run; a hunk two fixes share (a
    header include branch and a mask fix in one place) counts once, acceptable only when
    every fix in it is, unjudged (None) when one of them is."""
    seen: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for fix in row["fixes"]:
        if fix["applied"]:
            for h in fix["hunks"]:
                seen.setdefault((h["path"], h["header"]), []).append(fix)
    out: list[tuple[bool, bool | None]] = []
    for fixes in seen.values():
        vs = [verdict.get(f["id"]) for f in fixes]
        ok = None if any(v is None for v in vs) else all(v["acceptable"] for v in vs)
        out.append((all(f["safe"] for f in fixes), ok))
    return out


def cmd_report(args: argparse.Namespace) -> None:
    rows = json.loads(Path(args.results).read_text(encoding="utf-8"))
    judged = _judgments(args.run)
    print(
        "| port | mode | hunks | acceptable | unjudged | recall (mechanical items) | "
        "idempotent | CUDA build broken | hipcc gfx90a |"
    )
    print("|---|---|---:|---:|---:|---|---|---:|---|")
    totals: dict[str, list[int]] = {}
    for row in rows:
        j = judged.get(row["port"], {})
        verdict = {x["fix"]: x for x in j.get("judgment", [])}
        hunks = ok = unjudged = safe_hunks = safe_ok = 0
        for safe, good in _unique_hunks(row, verdict):
            hunks += 1
            unjudged += good is None
            ok += good is True
            if safe:
                safe_hunks += 1
                safe_ok += good is True
        applied = {f["id"] for f in row["fixes"] if f["applied"]}
        items = [i for i in j.get("item", []) if i.get("mechanical", True)]
        hit = sum(1 for i in items if set(i.get("fixes", [])) & applied)
        broken = sum(
            1 for b in row.get("build", []) if b["nvcc_before"] == "ok" and b["nvcc_after"] != "ok"
        )
        hip = (
            ", ".join(
                f"{b['unit'].rsplit('/', 1)[-1]}: {b['hipcc_before']}->{b['hipcc_after']}"
                f" (real port {b['hipcc_real_port']})"
                for b in row.get("build", [])
            )
            or "-"
        )
        idem = "yes" if not row["second_run_files"] else f"no ({len(row['second_run_files'])})"
        print(
            f"| {row['port']} {row['name']} | {row['mode']} | {hunks} | {ok} | {unjudged} | "
            f"{hit}/{len(items)} | {idem} | {broken} | {hip} |"
        )
        t = totals.setdefault(f"{row['split']} {row['mode']}", [0, 0, 0, 0, 0, 0, 0])
        for k, v in enumerate((hunks, ok, unjudged, hit, len(items), safe_hunks, safe_ok)):
            t[k] += v
    print()
    for key, (h, ok, un, hit, items, sh, sok) in sorted(totals.items()):
        pct = lambda a, b: f"{100 * a / b:.1f} %" if b else "-"  # noqa: E731
        print(
            f"* {key}: {ok}/{h} hunks acceptable ({pct(ok, h)}; safe fixes {sok}/{sh}, "
            f"{pct(sok, sh)}; {un} unjudged); recall {hit}/{items} ({pct(hit, items)})"
        )


def cmd_hunks(args: argparse.Namespace) -> None:
    """Every applied hunk with the judgment of its fix (the table in docs/port.md)."""
    rows = json.loads(Path(args.results).read_text(encoding="utf-8"))
    judged = _judgments(args.run)
    print("| port | mode | fix | file | hunk | acceptable | why |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        if args.mode and row["mode"] != args.mode:
            continue
        verdict = {x["fix"]: x for x in judged.get(row["port"], {}).get("judgment", [])}
        for fix in row["fixes"]:
            if not fix["applied"]:
                continue
            v = verdict.get(fix["id"])
            ok = "unjudged" if v is None else ("yes" if v["acceptable"] else "**no**")
            why = "" if v is None else v["why"]
            for h in fix["hunks"]:
                ranges = h["header"].split(" @@", 1)[0].removeprefix("@@ ")
                kind = "safe" if fix["safe"] else "unsafe"
                print(
                    f"| {row['port']} | {row['mode']} | {fix['id']} ({kind}) | "
                    f"`{h['path']}` | `{ranges}` | {ok} | {why} |"
                )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("extract")
    e.add_argument("--mirrors", required=True)
    e.add_argument("--trees", required=True)
    splits = (
        "dev",
        "held-out",
        "fresh",
        "fresh2",
        "fresh3",
        "fresh4",
        "fresh5",
        "fresh6",
        "fresh7",
        "fresh8",
        "fresh9",
        "fresh10",
        "fresh11",
        "fresh12",
        "fresh13",
        "fresh14",
        "fresh15",
        "fresh16",
        "all",
    )
    e.add_argument("--split", default="all", choices=splits)
    r = sub.add_parser("run")
    r.add_argument("--trees", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--split", default="all", choices=splits)
    r.add_argument("--no-build", action="store_true")
    r.add_argument("--only", default="", help="port ids, comma-separated (D1,H2)")
    rep = sub.add_parser("report")
    rep.add_argument("results")
    rep.add_argument("--run", default="", help="before/after: the judgments of that run")
    hk = sub.add_parser("hunks")
    hk.add_argument("results")
    hk.add_argument("--run", default="")
    hk.add_argument("--mode", choices=("safe", "unsafe"))
    args = ap.parse_args(argv)
    commands = {"extract": cmd_extract, "run": cmd_run, "report": cmd_report, "hunks": cmd_hunks}
    commands[args.cmd](args)


if __name__ == "__main__":
    main()
