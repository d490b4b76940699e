"""Generate the Python protocol code from protos/: `python protos/generate.py`.

Writes `fiftysix/v1/*_pb2.py`, `*_pb2.pyi` and `*_pb2_grpc.py` at the top of the repository, where
they are imported as the `fiftysix` package, and checked in. Reproducible: the output depends only on
the .proto files and the grpcio-tools version pinned in pyproject.toml;
tests/fiftysix/test_protocol_generated.py fails when the checked-in code differs from what this writes.

Only the protocol's own files (protos/fiftysix/) are generated: protos/grpc/health/v1/health.proto is
gRPC's standard health service, kept here for other languages; Python uses grpcio-health-checking's.
"""

from __future__ import annotations

import sys
from pathlib import Path

from grpc_tools import protoc

PROTOS = Path(__file__).resolve().parent
ROOT = PROTOS.parent


def generate(output: Path) -> None:
    """Generate the code for every .proto under protos/fiftysix/ into `output`."""
    sources = sorted(str(path.relative_to(PROTOS)) for path in (PROTOS / "fiftysix").rglob("*.proto"))
    include = str(Path(protoc.__file__).parent / "_proto")
    arguments = [
        "grpc_tools.protoc",
        f"--proto_path={PROTOS}",
        f"--proto_path={include}",
        f"--python_out={output}",
        f"--mypy_out={output}",
        f"--mypy_grpc_out={output}",
        f"--grpc_python_out={output}",
        *sources,
    ]
    if protoc.main(arguments) != 0:
        raise SystemExit("protoc failed")
    for folder in {(output / source).parent for source in sources}:
        for package in (folder, *folder.relative_to(output).parents):
            init = output / package / "__init__.py"
            if init.parent != output and not init.exists():
                init.write_text('"""Generated from protos/ by protos/generate.py; do not edit."""\n')


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT)
