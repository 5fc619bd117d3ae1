"""Which modules a distribution provides, when no installed copy says (pure).

The truth is a dist-info's top_level.txt or RECORD (depsync/shell/surface_evidence.py reads
those where a `.venv` or uv's cache has them). A CI sync has neither, so the import evidence
would look for `pillow` where the code says `import PIL`. Without a dist-info, a package's
candidates are, in order:

1. RENAMED below: distributions whose import name is not their project name, as each one's
   own wheel declares it (its top_level.txt or RECORD); data, not logic: add a row when a
   wheel says so;
2. the project name as a module (`nemo-lens` -> `nemo_lens`);
3. the project name as a namespace path (`nemo-lens` -> `nemo.lens`, `google-cloud-storage` ->
   `google.cloud.storage`): matched only as that dotted prefix, never as its first part alone;
4. without a `python-`/`py-` prefix or a `-python` suffix (`python-dateutil` -> `dateutil`), and
   for three words or more without the first (`prime-pydantic-config` -> `pydantic_config`):
   a vendor prefix;
5. the words run together (`multi-storage-client` -> `multistorageclient`).

A candidate is matched as a dotted prefix of an import (`PIL` matches `PIL.Image`), so a
namespace path cannot match another package under the same namespace.
"""

from __future__ import annotations

import re

# canonical project name -> the top-level modules its wheel installs (from the wheel's own
# top_level.txt / RECORD); only distributions whose modules are not their project name
RENAMED: dict[str, tuple[str, ...]] = {
    "pillow": ("PIL",),
    "pyyaml": ("yaml",),
    "scikit-learn": ("sklearn",),
    "scikit-image": ("skimage",),
    "opencv-python": ("cv2",),
    "opencv-python-headless": ("cv2",),
    "opencv-contrib-python": ("cv2",),
    "opencv-contrib-python-headless": ("cv2",),
    "beautifulsoup4": ("bs4",),
    "python-dateutil": ("dateutil",),
    "protobuf": ("google.protobuf",),
    "attrs": ("attr", "attrs"),
    "pyzmq": ("zmq",),
    "pymupdf": ("fitz", "pymupdf"),
    "python-dotenv": ("dotenv",),
    "pycryptodome": ("Crypto",),
    "pyjwt": ("jwt",),
    "msgpack-python": ("msgpack",),
    "ruamel-yaml": ("ruamel.yaml",),
    "typing-extensions": ("typing_extensions",),
    "importlib-metadata": ("importlib_metadata",),
    "sentencepiece": ("sentencepiece",),
    "faiss-cpu": ("faiss",),
    "faiss-gpu": ("faiss",),
    "tensorflow-cpu": ("tensorflow",),
    "nvidia-ml-py": ("pynvml",),
    "pynvml": ("pynvml",),
    "nvidia-modelopt": ("modelopt",),
    "nvidia-resiliency-ext": ("nvidia_resiliency_ext",),
    "transformer-engine": ("transformer_engine",),
    "flash-attn": ("flash_attn", "flash_attn_2_cuda"),
    "mamba-ssm": ("mamba_ssm",),
    "causal-conv1d": ("causal_conv1d",),
    "flash-linear-attention": ("fla",),
    "tensorboardx": ("tensorboardX",),
    "google-generativeai": ("google.generativeai",),
    "grpcio": ("grpc",),
    "websocket-client": ("websocket",),
    "pyserial": ("serial",),
    "pywin32": ("win32api", "win32con", "pywintypes"),
    "absl-py": ("absl",),
    "lightning": ("lightning",),
    "pytorch-lightning": ("pytorch_lightning",),
    "huggingface-hub": ("huggingface_hub",),
    "sentence-transformers": ("sentence_transformers",),
    "llama-cpp-python": ("llama_cpp",),
    "ml-dtypes": ("ml_dtypes",),
    "jax-cuda12-plugin": ("jax_cuda12_plugin",),
    "tiktoken": ("tiktoken",),
    "gitpython": ("git",),
    "pygithub": ("github",),
    "psycopg2-binary": ("psycopg2",),
    "mysqlclient": ("MySQLdb",),
    "opentelemetry-api": ("opentelemetry",),
}

_PREFIX = re.compile(r"^(?:python|py)-")
_SUFFIX = re.compile(r"-python$")


def candidates(project: str) -> tuple[tuple[str, ...], str]:
    """(module names to look for, where they come from) of a canonical project name."""
    if project in RENAMED:
        return RENAMED[project], "depsync's table of renamed distributions"
    words = [w for w in re.split(r"[-_.]+", project) if w]
    found: list[str] = []

    def add(name: str) -> None:
        if name and name not in found and all(part.isidentifier() for part in name.split(".")):
            found.append(name)

    add("_".join(words))
    if len(words) >= 2:
        add(".".join(words))
    stripped = _SUFFIX.sub("", _PREFIX.sub("", project))
    if stripped != project:
        add(stripped.replace("-", "_"))
    if len(words) >= 3:
        add("_".join(words[1:]))
    if len(words) >= 2:
        add("".join(words))  # the words run together (`multi-storage-client` -> `multistorageclient`)
    return tuple(found), "the project name (no installed copy says)"


def provides(module: str, candidate: str) -> bool:
    """Does an import of `module` (dotted) use the candidate (a dotted prefix of it)?"""
    return module == candidate or module.startswith(candidate + ".")
